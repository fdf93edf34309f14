// Fused-MoE host side without a GPU: routing sort/align mirror, routing distributions, e4m3 codecs,
// config names and constraints, the pipeline's kernels, and the Eigen reference against plain loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "kernels/moe/moe.h"
#include "test_files.h"
#include "tuner/error.h"

using namespace tunetab;

namespace {

moe::Problem glm(std::int64_t m, moe::Quant q = moe::Quant::kFp8, moe::Routing r = moe::Routing::kBalanced) {
  return moe::Problem{m, 6144, 2048, 32, 8, q, r};
}

/// Checks an alignment's invariants against the ids it was built from.
void expect_valid_alignment(const moe::Alignment& a, const std::vector<int>& ids, int experts, int block_m) {
  const int rows = static_cast<int>(ids.size());
  ASSERT_EQ(a.num_padded % block_m, 0);
  ASSERT_EQ(a.sorted_ids.size(), static_cast<std::size_t>(a.num_padded));
  ASSERT_EQ(a.expert_ids.size(), static_cast<std::size_t>(a.num_padded / block_m));
  std::vector<int> seen(static_cast<std::size_t>(rows), 0);
  std::vector<int> counts(static_cast<std::size_t>(experts), 0);
  for (int e : ids) ++counts[e];
  int expect_padded = 0;
  for (int c : counts) expect_padded += (c + block_m - 1) / block_m * block_m;
  EXPECT_EQ(a.num_padded, expect_padded);
  for (int b = 0; b < a.num_padded / block_m; ++b) {
    const int e = a.expert_ids[b];
    ASSERT_GE(e, 0);
    ASSERT_LT(e, experts);
    if (b > 0) {
      EXPECT_LE(a.expert_ids[b - 1], e) << "blocks are in expert order";
    }
    for (int r = b * block_m; r < (b + 1) * block_m; ++r) {
      const int s = a.sorted_ids[r];
      if (s == rows) continue;  // padding
      ASSERT_GE(s, 0);
      ASSERT_LT(s, rows);
      EXPECT_EQ(ids[s], e) << "slot " << s << " sits in a block of expert " << e;
      ++seen[s];
    }
  }
  for (int s = 0; s < rows; ++s) EXPECT_EQ(seen[s], 1) << "slot " << s;
}

}  // namespace

TEST(MoeAlign, PadsEachExpertToBlockM) {
  // Experts 0..3, block_m 4: counts 3, 0, 5, 1 -> padded 4, 0, 8, 4.
  const std::vector<int> ids = {2, 0, 2, 3, 0, 2, 2, 0, 2};
  const auto a = moe::align_cpu(ids, 4, 4);
  EXPECT_EQ(a.counts, (std::vector<int>{3, 0, 5, 1}));
  EXPECT_EQ(a.num_padded, 16);
  EXPECT_EQ(a.expert_ids, (std::vector<int>{0, 2, 2, 3}));
  const int pad = 9;
  EXPECT_EQ(a.sorted_ids, (std::vector<int>{1, 4, 7, pad, 0, 2, 5, 6, 8, pad, pad, pad, 3, pad, pad, pad}));
  expect_valid_alignment(a, ids, 4, 4);
}

TEST(MoeAlign, ExpertWithoutTokensTakesNoBlock) {
  const std::vector<int> ids = {1, 1, 1};
  const auto a = moe::align_cpu(ids, 3, 16);
  EXPECT_EQ(a.num_padded, 16);
  EXPECT_EQ(a.expert_ids, std::vector<int>{1});
  EXPECT_EQ(std::count(a.sorted_ids.begin(), a.sorted_ids.end(), 3), 13);
  expect_valid_alignment(a, ids, 3, 16);
}

TEST(MoeAlign, OneTokenAndTopkEqualsExperts) {
  // M = 1 with topk = E: every expert gets exactly one slot and one whole padded block.
  const moe::Problem p{1, 256, 128, 8, 8, moe::Quant::kBf16, moe::Routing::kSkewed};
  const auto r = moe::make_routing(p, 3);
  std::vector<int> sorted_ids = r.topk_ids;
  std::sort(sorted_ids.begin(), sorted_ids.end());
  EXPECT_EQ(sorted_ids, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  for (int bm : {16, 32, 64, 128}) {
    const auto a = moe::align_cpu(r.topk_ids, 8, bm);
    EXPECT_EQ(a.num_padded, 8 * bm);
    EXPECT_EQ(a.num_padded, moe::max_padded_rows(p, bm)) << "the bound is tight here";
    expect_valid_alignment(a, r.topk_ids, 8, bm);
  }
}

TEST(MoeAlign, RandomRoutingStaysWithinTheWorstCaseBound) {
  for (auto routing : {moe::Routing::kBalanced, moe::Routing::kSkewed})
    for (std::int64_t m : {1, 7, 64, 304, 336, 4096})
      for (int bm : {16, 32, 64, 128}) {
        const auto p = glm(m, moe::Quant::kBf16, routing);
        const auto r = moe::make_routing(p, static_cast<std::uint64_t>(m * 131 + bm));
        const auto a = moe::align_cpu(r.topk_ids, 32, bm);
        expect_valid_alignment(a, r.topk_ids, 32, bm);
        EXPECT_LE(a.num_padded, moe::max_padded_rows(p, bm));
        EXPECT_LE(static_cast<std::int64_t>(a.expert_ids.size()), moe::max_blocks(p, bm));
      }
}

TEST(MoeRouting, TopkExpertsAreDistinctAndWeightsNormalized) {
  for (auto routing : {moe::Routing::kBalanced, moe::Routing::kSkewed}) {
    const auto p = glm(500, moe::Quant::kBf16, routing);
    const auto r = moe::make_routing(p, 11);
    ASSERT_EQ(r.topk_ids.size(), 4000u);
    for (std::int64_t t = 0; t < p.m; ++t) {
      std::set<int> experts(r.topk_ids.begin() + t * 8, r.topk_ids.begin() + t * 8 + 8);
      EXPECT_EQ(experts.size(), 8u) << "token " << t;
      float sum = 0;
      for (int k = 0; k < 8; ++k) {
        EXPECT_GT(r.topk_weights[t * 8 + k], 0.f);
        sum += r.topk_weights[t * 8 + k];
      }
      EXPECT_NEAR(sum, 1.f, 1e-5);
    }
  }
}

TEST(MoeRouting, SkewedConcentratesOnFewExpertsBalancedDoesNot) {
  auto loads = [](moe::Routing routing) {
    const auto p = glm(2000, moe::Quant::kBf16, routing);
    const auto a = moe::align_cpu(moe::make_routing(p, 5).topk_ids, 32, 16);
    std::vector<int> c = a.counts;
    std::sort(c.rbegin(), c.rend());
    return c;
  };
  const auto balanced = loads(moe::Routing::kBalanced), skewed = loads(moe::Routing::kSkewed);
  // 16000 slots over 32 experts: 500 each when perfectly balanced.
  EXPECT_LT(balanced.front(), 600);
  EXPECT_GT(balanced.back(), 400);
  EXPECT_GT(skewed.front(), 3 * skewed.back()) << "Zipf: the hottest expert carries several times the coldest's load";
  EXPECT_NE(moe::make_routing(glm(64), 1).topk_ids, moe::make_routing(glm(64), 2).topk_ids) << "seeded, not fixed";
}

TEST(MoeFp8, CodecRoundTripsEveryCodeAndRoundsToNearest) {
  for (bool fnuz : {false, true}) {
    for (int b = 0; b < 256; ++b) {
      if (!fnuz && (b & 0x7f) == 0x7f) continue;  // fn NaN
      if (fnuz && b == 0x80) continue;            // fnuz NaN
      const float f = moe::e4m3_to_float(static_cast<std::uint8_t>(b), fnuz);
      ASSERT_TRUE(std::isfinite(f));
      const std::uint8_t back = moe::float_to_e4m3(f, fnuz);
      EXPECT_EQ(back, b) << "code " << b << (fnuz ? " fnuz" : " fn") << " = " << f;  // fn's -0 stays -0 too
    }
    EXPECT_EQ(moe::e4m3_to_float(moe::float_to_e4m3(1000.f, fnuz), fnuz), moe::e4m3_max(fnuz)) << "saturates";
    EXPECT_EQ(moe::float_to_e4m3(-0.0f, fnuz), fnuz ? 0x00 : 0x80);
    // 1 + 1/16 is halfway between 1 and 1.125: ties go to the even mantissa (1.0).
    EXPECT_EQ(moe::e4m3_to_float(moe::float_to_e4m3(1.0625f, fnuz), fnuz), 1.0f);
    EXPECT_EQ(moe::e4m3_to_float(moe::float_to_e4m3(1.0626f, fnuz), fnuz), 1.125f);
  }
  EXPECT_EQ(moe::e4m3_to_float(0x7e, false), 448.f);
  EXPECT_EQ(moe::e4m3_to_float(0x7f, true), 240.f);
  EXPECT_EQ(moe::e4m3_to_float(0x01, false), std::ldexp(1.f, -9));
  EXPECT_EQ(moe::e4m3_to_float(0x01, true), std::ldexp(1.f, -10));
}

TEST(MoeFp8, BlockQuantizationReconstructsWithinHalfAnUlp) {
  const auto x = gemm::random_bf16(2 * 256 * 384, 17);
  std::vector<std::uint8_t> q;
  std::vector<float> s;
  moe::quantize_blocks_128(x, 2, 256, 384, false, q, s);
  ASSERT_EQ(s.size(), 2u * 2 * 3);
  for (std::size_t i = 0; i < x.size(); i += 7) {
    const std::int64_t b = i / (256 * 384), r = (i / 384) % 256, c = i % 384;
    const float scale = s[(b * 2 + r / 128) * 3 + c / 128];
    const float v = gemm::bf16_to_float(x[i]), d = moe::e4m3_to_float(q[i], false) * scale;
    EXPECT_LE(std::fabs(v - d), std::max(std::fabs(v) / 16, 8 * scale * std::ldexp(1.f, -9)) + 1e-7) << i;
  }
}

TEST(MoeConfig, NamesRoundTripAndAreUnique) {
  const auto all = moe::enumerate();
  EXPECT_GT(all.size(), 100u);
  std::set<std::string> names;
  for (const auto& c : all) {
    EXPECT_EQ(moe::Config::from_name(c.name()), c) << c.name();
    EXPECT_TRUE(names.insert(c.name()).second) << "duplicate " << c.name();
  }
  EXPECT_EQ(moe::Config::from_name("fp8_m16w16_n64x128_k128_s3_mma_sk2").name(), "fp8_m16w16_n64x128_k128_s3_mma_sk2");
  EXPECT_THROW(moe::Config::from_name("m16n64k64_w16x16_s4_mma_v8_sk1"), Error);
  EXPECT_THROW(moe::Config::from_name("int4_m16w16_n64x128_k128_s3_mma_sk2"), Error);
}

TEST(MoeConfig, EveryDtypeHasSupportedConfigsOnTheTargetShape) {
  const Target sm90 = [] {
    Target t = Target::from_arch("sm_90a");
    t.cu_count = 132;
    return t;
  }();
  for (auto q : {moe::Quant::kBf16, moe::Quant::kFp8, moe::Quant::kFp8Fnuz}) {
    for (std::int64_t m : {1, 16, 336, 4096}) {
      int ok = 0;
      for (const auto& c : moe::enumerate()) ok += !moe::why_unsupported(glm(m, q), c, sm90);
      EXPECT_GT(ok, 10) << moe::to_string(q) << " M=" << m;
    }
  }
}

TEST(MoeConfig, ConstraintsNameTheReason) {
  const Target t = Target::from_arch("sm_90a");
  const auto c = moe::Config::from_name("fp8_m16w16_n64x64_k128_s3_mma_sk1");
  auto why = [&](const moe::Problem& p, const moe::Config& cc) { return moe::why_unsupported(p, cc, t).value_or(""); };
  EXPECT_EQ(why(glm(16), c), "");
  EXPECT_NE(why(glm(16, moe::Quant::kBf16), c).find("config is for fp8"), std::string::npos);
  EXPECT_NE(why(moe::Problem{16, 6144, 2000, 32, 8, moe::Quant::kFp8}, c).find("multiples of 128"), std::string::npos);
  EXPECT_NE(why(moe::Problem{16, 6144, 2048, 4, 8, moe::Quant::kFp8}, c).find("topk"), std::string::npos);
  auto bad = c;
  bad.block_k = 64;
  EXPECT_NE(why(glm(16), bad).find("block_k 128"), std::string::npos);
  auto split3 = c;
  split3.split_k = 3;  // 2048 / 3 -> 768-wide splits of 6 K tiles: 3 splits; fine. 32 splits would be empty.
  EXPECT_EQ(why(glm(16), split3), "");
  split3.split_k = 32;
  EXPECT_NE(why(glm(16), split3).find("empty splits"), std::string::npos);
  Target gfx90a = Target::from_arch("gfx90a");
  auto big = moe::Config::from_name("bf16_m128w32_n128x128_k128_s4_mma_sk1");
  EXPECT_NE(moe::why_unsupported(glm(4096, moe::Quant::kBf16), big, gfx90a).value_or("").find("shared memory"), std::string::npos);
  Target cu = t;
  cu.cu_count = 132;
  EXPECT_TRUE(moe::why_unsupported(glm(4096), moe::Config::from_name("fp8_m16w16_n64x64_k128_s3_mma_sk2"), cu));
}

TEST(MoeConfig, PipelineHasOneKernelPerStageInLaunchOrder) {
  const auto bf = moe::kernels(moe::Config::from_name("bf16_m32w16_n64x128_k64_s3_mma_sk1"), 32);
  ASSERT_EQ(bf.size(), 4u);
  EXPECT_EQ(bf[0].name_expression, "tt::moe_align<1024>");
  EXPECT_EQ(bf[1].name_expression, "tt::moe_stage<1, 0, 32, 16, 64, 32, 64, 3, 1, int>");
  EXPECT_EQ(bf[2].name_expression, "tt::moe_stage<2, 0, 32, 16, 128, 64, 64, 3, 1, int>");
  EXPECT_EQ(bf[3].name_expression, "tt::moe_reduce<int>");
  const auto f8 = moe::kernels(moe::Config::from_name("fp8fnuz_m16w16_n32x64_k128_s2_simt_sk2"), 64);
  ASSERT_EQ(f8.size(), 5u);
  EXPECT_EQ(f8[1].name_expression, "tt::moe_quant_a<true, long long>");
  EXPECT_EQ(f8[2].name_expression, "tt::moe_stage<1, 2, 16, 16, 32, 8, 128, 2, 0, long long>");
  const auto pl = moe::pipeline_layout(moe::Config::from_name("fp8_m16w16_n32x64_k128_s2_simt_sk2"));
  EXPECT_EQ(pl.quant, 1);
  EXPECT_EQ(pl.reduce, 4);
  for (const auto& k : f8) EXPECT_EQ(k.family, moe::kFamily);
  EXPECT_EQ(moe::dynamic_shared_bytes(moe::Config::from_name("fp8_m16w16_n32x64_k128_s2_simt_sk2")).size(), 5u);
}

// The wgmma stages (sm_90a, e4m3fn): a consumer warpgroup per 64 rows of W plus the producer's, TMA boxes of
// the CTA's rows, swizzled unpadded stages; every other target and dtype is rejected with the reason.
TEST(MoeConfig, WgmmaStagesHaveTheirOwnShapeAndConstraints) {
  const auto c = moe::Config::from_name("fp8_m32w32_n128x256_k128_s4_wgmma_sk2");
  EXPECT_EQ(c.math, moe::Math::kWgmma);
  EXPECT_EQ(c.threads(1), 3 * 128);
  EXPECT_EQ(c.threads(2), 5 * 128);
  // Stage 1: 4 x (2 halves x 128 rows of W + 32 e4m3 token rows) x 128 B; stage 2: 256 rows of W and 32 e4m3
  // token rows (the quantized intermediate).
  EXPECT_EQ(c.shared_bytes(1), 4 * (2 * 128 + 32) * 128 + 1024);
  EXPECT_EQ(c.shared_bytes(2), 4 * (256 + 32) * 128 + 1024);
  const auto k = moe::kernels(c, 32);
  ASSERT_EQ(k.size(), 5u);
  EXPECT_EQ(k[2].name_expression, "tt::moe_stage_wgmma<1, 32, 128, 4, 1, int>");
  EXPECT_EQ(k[3].name_expression, "tt::moe_stage_wgmma<2, 32, 256, 4, 1, int>");
  EXPECT_EQ(k[3].parameters, "const tt::MoeStageTmaArgs");
  Target sm90 = Target::from_arch("sm_90a");
  sm90.cu_count = 132;
  auto why = [&](const moe::Problem& p, const moe::Config& cc, const Target& t) {
    return moe::why_unsupported(p, cc, t).value_or("");
  };
  EXPECT_EQ(why(glm(336), moe::Config::from_name("fp8_m32w32_n128x256_k128_s4_wgmma_sk1"), sm90), "");
  // Registers: block_m 128 holds 256 accumulator and product registers a thread in stage 1.
  EXPECT_NE(why(glm(336), moe::Config::from_name("fp8_m128w128_n64x64_k128_s3_wgmma_sk1"), sm90).find("registers"),
            std::string::npos);
  EXPECT_NE(why(glm(336), c, Target::from_arch("gfx942")).find("sm_90a"), std::string::npos);
  EXPECT_NE(why(glm(336), c, Target::from_arch("sm_89")).find("sm_90a"), std::string::npos);
  auto fnuz = c;
  fnuz.quant = moe::Quant::kFp8Fnuz;
  EXPECT_NE(why(glm(336, moe::Quant::kFp8Fnuz), fnuz, sm90).find("e4m3fn"), std::string::npos);
  EXPECT_NE(why(moe::Problem{16, 6272, 2048, 32, 8, moe::Quant::kFp8}, c, sm90).find("multiples of the CTA's rows"),
            std::string::npos);
  auto odd = c;
  odd.block_m = 96;
  odd.warp_m = 96;
  EXPECT_NE(why(glm(336), odd, sm90).find("warp_m"), std::string::npos);
  // wgmma2: the kernel of its own header (the wgmma kernels keep their code keys), no clusters, token tiles of 96
  // whose stage 1 needs 2 x 96 + 32 registers a consumer thread: more than 384 threads' even share (168), within
  // what the producer's setmaxnreg to 40 leaves in the CTA's pool (232); 640 threads (a 256-row stage 1) would
  // leave 104 for 224.
  const auto wide = moe::Config::from_name("fp8_m96w96_n128x128_k128_s4_wgmma2_sk1");
  EXPECT_EQ(wide.math, moe::Math::kWgmma2);
  EXPECT_EQ(wide.name(), "fp8_m96w96_n128x128_k128_s4_wgmma2_sk1");
  const auto all = moe::enumerate();
  EXPECT_EQ(std::count(all.begin(), all.end(), wide), 1);
  EXPECT_EQ(wide.cluster(), 1);
  EXPECT_EQ(wide.threads(1), 3 * 128);
  EXPECT_EQ(why(glm(336), wide, sm90), "");
  EXPECT_EQ(wide.shared_bytes(1), 4 * (2 * 128 + 96) * 128 + 1024);
  const auto kw = moe::kernels(wide, 32);
  EXPECT_EQ(kw[2].name_expression, "tt::moe_stage_wgmma2<1, 96, 96, 128, 2, 4, int>");
  EXPECT_EQ(kw[3].name_expression, "tt::moe_stage_wgmma2<2, 96, 96, 128, 1, 4, int>");
  EXPECT_EQ(kw[3].parameters, "const tt::MoeStageTma2Args");
  EXPECT_NE(kw[2].source.find("moe_wgmma2.h"), std::string::npos);
  // Its inputs quantized into sorted order (its producers copy tokens by TMA), by its own header's kernel.
  EXPECT_EQ(kw[1].name_expression, "tt::moe_quant_sorted<false, int>");
  EXPECT_EQ(kw[1].parameters, "tt::MoeQuantSortedArgs");
  EXPECT_NE(kw[1].source.find("moe_wgmma2.h"), std::string::npos);
  EXPECT_EQ(moe::kernels(c, 32)[1].name_expression, "tt::moe_quant_a<false, int>");
  // Its sorted inputs hold the worst-case padding: the index width counts them (and their transposed scales).
  const auto bounds = moe::index_bounds(glm(336), wide);
  const auto sorted_a = std::find_if(bounds.begin(), bounds.end(), [](const auto& b) { return b.buffer == "a_q (sorted)"; });
  ASSERT_NE(sorted_a, bounds.end());
  EXPECT_EQ(sorted_a->max_offset, moe::max_padded_rows(glm(336), 96) * 6144 - 1);
  EXPECT_EQ(moe::sorted_scale_ld(glm(336), 96) % 4, 0);
  EXPECT_GE(moe::sorted_scale_ld(glm(336), 96), moe::max_padded_rows(glm(336), 96));
  auto wide_n1 = wide;
  wide_n1.block_n1 = 256;
  EXPECT_NE(why(glm(336), wide_n1, sm90).find("registers"), std::string::npos);
  // 256 rows of W2 with 96 tokens: two consumer warpgroups, each on two adjacent 128-row halves (stage 1's
  // registers), one TMA box of 128 rows a half; the other tiles keep one half in stage 2.
  const auto halves = moe::Config::from_name("fp8_m96w96_n128x256_k128_s4_wgmma2_sk1");
  EXPECT_EQ(std::count(all.begin(), all.end(), halves), 1);
  EXPECT_EQ(why(glm(336), halves, sm90), "");
  EXPECT_EQ(halves.w_halves(2), 2);
  EXPECT_EQ(halves.half_rows(2), 128);
  EXPECT_EQ(halves.threads(2), 3 * 128);
  EXPECT_EQ(halves.shared_bytes(2), 4 * (256 + 96) * 128 + 1024);
  EXPECT_EQ(moe::kernels(halves, 32)[3].name_expression, "tt::moe_stage_wgmma2<2, 96, 96, 128, 2, 4, int>");
  EXPECT_EQ(wide.w_halves(2), 1);
  EXPECT_EQ(wide.half_rows(2), 128);
  const auto narrow256 = moe::Config::from_name("fp8_m64w64_n128x256_k128_s4_wgmma2_sk1");
  EXPECT_EQ(narrow256.w_halves(2), 1);
  EXPECT_EQ(narrow256.threads(2), 4 * 128 + 128);
  EXPECT_EQ(moe::kernels(narrow256, 32)[3].name_expression, "tt::moe_stage_wgmma2<2, 64, 64, 256, 1, 4, int>");
  EXPECT_EQ(moe::Config::from_name("fp8_m64w64_n128x256_k128_s4_wgmma_sk1").w_halves(2), 1);
  auto wide6 = wide;
  wide6.stages = 6;
  EXPECT_NE(why(glm(336), wide6, sm90).find("shared memory"), std::string::npos);
  auto wide_cluster = wide;
  wide_cluster.block_m = 192;
  EXPECT_NE(why(glm(336), wide_cluster, sm90).find("clusters"), std::string::npos);
  // Two token groups: block_m tokens a CTA (the routing's padding, the gather, the shared memory), a consumer
  // warpgroup per 64 rows of W and group of warp_m (the MMA width, the registers).
  const auto groups = moe::Config::from_name("fp8_m128w64_n64x128_k128_s6_wgmma2_sk1");
  EXPECT_EQ(std::count(all.begin(), all.end(), groups), 1);
  EXPECT_EQ(why(glm(336), groups, sm90), "");
  EXPECT_EQ(groups.threads(1), 2 * 128 + 128);
  EXPECT_EQ(groups.threads(2), 4 * 128 + 128);
  EXPECT_EQ(groups.shared_bytes(1), 6 * (2 * 64 + 128) * 128 + 1024);
  EXPECT_EQ(groups.shared_bytes(2), 6 * (128 + 128) * 128 + 1024);
  EXPECT_EQ(moe::kernels(groups, 64)[3].name_expression, "tt::moe_stage_wgmma2<2, 128, 64, 128, 1, 6, long long>");
  auto groups3 = groups;
  groups3.block_m = 192;
  EXPECT_NE(why(glm(336), groups3, sm90).find("two token groups"), std::string::npos);
  auto groups_wide = groups;
  groups_wide.block_n2 = 256;  // 4 x 2 consumer warpgroups and the producer's: 1152 threads
  EXPECT_NE(why(glm(336), groups_wide, sm90).find("at most 1024"), std::string::npos);
  // Persistent: its grid walks every tile's whole K, so split-K 1 only; its bf16 stage-2 rows take a reduce of
  // its own, the other kinds keep theirs (and their code keys).
  auto wide_sk2 = wide;
  wide_sk2.split_k = 2;
  EXPECT_NE(why(glm(336), wide_sk2, sm90).find("wgmma2: split-K 1"), std::string::npos);
  EXPECT_EQ(kw.back().name_expression, "tt::moe_reduce_bf16<int>");
  EXPECT_NE(kw.back().source.find("moe_wgmma2.h"), std::string::npos);
  EXPECT_EQ(moe::kernels(c, 64).back().name_expression, "tt::moe_reduce<long long>");
  // The wgmma configs' kernels are unchanged by wgmma2's (their stored verdicts stand).
  EXPECT_NE(moe::kernels(c, 32)[2].source.find("moe_gemm.h"), std::string::npos);
  // Clusters: block_m (the routing's padding) is 2 or 4 CTAs of warp_m rows (each multicasts a slice of the W
  // tile, 16 rows or more); registers and shared memory count a CTA's rows.
  const auto cl = moe::Config::from_name("fp8_m128w32_n256x256_k128_s3_wgmma_sk1");
  EXPECT_EQ(cl.cluster(), 4);
  EXPECT_EQ(c.cluster(), 1);
  EXPECT_EQ(why(glm(336), cl, sm90), "");
  EXPECT_EQ(cl.shared_bytes(1), 3 * (2 * 256 + 32) * 128 + 1024);
  const auto kc = moe::kernels(cl, 32);
  EXPECT_EQ(kc[2].name_expression, "tt::moe_stage_wgmma<1, 32, 256, 3, 4, int>");
  auto three = cl;
  three.block_m = 96;
  EXPECT_NE(why(glm(336), three, sm90).find("cluster"), std::string::npos);
  EXPECT_EQ(why(glm(336), moe::Config::from_name("fp8_m128w32_n64x64_k128_s3_wgmma_sk1"), sm90), "");
  // The stages' widths are independent: stage 1's 256 rows of W (one CTA an SM) with stage 2's 128 (two), which
  // the H200 measured faster than 256 x 256 from M=128 to 4096; with 256-row stage 1, only 3 stages fit.
  const auto mixed = moe::Config::from_name("fp8_m32w32_n256x128_k128_s3_wgmma_sk1");
  const auto space = moe::enumerate();
  EXPECT_EQ(std::count(space.begin(), space.end(), mixed), 1);
  EXPECT_EQ(mixed.threads(1), 5 * 128);
  EXPECT_EQ(mixed.threads(2), 3 * 128);
  EXPECT_EQ(why(glm(336), mixed, sm90), "");
  const auto km = moe::kernels(mixed, 32);
  EXPECT_EQ(km[2].name_expression, "tt::moe_stage_wgmma<1, 32, 256, 3, 1, int>");
  EXPECT_EQ(km[3].name_expression, "tt::moe_stage_wgmma<2, 32, 128, 3, 1, int>");
  auto deeper = mixed;
  deeper.stages = 4;
  EXPECT_NE(why(glm(336), deeper, sm90).find("shared memory"), std::string::npos);
  // Every FP8 key M of the profile has wgmma configs; bf16 has none.
  for (std::int64_t m : {1, 16, 336, 4096}) {
    int fp8 = 0, bf16 = 0;
    for (const auto& cc : moe::enumerate()) {
      if (cc.math != moe::Math::kWgmma && cc.math != moe::Math::kWgmma2) continue;
      fp8 += !moe::why_unsupported(glm(m), cc, sm90);
      bf16 += !moe::why_unsupported(glm(m, moe::Quant::kBf16), cc, sm90);
    }
    EXPECT_GT(fp8, 10) << "M=" << m;
    EXPECT_EQ(bf16, 0) << "M=" << m;
  }
}

// The 1-stage variant (sm_90a, e4m3fn): one kernel for both GEMMs between the align/quant and the reduce, a CTA
// per sorted block and 128 columns of inter_dim, whose per-slice partials the reduce sums; decode only.
TEST(MoeConfig, FusedVariantIsOneKernelForDecode) {
  const auto c = moe::Config::from_name("fp8_m32w32_n128x128_k128_s4_fused_sk1");
  EXPECT_EQ(c.math, moe::Math::kFused);
  EXPECT_EQ(c.name(), "fp8_m32w32_n128x128_k128_s4_fused_sk1");
  EXPECT_EQ(c.threads(1), 3 * 128);
  EXPECT_EQ(c.cluster(), 1);
  // 4 stages of (gate and up: 2 x 128 rows of W1, or one 128-row W2 tile) + 32 token rows, and the intermediate.
  EXPECT_EQ(c.shared_bytes(1), 4 * (2 * 128 + 32) * 128 + 32 * 128 + 1024);
  EXPECT_EQ(c.shared_bytes(2), 0);
  const auto k = moe::kernels(c, 64);
  ASSERT_EQ(k.size(), 4u);
  EXPECT_EQ(k[1].name_expression, "tt::moe_quant_a<false, long long>");
  EXPECT_EQ(k[2].name_expression, "tt::moe_fused_wgmma<32, 4, long long>");
  EXPECT_EQ(k[2].parameters, "const tt::MoeFusedArgs");
  EXPECT_EQ(k[3].name_expression, "tt::moe_reduce<long long>");
  const auto pl = moe::pipeline_layout(c);
  EXPECT_EQ(pl.quant, 1);
  EXPECT_EQ(pl.stage1, 2);
  EXPECT_EQ(pl.stage2, -1);
  EXPECT_EQ(pl.reduce, 3);
  EXPECT_EQ(moe::dynamic_shared_bytes(c), (std::vector<int>{0, 0, c.shared_bytes(1), 0}));
  // One partial plane per 128 columns of inter_dim (GLM-5: 16), whatever split_k says.
  EXPECT_EQ(moe::splits(glm(4), c), 16);
  EXPECT_EQ(moe::workspace_bytes(glm(4), c), 16u * 4 * 8 * 6144 * 4);
  for (const auto& b : moe::index_bounds(glm(4), c)) {
    if (b.buffer == "y") {
      EXPECT_EQ(b.max_offset, 16 * 4 * 8 * 6144 - 1);
    }
  }
  Target sm90 = Target::from_arch("sm_90a");
  sm90.cu_count = 132;
  auto why = [&](const moe::Problem& p, const moe::Config& cc, const Target& t) {
    return moe::why_unsupported(p, cc, t).value_or("");
  };
  for (std::int64_t m : {1, 2, 16, 32}) EXPECT_EQ(why(glm(m), c, sm90), "") << "M=" << m;
  // Its partials grow with M: past an eighth of the weights' bytes the pipeline serves.
  EXPECT_NE(why(glm(336), c, sm90).find("decode only"), std::string::npos);
  EXPECT_NE(why(glm(1), c, Target::from_arch("gfx942")).find("sm_90a"), std::string::npos);
  auto fnuz = c;
  fnuz.quant = moe::Quant::kFp8Fnuz;
  EXPECT_NE(why(glm(1, moe::Quant::kFp8Fnuz), fnuz, sm90).find("e4m3fn"), std::string::npos);
  auto wide = c;
  wide.block_n1 = 256;
  EXPECT_NE(why(glm(1), wide, sm90).find("128 columns"), std::string::npos);
  auto split = c;
  split.split_k = 2;
  EXPECT_NE(why(glm(1), split, sm90).find("no split-K"), std::string::npos);
  int fused = 0;
  for (const auto& cc : moe::enumerate()) fused += cc.math == moe::Math::kFused;
  EXPECT_EQ(fused, 3);
}

TEST(MoeConfig, IndexBoundsNeed64BitsOnlyForHugeM) {
  const auto c = moe::Config::from_name("fp8_m16w16_n64x64_k128_s3_mma_sk1");
  EXPECT_EQ(required_index_bits(moe::index_bounds(glm(4096), c)), 32);
  // y holds tokens * topk * model_dim fp32: past 2^31 elements at 43691 tokens.
  EXPECT_EQ(required_index_bits(moe::index_bounds(glm(43690), c)), 32);
  EXPECT_EQ(required_index_bits(moe::index_bounds(glm(43691), c)), 64);
}

TEST(MoeProblem, KeyNamesEveryField) {
  const auto p = glm(304, moe::Quant::kFp8, moe::Routing::kSkewed);
  EXPECT_EQ(p.key(), "m=304,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8,routing=skewed");
  EXPECT_EQ(p.to_json()["quant"], "fp8");
  EXPECT_EQ(moe::to_torch(moe::Quant::kFp8Fnuz), "torch.float8_e4m3fnuz");
  // Weight-read roofline: 32 experts x 3 x 2048 x 6144 bytes plus the fp32 block scales.
  EXPECT_EQ(p.weight_bytes(), 32LL * 3 * 2048 * 6144 + 32LL * (32 * 48 + 48 * 16) * 4);
  EXPECT_THROW(moe::quant_from_string("int8"), Error);
}

TEST(MoeProblem, JsonRoundTripsAndNamesBadFields) {
  const auto p = glm(304, moe::Quant::kFp8Fnuz, moe::Routing::kSkewed);
  EXPECT_EQ(moe::Problem::from_json(p.to_json()).key(), p.key());
  auto j = p.to_json();
  j.erase("inter_dim");
  tunetab::testing::expect_input_error([&] { moe::Problem::from_json(j); }, "inter_dim");
  j = p.to_json();
  j["routing"] = "zipf";
  tunetab::testing::expect_input_error([&] { moe::Problem::from_json(j); }, "routing 'zipf'");
  j = p.to_json();
  j["act"] = "gelu";
  tunetab::testing::expect_input_error([&] { moe::Problem::from_json(j); }, "act must be silu");
}

TEST(MoeConfig, SharedMemoryAndWorkspaceCoverBothStages) {
  const auto c = moe::Config::from_name("fp8_m16w16_n32x128_k128_s4_mma_sk2");
  // Stage 1: 4 x (16 rows x 144 B of A + 2 x 32 rows x 144 B of W); stage 2: A is the e4m3 intermediate.
  EXPECT_EQ(c.shared_bytes(1), 4 * (16 * 144 + 64 * 144));
  EXPECT_EQ(c.shared_bytes(2), 4 * (16 * 144 + 128 * 144));
  EXPECT_EQ(c.shared_bytes(), c.shared_bytes(2));
  EXPECT_EQ(moe::dynamic_shared_bytes(c), (std::vector<int>{0, 0, c.shared_bytes(1), c.shared_bytes(2), 0}));
  EXPECT_EQ(moe::workspace_bytes(glm(64), c), 2u * 64 * 8 * 6144 * 4);
}

TEST(MoeReference, EigenMatchesPlainLoopsOnTinyProblems) {
  for (auto q : {moe::Quant::kBf16, moe::Quant::kFp8, moe::Quant::kFp8Fnuz})
    for (auto routing : {moe::Routing::kBalanced, moe::Routing::kSkewed}) {
      const moe::Problem p{5, 256, 128, 6, 3, q, routing};
      const auto h = moe::make_operands(p, 42);
      const auto fast = moe::reference_moe(p, h), slow = moe::reference_moe_naive(p, h);
      ASSERT_EQ(fast.size(), 5u * 256);
      double norm = 0, diff = 0;
      for (std::size_t i = 0; i < fast.size(); ++i) {
        ASSERT_TRUE(std::isfinite(fast[i]));
        norm += double(slow[i]) * slow[i];
        diff += (double(fast[i]) - slow[i]) * (double(fast[i]) - slow[i]);
      }
      EXPECT_GT(norm, 1.0) << "random operands, non-trivial output";
      // Both round stage 1's output to bf16; a different summation order may cross a rounding boundary.
      EXPECT_LT(std::sqrt(diff / norm), 2e-3) << moe::to_string(q);
      const auto cmp = gemm::compare([&] {
        std::vector<std::uint16_t> o;
        for (float v : fast) o.push_back(gemm::float_to_bf16(v));
        return o;
      }(), slow, moe::tolerance(p));
      EXPECT_TRUE(cmp.passed) << cmp.summary();
    }
}

TEST(MoeReference, AnMsInputsAndReferenceAreTheCapacitysFirstRows) {
  // Workload::set_m and the timing tool serve every M from one capacity workload: that holds only if the
  // hidden states and the routing are drawn token by token, so M's are the capacity's first rows.
  for (auto routing : {moe::Routing::kBalanced, moe::Routing::kSkewed}) {
    const moe::Problem cap{37, 256, 128, 8, 3, moe::Quant::kFp8, routing};
    const auto hc = moe::make_operands(cap, 5);
    const auto rc = moe::reference_moe(cap, hc);
    for (std::int64_t m : {1, 16, 36}) {
      moe::Problem p = cap;
      p.m = m;
      const auto h = moe::make_operands(p, 5);
      EXPECT_TRUE(std::equal(h.hidden.begin(), h.hidden.end(), hc.hidden.begin())) << "M=" << m;
      EXPECT_TRUE(std::equal(h.routing.topk_ids.begin(), h.routing.topk_ids.end(), hc.routing.topk_ids.begin())) << "M=" << m;
      EXPECT_TRUE(std::equal(h.routing.topk_weights.begin(), h.routing.topk_weights.end(), hc.routing.topk_weights.begin()))
          << "M=" << m;
      EXPECT_EQ(h.w1q, hc.w1q);
      EXPECT_EQ(h.w2s, hc.w2s);
      const auto r = moe::reference_moe(p, h);
      ASSERT_EQ(r.size(), static_cast<std::size_t>(m * cap.model_dim));
      // The same inputs; only Eigen's blocking over a different row count may change the last bits.
      for (std::size_t i = 0; i < r.size(); ++i) ASSERT_NEAR(r[i], rc[i], 1e-5f * (1 + std::fabs(rc[i]))) << "M=" << m << " i=" << i;
    }
  }
}

TEST(MoeReference, Fp8DiffersFromBf16ButStaysClose) {
  moe::Problem p{4, 256, 256, 4, 2, moe::Quant::kBf16, moe::Routing::kBalanced};
  const auto hb = moe::make_operands(p, 7);
  const auto rb = moe::reference_moe(p, hb);
  p.quant = moe::Quant::kFp8;
  const auto hf = moe::make_operands(p, 7);
  EXPECT_EQ(hf.routing.topk_ids, hb.routing.topk_ids) << "same seed, same routing";
  const auto rf = moe::reference_moe(p, hf);
  double norm = 0, diff = 0;
  for (std::size_t i = 0; i < rb.size(); ++i) {
    norm += double(rb[i]) * rb[i];
    diff += (double(rf[i]) - rb[i]) * (double(rf[i]) - rb[i]);
  }
  const double rel = std::sqrt(diff / norm);
  EXPECT_GT(rel, 1e-3) << "FP8 quantization must change the result";
  EXPECT_LT(rel, 0.15) << "but not beyond e4m3's precision";
}

TEST(MoeTolerance, Fp8StageOneNoiseOnNearZeroElementsPassesWhileAMissingExpertFails) {
  const moe::Problem p{64, 512, 256, 8, 4, moe::Quant::kFp8, moe::Routing::kBalanced};
  auto h = moe::make_operands(p, 11);
  const auto ref = moe::reference_moe(p, h);
  double ss = 0;
  for (float v : ref) ss += double(v) * v;
  const double rms = std::sqrt(ss / static_cast<double>(ref.size()));
  // The fp8 MMA's stage-1 noise through the re-quantized intermediate (kernels/tolerance.h: 3..5e-3 RMS(ref),
  // independent of each value), and at the element nearest 0 a 6-sigma tail of it, as 25M elements produce.
  constexpr double kNoise = 4e-3;
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0.0, kNoise * rms);
  std::vector<std::uint16_t> out;
  for (float v : ref) out.push_back(gemm::float_to_bf16(static_cast<float>(v + noise(rng))));
  std::size_t nearest0 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (std::fabs(ref[i]) < std::fabs(ref[nearest0])) nearest0 = i;
  out[nearest0] = gemm::float_to_bf16(static_cast<float>(ref[nearest0] + 6 * kNoise * rms));
  const auto cmp = gemm::compare(out, ref, moe::tolerance(p));
  EXPECT_TRUE(cmp.passed) << cmp.summary();
  // The bound of the bf16 intermediate (atol 1e-2 RMS) fails exactly such an element.
  ToleranceSpec before = moe::tolerance_spec(p);
  before.atol_rms = 1e-2;
  EXPECT_FALSE(gemm::compare(out, ref, gemm::tolerance_of(before)).passed);
  // One element off by 8% of RMS(ref) where its value is ~0 fails.
  auto one_off = out;
  one_off[nearest0] = gemm::float_to_bf16(static_cast<float>(ref[nearest0] + 0.08 * rms));
  EXPECT_FALSE(gemm::compare(one_off, ref, moe::tolerance(p)).passed);
  // A token that lost one of its experts (its routing weight dropped) fails.
  h.routing.topk_weights[0] = 0;
  const auto lost = moe::reference_moe(p, h);
  std::vector<std::uint16_t> lost_out;
  for (float v : lost) lost_out.push_back(gemm::float_to_bf16(v));
  const auto bad = gemm::compare(lost_out, ref, moe::tolerance(p));
  EXPECT_FALSE(bad.passed) << bad.summary();
}
