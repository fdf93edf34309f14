// What every kernel family provides to the tuner. A family is a pipeline of one or more kernels behind
// one problem key (a GEMM is one kernel; a fused MoE is sort + stage 1 + stage 2). The tuner is written
// against this shape (see tuner/runner.h); a family knows nothing of SQLite or the CLI.
//
//   Problem      the key the consumer looks rows up by, with to_json() and key()
//   Config       every knob of one candidate, with name() (stable, parseable) and to_json()
//   enumerate()  the whole config space for a target, before any problem is known
//   why_unsupported(problem, config, target)  the constraint check run before anything is compiled
//   index_bounds(problem, config)             largest element offset each buffer can see
//   kernels(problem, config, target)          the pipeline's translation units and instance names
//   Workload     device inputs, launch(), reference() on Eigen and compare()
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tunetab {

/// The machine a config is checked and compiled for.
struct Target {
  std::string arch;        // compile target: "sm_90a", "gfx90a", "gfx942", "gfx950"
  bool nvidia = true;
  int cu_count = 0;        // 0: unknown (compile-only), no occupancy-based pruning
  int max_smem_per_block = 0;
  int warp_size = 32;

  /// A target for an arch name without a device (compile checks, CI).
  static Target from_arch(const std::string& arch);
};

/// One kernel of a family's pipeline, ready for hipRTC.
struct KernelSource {
  std::string family;
  std::string source;           // translation unit; includes embedded headers by name
  std::string name_expression;  // e.g. "tt::gemm_bf16_tn<128, 128, 32, 64, 64, 4, 1, 8, int>"
  std::string parameters;       // parameter list, for explicit instantiation by offline compilers
};

/// The largest element offset each buffer can be addressed at, for the index-width proof.
struct BufferBound {
  std::string buffer;
  std::int64_t max_offset = 0;  // elements
};

/// Smallest index width (32 or 64) whose signed range holds every bound.
int required_index_bits(const std::vector<BufferBound>& bounds);

}  // namespace tunetab
