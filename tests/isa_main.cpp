// The doctest main of every suite that runs kernels: it applies ATTNFC_KERNELS first, so
// ctest runs each suite once per kernel path (CMakeLists.txt), and says which path ran.
// A path this CPU cannot run exits 77, which ctest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "attnfc/kernels/isa.hpp"

int main(int argc, char** argv) {
  namespace k = attnfc::kernels;
  const char* want = std::getenv("ATTNFC_KERNELS");
  if (want != nullptr && *want != '\0') {
    const auto isa = k::isa_from_name(want);
    if (isa && !k::isa_supported(*isa)) {
      std::string can;
      for (k::Isa i : k::supported_isas()) can += std::string(" ") + k::isa_name(i);
      std::printf("skipped: this CPU cannot run the %s kernels (it runs:%s)\n", want, can.c_str());
      return 77;
    }
  }
  try {
    k::select_isa_from_environment();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  std::printf("[attnfc] %s\n", k::isa_report().c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
