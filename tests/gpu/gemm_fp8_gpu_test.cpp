// GPU tests of gemm_fp8_blockscale (label gpu): run only where a device is present; skipped elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "kernels/gemm_fp8/gemm_fp8.h"
#include "tuner/hip/runtime.h"
#include "tuner/jit/compiler.h"
#include "module_cache.h"
#include "time_spec.h"
#include "tuner/timing.h"

using namespace tunetab;

namespace {

class GemmFp8Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (device_count(&why) == 0) GTEST_SKIP() << "no GPU: " << why;
    facts_ = open_device(0);
    modules_ = std::make_unique<ModuleCache>(facts_.arch);
  }

  static ModuleCache::Entry entry(const gemm_fp8::Config& c, int bits) {
    return {gemm_fp8::kernels(c, bits)[0], static_cast<std::size_t>(c.shared_bytes())};
  }
  const Module& module_for(const gemm_fp8::Config& c, int bits) { return modules_->get(entry(c, bits)); }
  /// Compiles, in parallel, what a test's loop will launch.
  void prepare(const std::vector<std::pair<gemm_fp8::Config, int>>& configs) {
    std::vector<ModuleCache::Entry> entries;
    for (const auto& [c, bits] : configs) entries.push_back(entry(c, bits));
    modules_->prepare(entries);
  }

  /// Launches `c` twice on NaN-poisoned output (the second launch checks the split-K counters were reset),
  /// checks the guard bands of every buffer and compares with the Eigen reference.
  gemm_fp8::Comparison run(const gemm_fp8::Problem& p, const gemm_fp8::Config& c, int bits, std::uint64_t seed) {
    gemm_fp8::Workload w(p, seed, 1, gemm_fp8::workspace_bytes(p, c));
    Stream s;
    const std::vector<const Module*> pipeline = {&module_for(c, bits)};
    gemm_fp8::Comparison cmp[2];
    for (int launch = 0; launch < 2; ++launch) {
      w.poison_output();
      w.launch(c, pipeline, 0, s);
      EXPECT_TRUE(s.synchronize_for(10000)) << p.key() << " " << c.name();
      const auto v = w.guard_violation();
      EXPECT_FALSE(v) << p.key() << " " << c.name() << ": " << *v;
      cmp[launch] = w.compare_output(w.download_output(), gemm_fp8::tolerance(p.in));
    }
    EXPECT_EQ(cmp[0].passed, cmp[1].passed) << "result changed between launches: a race or a stale counter";
    return cmp[1].passed ? cmp[0] : cmp[1];
  }

  DeviceFacts facts_;
  std::unique_ptr<ModuleCache> modules_;
};

}  // namespace

TEST_F(GemmFp8Gpu, ConfigsMatchReferenceOnRaggedShapes) {
  // clang-format off
  const gemm_fp8::Problem shapes[] = {
    {1, 3072, 1536}, {16, 3072, 1536}, {77, 6144, 2048}, {304, 3072, 1536}, {336, 6144, 2048},
    {77, 3000, 1536}, {5, 2056, 2048}, {130, 200, 400}, {1, 1000, 272},   // ragged N, and K not a multiple of 128
    {77, 1001, 1536},                                                      // rows of C not 16-byte aligned
    {1100, 3000, 1680},  // more tiles than 132 CTAs for every persistent tile, 128 x 192 included; 14 K blocks a
                         // tile, so a persistent tma3's chunks of 4 start part-way round its ring of stages
    {200, 1000, 1680},   // 14 K blocks, the last partial: tma3's chunks of 4 and two K blocks after them
    {1100, 3000, 2560},  // 20 scale blocks (tma4: a multiple of 4), 20 K blocks a tile: a persistent 6-stage ring
                         // starts each tile 2 stages on
  };
  const char* configs[] = {
    "m128n128k128_w64x128_s4_wgmma_sk1", "m64n128k128_w64x128_s3_wgmma_sk2", "m128n64k128_w64x64_s5_wgmma_sk1",
    "m64n64k128_w64x64_s3_wgmma_sk3",    "m16n64k128_w16x16_s3_mma_sk1",     "m16n128k128_w16x32_s4_mma_sk4",
    "m64n128k128_w32x32_s3_mma_sk1",     "m128n128k128_w32x32_s2_mma_sk2",   "m16n64k128_w16x16_s2_simt_sk1",
    "m64n64k128_w32x32_s2_simt_sk2",     "m1n8k512_w1x2_s1_skinny_sk1",      "m1n16k512_w1x4_s1_skinny_sk3",
    "m16n32k1024_w16x4_s1_skinny_sk2",   "m4n16k1024_w4x2_s1_skinny_sk6",
    // TMA producer + wgmma consumers: 1, 2 and 4 consumer warpgroups, split-K; 192 wide (setmaxnreg with two)
    "m128n128k128_w64x128_s4_tma_sk1",   "m64n256k128_w64x128_s4_tma_sk1",   "m64n128k128_w64x64_s8_tma_sk2",
    "m128n64k128_w64x64_s6_tma_sk1",     "m64n64k128_w64x64_s4_tma_sk4",     "m128n128k128_w64x64_s6_tma_sk1",
    "m128n192k128_w64x192_s4_tma_sk1",   "m64n192k128_w64x192_s6_tma_sk2",
    // persistent over 132 CTAs: at 336 x 6144 the 64 x 64 tiles are 576, four or five per CTA
    "m64n64k128_w64x64_s4_tma_p132_sk1", "m128n128k128_w64x64_s6_tma_p132_sk1", "m128n192k128_w64x192_s4_tma_p132_sk1",
    // tma2 (its tile through shared memory): 192 wide across a column-block boundary after 8 or 16 fragment
    // columns (n0 % 128 of 64 or 0), 256 wide in two warpgroups; split-K's partial planes summed by the tile's last
    // split (8-byte pairs, scalar ones where N is odd), also with the producer's registers given up (192 wide)
    "m128n192k128_w64x192_s4_tma2_sk1",  "m64n192k128_w64x192_s6_tma2_sk1",  "m64n256k128_w64x128_s4_tma2_sk1",
    "m128n128k128_w64x64_s4_tma2_sk1",   "m64n64k128_w64x64_s6_tma2_sk2",    "m128n192k128_w64x192_s4_tma2_sk2",
    "m64n128k128_w64x128_s4_tma2_sk4",
    // tma2 with 96-column consumers: n0 % 128 of 0, 32, 64 or 96 (one block, or crossing after 4 or 8 fragment
    // columns), two in 192- and 96-wide tiles, one in a 64 x 96 tile, and split-K
    "m64n192k128_w64x96_s4_tma2_sk1",    "m128n96k128_w64x96_s4_tma2_sk1",   "m128n96k128_w64x96_s4_tma2_sk2",
    "m64n192k128_w64x96_s4_tma2_sk4",    "m64n96k128_w64x96_s4_tma2_sk1",    "m64n96k128_w64x96_s4_tma2_p132_sk1",
    // persistent tma2 (its output tile in a buffer of its own, the stages running on across tiles)
    "m64n64k128_w64x64_s4_tma2_p132_sk1", "m128n128k128_w64x128_s4_tma2_p132_sk1", "m128n192k128_w64x192_s4_tma2_p132_sk1",
    "m128n96k128_w64x96_s4_tma2_p132_sk1",
    // tma3 (the promotion overlapped with the next K block's MMAs): two consumers, 96 wide across a column-block
    // boundary, persistent
    "m128n96k128_w64x96_s4_tma3_sk1",    "m64n192k128_w64x96_s4_tma3_sk1",   "m128n128k128_w64x128_s4_tma3_sk1",
    "m64n256k128_w64x128_s4_tma3_sk1",   "m128n64k128_w64x64_s4_tma3_sk1",   "m128n96k128_w64x96_s4_tma3_p132_sk1",
    "m128n128k128_w64x128_s4_tma3_p132_sk1", "m64n192k128_w64x96_s4_tma3_p132_sk1", "m128n96k128_w64x96_s6_tma3_sk1",
    "m128n96k128_w64x96_s6_tma3_p132_sk1",
    // tma4 (tma3 with each tile's scales in two bulk copies; ceil(K / 128) a multiple of 4, K 400 too): the last
    // tile's rows past M and column blocks past N, 96 wide across a column-block boundary, 6 stages
    "m128n96k128_w64x96_s4_tma4_sk1",    "m64n192k128_w64x96_s4_tma4_sk1",   "m128n128k128_w64x128_s6_tma4_sk1",
    "m64n256k128_w64x128_s4_tma4_sk1",   "m128n64k128_w64x64_s4_tma4_sk1",   "m128n96k128_w64x96_s6_tma4_sk1",
    // tma4 clusters sharing tiles by TMA multicast: 2 or 4 along N (A shared, 64- or 32-row slices), 2 along M (B
    // shared), 2 x 2; odd tile counts (130 x 200: 2 x 3 tiles of 128 x 96; 77 rows: one row tile) give padding CTAs
    "m128n96k128_w64x96_s6_tma4_cn2_sk1", "m128n128k128_w64x128_s6_tma4_cn4_sk1", "m64n192k128_w64x96_s4_tma4_c2_sk1",
    "m128n128k128_w64x128_s6_tma4_c2_cn2_sk1", "m128n96k128_w64x96_s4_tma4_cn4_sk1", "m128n64k128_w64x64_s4_tma4_c2_sk1",
  };
  // clang-format on
  // TUNETAB_FP8_ONLY=S runs only the configs whose names contain S (e.g. "tma4_c": the clusters).
  const char* only = std::getenv("TUNETAB_FP8_ONLY");
  const auto skipped = [&](const char* name) { return only != nullptr && std::string(name).find(only) == std::string::npos; };
  const Target t = Target::from_arch(facts_.arch);
  std::vector<std::pair<gemm_fp8::Config, int>> needed;
  for (const char* name : configs) {
    if (skipped(name)) continue;
    const auto c = gemm_fp8::Config::from_name(name);
    if (std::any_of(std::begin(shapes), std::end(shapes), [&](const auto& p) { return !gemm_fp8::why_unsupported(p, c, t); }))
      for (int bits : {32, 64}) needed.emplace_back(c, bits);
  }
  prepare(needed);
  int checked = 0;
  for (const auto& p : shapes)
    for (const char* name : configs) {
      const auto c = gemm_fp8::Config::from_name(name);
      if (skipped(name) || gemm_fp8::why_unsupported(p, c, t)) continue;
      for (int bits : {32, 64}) {
        const auto cmp = run(p, c, bits, 1000 + checked);
        EXPECT_TRUE(cmp.passed) << p.key() << " " << name << " index" << bits << ": " << cmp.summary();
        ++checked;
      }
    }
  EXPECT_GT(checked, only ? 10 : 100);
}

TEST_F(GemmFp8Gpu, MOneIsServedBySkinnyAndTiledKernels) {
  const gemm_fp8::Problem p{1, 6144, 2048};
  std::vector<gemm_fp8::Config> served;
  for (const auto& c : gemm_fp8::enumerate())
    if (c.split_k == 1 && !gemm_fp8::why_unsupported(p, c, Target::from_arch(facts_.arch))) served.push_back(c);
  std::vector<std::pair<gemm_fp8::Config, int>> needed;
  for (const auto& c : served) needed.emplace_back(c, 32);
  prepare(needed);
  int checked = 0;
  for (const auto& c : served) {
    const auto cmp = run(p, c, 32, 77);
    EXPECT_TRUE(cmp.passed) << c.name() << ": " << cmp.summary();
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

TEST_F(GemmFp8Gpu, SoftwareDecodePathsServeTheOtherFormat) {
  // e4m3fnuz where the tensor cores take e4m3fn: the simt and skinny paths decode it in software, so the
  // format's decoding is checked on this device too (gfx942 serves it natively).
  const gemm_fp8::Fp8 other = gemm_fp8::native_fp8(facts_.arch) == gemm_fp8::Fp8::kE4m3fn ? gemm_fp8::Fp8::kE4m3fnuz : gemm_fp8::Fp8::kE4m3fn;
  const Target t = Target::from_arch(facts_.arch);
  int checked = 0;
  for (const gemm_fp8::Problem& shape : {gemm_fp8::Problem{1, 3072, 1536}, gemm_fp8::Problem{16, 2056, 400}, gemm_fp8::Problem{77, 300, 2048}})
    for (const char* name : {"m16n64k128_w16x16_s2_simt_sk1", "m64n64k128_w32x32_s2_simt_sk2", "m1n8k512_w1x2_s1_skinny_sk2",
                             "m16n32k1024_w16x4_s1_skinny_sk1"}) {
      gemm_fp8::Problem p = shape;
      p.in = other;
      const auto c = gemm_fp8::Config::from_name(name);
      if (gemm_fp8::why_unsupported(p, c, t)) continue;
      const auto cmp = run(p, c, 32, 5 + checked);
      EXPECT_TRUE(cmp.passed) << p.key() << " " << name << ": " << cmp.summary();
      ++checked;
    }
  EXPECT_GE(checked, 8);
}

TEST_F(GemmFp8Gpu, PoisonedOutputFailsWhenNothingIsWritten) {
  const gemm_fp8::Problem p{64, 128, 256};
  gemm_fp8::Workload w(p, 5, 1, 0);
  w.poison_output();
  const auto cmp = gemm_fp8::compare(w.download_output(), w.reference(), gemm_fp8::tolerance(p.in));
  EXPECT_FALSE(cmp.passed);
  EXPECT_EQ(cmp.non_finite, p.m * p.n);
}

TEST_F(GemmFp8Gpu, GuardBandsCatchStoresOutsideTheOutput) {
  // A planted fault: one thread stores a bf16 kOffset elements from C's start.
  const gemm_fp8::Problem p{40, 96, 256};
  const auto c = gemm_fp8::Config::from_name("m16n64k128_w16x16_s2_simt_sk1");
  for (long long offset : {40LL * 96 + 3, -1LL}) {
    KernelSource k;
    k.family = "planted";
    k.source = "#include \"gemm_fp8_blockscale.h\"\nnamespace tt {\ntemplate <long long kOffset> __global__ void "
               "planted_store(Fp8GemmArgs p) {\n  if (thread_x() == 0 && block_x() == 0 && block_y() == 0) "
               "p.g.c[kOffset] = 0x3f80;\n}\n}\n";
    k.name_expression = "tt::planted_store<" + std::to_string(offset) + "LL>";
    const auto rec = modules_->compiler().compile(k);
    ASSERT_TRUE(rec.ok) << rec.log;
    Module m(rec.binary, rec.lowered_name);
    gemm_fp8::Workload w(p, 3, 1, 0);
    Stream s;
    w.poison_output();
    w.launch(c, {&m}, 0, s);
    s.synchronize();
    const auto v = w.guard_violation();
    ASSERT_TRUE(v) << "store at element " << offset << " not caught";
    EXPECT_NE(v->find(offset < 0 ? "before" : "after"), std::string::npos) << *v;
    EXPECT_NE(v->find("C: "), std::string::npos) << *v;
  }
}

TEST_F(GemmFp8Gpu, OneAllocationServesEverySmallerM) {
  // Capacity 336 rows; each smaller M launches on the same buffers, checks against the reference's prefix,
  // and the rows after M stay untouched (a guard window of their own).
  const gemm_fp8::Problem p{336, 3072, 1536};
  const auto c = gemm_fp8::Config::from_name("m128n128k128_w64x128_s4_wgmma_sk2");
  const auto skinny = gemm_fp8::Config::from_name("m16n32k1024_w16x4_s1_skinny_sk2");
  const std::size_t ws = 2 * static_cast<std::size_t>(p.m * p.n) * 4;
  gemm_fp8::Workload w(p, 21, 1, ws);
  Stream s;
  const Target t = Target::from_arch(facts_.arch);
  for (std::int64_t m : {336, 1, 16, 77, 129, 304}) {
    gemm_fp8::Problem pm = p;
    pm.m = m;
    for (const auto& cfg : {c, skinny}) {
      if (gemm_fp8::why_unsupported(pm, cfg, t)) continue;
      w.set_m(m);
      w.poison_output();
      w.launch(cfg, {&module_for(cfg, 32)}, 0, s);
      ASSERT_TRUE(s.synchronize_for(10000));
      const auto v = w.guard_violation();
      EXPECT_FALSE(v) << "M=" << m << " " << cfg.name() << ": " << *v;
      const auto out = w.download_output();
      ASSERT_EQ(out.size(), static_cast<std::size_t>(m * p.n));
      const auto cmp = w.compare_output(out, gemm_fp8::tolerance(p.in));
      EXPECT_TRUE(cmp.passed) << "M=" << m << " " << cfg.name() << ": " << cmp.summary();
    }
  }
}

// A tool more than a test: with TUNETAB_TIME_FP8="M,N,K:config,...[;M,N,K:...]" it validates each config on that
// e4m3fn shape and times it with the tuner's method (rotating sets, graph replays): A/B comparisons of kernel
// changes, and a target for Nsight. TUNETAB_TIME_SETS=N times over N input sets instead (bench/fp8_baseline.py too).
TEST_F(GemmFp8Gpu, TimeConfigsFromEnvironment) {
  const char* spec = std::getenv("TUNETAB_TIME_FP8");
  if (spec == nullptr) GTEST_SKIP() << "set TUNETAB_TIME_FP8=M,N,K:config,... to time configs";
  const auto specs = parse_time_specs(spec);
  ASSERT_TRUE(specs) << "TUNETAB_TIME_FP8: expected M,N,K:config,...[;M,N,K:config,...]";
  std::vector<std::pair<gemm_fp8::Config, int>> needed;
  for (const TimeSpec& ts : *specs) {
    long long m = 0, n = 0, k = 0;
    if (std::sscanf(ts.head.c_str(), "%lld,%lld,%lld", &m, &n, &k) != 3) continue;  // the loop below says so
    for (const std::string& name : ts.configs) {
      const auto c = gemm_fp8::Config::from_name(name);
      if (!gemm_fp8::why_unsupported(gemm_fp8::Problem{m, n, k}, c, Target::from_arch(facts_.arch))) needed.emplace_back(c, 32);
    }
  }
  prepare(needed);
  for (const TimeSpec& ts : *specs) {
    long long m = 0, n = 0, k = 0;
    ASSERT_EQ(std::sscanf(ts.head.c_str(), "%lld,%lld,%lld", &m, &n, &k), 3) << "TUNETAB_TIME_FP8: M,N,K";
    const gemm_fp8::Problem p{m, n, k};
    const Target t = Target::from_arch(facts_.arch);
    for (const std::string& name : ts.configs) {
      const auto c = gemm_fp8::Config::from_name(name);
      if (const auto why = gemm_fp8::why_unsupported(p, c, t)) {
        std::printf("TIME %s %s unsupported: %s\n", p.key().c_str(), name.c_str(), why->c_str());
        continue;
      }
      // TUNETAB_TIME_SETS=N: N input sets instead of the rotation over 2x L2 (1: the operands stay in L2).
      const char* sets_env = std::getenv("TUNETAB_TIME_SETS");
      const int sets = sets_env ? std::max(1, std::atoi(sets_env)) : rotating_sets_for(p.min_bytes(), facts_.l2_bytes);
      gemm_fp8::Workload w(p, 17, sets, gemm_fp8::workspace_bytes(p, c));
      Stream s;
      const std::vector<const Module*> pipeline = {&module_for(c, 32)};
      w.poison_output();
      w.launch(c, pipeline, 0, s);
      s.synchronize();
      const auto cmp = w.compare_output(w.download_output(), gemm_fp8::tolerance(p.in));
      EXPECT_TRUE(cmp.passed) << name << ": " << cmp.summary();
      // TUNETAB_TIME_OUTPUT=one: every launch writes one output (the inputs still rotate), as the torch baseline's
      // graph-pool output may be (bench/fp8_baseline.py, TUNETAB_BASELINE_OUT).
      const char* out_env = std::getenv("TUNETAB_TIME_OUTPUT");
      w.share_output(out_env && std::string(out_env) == "one");
      const auto st = time_launches([&](int i) { w.launch(c, pipeline, i % w.sets(), s); }, s, TimingPlan{});
      std::printf("TIME %s %s median_us=%.2f min_us=%.2f spread=%.3f\n", p.key().c_str(), name.c_str(), st.median_us,
                  st.min_us, st.spread);
    }
  }
}
