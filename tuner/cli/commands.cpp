#include "tuner/cli/commands.h"

#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "db/store.h"
#include "exporters/aiter_bf16_gemm.h"
#include "kernels/gemm/gemm.h"
#include "tuner/hip/runtime.h"
#include "tuner/jit/compiler.h"
#include "tuner/jit/offline_clang.h"
#include "tuner/runner.h"
#include "tuner/search.h"
#include "tuner/shapes.h"

namespace po = boost::program_options;

namespace tunetab::cli {

bool parse(const Args& args, po::options_description& desc, po::variables_map& vm, const char* usage_line) {
  desc.add_options()("help,h", "show this help");
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: " << usage_line << "\n\n" << desc << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

namespace {

const char* kDefaultDb = "tunetab.db";

#if defined(TUNETAB_PLATFORM_NVIDIA)
const char* kDefaultTarget = "sm_90a";
#else
const char* kDefaultTarget = "gfx90a";
#endif

std::vector<gemm::Problem> problems_from(const po::variables_map& vm) {
  if (vm.count("shapes") && vm.count("shapes-file")) throw_input("give --shapes or --shapes-file, not both");
  if (vm.count("shapes")) return parse_gemm_shapes(vm["shapes"].as<std::string>());
  if (vm.count("shapes-file")) return read_aiter_untuned_gemm(vm["shapes-file"].as<std::string>());
  return default_gemm_shapes();
}

void add_shape_options(po::options_description& d) {
  d.add_options()
      ("shapes", po::value<std::string>(), "shapes as \"M,N,K;M,N,K\" (default: the built-in list)")
      ("shapes-file", po::value<std::string>(), "AITER untuned GEMM CSV (M,N,K,bias,dtype,outdtype,...)");
}

}  // namespace

int cmd_tune(const Args& args, const std::string& command_line) {
  po::options_description d("tune options");
  add_shape_options(d);
  TuneOptions opt;
  d.add_options()
      ("db", po::value<std::string>()->default_value(kDefaultDb), "SQLite database (created if absent; a rerun resumes)")
      ("device", po::value<int>(&opt.device)->default_value(0), "GPU ordinal")
      ("jobs,j", po::value<int>(&opt.jobs)->default_value(0), "parallel compile threads (0: all cores)")
      ("top", po::value<std::size_t>(&opt.final_top)->default_value(4), "candidates re-timed carefully per shape")
      ("timeout-ms", po::value<double>(&opt.launch_timeout_ms)->default_value(10000), "per-launch timeout during validation")
      ("seed", po::value<std::uint64_t>(&opt.seed)->default_value(20261130), "random input seed")
      ("target", po::value<std::string>()->default_value(kDefaultTarget), "compile target when no GPU is present")
      ("compile-only", "compile-check every candidate; do not run (implied without a GPU)")
      ("export", po::value<std::string>(), "after tuning, write the AITER bf16 table here")
      ("jit-flag", po::value<std::vector<std::string>>(&opt.jit_flags), "extra hipRTC flag (repeatable; part of the cache key)")
      ("no-progress", "plain output only");
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab tune [--shapes M,N,K;...|--shapes-file F] [--db F] [--export F]")) return 0;
  opt.progress = !vm.count("no-progress");
  opt.command_line = command_line;
  const auto problems = problems_from(vm);
  db::Store store(vm["db"].as<std::string>());

  std::string why;
  const int devices = device_count(&why);
  if (vm.count("compile-only") || devices == 0) {
    if (devices == 0)
      std::printf("no GPU available (%s): nothing can be validated or timed here.\n"
                  "compile-checking every candidate of %zu shapes for %s instead.\n",
                  why.c_str(), problems.size(), vm["target"].as<std::string>().c_str());
    const int failures = compile_check_gemm(problems, vm["target"].as<std::string>(), opt, &store);
    return failures ? 1 : 0;
  }

  const auto summaries = tune_gemm(problems, opt, store);
  std::printf("\n%-8s %-6s %-6s %-34s %10s %10s %8s %8s %9s %6s %6s %6s\n", "M", "N", "K", "best config", "median_us",
              "min_us", "spread", "TFLOP/s", "GB/s", "pass", "fail", "unsup");
  int missing = 0;
  for (const auto& s : summaries) {
    if (s.best_config.empty()) ++missing;
    std::printf("%-8lld %-6lld %-6lld %-34s %10.3f %10.3f %8.3f %8.1f %9.1f %6d %6d %6d\n",
                static_cast<long long>(s.problem.m), static_cast<long long>(s.problem.n),
                static_cast<long long>(s.problem.k), s.best_config.empty() ? "(none passed)" : s.best_config.c_str(),
                s.median_us, s.min_us, s.spread, s.tflops, s.gbs, s.passed, s.failed, s.unsupported);
  }
  if (vm.count("export")) {
    std::ofstream out(vm["export"].as<std::string>());
    if (!out) throw_input(vm["export"].as<std::string>() + ": cannot open for writing");
    const auto rows = exporters::aiter_bf16_gemm_rows(store);
    exporters::write_aiter_bf16_gemm(out, rows);
    std::printf("exported %zu rows to %s\n", rows.size(), vm["export"].as<std::string>().c_str());
  }
  if (missing) std::fprintf(stderr, "%d shape(s) have no passing candidate\n", missing);
  return missing ? 1 : 0;
}

int cmd_export(const Args& args) {
  po::options_description d("export options");
  d.add_options()
      ("db", po::value<std::string>()->default_value(kDefaultDb), "SQLite database written by tune")
      ("format", po::value<std::string>()->default_value("aiter-bf16-gemm"), "table format: aiter-bf16-gemm")
      ("output,o", po::value<std::string>(), "output file (default: stdout)");
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab export --format aiter-bf16-gemm [--db F] [-o F]")) return 0;
  const std::string format = vm["format"].as<std::string>();
  if (format != "aiter-bf16-gemm") throw_input("--format '" + format + "': supported formats: aiter-bf16-gemm");
  db::Store store(vm["db"].as<std::string>());
  const auto rows = exporters::aiter_bf16_gemm_rows(store);
  std::ostringstream text;
  exporters::write_aiter_bf16_gemm(text, rows);
  // Every exporter reads back what it wrote before anything reaches the user.
  std::istringstream back(text.str());
  const auto reread = exporters::read_aiter_bf16_gemm(back, "(exported table)");
  TUNETAB_ASSERT(reread.size() == rows.size(), "exported table does not read back");
  if (vm.count("output")) {
    std::ofstream out(vm["output"].as<std::string>());
    if (!out) throw_input(vm["output"].as<std::string>() + ": cannot open for writing");
    out << text.str();
    std::fprintf(stderr, "exported %zu rows to %s\n", rows.size(), vm["output"].as<std::string>().c_str());
  } else {
    std::cout << text.str();
  }
  if (rows.empty()) std::fprintf(stderr, "warning: the database holds no passing gemm_bf16 result\n");
  return 0;
}

int cmd_compile(const Args& args) {
  po::options_description d("compile options");
  TuneOptions opt;
  d.add_options()
      ("target", po::value<std::string>()->default_value(kDefaultTarget),
       "arch: sm_90a (NVRTC), gfx90a (ROCm hipRTC), or any gfx with --compiler clang")
      ("compiler", po::value<std::string>()->default_value("hiprtc"), "hiprtc (the runtime path) or clang (offline, AMD only)")
      ("clang", po::value<std::string>(), "clang++ to use with --compiler clang (default: clang++-19/22 by arch)")
      ("index-bits", po::value<std::vector<int>>()->multitoken(), "index widths to instantiate (default: 32 64)")
      ("db", po::value<std::string>(), "cache compiled code objects in this database")
      ("jobs,j", po::value<int>(&opt.jobs)->default_value(0), "parallel compile threads (0: all cores)")
      ("no-progress", "plain output only");
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab compile --target ARCH [--compiler hiprtc|clang]")) return 0;
  opt.progress = !vm.count("no-progress");
  const std::string arch = vm["target"].as<std::string>();
  Target::from_arch(arch);  // validates the name
  std::vector<int> widths = vm.count("index-bits") ? vm["index-bits"].as<std::vector<int>>() : std::vector<int>{32, 64};
  for (int w : widths)
    if (w != 32 && w != 64) throw_input("--index-bits " + std::to_string(w) + ": expected 32 or 64");
  // The whole space: every distinct code object of every config, at each index width.
  std::vector<KernelSource> sources;
  std::set<std::string> seen;
  for (int w : widths)
    for (const auto& c : gemm::enumerate())
      for (auto& k : gemm::kernels(c, w))
        if (seen.insert(k.name_expression).second) sources.push_back(std::move(k));

  const std::string compiler = vm["compiler"].as<std::string>();
  if (compiler == "clang") {
    if (arch.rfind("gfx", 0) != 0) throw_input("--compiler clang checks AMD targets only (got " + arch + ")");
    const std::string clang = vm.count("clang") ? vm["clang"].as<std::string>() : jit::find_clang_for(arch);
    if (clang.empty()) throw_input("no clang for " + arch + " on PATH (install clang-19, or clang-22 for gfx950)");
    const auto r = jit::offline_compile_check(sources, arch, clang,
                                              opt.jobs > 0 ? opt.jobs : static_cast<int>(std::thread::hardware_concurrency()));
    std::printf("%s: %zu instances for %s in %.1f s: %s\n", clang.c_str(), r.instances, arch.c_str(), r.ms / 1000,
                r.ok ? "ok" : "FAILED");
    if (!r.ok) std::fprintf(stderr, "%s\n%s\n", r.command.c_str(), r.log.c_str());
    return r.ok ? 0 : 1;
  }
  if (compiler != "hiprtc") throw_input("--compiler '" + compiler + "': expected hiprtc or clang");
  std::unique_ptr<db::Store> cache;
  if (vm.count("db")) cache = std::make_unique<db::Store>(vm["db"].as<std::string>());
  const int failures = compile_and_report(sources, arch, opt, cache.get());
  return failures ? 1 : 0;
}

int cmd_configs(const Args& args) {
  po::options_description d("configs options");
  d.add_options()
      ("shape", po::value<std::string>(), "M,N,K: mark each config supported or not, with the reason")
      ("target", po::value<std::string>()->default_value(kDefaultTarget), "arch the constraints are checked for")
      ("cu-count", po::value<int>()->default_value(0), "CU/SM count for the split-K constraints (0: unknown)");
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab configs [--shape M,N,K] [--target ARCH]")) return 0;
  Target t = Target::from_arch(vm["target"].as<std::string>());
  t.cu_count = vm["cu-count"].as<int>();
  if (!vm.count("shape")) {
    for (const auto& c : gemm::enumerate()) std::printf("%s\n", c.name().c_str());
    return 0;
  }
  const auto problems = parse_gemm_shapes(vm["shape"].as<std::string>());
  int supported = 0;
  for (const auto& cand : plan_candidates(problems.at(0), t)) {
    std::printf("%-34s index%-2d %s\n", cand.config.name().c_str(), cand.index_bits,
                cand.unsupported ? ("not_supported: " + *cand.unsupported).c_str() : "supported");
    supported += cand.unsupported ? 0 : 1;
  }
  std::printf("%d of %zu configs supported\n", supported, gemm::enumerate().size());
  return 0;
}

int cmd_devices(const Args& args) {
  po::options_description d("devices options");
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab devices")) return 0;
  std::string why;
  const int n = device_count(&why);
  if (n == 0) {
    std::printf("no GPU: %s\n", why.c_str());
    return 0;
  }
  for (int i = 0; i < n; ++i) {
    const DeviceFacts f = open_device(i);
    std::printf("%d: %s arch=%s cus=%d clock=%d MHz mem_clock=%d MHz bus=%d bit L2=%d MiB smem/block=%d KiB driver=%d\n", i,
                f.name.c_str(), f.arch.c_str(), f.cu_count, f.clock_khz / 1000, f.mem_clock_khz / 1000, f.mem_bus_bits,
                f.l2_bytes >> 20, f.max_smem_per_block >> 10, f.driver_version);
  }
  std::printf("compiler: %s\n", jit::Compiler::version().c_str());
  return 0;
}

int cmd_db(const Args& args) {
  po::options_description d("db options");
  d.add_options()("db", po::value<std::string>()->default_value(kDefaultDb), "SQLite database");
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab db [--db F]")) return 0;
  db::Store store(vm["db"].as<std::string>());
  std::printf("schema version %d\n", store.schema_version());
  for (const auto& [disp, n] : store.disposition_counts()) std::printf("  %-15s %lld\n", disp.c_str(), static_cast<long long>(n));
  const auto best = store.best_results("gemm_bf16");
  std::printf("%zu (device, shape) pairs with a validated best config\n", best.size());
  return 0;
}

}  // namespace tunetab::cli
