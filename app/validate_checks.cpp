// validate's checks: pure functions of the rows, so tests can feed perturbed
// rows and watch each check fail.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>

#include "app/validate.hpp"

namespace fhd::app {
namespace {

const ValidateRow* find_row(const std::vector<ValidateRow>& rows, const std::string& method,
                            const std::string& precision, const std::string& device) {
  for (const ValidateRow& r : rows)
    if (r.ran && r.psnr && r.method == method && r.precision == precision && r.device == device) return &r;
  return nullptr;
}

// |a - b| <= tol in dB, or "not run" naming the missing row.
ValidateCheck within(const std::string& name, const ValidateRow* a, const ValidateRow* b, double tol,
                     const std::string& what) {
  ValidateCheck c;
  c.name = name;
  c.threshold = tol;
  if (!a || !b) {
    c.detail = "not run: " + what + " did not run";
    return c;
  }
  c.ran = true;
  c.value = *a->psnr - *b->psnr;
  c.holds = std::abs(c.value) <= tol;
  c.detail = fmt::format("{:.3f} dB vs {:.3f} dB: difference {:+.3f} dB, allowed +-{} dB", *a->psnr, *b->psnr,
                         c.value, tol);
  return c;
}

}  // namespace

std::vector<ValidateCheck> evaluate_checks(const std::vector<ValidateRow>& rows, const CheckThresholds& t) {
  std::vector<ValidateCheck> out;
  const ValidateRow* dbl = find_row(rows, "iterative", "double", "cpu");
  const ValidateRow* cpu1 = find_row(rows, "iterative", "single", "cpu");
  const ValidateRow* gpu1 = find_row(rows, "iterative", "single", "gpu");
  out.push_back(within("single = double (CPU)", cpu1, dbl, t.single_vs_double_db, "a CPU row"));
  out.push_back(within("sfu ~ single (GPU)", find_row(rows, "iterative", "sfu", "gpu"), gpu1, t.sfu_vs_single_db,
                       "a GPU row"));
  out.push_back(within("tf32 ~ single (GPU)", find_row(rows, "iterative", "tf32", "gpu"), gpu1,
                       t.tf32_vs_single_db, "a GPU row"));
  out.push_back(within("nufft = exact single (CPU)", find_row(rows, "iterative", "nufft", "cpu"), cpu1,
                       t.nufft_vs_single_db, "a CPU row"));
  out.push_back(within("nufft = exact single (GPU)", find_row(rows, "iterative", "nufft", "gpu"), gpu1,
                       t.nufft_vs_single_db, "a GPU row"));
  // The margin is measured on the data set the gridding ran on: the GPU single
  // row's when the GPU ran, else the CPU single row's.
  const ValidateRow* tri = nullptr;
  for (const ValidateRow& r : rows)
    if (r.ran && r.psnr && r.method == "gridding-trilinear") tri = &r;
  const ValidateRow* it = (gpu1 && tri && gpu1->data == tri->data) ? gpu1 : cpu1;
  ValidateCheck m;
  m.name = "iterative > trilinear gridding";
  m.threshold = t.min_gain_over_trilinear_db;
  if (it && tri && it->data == tri->data) {
    m.ran = true;
    m.value = *it->psnr - *tri->psnr;
    m.holds = m.value >= m.threshold;
    m.detail = fmt::format("iterative {} {} {:.3f} dB - trilinear {:.3f} dB = {:+.3f} dB, required >= {} dB",
                           it->precision, it->device, *it->psnr, *tri->psnr, m.value, m.threshold);
  } else {
    m.detail = "not run: no iterative single row and trilinear gridding on the same data";
  }
  out.push_back(m);
  return out;
}

bool checks_pass(const std::vector<ValidateCheck>& checks) {
  return std::none_of(checks.begin(), checks.end(), [](const ValidateCheck& c) { return c.ran && !c.holds; });
}

}  // namespace fhd::app
