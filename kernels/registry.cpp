#include <limits>

#include "kernels/family.h"
#include "tuner/error.h"

namespace tunetab {

Target Target::from_arch(const std::string& arch) {
  Target t;
  t.arch = arch;
  if (arch.rfind("sm_", 0) == 0) {
    t.nvidia = true;
    t.warp_size = 32;
    t.max_smem_per_block = 227 * 1024;  // sm_90 opt-in limit
  } else if (arch.rfind("gfx", 0) == 0) {
    t.nvidia = false;
    t.warp_size = 64;
    t.max_smem_per_block = arch == "gfx950" ? 160 * 1024 : 64 * 1024;
  } else {
    throw_input("--target '" + arch + "': expected an NVIDIA arch (sm_90a) or an AMD one (gfx90a, gfx942, gfx950)");
  }
  return t;
}

int required_index_bits(const std::vector<BufferBound>& bounds) {
  for (const auto& b : bounds)
    if (b.max_offset > std::numeric_limits<std::int32_t>::max()) return 64;
  return 32;
}

}  // namespace tunetab
