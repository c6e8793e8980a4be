// A C++ program against the installed package (find_package(fhdrecon)): the
// CPU NUFFT (recon/nufft/nufft_cpu.hpp) of a small 3D trajectory against the float64
// direct sum (recon/gather/direct_sum.hpp), and a scan written and read back through
// io/scan_file.hpp. Exit 0 when both hold.
#include <cmath>
#include <cstdio>
#include <random>

#include "io/scan_file.hpp"
#include "recon/nufft/nufft_cpu.hpp"

int main() {
  const fhd::ImageGrid grid{8, 6, 4};
  fhd::Trajectory t;
  t.resize(50);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2.9f, 2.9f);
  std::vector<fhd::cfloat> c(t.size());
  for (std::size_t m = 0; m < t.size(); ++m) {
    t.kx[m] = u(rng);
    t.ky[m] = u(rng);
    t.kz[m] = u(rng) * 0.6f;
    c[m] = {u(rng), u(rng)};
  }
  fhd::nufft::CpuPlan plan(t, grid, grid, {});
  const std::vector<fhd::cfloat> f = plan.type1(c);
  double num = 0, den = 0;
  for (int z = 0; z < grid.nz; ++z)
    for (int y = 0; y < grid.ny; ++y)
      for (int x = 0; x < grid.nx; ++x) {
        std::complex<double> s = 0;
        for (std::size_t m = 0; m < t.size(); ++m) {
          const double ph = 2 * M_PI *
                            (t.kx[m] * fhd::axis_coord(x, grid.nx, grid.nx) + t.ky[m] * fhd::axis_coord(y, grid.ny, grid.ny) +
                             t.kz[m] * fhd::axis_coord(z, grid.nz, grid.nz));
          s += std::complex<double>(c[m]) * std::polar(1.0, ph);
        }
        const std::complex<double> d = std::complex<double>(f[x + grid.nx * (y + grid.ny * z)]) - s;
        num += std::norm(d);
        den += std::norm(s);
      }
  const double err = std::sqrt(num / den);
  fhd::Scan scan;
  scan.grid = grid;
  scan.traj = t;
  scan.data = c;
  const char* path = "consumer_scan.h5";
  fhd::write_scan(path, scan);
  const fhd::Scan back = fhd::read_scan(path);
  std::remove(path);
  const bool same = back.data == scan.data && back.traj.kz == scan.traj.kz && back.grid == grid;
  std::printf("consumer_cpp: NUFFT type 1 rel. error %.2e against the direct sum; scan file round trip %s\n", err,
              same ? "equal" : "DIFFERS");
  return err < 1e-5 && same ? 0 : 1;
}
