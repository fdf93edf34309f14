// GPU tests (label gpu): run only where a device is present; skipped elsewhere. scripts/gpu_check.sh runs them.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "db/store.h"
#include "exporters/aiter_bf16_gemm.h"
#include "kernels/gemm/gemm.h"
#include "tuner/families/gemm_traits.h"
#include "tuner/hip/runtime.h"
#include "tuner/jit/compiler.h"
#include "module_cache.h"
#include "time_spec.h"
#include "tuner/runner.h"

using namespace tunetab;

namespace {

class GemmGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (device_count(&why) == 0) GTEST_SKIP() << "no GPU: " << why;
    facts_ = open_device(0);
    modules_ = std::make_unique<ModuleCache>(facts_.arch);
  }

  const Module& module_for(const gemm::Config& c, int bits) {
    return modules_->get({gemm::kernels(c, bits)[0], static_cast<std::size_t>(c.shared_bytes())});
  }

  /// Launches `c` on random data for `p` and compares with the Eigen reference.
  gemm::Comparison run(const gemm::Problem& p, const gemm::Config& c, int bits, std::uint64_t seed) {
    const std::size_t ws = GemmBf16Traits::workspace_bytes(p, c);
    gemm::Workload w(p, seed, 1, ws);
    Stream s;
    const std::vector<const Module*> pipeline = {&module_for(c, bits)};
    w.poison_output();
    w.launch(c, pipeline, 0, s);
    EXPECT_TRUE(s.synchronize_for(10000));
    auto first = gemm::compare(w.download_output(), w.reference(), {});
    // A second launch on the same buffers: split-K counters must have been reset by the first.
    w.poison_output();
    w.launch(c, pipeline, 0, s);
    s.synchronize();
    auto second = gemm::compare(w.download_output(), w.reference(), {});
    EXPECT_EQ(first.passed, second.passed) << "result changed between launches: a race or a stale counter";
    return second.passed ? first : second;
  }

  DeviceFacts facts_;
  std::unique_ptr<ModuleCache> modules_;
};

}  // namespace

TEST_F(GemmGpu, ConfigsMatchReferenceOnRaggedShapes) {
  // clang-format off
  const gemm::Problem shapes[] = {{1, 3072, 1536}, {17, 200, 72}, {304, 3072, 1536}, {129, 257, 136}, {336, 6144, 2048},
                                  {3, 203, 776}, {16, 3072, 1536}};
  const char* configs[] = {
    "m16n64k64_w16x16_s4_mma_v8_sk1",  "m16n64k64_w16x16_s4_mma_v4_sk3", "m16n256k64_w16x64_s3_mma_v8_sk2",
    "m64n64k64_w32x32_s2_mma_v8_sk1",  "m128n128k32_w64x64_s4_mma_v8_sk1", "m128n256k32_w64x64_s3_mma_v8_sk1",
    "m256n128k32_w64x64_s4_mma_v4_sk1", "m16n64k64_w16x16_s2_simt_v8_sk1", "m64n64k32_w32x32_s2_simt_v8_sk2",
    "m64n64k64_w64x64_s4_wgmma_v8_sk1", "m128n256k64_w64x256_s4_wgmma_v8_sk2", "m64n128k128_w64x128_s5_wgmma_v8_sk1",
    "m128n128k128_w64x128_s3_wgmma_v8_sk3", "m128n256k64_w64x256_s4_wgws_v8_sk1", "m64n64k128_w64x64_s6_wgws_v8_sk1",
    "m128n128k64_w64x128_s3_wgws_v8_sk1", "m16n16k512_w16x4_s1_skinny_v8_sk1", "m1n8k256_w1x2_s1_skinny_v8_sk3",
    "m4n32k512_w4x4_s1_skinny_v8_sk2", "m16n32k512_w16x32_s4_mskinny_v8_sk1", "m32n32k512_w32x32_s2_mskinny_v8_sk3",
    "m64n32k256_w64x32_s2_mskinny_v8_sk2", "m16n64k512_w16x64_s2_mskinny_v8_sk1", "m128n192k64_w64x192_s4_wgmma_v8_sk1",
    "m64n192k64_w64x192_s5_wgws_v8_sk1", "m128n192k64_w64x192_s3_wgmma_v8_sk2", "m128n256k64_w64x256_s4_tma_v8_sk1",
    "m64n128k64_w64x128_s6_tma_v8_sk2", "m128n192k64_w64x192_s5_tma_v8_sk1", "m64n64k128_w64x64_s4_tma_v8_sk3",
    "m128n128k128_w64x128_s3_tma_v8_sk1", "m64n256k64_w64x128_s4_tma_v8_sk1", "m128n256k64_w64x128_s3_tma_v8_sk2",
    "m64n128k64_w64x64_s5_tma_v8_sk1", "m64n144k64_w64x72_s4_tma_v8_sk1", "m64n288k64_w64x144_s4_tma_v8_sk2",
    // clusters of two along M sharing B by multicast (odd row-tile counts run a padding CTA)
    "m64n128k64_w64x64_s4_tma_c2_v8_sk1", "m128n256k64_w64x128_s4_tma_c2_v8_sk2", "m64n144k64_w64x72_s6_tma_c2_v8_sk1",
    "m128n192k64_w64x192_s4_tma_c2_v8_sk3",
    // stream-K: persistent CTAs sharing tiles x K blocks (partial tiles summed by the last contributor;
    // small shapes leave CTAs with no units between a tile's contributors)
    "m128n192k64_w64x192_s4_tma_v8_streamk132", "m64n128k64_w64x64_s6_tma_v8_streamk132",
    "m128n256k64_w64x128_s4_tma_v8_streamk78", "m64n288k64_w64x144_s4_tma_v8_streamk114",
    "m64n64k128_w64x64_s4_tma_v8_streamk132",
    // swapped operands (C^T = B A^T, transposed stores): block_m tiles N, block_n tiles M
    "m192n88k64_w64x88_s6_tma_swap_v8_sk1", "m64n168k64_w64x168_s4_tma_swap_v8_sk1", "m128n80k64_w64x80_s6_tma_swap_v8_sk1",
    "m192n176k64_w64x176_s4_tma_swap_v8_sk1",
    // narrow 128-row TMA tiles (one wave at a few hundred rows)
    "m128n72k64_w64x72_s6_tma_v8_sk2", "m128n176k64_w64x176_s4_tma_v8_sk1",
    // slim 64-row TMA tiles (a few dozen rows over more SMs)
    "m64n24k64_w64x24_s8_tma_v8_sk1", "m64n40k64_w64x40_s6_tma_v8_sk2", "m64n32k64_w64x32_s4_tma_v8_sk1",
    // clusters along N sharing A (swapped: the weights) by multicast, 2 or 4 CTAs; with clusters along M as well;
    // column-tile counts that are not a multiple of the cluster run padding CTAs
    "m192n88k64_w64x88_s6_tma_cn2_swap_v8_sk1", "m128n80k64_w64x80_s4_tma_cn4_swap_v8_sk1",
    "m192n168k64_w64x168_s6_tma_cn2_swap_v8_sk1", "m128n80k64_w64x80_s6_tma_cn2_v8_sk1",
    "m128n192k64_w64x192_s4_tma_cn4_v8_sk1", "m128n128k64_w64x128_s4_tma_c2_cn2_v8_sk2",
  };
  // clang-format on
  Target t = Target::from_arch(facts_.arch);
  t.cu_count = facts_.cu_count;
  int checked = 0;
  for (const auto& p : shapes)
    for (const char* name : configs) {
      const auto c = gemm::Config::from_name(name);
      if (gemm::why_unsupported(p, c, Target::from_arch(facts_.arch))) continue;
      for (int bits : {32, 64}) {
        const auto cmp = run(p, c, bits, 1000 + checked);
        EXPECT_TRUE(cmp.passed) << p.key() << " " << name << " index" << bits << ": " << cmp.summary();
        ++checked;
      }
    }
  EXPECT_GT(checked, 100);
}

TEST_F(GemmGpu, GuardBandsCatchStoresOutsideTheOutput) {
  // A planted fault, compiled from its own source: one thread stores a bf16 kOffset elements from C's start.
  const gemm::Problem p{40, 96, 64};
  const auto c = gemm::Config::from_name("m16n64k64_w16x16_s2_simt_v8_sk1");
  for (long long offset : {40LL * 96 + 5, -2LL, 17LL}) {
    KernelSource k;
    k.family = "planted";
    k.source = "#include \"gemm_bf16.h\"\nnamespace tt {\ntemplate <long long kOffset> __global__ void planted_store(GemmArgs p) {\n"
               "  if (thread_x() == 0 && block_x() == 0 && block_y() == 0) p.c[kOffset] = 0x3f80;\n}\n}\n";
    k.name_expression = "tt::planted_store<" + std::to_string(offset) + "LL>";
    const auto rec = modules_->compiler().compile(k);
    ASSERT_TRUE(rec.ok) << rec.log;
    Module m(rec.binary, rec.lowered_name);
    gemm::Workload w(p, 3, 1, 0);
    Stream s;
    w.poison_output();
    w.launch(c, {&m}, 0, s);
    s.synchronize();
    const auto v = w.guard_violation();
    if (offset >= 0 && offset < p.m * p.n) {
      EXPECT_FALSE(v) << *v;  // inside the buffer: the comparison's business, not the guards'
      EXPECT_FALSE(gemm::compare(w.download_output(), w.reference(), {}).passed);
    } else {
      ASSERT_TRUE(v) << "store at element " << offset << " not caught";
      EXPECT_NE(v->find(offset < 0 ? "before" : "after"), std::string::npos) << *v;
      EXPECT_NE(v->find("C: "), std::string::npos) << *v;
      EXPECT_NE(v->find("offset " + std::to_string(offset * 2)), std::string::npos) << *v;
    }
  }
}

TEST_F(GemmGpu, PoisonedOutputFailsWhenNothingIsWritten) {
  const gemm::Problem p{64, 128, 64};
  gemm::Workload w(p, 5, 1, 0);
  w.poison_output();
  const auto cmp = gemm::compare(w.download_output(), w.reference(), {});
  EXPECT_FALSE(cmp.passed);
  EXPECT_EQ(cmp.non_finite, p.m * p.n);
}

TEST_F(GemmGpu, GraphTimingIsStable) {
  const gemm::Problem p{1024, 3072, 1536};
  const auto c = gemm::Config::from_name("m128n128k32_w64x64_s4_mma_v8_sk1");
  gemm::Workload w(p, 9, rotating_sets_for(p.min_bytes(), facts_.l2_bytes), 0);
  Stream s;
  const std::vector<const Module*> pipeline = {&module_for(c, 32)};
  const auto st = time_launches([&](int i) { w.launch(c, pipeline, i % w.sets(), s); }, s, TimingPlan{});
  EXPECT_GT(st.median_us, 1.0);
  EXPECT_LE(st.min_us, st.median_us);
  EXPECT_LT(st.spread, 0.5);
  EXPECT_GT(st.iterations, 10);
}

// A tool more than a test: with TUNETAB_TIME="M,N,K:config,...[;M,N,K:...]" it validates each config on that shape
// and times it with the tuner's method (rotating sets, graph replays), for A/B comparisons of kernel changes
// and as a target for Nsight (`ncu -k regex:... tunetab_gpu_tests --gtest_filter=GemmGpu.TimeConfigs*`).
TEST_F(GemmGpu, TimeConfigsFromEnvironment) {
  const char* spec = std::getenv("TUNETAB_TIME");
  if (spec == nullptr) GTEST_SKIP() << "set TUNETAB_TIME=M,N,K:config,... to time configs";
  const auto specs = parse_time_specs(spec);
  ASSERT_TRUE(specs) << "TUNETAB_TIME: expected M,N,K:config,...[;M,N,K:config,...]";
  for (const TimeSpec& ts : *specs) {
    long long m = 0, n = 0, k = 0;
    ASSERT_EQ(std::sscanf(ts.head.c_str(), "%lld,%lld,%lld", &m, &n, &k), 3) << "TUNETAB_TIME: M,N,K";
    const gemm::Problem p{m, n, k};
    for (const std::string& name : ts.configs) {
      const auto c = gemm::Config::from_name(name);
      gemm::Workload w(p, 17, rotating_sets_for(p.min_bytes(), facts_.l2_bytes), GemmBf16Traits::workspace_bytes(p, c));
      Stream s;
      const std::vector<const Module*> pipeline = {&module_for(c, 32)};
      w.poison_output();
      w.launch(c, pipeline, 0, s);
      s.synchronize();
      const auto cmp = gemm::compare(w.download_output(), w.reference(), {});
      EXPECT_TRUE(cmp.passed) << name << ": " << cmp.summary();
      const auto st = time_launches([&](int i) { w.launch(c, pipeline, i % w.sets(), s); }, s, TimingPlan{});
      std::printf("TIME %s %s median_us=%.2f min_us=%.2f spread=%.3f\n", p.key().c_str(), name.c_str(), st.median_us,
                  st.min_us, st.spread);
    }
  }
}

TEST_F(GemmGpu, TuneStoresExportsAndResumes) {
  db::Store store(":memory:");
  TuneOptions opt;
  opt.progress = false;
  opt.command_line = "gpu test";
  opt.isolate = false;  // NOTE: SetUp opened the device in this process; forked workers could not use it
  const std::vector<gemm::Problem> problems = {{16, 3072, 1536}, {300, 1000, 512}};
  const auto sums = tune_gemm(problems, opt, store);
  ASSERT_EQ(sums.size(), 2u);
  for (const auto& s : sums) {
    EXPECT_FALSE(s.best_config.empty()) << s.key;
    EXPECT_GT(s.passed, 10);
    EXPECT_EQ(s.failed, 0) << s.key;
    EXPECT_GT(s.median_us, 0);
  }
  const auto rows = exporters::aiter_bf16_gemm_rows(store);
  ASSERT_EQ(rows.size(), 2u);
  std::ostringstream out;
  exporters::write_aiter_bf16_gemm(out, rows);
  std::istringstream back(out.str());
  EXPECT_EQ(exporters::read_aiter_bf16_gemm(back, "export").size(), 2u);
  // A rerun finds every candidate stored and re-measures nothing: the same counts, the same table.
  const auto counts_before = store.disposition_counts();
  tune_gemm(problems, opt, store);
  EXPECT_EQ(store.disposition_counts(), counts_before);
  std::ostringstream again;
  exporters::write_aiter_bf16_gemm(again, exporters::aiter_bf16_gemm_rows(store));
  EXPECT_EQ(again.str(), out.str());
}
