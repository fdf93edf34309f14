#include <gtest/gtest.h>

#include <set>

#include "kernels/gemm/gemm.h"
#include "tuner/error.h"
#include "tuner/search.h"

using namespace tunetab;

TEST(GemmConfig, EveryNameParsesBackAndIsUnique) {
  std::set<std::string> names;
  for (const auto& c : gemm::enumerate()) {
    EXPECT_EQ(gemm::Config::from_name(c.name()), c) << c.name();
    EXPECT_TRUE(names.insert(c.name()).second) << c.name();
  }
  EXPECT_GT(names.size(), 500u);
  EXPECT_THROW(gemm::Config::from_name("m128n128"), Error);
}

TEST(GemmConfig, EveryConfigFitsItsThreadLayout) {
  for (const auto& c : gemm::enumerate()) {
    EXPECT_EQ(c.block_m % c.warp_m, 0) << c.name();
    EXPECT_EQ(c.block_n % c.warp_n, 0) << c.name();
    EXPECT_LE(c.threads(), 1024) << c.name();
    if (c.math == gemm::Math::kSkinny || c.math == gemm::Math::kSkinnyMma) continue;  // own portable paths
    if ((c.wgmma() && c.block_n == 192) || c.math == gemm::Math::kTma) continue;  // sm_90a only: rejected on AMD
    // The portable path (every config on AMD) needs kThreadsN | threads and kThreadsM | block_m.
    const int compute = c.threads() - (c.math == gemm::Math::kWgmmaWs ? 128 : 0);
    const int threads_n = std::min(c.block_n / 4, compute);
    EXPECT_EQ(compute % threads_n, 0) << c.name();
    EXPECT_EQ(c.block_m % (compute / threads_n), 0) << c.name();
  }
}

TEST(GemmConfig, ConstraintsRejectBeforeCompiling) {
  const Target h200 = [] {
    Target t = Target::from_arch("sm_90a");
    t.cu_count = 132;
    return t;
  }();
  gemm::Config c = gemm::Config::from_name("m128n128k32_w64x64_s4_mma_v8_sk1");
  EXPECT_FALSE(gemm::why_unsupported({4096, 6144, 2048}, c, h200));
  // K not a multiple of the vector width.
  EXPECT_TRUE(gemm::why_unsupported({64, 64, 1540}, c, h200));
  EXPECT_FALSE(gemm::why_unsupported({64, 64, 1540}, gemm::Config::from_name("m128n128k32_w64x64_s4_mma_v4_sk1"), h200));
  // Shared memory beyond gfx942's 64 KiB LDS.
  const auto big = gemm::Config::from_name("m256n128k32_w64x64_s4_mma_v8_sk1");
  EXPECT_GT(big.shared_bytes(), 64 * 1024);
  EXPECT_TRUE(gemm::why_unsupported({4096, 6144, 2048}, big, Target::from_arch("gfx942")));
  // Split-K that leaves empty splits, and split-K on a shape that already fills the GPU.
  EXPECT_TRUE(gemm::why_unsupported({1, 3072, 64}, gemm::Config::from_name("m16n64k64_w16x16_s4_mma_v8_sk2"), h200));
  EXPECT_FALSE(gemm::why_unsupported({1, 3072, 1536}, gemm::Config::from_name("m16n64k64_w16x16_s4_mma_v8_sk8"), h200));
  EXPECT_TRUE(gemm::why_unsupported({4096, 6144, 2048}, gemm::Config::from_name("m128n128k32_w64x64_s4_mma_v8_sk2"), h200));
  // Output dtype the family does not produce.
  gemm::Problem f32out{64, 256, 5120};
  f32out.out = gemm::DType::kF32;
  EXPECT_NE(gemm::why_unsupported(f32out, c, h200)->find("output must be bf16"), std::string::npos);
}

TEST(GemmConfig, StreamKRunsOneCtaPerSmOfTheTarget) {
  Target h200 = Target::from_arch("sm_90a");
  h200.cu_count = 132;
  const auto c = gemm::Config::from_name("m128n192k64_w64x192_s4_tma_v8_streamk132");
  EXPECT_EQ(c.streamk_ctas, 132);
  EXPECT_EQ(c.split_k, 1);
  EXPECT_FALSE(gemm::why_unsupported({336, 6144, 2048}, c, h200));
  // A CTA count other than the target's SM count, a split-K or cluster variant, and AMD targets are rejected.
  EXPECT_NE(gemm::why_unsupported({336, 6144, 2048}, gemm::Config::from_name("m128n192k64_w64x192_s4_tma_v8_streamk114"), h200)
                ->find("132 SMs"),
            std::string::npos);
  gemm::Config bad = c;
  bad.cluster_m = 2;
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, bad, h200));
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, c, Target::from_arch("gfx942")));
  // The same code object for every CTA count; two fp32 tile slots a CTA of workspace, in the index proof.
  EXPECT_EQ(gemm::kernels(c, 32)[0].name_expression,
            gemm::kernels(gemm::Config::from_name("m128n192k64_w64x192_s4_tma_v8_streamk78"), 32)[0].name_expression);
  const auto bounds = gemm::index_bounds({336, 6144, 2048}, c);
  EXPECT_EQ(bounds.back().buffer, "workspace");
  EXPECT_EQ(bounds.back().max_offset, 2LL * 132 * 128 * 192 - 1);
}

TEST(GemmConfig, SwappedOperandsTileNByRowsAndMByColumns) {
  Target h200 = Target::from_arch("sm_90a");
  h200.cu_count = 132;
  const auto c = gemm::Config::from_name("m192n88k64_w64x88_s6_tma_swap_v8_sk1");
  EXPECT_TRUE(c.swap_ab);
  EXPECT_EQ(c.name(), "m192n88k64_w64x88_s6_tma_swap_v8_sk1");
  EXPECT_EQ(c.threads(), 3 * 128 + 128);
  EXPECT_EQ(c.rows(336, 6144), 6144);
  EXPECT_EQ(c.cols(336, 6144), 336);
  EXPECT_FALSE(gemm::why_unsupported({336, 6144, 2048}, c, h200));
  EXPECT_NE(gemm::kernels(c, 32)[0].name_expression.find("int, 1, 1, 0, 1>"), std::string::npos);
  // No split-K or stream-K (clusters: see ClustersAlongNShareAWithSwappedOperands); and not on AMD.
  for (const char* bad : {"m192n88k64_w64x88_s6_tma_swap_v8_sk2", "m128n80k64_w64x80_s4_tma_swap_v8_streamk132"})
    EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, gemm::Config::from_name(bad), h200)) << bad;
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, c, Target::from_arch("gfx942")));
  // The grid's y limit counts N's tiles.
  EXPECT_TRUE(gemm::why_unsupported({336, 64LL * 65536, 64}, gemm::Config::from_name("m64n88k64_w64x88_s4_tma_swap_v8_sk1"), h200));
}

TEST(GemmConfig, IndexWidthFollowsTheLargestOffset) {
  const auto c = gemm::Config::from_name("m128n128k32_w64x64_s4_mma_v8_sk1");
  EXPECT_EQ(required_index_bits(gemm::index_bounds({8192, 6144, 1280}, c)), 32);
  // M = 768000, N = 6144: M*N = 4.7e9 >= 2^31, the overflow behind a real production fault.
  EXPECT_EQ(required_index_bits(gemm::index_bounds({768000, 6144, 1280}, c)), 64);
  // First M where C's last offset passes INT32_MAX for N = 6144: 349526 (349525 * 6144 < 2^31).
  EXPECT_EQ(required_index_bits(gemm::index_bounds({349525, 6144, 1280}, c)), 32);
  EXPECT_EQ(required_index_bits(gemm::index_bounds({349526, 6144, 1280}, c)), 64);
  // Split-K workspace counts: 4 splits of 100000 x 6144 fp32 partials overflow even though C does not.
  const auto sk = gemm::Config::from_name("m16n64k64_w16x16_s4_mma_v8_sk4");
  EXPECT_EQ(required_index_bits(gemm::index_bounds({100000, 6144, 1280}, sk)), 64);
  EXPECT_EQ(required_index_bits(gemm::index_bounds({100000, 6144, 1280}, c)), 32);
}

TEST(GemmConfig, PlanPicksTheIndexInstanceAndKernelsNameIt) {
  Target t = Target::from_arch("sm_90a");
  t.cu_count = 132;
  const auto plan = plan_candidates({768000, 6144, 1280}, t);
  std::size_t supported = 0;
  for (const auto& cand : plan) {
    EXPECT_EQ(cand.index_bits, 64);
    if (!cand.unsupported) {
      ++supported;
      EXPECT_NE(gemm::kernels(cand.config, cand.index_bits)[0].name_expression.find("long long"), std::string::npos);
    }
  }
  EXPECT_GT(supported, 50u);
  const auto kernels = needed_kernels({plan});
  EXPECT_LE(kernels.size(), 360u);  // split-K, stream-K CTA counts and M-independent configs share code objects
  EXPECT_FALSE(gemm::why_unsupported({16, 3072, 1536}, gemm::Config::from_name("m16n16k512_w16x4_s1_skinny_v8_sk2"), t));
  EXPECT_TRUE(gemm::why_unsupported({17, 3072, 1536}, gemm::Config::from_name("m16n16k512_w16x4_s1_skinny_v8_sk1"), t));  // split-K shares the code object
  // The tensor-core skinny kernel: M <= block_m, 32 x chunks x warps of K per CTA step, threads from block_k.
  const auto ms = gemm::Config::from_name("m32n32k512_w32x32_s2_mskinny_v8_sk2");
  EXPECT_EQ(ms.threads(), 256);
  EXPECT_FALSE(gemm::why_unsupported({32, 3072, 1536}, ms, t));
  EXPECT_TRUE(gemm::why_unsupported({33, 3072, 1536}, ms, t));
  EXPECT_NE(gemm::kernels(ms, 32)[0].name_expression.find("gemm_bf16_mskinny<2, 4, 8, 2, int>"), std::string::npos);
  // 192-wide wgmma tiles: sm_90a only (the portable fallback cannot lay them out).
  const auto w192 = gemm::Config::from_name("m128n192k64_w64x192_s4_wgmma_v8_sk1");
  EXPECT_FALSE(gemm::why_unsupported({1024, 3072, 1536}, w192, t));
  EXPECT_TRUE(gemm::why_unsupported({1024, 3072, 1536}, w192, Target::from_arch("gfx942")));
  // TMA: sm_90a only; a producer warpgroup beside the consumers; its own argument block.
  const auto tma = gemm::Config::from_name("m128n256k64_w64x256_s4_tma_v8_sk2");
  EXPECT_EQ(tma.threads(), 384);
  EXPECT_FALSE(gemm::why_unsupported({336, 6144, 2048}, tma, t));
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, tma, Target::from_arch("gfx950")));
  EXPECT_EQ(gemm::kernels(tma, 64)[0].name_expression, "tt::gemm_bf16_tma<128, 256, 64, 256, 4, long long, 1, 1, 0, 0>");
  EXPECT_EQ(gemm::Config::from_name("m64n256k64_w64x128_s4_tma_v8_sk1").threads(), 384);  // two consumers split N
}

TEST(GemmConfig, ClustersShareBAlongMOnNvidiaOnly) {
  const auto c = gemm::Config::from_name("m128n256k64_w64x128_s4_tma_c2_v8_sk2");
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_EQ(c.name(), "m128n256k64_w64x128_s4_tma_c2_v8_sk2");
  EXPECT_EQ(c.tma_box_b(), 128);  // each CTA loads half of B and multicasts it
  EXPECT_EQ(c.tma_box_a(), 128);
  EXPECT_EQ(gemm::Config::from_name("m128n256k64_w64x128_s4_tma_v8_sk2").cluster_m, 1);
  EXPECT_NE(gemm::kernels(c, 32)[0].name_expression.find("int, 2, 1, 0, 0>"), std::string::npos);
  // Every template argument spelled out: ROCm 5.2 hipRTC does not match a name expression that leaves a default.
  EXPECT_NE(gemm::kernels(gemm::Config::from_name("m128n256k64_w64x128_s4_tma_v8_sk2"), 32)[0].name_expression.find("int, 1, 1, 0, 0>"),
            std::string::npos);
  Target h200 = Target::from_arch("sm_90a");
  h200.cu_count = 132;
  EXPECT_FALSE(gemm::why_unsupported({336, 6144, 2048}, c, h200));
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, c, Target::from_arch("gfx942")));
  auto wide = gemm::Config::from_name("m64n288k64_w64x144_s4_tma_v8_sk1");
  wide.cluster_m = 2;  // 144-row halves: within a box, but clusters stop at 256-wide tiles
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, wide, h200));
  std::size_t clustered = 0;
  for (const auto& e : gemm::enumerate()) clustered += e.cluster_m == 2;
  EXPECT_GT(clustered, 30u);
}

TEST(GemmConfig, ClustersAlongNShareAWithSwappedOperands) {
  // cuBLAS's tile for 336 x 6144 x 2048: 192 rows of N (the weights) x 88 of M, two CTAs along M sharing the weights.
  const auto c = gemm::Config::from_name("m192n88k64_w64x88_s6_tma_cn2_swap_v8_sk1");
  EXPECT_EQ(c.cluster_n, 2);
  EXPECT_EQ(c.cluster_m, 1);
  EXPECT_TRUE(c.swap_ab);
  EXPECT_EQ(c.name(), "m192n88k64_w64x88_s6_tma_cn2_swap_v8_sk1");
  EXPECT_EQ(c.tma_box_a(), 96);  // each CTA loads 96 of the 192 rows and multicasts them
  EXPECT_EQ(c.tma_box_b(), 88);
  EXPECT_EQ(gemm::kernels(c, 32)[0].name_expression, "tt::gemm_bf16_tma<192, 88, 64, 88, 6, int, 1, 2, 0, 1>");
  EXPECT_EQ(gemm::Config::from_name("m128n256k64_w64x128_s4_tma_c2_cn2_v8_sk1").name(), "m128n256k64_w64x128_s4_tma_c2_cn2_v8_sk1");
  Target h200 = Target::from_arch("sm_90a");
  h200.cu_count = 132;
  EXPECT_FALSE(gemm::why_unsupported({336, 6144, 2048}, c, h200));
  auto quad = c;
  quad.cluster_n = 4;  // 48-row slices
  EXPECT_FALSE(gemm::why_unsupported({336, 6144, 2048}, quad, h200));
  EXPECT_EQ(quad.tma_box_a(), 48);
  auto odd = c;
  odd.cluster_n = 3;
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, odd, h200));
  auto big = c;
  big.cluster_m = 2;
  big.cluster_n = 4;  // 8 CTAs: more than the space offers
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, big, h200));
  auto ragged = gemm::Config::from_name("m128n88k64_w64x88_s4_tma_v8_sk1");
  ragged.cluster_m = 2;  // 44-row slices of B are not whole swizzle atoms
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, ragged, h200));
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, c, Target::from_arch("gfx942")));
  auto streamk = gemm::Config::from_name("m64n288k64_w64x144_s4_tma_v8_streamk132");
  streamk.cluster_n = 2;
  EXPECT_TRUE(gemm::why_unsupported({336, 6144, 2048}, streamk, h200));
}
