// Catch2 v2 needs main in one translation unit; v3 links Catch2WithMain.
#if defined(FHD_CATCH2_MAIN)
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
