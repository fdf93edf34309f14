// The runner: the one place that catches per candidate. Each candidate is planned (constraints, index width
// proven for the largest M its row serves), compiled (cached), then validated and timed on the device side
// (tuner/safety/executor.h: a worker process unless --no-isolation), and stored with its disposition, its
// tolerance and its index proof. A fault or hang costs a worker, not the run; a candidate that faulted is
// stored and so never retried. The fastest few are timed again at a sample of the Ms the row serves, and the
// row ranks them by their mean there. Then coverage: each row's fastest candidate is validated on every M its
// bucket serves (tuner/safety/coverage.h), the next-best when it fails. Only Input and Infra errors end a
// run (and, in-process, a lost device context). Everything stored survives a kill; a rerun skips it.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "db/store.h"
#include "kernels/gemm/gemm.h"
#include "tuner/family_ops.h"
#include "tuner/jit/compiler.h"
#include "tuner/profile/lookup.h"
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
  // Safety engine.
  bool isolate = true;        // candidates run in a worker process (false: in this process, for debugging)
  bool coverage = true;       // validate each row's kernel on every M its bucket serves
  profile::RuleKind rule = profile::RuleKind::kAiterGemm;  // the consumer's lookup rule
  std::int64_t m_max = 32768;          // the M domain is 1..m_max
  std::int64_t every_m_limit = 16384;  // every served M up to this is validated; a sample above it
  // Tiered search (tune --profile). Empty: every row sweeps the whole space. Otherwise rows at these Ms
  // (anchors) sweep it and are tuned first; every other row tries the tier_keep fastest configs of the
  // nearest anchor below and above it in its group, plus configs it supports that those anchors did not
  // (tiered_configs, tuner/search.h), and the whole space only when none of those passes.
  std::set<std::int64_t> anchor_ms;
  std::size_t tier_keep = 8;
};

struct ProblemSummary {
  Json problem;
  std::string key;
  std::string device;  // the name of the device it was tuned on
  std::string best_config;
  double median_us = 0, min_us = 0, spread = 0;
  double tflops = 0, gbs = 0;
  double served_us = 0;      // best_config's mean over the served sample (0: none)
  std::string served_ms;     // that sample, JSON [M, ...]
  int passed = 0, failed = 0, unsupported = 0;
  int skipped = 0;             // tiered search: supported configs this row did not try
  std::string search;          // "full" or "tiered: ..." (which configs the row tried, and why)
  std::map<std::string, int> dispositions;  // of this problem's candidates
  std::map<std::string, std::string> config_dispositions;  // config -> "disposition: detail"
  // Coverage: the row export takes (empty when no candidate passed it), and how many Ms it was checked on.
  std::string covered_config;
  std::int64_t covered_ms = 0;
  std::vector<std::string> coverage_failures;  // "config: disposition at M=...: detail"
};

/// Tunes every problem of `ops`'s family on the device; returns the per-problem summary (empty best_config:
/// none passed).
std::vector<ProblemSummary> tune(const FamilyOps& ops, const std::vector<Json>& problems, const TuneOptions& opt,
                                 db::Store& store);
std::vector<ProblemSummary> tune_gemm(const std::vector<gemm::Problem>& problems, const TuneOptions& opt, db::Store& store);

/// A config to validate on a problem at some Ms, beside tuning (no timing, nothing stored).
struct SpotCheck {
  Json problem;
  std::string config;
  std::vector<std::int64_t> ms;  // ascending; the largest sizes the buffers
};
struct SpotResult {
  std::string disposition;  // db::to_string(Disposition)
  std::string detail;
  std::int64_t checked = 0;  // Ms validated
  bool stored = false;       // the verdict of an earlier run on the same code (the database's), not run again
};
/// Validates each check's config on its problem at its Ms on the device (a worker unless opt.isolate is
/// false), at the index width proven for the largest M; code objects come from `store`'s cache. Each verdict is
/// stored (a coverage record of the check's problem, domain "spot:[Ms]"); one stored for the same code is reused.
/// tune --profile checks the fused-MoE rows' choices on skewed routing with it.
std::vector<SpotResult> spot_check(const FamilyOps& ops, const std::vector<SpotCheck>& checks, const TuneOptions& opt,
                                   db::Store& store);

/// ptxas's note (the log line) that it serialized a kernel's wgmma pipeline, or empty.
std::string wgmma_serialization_note(const std::string& log);
/// Whether `log` carries ptxas's report (NVIDIA: the compiler runs ptxas with -v, so a real report always
/// names the registers used). Without it the serialization check above cannot see anything.
bool has_ptxas_report(const std::string& log);
/// The code key stored with a result and its coverage for `config` at `bits`, as `compiler` keys its pipeline's
/// kernels now (their key hashes in launch order, joined by '+'); nothing is compiled.
std::string code_key_of(const jit::Compiler& compiler, const FamilyOps& ops, const std::string& config, int bits);
/// A row left out of an export, and why.
struct StaleRow {
  db::BestRow row;
  std::string why;
  std::string text() const { return row.config_name + " for " + row.problem_json + ": " + why; }
};
/// The rows among `rows` whose coverage judged the code this tunetab builds now for their device (its arch,
/// with `jit_flags`): a row judged on other code (a template, an embedded header, a flag or the compiler
/// changed since) is left out, into `stale`. The tune judges such rows again before it exports; an export
/// on its own can only leave them out.
std::vector<db::BestRow> rows_on_current_code(const FamilyOps& ops, std::vector<db::BestRow> rows,
                                              const std::vector<std::string>& jit_flags, std::vector<StaleRow>* stale);
/// Compiles `sources` for `arch` (through `cache` when given), prints each failure with its log and a
/// summary line; returns the number that failed (a code object whose wgmma pipeline ptxas serialized counts).
int compile_and_report(const std::vector<KernelSource>& sources, const std::string& arch, const TuneOptions& opt,
                       db::Store* cache);

/// The distinct code objects the supported candidates of `problems` need on `arch` (no GPU: no CU count),
/// each at the index width proven for the largest M its row serves under opt.rule on 1..opt.m_max.
std::vector<KernelSource> needed_sources(const FamilyOps& ops, const std::vector<Json>& problems, const std::string& arch,
                                         const TuneOptions& opt);

/// Without a device: compile every candidate code object of `problems` for `arch`. Returns failures.
int compile_check(const FamilyOps& ops, const std::vector<Json>& problems, const std::string& arch,
                  const TuneOptions& opt, db::Store* cache);
int compile_check_gemm(const std::vector<gemm::Problem>& problems, const std::string& arch, const TuneOptions& opt,
                       db::Store* cache);

/// The device record the store keeps for the current device and compiler.
db::DeviceRecord device_record(const DeviceFacts& f);

/// JSON problems of gemm problems.
std::vector<Json> to_json(const std::vector<gemm::Problem>& problems);

}  // namespace tunetab
