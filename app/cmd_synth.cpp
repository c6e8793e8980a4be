// fhdrecon synth: write a synthesized phantom scan to a file.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>

#include "app/option_checks.hpp"
#include "app/commands.hpp"
#include "app/scan_input.hpp"
#include "io/atomic_file.hpp"
#include "core/error.hpp"
#include "app/source.hpp"

namespace fhd::app {
namespace {

struct SynthCommand {
  SourceOptions source;
  std::string output;
  std::string format = "auto";
  bool prewhitened = false;
};

void run(const SynthCommand& c) {
  if (!c.source.input.empty()) throw InputError("synth: --input = " + c.source.input + ": synth writes a phantom scan; it reads none");
  if (c.source.virtual_coils > 0)
    throw InputError("synth: --virtual-coils = " + std::to_string(c.source.virtual_coils) +
                     ": synth writes the coils as received (compress when reconstructing)");
  // --field-map replaced the stored map but not the data's field (made from
  // --off-resonance): the file's map and data disagreed (14.4 dB for 17.3).
  if (!c.source.field_map.empty())
    throw InputError("synth", "--field-map", c.source.field_map,
                     "synth writes the analytic field of --off-resonance; give a map when reconstructing");
  if (c.source.given.count("--no-prewhiten"))
    throw InputError("synth: --no-prewhiten is the reconstruction's; synth writes the coils as received unless "
                     "--prewhitened");
  // Before any synthesis: `-o /tmp` used to write /tmp.cfl, /tmp.hdr and /tmp_traj.* (a BART base name).
  if (std::filesystem::path(c.output).filename().empty())
    throw InputError(c.output, "-o", c.output, "names a directory, not a file");
  check_writable_file(c.output, "-o");
  SourceOptions so = c.source;
  // The file keeps the coils as received and their noise samples, unless asked
  // to prewhiten them (for formats without noise samples: BART's .cfl).
  so.prewhiten = c.prewhitened;
  Source src = make_source(so);
  std::vector<Scan> coils;
  coils.push_back(std::move(src.scan));
  for (Scan& s : src.more_coils) coils.push_back(std::move(s));
  for (Scan& s : coils) s.provenance["tool"] = std::string("fhdrecon ") + FHD_VERSION;
  std::string written = write_scan_any(c.output, c.format, coils, src.readout);
  spdlog::info("wrote {} ({})", written, src.description);
}

}  // namespace

void add_synth_command(CLI::App& app) {
  auto c = std::make_shared<SynthCommand>();
  CLI::App* sub = app.add_subcommand("synth", "synthesize a phantom scan (exact analytic k-space) into a file");
  add_source_options(*sub, c->source);
  sub->add_option("-o,--output", c->output, "output file: scan.h5 (fhdrecon), scan.mrd (ISMRMRD), or a BART base name")
      ->required()
      ->check(non_empty_path());
  sub->add_option("--format", c->format, "fhdrecon | ismrmrd | bart | auto (from the name)")
      ->check(CLI::IsMember({"auto", "fhdrecon", "ismrmrd", "bart"}))
      ->capture_default_str();
  sub->add_flag("--prewhitened", c->prewhitened,
                "write the coils prewhitened with their noise samples (default: as received), for files that "
                "cannot carry noise samples (BART .cfl)");
  sub->callback([c] { run(*c); });
}

}  // namespace fhd::app
