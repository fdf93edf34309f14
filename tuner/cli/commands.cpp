#include "tuner/cli/commands.h"

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "db/store.h"
#include "exporters/aiter_bf16_gemm.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm_fp8/gemm_fp8.h"
#include "kernels/moe/moe.h"
#include "kernels/validate/validate.h"
#include "tuner/family_ops.h"
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

void reject_unless_profile(const po::variables_map& vm, const po::options_description& group) {
  for (const auto& o : group.options()) {
    const std::string& name = o->long_name();
    if (vm.count(name) && !vm[name].defaulted()) throw_input("--" + name + ": only with --profile or --hf-config");
  }
}

std::string existing_db(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw_input(path + ": no such database (`tunetab tune --db " + path + "` writes it)");
  return path;
}

namespace {

const char* kDefaultDb = "tunetab.db";

#if defined(TUNETAB_PLATFORM_NVIDIA)
const char* kDefaultTarget = "sm_90a";
#else
const char* kDefaultTarget = "gfx90a";
#endif

}  // namespace

int cmd_compile(const Args& args) {
  po::options_description d("compile options");
  TuneOptions opt;
  d.add_options()
      ("target", po::value<std::string>()->default_value(kDefaultTarget),
       "arch: sm_90a (NVRTC), gfx90a (ROCm hipRTC), or any gfx with --compiler clang")
      ("compiler", po::value<std::string>()->default_value("hiprtc"), "hiprtc (the runtime path) or clang (offline, AMD only)")
      ("clang", po::value<std::string>(), "clang++ to use with --compiler clang (default: clang++-19/22 by arch)")
      ("index-bits", po::value<std::vector<int>>()->multitoken(), "index widths to instantiate (default: 32 64)")
      ("family", po::value<std::string>()->default_value("all"), "gemm_bf16, gemm_fp8_blockscale, moe (fused_moe), validate (the device compare) or all")
      ("match", po::value<std::string>(), "only the kernels whose instance name contains this text, e.g. tma3<")
      ("db", po::value<std::string>(), "cache compiled code objects in this database")
      ("jobs,j", po::value<int>(&opt.jobs)->default_value(0), "parallel compile threads (0: all cores)")
      ("no-progress", "plain output only");
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab compile --target ARCH [--compiler hiprtc|clang] [--family F] [--match TEXT]")) return 0;
  opt.progress = !vm.count("no-progress");
  const std::string arch = vm["target"].as<std::string>();
  Target::from_arch(arch);  // validates the name
  std::vector<int> widths = vm.count("index-bits") ? vm["index-bits"].as<std::vector<int>>() : std::vector<int>{32, 64};
  for (int w : widths)
    if (w != 32 && w != 64) throw_input("--index-bits " + std::to_string(w) + ": expected 32 or 64");
  // The whole space: every distinct code object of every config, at each index width.
  std::vector<KernelSource> sources;
  std::set<std::string> seen;
  const std::string family = vm["family"].as<std::string>();
  const bool moe_family = family == "moe" || family == moe::kFamily;
  if (family != "all" && family != gemm::kFamily && family != gemm_fp8::kFamily && !moe_family &&
      family != validate::kFamily)
    throw_input("--family '" + family + "': expected gemm_bf16, gemm_fp8_blockscale, moe, validate or all");
  const std::string match = vm.count("match") ? vm["match"].as<std::string>() : "";
  auto add = [&](std::vector<KernelSource> ks) {
    for (auto& k : ks)
      if (k.name_expression.find(match) != std::string::npos && seen.insert(k.name_expression).second)
        sources.push_back(std::move(k));
  };
  for (int w : widths) {
    if (family == "all" || family == gemm::kFamily)
      for (const auto& c : gemm::enumerate()) add(gemm::kernels(c, w));
    if (family == "all" || family == gemm_fp8::kFamily)
      for (const auto& c : gemm_fp8::enumerate()) add(gemm_fp8::kernels(c, w));
    if (family == "all" || moe_family)
      for (const auto& c : moe::enumerate()) add(moe::kernels(c, w));
  }
  // The device compare of coverage validation: one instance, no index width.
  if (family == "all" || family == validate::kFamily) add({validate::kernel()});
  if (sources.empty()) throw_input("--match '" + match + "': no kernel of --family " + family + " has it in its name");

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
  std::vector<std::string> jit_flags;
  d.add_options()
      ("db", po::value<std::string>()->default_value(kDefaultDb), "SQLite database written by tune")
      ("jit-flag", po::value<std::vector<std::string>>(&jit_flags),
       "the tune's extra hipRTC flags (repeatable): rows count as current only if judged on the code they build now");
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab db [--db F]")) return 0;
  db::Store store(existing_db(vm["db"].as<std::string>()));
  std::printf("schema version %d\n", store.schema_version());
  auto print_counts = [](const char* what, const std::vector<std::pair<std::string, std::int64_t>>& counts) {
    std::string line;
    for (const auto& [name, n] : counts) line += " " + name + "=" + std::to_string(n);
    std::printf("%s:%s\n", what, line.empty() ? " none" : line.c_str());
  };
  print_counts("runs", store.run_counts());
  print_counts("results", store.disposition_counts());
  print_counts("coverage", store.coverage_counts());
  const auto [compiled, failed] = store.cache_counts();
  std::printf("compile cache: %lld code objects compiled, %lld failed\n", static_cast<long long>(compiled),
              static_cast<long long>(failed));
  // Per family, (device, shape) pairs: with a passing result; with a row that passed coverage; and of those, the
  // rows judged on the code this tunetab builds now (what `export` writes; the others are tuned again).
  for (const auto& family : family_names()) {
    const auto best = store.best_results(family);
    auto covered = store.covered_results(family);
    if (best.empty() && covered.empty()) continue;
    const std::size_t n_covered = covered.size();
    std::vector<StaleRow> stale;
    const auto current = rows_on_current_code(family_ops(family), std::move(covered), jit_flags, &stale);
    std::printf("%s, (device, shape) pairs: %zu with a passing result, %zu with a row that passed coverage, %zu of them on "
                "this build's code (exportable)\n",
                family.c_str(), best.size(), n_covered, current.size());
    for (std::size_t i = 0; i < stale.size() && i < 3; ++i) std::printf("  not current: %s\n", stale[i].text().c_str());
    if (stale.size() > 3) std::printf("  ... and %zu more not current\n", stale.size() - 3);
  }
  return 0;
}

}  // namespace tunetab::cli
