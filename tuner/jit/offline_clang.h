// Compile checks for AMD targets that Debian's hipRTC cannot reach (gfx942, gfx950): clang in HIP mode,
// device only, without HIP headers or device libraries, on the same embedded templates. No GPU needed.
#pragma once
#include <string>
#include <vector>

#include "kernels/family.h"

namespace tunetab::jit {

struct OfflineCheck {
  bool ok = false;
  std::string command;
  std::string log;
  double ms = 0;
  std::size_t instances = 0;
};

/// A clang that can compile for `arch` (clang++-22 for gfx950; clang++-19 or newer otherwise), or "".
std::string find_clang_for(const std::string& arch);

/// Compiles every instance of `sources` as explicit instantiations, split over `jobs` translation units
/// compiled in parallel.
OfflineCheck offline_compile_check(const std::vector<KernelSource>& sources, const std::string& arch,
                                   const std::string& clang, int jobs);

}  // namespace tunetab::jit
