// The tests' main, for Catch2 v2 (catch2/catch.hpp) and v3 (catch_session.hpp).
// Where the readers' libhdf5 guard may start the test executable again as a
// reader child (io/reader_child.hpp: areas io and app, FHD_SERVES_READER_CHILD),
// that child runs its reader and exits before Catch sees the arguments.
#if defined(FHD_CATCH3)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif
#if defined(FHD_SERVES_READER_CHILD)
#include "io/reader_child.hpp"
#endif

int main(int argc, char** argv) {
#if defined(FHD_SERVES_READER_CHILD)
  fhd::serve_reader_child(argc, argv);
#endif
  return Catch::Session().run(argc, argv);
}
