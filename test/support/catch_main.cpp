// The one Catch2 main for all unit test executables.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
