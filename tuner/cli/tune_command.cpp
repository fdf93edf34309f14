// tune, export and verify: the commands that run candidates on the device through the safety engine and
// write (or re-check) certified tables.
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "db/store.h"
#include "exporters/aiter_bf16_gemm.h"
#include "exporters/certificate.h"
#include "kernels/gemm/gemm.h"
#include "tuner/cli/commands.h"
#include "tuner/family_ops.h"
#include "tuner/runner.h"
#include "tuner/safety/certify.h"
#include "tuner/safety/executor.h"
#include "tuner/safety/planted.h"
#include "tuner/shapes.h"
#include "tuner/table_export.h"
#include "tuner/text_file.h"
#include "tuner/tune_plan.h"

namespace po = boost::program_options;

namespace tunetab::cli {

namespace {

const char* kDb = "tunetab.db";

#if defined(TUNETAB_PLATFORM_NVIDIA)
const char* kTarget = "sm_90a";
#else
const char* kTarget = "gfx90a";
#endif

std::vector<gemm::Problem> problems_from(const po::variables_map& vm) {
  if (vm.count("shapes") && vm.count("shapes-file")) throw_input("give --shapes or --shapes-file, not both");
  if (vm.count("shapes")) return parse_gemm_shapes(vm["shapes"].as<std::string>());
  if (vm.count("shapes-file")) return read_aiter_untuned_gemm(vm["shapes-file"].as<std::string>());
  return default_gemm_shapes();
}

/// --rule, --m-max and --every-m: the domain each row is validated over.
void add_domain_options(po::options_description& d) {
  d.add_options()
      ("rule", po::value<std::string>()->default_value("aiter-gemm"),
       "the consumer's lookup rule, which decides the Ms each row serves: aiter-gemm, aiter-fmoe, vllm-nearest, exact")
      ("m-max", po::value<std::int64_t>()->default_value(32768), "the M domain is 1..m-max")
      ("every-m", po::value<std::int64_t>()->default_value(16384),
       "validate every served M up to this; above it the ends, powers of two, primes, tile edges and 2^31/N");
}

void read_domain_options(const po::variables_map& vm, TuneOptions& opt) {
  opt.rule = profile::rule_from_string(vm["rule"].as<std::string>());
  opt.m_max = vm["m-max"].as<std::int64_t>();
  opt.every_m_limit = vm["every-m"].as<std::int64_t>();
  if (opt.m_max < 1) throw_input("--m-max " + std::to_string(opt.m_max) + ": expected a positive M");
  if (opt.every_m_limit < 0) throw_input("--every-m " + std::to_string(opt.every_m_limit) + ": expected 0 or more");
}

/// Re-executes `tunetab <command> args` under compute-sanitizer memcheck, in-process (--no-isolation) so the
/// tool sees every launch; returns only when the exec fails.
[[noreturn]] void exec_sanitized(const std::string& command, const Args& args) {
#if !defined(TUNETAB_PLATFORM_NVIDIA)
  throw_input("--sanitize runs compute-sanitizer: NVIDIA platform builds only");
#else
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) throw_input("--sanitize: cannot find this executable (/proc/self/exe)");
  self[n] = '\0';
  std::vector<std::string> argv = {"compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "3",
                                   "--print-limit", "20", self, command};
  for (const auto& a : args)
    if (a != "--sanitize" && a != "--no-isolation") argv.push_back(a);
  argv.push_back("--no-isolation");
  std::vector<char*> raw;
  for (auto& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  std::fprintf(stderr, "running under compute-sanitizer memcheck (in-process)\n");
  std::fflush(nullptr);
  ::execvp(raw[0], raw.data());
  throw_input("--sanitize: cannot run compute-sanitizer (" + std::string(std::strerror(errno)) +
              "); is the CUDA toolkit's bin directory on PATH?");
#endif
}

/// Writes the rows of `family` that passed coverage to `path`, and the certificate beside it; both are
/// read back before returning. Returns the number of rows.
std::size_t export_certified(db::Store& store, const std::string& family, const TuneOptions& opt, const std::string& path) {
  const FamilyOps& ops = family_ops(family);
  std::vector<StaleRow> stale;
  const auto best = rows_on_current_code(ops, store.covered_results(family), opt.jit_flags, &stale);
  if (!stale.empty())
    std::fprintf(stderr, "warning: %zu row(s) not exported: judged on other code (run tune again to judge them on this "
                 "tunetab's; pass the --jit-flag the tune used), e.g. %s\n", stale.size(), stale.front().text().c_str());
  if (best.empty()) return 0;  // no table: nothing in it would be validated (the caller says so)
  const auto rows = exporters::aiter_bf16_gemm_rows(best);
  std::ostringstream text;
  exporters::write_aiter_bf16_gemm(text, rows);
  std::istringstream back(text.str());
  TUNETAB_ASSERT(exporters::read_aiter_bf16_gemm(back, "(exported table)").size() == rows.size(), "exported table does not read back");
  const auto cert = safety::certify(ops, best, opt.rule, opt.m_max, path, "aiter-bf16-gemm", text.str());
  write_text_file(path, text.str());
  const std::string cert_path = exporters::certificate_path_for(path);
  exporters::write_certificate(cert_path, cert);
  const auto reread = exporters::read_certificate(cert_path);
  TUNETAB_ASSERT(reread.rows.size() == rows.size(), "certificate does not read back");
  const std::size_t uncovered = store.best_results(family).size() - rows.size();
  std::fprintf(stderr, "exported %zu rows to %s, certificate %s (%s, M 1..%lld)\n", rows.size(), path.c_str(),
               cert_path.c_str(), profile::to_string(opt.rule).c_str(), static_cast<long long>(opt.m_max));
  if (uncovered)
    std::fprintf(stderr, "warning: %zu shape(s) have passing candidates but none passed coverage: not exported\n", uncovered);
  return rows.size();
}

/// For the planted-fault demo: each fault's dispositions, and whether it was caught as it must be.
int report_planted(const std::vector<ProblemSummary>& sums, db::Store& store) {
  std::set<std::string> exported;
  for (const auto& b : store.covered_results(kPlantedFamily)) exported.insert(b.config_name);
  std::printf("\nplanted faults (family %s):\n", kPlantedFamily);
  int caught = 0, leaked = 0;
  const auto faults = planted_faults();
  for (PlantedFault f : faults) {
    const std::string config = "planted_" + planted_fault_name(f);
    const std::string expected = expected_disposition(f);
    std::string seen;
    bool hit = false;
    for (const auto& s : sums) {
      // The dispositions this fault got for this shape: at tuning, then in coverage (if it got that far).
      std::vector<std::string> got;
      auto it = s.config_dispositions.find(config);
      got.push_back(it == s.config_dispositions.end() ? "?" : it->second.substr(0, it->second.find(':')));
      for (const auto& c : s.coverage_failures)
        if (c.rfind(config + ": ", 0) == 0) {
          const std::string rest = c.substr(config.size() + 2);
          got.push_back("coverage " + rest.substr(0, rest.find(':')));
        }
      std::string text;
      for (const auto& g : got) {
        text += (text.empty() ? "" : ", ") + g;
        const std::string d = g.rfind("coverage ", 0) == 0 ? g.substr(9) : g;
        if (("|" + expected + "|").find("|" + d + "|") != std::string::npos) hit = true;
      }
      seen += (seen.empty() ? "" : "; ") + std::string("M=") + std::to_string(s.problem.value("m", 0)) + " " + text;
    }
    const bool ok = hit && !exported.count(config);
    caught += ok ? 1 : 0;
    leaked += exported.count(config) ? 1 : 0;
    std::printf("  %-11s expected %-22s %s: %s\n", planted_fault_name(f).c_str(), expected.c_str(), ok ? "CAUGHT" : "MISSED",
                seen.c_str());
  }
  std::printf("planted faults: %d of %zu caught with the expected disposition; %d in the exported table\n", caught,
              faults.size(), leaked);
  return caught == static_cast<int>(faults.size()) ? 0 : 1;
}

/// The plan's tables from the store (export_plan), what was left out, and the gap report on the tables written:
/// 1 when a row is missing or a table has a serving gap.
int export_and_audit(db::Store& store, const TunePlan& plan, const profile::Matrix& matrix, const ExportOptions& eo) {
  const ExportResult ex = export_plan(store, plan, matrix, eo);
  int status = ex.missing.empty() ? 0 : 1;
  std::printf("\n");
  for (const auto& t : ex.tables)
    std::printf("exported %zu rows to %s, certificate %s\n", t.rows, t.path.c_str(), t.cert_path.c_str());
  for (const auto& n : ex.notes) std::printf("note: %s\n", n.c_str());
  for (const auto& m : ex.missing) std::printf("not exported: %s\n", m.c_str());
  for (const auto& g : check_gaps(ex.tables, matrix)) {
    std::printf("\ngaps %s (%zu file%s):\n%s", exporters::to_string(g.format).c_str(), g.paths.size(),
                g.paths.size() == 1 ? "" : "s", exporters::to_text(g.report).c_str());
    status |= g.report.has_serving_gaps() ? 1 : 0;
  }
  return status;
}

/// `tune --profile F` (or --hf-config and the envelope flags): every key of the deployment's support matrix,
/// one problem per table row, each key validated under its own rule and M domain; then the tables, their
/// certificates and the gap report on them.
int tune_profile(po::variables_map& vm, TuneOptions opt, const std::string& command_line) {
  for (const char* f : {"shapes", "shapes-file", "export", "plant-faults"})
    if (vm.count(f))
      throw_input(std::string("--") + f + ": not with --profile/--hf-config (the profile gives the shapes, --export-dir the tables)");
  if (!vm["rule"].defaulted() || !vm["m-max"].defaulted())
    throw_input("--rule/--m-max: not with --profile/--hf-config: each key is validated under its own rule (--fmoe-rule, "
                "--gemm-rule) over its own M domain (max-num-batched-tokens; lm_head: max-num-seqs)");
  const auto matrix = deployment_matrix(vm);
  const TunePlan plan = make_tune_plan(matrix, vm.count("skip-unsupported") > 0);
  for (const auto& s : plan.skipped) std::printf("skipped (--skip-unsupported): %s\n", s.c_str());
  // --families: the keys tuned now; the export still writes (and audits) every table of the profile.
  TunePlan tuned = vm.count("families") ? plan.only_families(vm["families"].as<std::string>(), "--families") : plan;
  const bool tiered = !vm.count("full-sweep");
  if (vm.count("sweep-rows")) {
    if (!tiered) throw_input("--sweep-rows: not with --full-sweep (every row tries every config already)");
    tuned = tuned.with_anchors_in(vm["sweep-rows"].as<std::string>(), "--sweep-rows");
  }
  opt.tier_keep = vm["tier-keep"].as<std::size_t>();
  const std::string strategy =
      tiered ? "tiered: every config at the anchor rows (the smallest, those nearest M=16 and M=256, the largest" +
                   (vm.count("sweep-rows") ? ", those in M " + vm["sweep-rows"].as<std::string>() : std::string()) +
                   "), elsewhere the best " + std::to_string(opt.tier_keep) + " of the nearest anchors plus the configs they could not run"
             : "full: every config at every row";
  std::printf("plan: %s\nsearch: %s\n", plan.summary().c_str(), strategy.c_str());
  if (tuned.keys.size() < plan.keys.size())
    std::printf("--families: %zu of the plan's %zu keys are tuned (%s); an export covers all of them\n", tuned.keys.size(),
                plan.keys.size(), tuned.summary().c_str());
  if (vm.count("sweep-rows"))
    std::printf("--sweep-rows %s: %s\n", vm["sweep-rows"].as<std::string>().c_str(), tuned.summary().c_str());
  std::fflush(stdout);
  if (vm.count("export-dir") && !opt.coverage) throw_input("--export-dir needs coverage validation: drop --no-coverage");
  db::Store store(vm["db"].as<std::string>());

  std::string why;
  const int devices = safety::probe_devices(opt.isolate, &why);
  if (vm.count("compile-only") || devices == 0) {
    const std::string target = vm["target"].as<std::string>();
    std::vector<KernelSource> sources;
    std::set<std::string> seen;
    for (const PlanKey& key : tuned.keys) {
      TuneOptions o = opt;
      o.rule = key.rule;
      o.m_max = key.domain.last;
      for (auto& k : needed_sources(family_ops(key.family), key.problems, target, o))
        if (seen.insert(k.name_expression).second) sources.push_back(std::move(k));
    }
    if (devices == 0)
      std::printf("no GPU available (%s): nothing can be validated, timed or exported here.\n"
                  "compile-checking every code object the plan's %zu keys need for %s instead.\n",
                  why.c_str(), tuned.keys.size(), target.c_str());
    std::fflush(stdout);
    return compile_and_report(sources, target, opt, &store) ? 1 : 0;
  }

  int missing = 0, uncovered = 0, skewed_failures = 0;
  std::string device;
  std::map<std::string, int> totals;
  for (std::size_t i = 0; i < tuned.keys.size(); ++i) {
    const PlanKey& key = tuned.keys[i];
    std::string anchors;
    for (std::int64_t a : key.anchors) {
      if (!anchors.empty()) anchors += ",";
      anchors += std::to_string(a);
    }
    std::printf("\n[%zu/%zu] %s: %s, %zu rows (M %lld..%lld, rule %s), anchors M=%s\n", i + 1, tuned.keys.size(),
                key.label.c_str(), key.family.c_str(), key.problems.size(), static_cast<long long>(key.domain.first),
                static_cast<long long>(key.domain.last), profile::to_string(key.rule).c_str(), anchors.c_str());
    std::fflush(stdout);
    TuneOptions o = opt;
    o.rule = key.rule;
    o.m_max = key.domain.last;
    if (tiered) o.anchor_ms = key.anchors;
    o.command_line = command_line + "  # key: " + key.label + "; search: " + strategy;
    const auto key_start = std::chrono::steady_clock::now();
    const auto sums = tune(family_ops(key.family), key.problems, o, store);
    for (const auto& s : sums) {
      device = s.device;
      if (s.best_config.empty()) ++missing;
      if (opt.coverage && s.covered_config.empty()) ++uncovered;
      for (const auto& [disp, n] : s.dispositions) totals[disp] += n;
      const long long m = s.problem.value("m", 0);
      char own[32], served[160] = "";  // the choice's mean over the Ms the row serves, where it was timed at more than its own
      std::snprintf(own, sizeof(own), "[%lld]", m);
      if (s.served_us > 0 && s.served_ms != own)
        std::snprintf(served, sizeof(served), " (%.3f us mean at M %s)", s.served_us, s.served_ms.c_str());
      std::printf("  M=%-6lld %-40s %10.3f us%s  %s  [%s]\n", m,
                  s.covered_config.empty() ? (s.best_config.empty() ? "(none passed)" : s.best_config.c_str())
                                           : s.covered_config.c_str(),
                  s.median_us, served,
                  s.covered_config.empty() ? (opt.coverage ? "NOT COVERED" : "coverage skipped")
                                           : ("covered on " + std::to_string(s.covered_ms) + " Ms").c_str(),
                  s.search.c_str());
      for (const auto& f : s.coverage_failures) std::printf("         coverage failed: %s\n", f.c_str());
    }
    std::fflush(stdout);
    // Fused MoE was tuned on balanced routing; each row's choice is also validated on skewed routing (a few
    // hot experts, idle ones) at the row's M and its bucket's ends: cheap beside coverage.
    if (key.kind == PlanKind::kFmoe && opt.coverage && !vm.count("no-skewed")) {
      std::vector<SpotCheck> checks;
      std::vector<std::int64_t> rows;
      for (std::size_t r = 0; r < sums.size(); ++r) {
        if (sums[r].covered_config.empty()) continue;
        const auto& b = key.buckets[r];
        std::set<std::int64_t> ms = {b.first, b.m, std::min(b.last, key.domain.last)};
        checks.push_back({fmoe_problem(matrix.fmoe.at(key.index).key, *ms.rbegin(), "skewed"), sums[r].covered_config,
                          std::vector<std::int64_t>(ms.begin(), ms.end())});
        rows.push_back(b.m);
      }
      const auto results = checks.empty() ? std::vector<SpotResult>{} : spot_check(family_ops(key.family), checks, o, store);
      int bad = 0;
      for (std::size_t r = 0; r < results.size(); ++r) {
        if (results[r].disposition == "passed") continue;
        ++bad;
        std::printf("  skewed routing M=%lld %s: %s: %s\n", static_cast<long long>(rows[r]), checks[r].config.c_str(),
                    results[r].disposition.c_str(), results[r].detail.c_str());
      }
      const auto stored = std::count_if(results.begin(), results.end(), [](const SpotResult& x) { return x.stored; });
      std::printf("  skewed routing: %zu of %zu rows' choices passed at their bucket's ends (%zu checked before, on the same code)\n",
                  results.size() - bad, results.size(), static_cast<std::size_t>(stored));
      skewed_failures += bad;
    }
    // NOTE: what a resumed key costs (its stored verdicts stand) against one judged again: for planning
    // bounded device calls.
    std::printf("  key done in %.0f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - key_start).count());
    std::fflush(stdout);
  }
  std::string line;
  for (const auto& [disp, n] : totals) line += " " + disp + "=" + std::to_string(n);
  std::printf("\ncandidates:%s\n", line.c_str());
  int status = missing || uncovered || skewed_failures ? 1 : 0;
  if (skewed_failures) std::fprintf(stderr, "%d fused-MoE row(s) failed on skewed routing\n", skewed_failures);
  if (missing) std::fprintf(stderr, "%d row(s) have no passing candidate\n", missing);
  if (uncovered) std::fprintf(stderr, "%d row(s) have no candidate that passed coverage\n", uncovered);
  if (!vm.count("export-dir")) {
    std::printf("no --export-dir: nothing exported, no gap report\n");
    return status;
  }

  ExportOptions eo;
  eo.dir = vm["export-dir"].as<std::string>();
  eo.device = device;
  eo.jit_flags = opt.jit_flags;
  if (vm.count("vllm-device-name")) eo.vllm_device_name = vm["vllm-device-name"].as<std::string>();
  return status | export_and_audit(store, plan, matrix, eo);
}

}  // namespace

int cmd_tune(const Args& args, const std::string& command_line) {
  po::options_description d("tune options");
  TuneOptions opt;
  d.add_options()
      ("shapes", po::value<std::string>(), "shapes as \"M,N,K;M,N,K\" (default: the built-in list)")
      ("shapes-file", po::value<std::string>(), "AITER untuned GEMM CSV (M,N,K,bias,dtype,outdtype,...)")
      ("db", po::value<std::string>()->default_value(kDb), "SQLite database (created if absent; a rerun resumes)")
      ("device", po::value<int>(&opt.device)->default_value(0), "GPU ordinal")
      ("jobs,j", po::value<int>(&opt.jobs)->default_value(0), "parallel compile threads (0: all cores)")
      ("top", po::value<std::size_t>(&opt.final_top)->default_value(4), "candidates re-timed carefully per shape (the fused MoE: twice as many)")
      ("timeout-ms", po::value<double>(&opt.launch_timeout_ms)->default_value(10000), "per-launch timeout during validation")
      ("seed", po::value<std::uint64_t>(&opt.seed)->default_value(20261130), "random input seed")
      ("target", po::value<std::string>()->default_value(kTarget), "compile target when no GPU is present")
      ("compile-only", "compile-check every candidate; do not run (implied without a GPU)")
      ("export", po::value<std::string>(), "after tuning, write the AITER bf16 table here (and FILE.cert.json)")
      ("jit-flag", po::value<std::vector<std::string>>(&opt.jit_flags), "extra hipRTC flag (repeatable; part of the cache key)")
      ("no-isolation", "run candidates in this process, not a worker (debugging; a fault ends the run)")
      ("no-coverage", "skip coverage validation (nothing can then be exported)")
      ("plant-faults", "TEST: tune the gemm_bf16_planted family (good configs plus planted faults) and report each fault")
      ("sanitize", "re-run this command under compute-sanitizer memcheck (NVIDIA; in-process)")
      ("no-progress", "plain output only");
  add_domain_options(d);
  po::options_description p("tune --profile: every key of a deployment (the options of `tunetab shapes`)");
  p.add_options()
      ("export-dir", po::value<std::string>(),
       "write bf16_tuned_gemm.csv, a8w8_blockscale_tuned_gemm.csv, tuned_fmoe.csv and vLLM's fused-MoE JSON here, each "
       "with FILE.cert.json, then run the gap report on them (exit 1 on a gap)")
      ("tier-keep", po::value<std::size_t>()->default_value(8), "rows between anchors try this many of the nearest anchors' best")
      ("full-sweep", "every row tries every config (no tiers)")
      ("sweep-rows", po::value<std::string>(),
       "FIRST-LAST: the rows with M in that range try every config too (anchors), e.g. 257-352 for rows whose tiered "
       "search may have missed a tile")
      ("no-skewed", "skip validating the fused-MoE rows' choices on skewed routing")
      ("skip-unsupported", "skip keys no family serves (e.g. fp8-per-token) with a message instead of failing")
      ("families", po::value<std::string>(),
       "tune only the keys of these families (comma-separated: gemm_bf16, gemm_fp8_blockscale, fused_moe); "
       "--export-dir still writes every table from the database")
      ("vllm-device-name", po::value<std::string>(), "device_name of vLLM's file names (default: the tuning device's)");
  p.add(matrix_options());
  d.add(p);
  po::variables_map vm;
  if (!parse(args, d, vm,
             "tunetab tune [--shapes M,N,K;...|--shapes-file F] [--db F] [--export F]\n"
             "       tunetab tune --profile F [--tp N --ep N --quant Q ...] [--db F] [--export-dir D]"))
    return 0;
  if (vm.count("sanitize")) exec_sanitized("tune", args);
  opt.progress = !vm.count("no-progress");
  opt.command_line = command_line;
  opt.isolate = !vm.count("no-isolation");
  opt.coverage = !vm.count("no-coverage");
  read_domain_options(vm, opt);
  if (vm.count("profile") || vm.count("hf-config")) return tune_profile(vm, opt, command_line);
  reject_unless_profile(vm, p);
  const std::string family = vm.count("plant-faults") ? kPlantedFamily : gemm::kFamily;
  const FamilyOps& ops = family_ops(family);
  const auto problems = to_json(problems_from(vm));
  if (vm.count("export") && !opt.coverage) throw_input("--export needs coverage validation: drop --no-coverage");
  db::Store store(vm["db"].as<std::string>());

  std::string why;
  // NOTE: with isolation, a short-lived worker counts the devices: this process must never initialise the GPU.
  const int devices = safety::probe_devices(opt.isolate, &why);
  if (vm.count("compile-only") || devices == 0) {
    if (devices == 0)
      std::printf("no GPU available (%s): nothing can be validated or timed here.\n"
                  "compile-checking every candidate of %zu shapes for %s instead.\n",
                  why.c_str(), problems.size(), vm["target"].as<std::string>().c_str());
    const int failures = compile_check(ops, problems, vm["target"].as<std::string>(), opt, &store);
    return failures ? 1 : 0;
  }

  const auto summaries = tune(ops, problems, opt, store);
  std::printf("\n%-8s %-6s %-6s %-34s %10s %10s %8s %8s %9s %6s %6s %6s %-34s %8s\n", "M", "N", "K", "best config",
              "median_us", "min_us", "spread", "TFLOP/s", "GB/s", "pass", "fail", "unsup", "exported (coverage passed)",
              "cov_Ms");
  int missing = 0, uncovered = 0;
  std::map<std::string, int> totals;
  for (const auto& s : summaries) {
    if (s.best_config.empty()) ++missing;
    if (opt.coverage && s.covered_config.empty()) ++uncovered;
    for (const auto& [disp, n] : s.dispositions) totals[disp] += n;
    std::printf("%-8lld %-6lld %-6lld %-34s %10.3f %10.3f %8.3f %8.1f %9.1f %6d %6d %6d %-34s %8lld\n",
                static_cast<long long>(s.problem.value("m", 0)), static_cast<long long>(s.problem.value("n", 0)),
                static_cast<long long>(s.problem.value("k", 0)),
                s.best_config.empty() ? "(none passed)" : s.best_config.c_str(), s.median_us, s.min_us, s.spread,
                s.tflops, s.gbs, s.passed, s.failed, s.unsupported,
                s.covered_config.empty() ? (opt.coverage ? "(none passed coverage)" : "-") : s.covered_config.c_str(),
                static_cast<long long>(s.covered_ms));
    for (const auto& f : s.coverage_failures) std::printf("         coverage failed: %s\n", f.c_str());
  }
  std::string line;
  for (const auto& [disp, n] : totals) line += " " + disp + "=" + std::to_string(n);
  std::printf("candidates:%s\n", line.c_str());
  int status = missing || uncovered ? 1 : 0;
  if (vm.count("export")) export_certified(store, family, opt, vm["export"].as<std::string>());
  if (vm.count("plant-faults")) status |= report_planted(summaries, store);
  if (missing) std::fprintf(stderr, "%d shape(s) have no passing candidate\n", missing);
  if (uncovered) std::fprintf(stderr, "%d shape(s) have no candidate that passed coverage\n", uncovered);
  return status;
}

/// `export --profile F --export-dir D`: the tables `tune --profile --export-dir D` writes, from the tune's database
/// alone (a finished tune's, or a cut one's: what is covered so far), on any machine. The rows are the same: covered
/// on the code this tunetab builds today, on one device.
int export_profile(po::variables_map& vm, const std::vector<std::string>& jit_flags) {
  for (const char* f : {"output", "unverified"})
    if (vm.count(f)) throw_input(std::string("--") + f + ": not with --profile/--hf-config (--export-dir takes the tables)");
  if (!vm["format"].defaulted() || !vm["family"].defaulted())
    throw_input("--format/--family: not with --profile/--hf-config (the profile's keys decide the tables and formats)");
  if (!vm["rule"].defaulted() || !vm["m-max"].defaulted() || !vm["every-m"].defaulted())
    throw_input("--rule/--m-max/--every-m: not with --profile/--hf-config: each key keeps its own rule (--fmoe-rule, "
                "--gemm-rule) and M domain, and its rows were validated when they were tuned");
  if (!vm.count("export-dir"))
    throw_input("--export-dir is required with --profile/--hf-config: the folder for the tables and their certificates");
  const std::string db_path = existing_db(vm["db"].as<std::string>());
  const auto matrix = deployment_matrix(vm);
  const TunePlan plan = make_tune_plan(matrix, vm.count("skip-unsupported") > 0);
  for (const auto& s : plan.skipped) std::printf("skipped (--skip-unsupported): %s\n", s.c_str());
  std::printf("plan: %s\n", plan.summary().c_str());
  db::Store store(db_path);

  ExportOptions eo;
  eo.dir = vm["export-dir"].as<std::string>();
  eo.jit_flags = jit_flags;
  if (vm.count("vllm-device-name")) eo.vllm_device_name = vm["vllm-device-name"].as<std::string>();
  eo.device = export_device(store, plan, vm.count("device-name") ? vm["device-name"].as<std::string>() : "", db_path);
  std::printf("rows: %s\n", eo.device.empty() ? "none covered in this database" : ("those covered on " + eo.device).c_str());
  std::fflush(stdout);
  return export_and_audit(store, plan, matrix, eo);
}

int cmd_export(const Args& args) {
  po::options_description d("export options");
  TuneOptions opt;
  d.add_options()
      ("db", po::value<std::string>()->default_value(kDb), "SQLite database written by tune")
      ("format", po::value<std::string>()->default_value("aiter-bf16-gemm"), "table format: aiter-bf16-gemm")
      ("family", po::value<std::string>()->default_value(gemm::kFamily), "kernel family whose rows are exported")
      ("output,o", po::value<std::string>(), "output file; its certificate goes to FILE.cert.json")
      ("unverified", "the fastest passing rows without coverage or certificate (stdout without -o)")
      ("jit-flag", po::value<std::vector<std::string>>(&opt.jit_flags),
       "the tune's extra hipRTC flags (repeatable): a row is exported only if it was validated on the code they build now");
  add_domain_options(d);
  po::options_description p("export --profile: a deployment's tables from its tune's database (no GPU needed)");
  p.add_options()
      ("export-dir", po::value<std::string>(),
       "write the tables tune --profile --export-dir writes, each with FILE.cert.json, then run the gap report on them "
       "(exit 1 on a row left out or a gap)")
      ("device-name", po::value<std::string>(), "only rows tuned on this device (needed when the database holds several)")
      ("vllm-device-name", po::value<std::string>(), "device_name of vLLM's file names (default: the tuning device's)")
      ("skip-unsupported", "skip keys no family serves (e.g. fp8-per-token) with a message instead of failing");
  p.add(matrix_options());
  d.add(p);
  po::variables_map vm;
  if (!parse(args, d, vm,
             "tunetab export --format aiter-bf16-gemm [--db F] -o F\n"
             "       tunetab export --profile F [--tp N --ep N --quant Q ...] [--db F] --export-dir D"))
    return 0;
  if (vm.count("profile") || vm.count("hf-config")) return export_profile(vm, opt.jit_flags);
  reject_unless_profile(vm, p);
  const std::string format = vm["format"].as<std::string>();
  if (format != "aiter-bf16-gemm") throw_input("--format '" + format + "': supported formats: aiter-bf16-gemm");
  read_domain_options(vm, opt);
  const std::string family = vm["family"].as<std::string>();
  family_ops(family);  // validates the name
  if (!vm.count("unverified") && !vm.count("output"))
    throw_input("-o/--output is required: the certificate is written beside the table (or --unverified for stdout)");
  db::Store store(existing_db(vm["db"].as<std::string>()));
  if (!vm.count("unverified")) {
    if (export_certified(store, family, opt, vm["output"].as<std::string>()) == 0) {
      std::fprintf(stderr, "error: no %s row to export (none passed coverage on this tunetab's code); nothing written\n",
                   family.c_str());
      return 1;
    }
    return 0;
  }
  const auto rows = exporters::aiter_bf16_gemm_rows(store.best_results(family));
  std::ostringstream text;
  exporters::write_aiter_bf16_gemm(text, rows);
  // Every exporter reads back what it wrote before anything reaches the user.
  std::istringstream back(text.str());
  const auto reread = exporters::read_aiter_bf16_gemm(back, "(exported table)");
  TUNETAB_ASSERT(reread.size() == rows.size(), "exported table does not read back");
  if (vm.count("output")) {
    write_text_file(vm["output"].as<std::string>(), text.str());
    std::fprintf(stderr, "exported %zu unverified rows to %s (no certificate)\n", rows.size(), vm["output"].as<std::string>().c_str());
  } else {
    std::cout << text.str();
  }
  if (rows.empty()) std::fprintf(stderr, "warning: the database holds no passing %s result\n", family.c_str());
  return 0;
}

int cmd_verify(const Args& args) {
  po::options_description d("verify options");
  safety::VerifyOptions opt;
  TuneOptions domain;
  d.add_options()
      ("table", po::value<std::string>(&opt.table)->required(), "a table tunetab exported (aiter-bf16-gemm)")
      ("cert", po::value<std::string>(&opt.cert), "its certificate (its rule, domain and index widths are re-checked)")
      ("device", po::value<int>(&opt.device)->default_value(0), "GPU ordinal")
      ("timeout-ms", po::value<double>(&opt.launch_timeout_ms)->default_value(10000), "per-launch timeout")
      ("db", po::value<std::string>(&opt.cache_db), "compile cache database (optional)")
      ("no-isolation", "run in this process, not a worker (debugging)")
      ("sanitize", "re-run under compute-sanitizer memcheck (NVIDIA; in-process)")
      ("no-progress", "plain output only");
  add_domain_options(d);
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab verify --table F [--cert F.cert.json]")) return 0;
  if (vm.count("sanitize")) exec_sanitized("verify", args);
  read_domain_options(vm, domain);
  opt.rule = domain.rule;
  opt.m_max = domain.m_max;
  opt.every_m_limit = domain.every_m_limit;
  opt.isolate = !vm.count("no-isolation");
  opt.progress = !vm.count("no-progress");
  return safety::verify_table(opt);
}

}  // namespace tunetab::cli
