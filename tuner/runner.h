// The runner: the one place that catches per candidate. Each candidate is compiled (cached), loaded,
// validated on random data against the Eigen reference with a NaN-poisoned output, timed, and stored
// with its disposition; only Input and Infra errors (and a device fault, which poisons the context)
// end a run. Everything stored survives a kill; a rerun skips it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "db/store.h"
#include "kernels/gemm/gemm.h"
#include "tuner/timing.h"

namespace tunetab {

struct TuneOptions {
  int device = 0;
  int jobs = 0;               // compile threads; 0 = all cores
  std::size_t final_top = 4;  // candidates re-timed carefully per problem
  TimingPlan screen{2.0, 5, 0.3, 1024};
  TimingPlan final{25.0, 25, 1.0, 4096};
  double launch_timeout_ms = 10000;
  std::uint64_t seed = 20261130;
  bool progress = true;
  std::string command_line;
  std::vector<std::string> jit_flags;
};

struct ProblemSummary {
  gemm::Problem problem;
  std::string best_config;
  double median_us = 0, min_us = 0, spread = 0;
  double tflops = 0, gbs = 0;
  int passed = 0, failed = 0, unsupported = 0;
};

/// Tunes every problem on the device; returns the per-problem summary (empty best_config: none passed).
std::vector<ProblemSummary> tune_gemm(const std::vector<gemm::Problem>& problems, const TuneOptions& opt, db::Store& store);

/// Compiles `sources` for `arch` (through `cache` when given), prints each failure with its log and a
/// summary line; returns the number that failed.
int compile_and_report(const std::vector<KernelSource>& sources, const std::string& arch, const TuneOptions& opt,
                       db::Store* cache);

/// Without a device: compile every candidate code object of `problems` for `arch`. Returns failures.
int compile_check_gemm(const std::vector<gemm::Problem>& problems, const std::string& arch, const TuneOptions& opt,
                       db::Store* cache);

/// The device record the store keeps for the current device and compiler.
db::DeviceRecord device_record(const DeviceFacts& f);

}  // namespace tunetab
