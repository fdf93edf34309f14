#include <gtest/gtest.h>

#include "tuner/error.h"
#include "tuner/profile/lookup.h"

using namespace tunetab;
using namespace tunetab::profile;

namespace {

constexpr std::int64_t kMax = kNoUpperBound;

std::set<std::int64_t> rows_of(const std::vector<Bucket>& buckets) {
  std::set<std::int64_t> rows;
  for (const auto& b : buckets) rows.insert(b.m);
  return rows;
}

/// The buckets tile the domain: in order, contiguous, each one's row chosen for every M in it.
void expect_tiles(const LookupRule& rule, MDomain d) {
  const auto buckets = rule.buckets(d);
  ASSERT_FALSE(buckets.empty());
  EXPECT_EQ(buckets.front().first, d.first);
  EXPECT_EQ(buckets.back().last, d.last);
  for (std::size_t i = 1; i < buckets.size(); ++i) EXPECT_EQ(buckets[i].first, buckets[i - 1].last + 1);
}

}  // namespace

TEST(LookupAiterFmoe, PaddingMatchesAiterGetPaddedM) {
  // clang-format off
  const std::pair<std::int64_t, std::int64_t> cases[] = {
    {1, 1}, {2, 2}, {3, 4}, {256, 256}, {257, 512}, {512, 512}, {513, 1024}, {16384, 16384},
    {16385, 32768}, {32767, 32768}, {32768, 32768}, {131071, 32768}, {131072, 131072}, {1 << 20, 131072}};
  // clang-format on
  for (auto [m, want] : cases) EXPECT_EQ(aiter_fmoe_padded_m(m), want) << m;
}

TEST(LookupAiterFmoe, BucketEdges) {
  const auto r = LookupRule::aiter_fmoe();
  // clang-format off
  const std::pair<std::int64_t, Bucket> cases[] = {
    {1,      {1, 1, 1}},           {2,      {2, 2, 2}},           {3,      {4, 3, 4}},
    {256,    {256, 129, 256}},     {257,    {512, 257, 512}},     {512,    {512, 257, 512}},
    {513,    {1024, 513, 1024}},   {16384,  {16384, 8193, 16384}},
    // 16385..32767 pad to 32768 and so does the whole 32768..131071 tier: one row serves them all.
    {16385,  {32768, 16385, 131071}}, {32767, {32768, 16385, 131071}}, {32768, {32768, 16385, 131071}},
    {131071, {32768, 16385, 131071}}, {131072, {131072, 131072, kMax}}, {1 << 22, {131072, 131072, kMax}}};
  // clang-format on
  for (const auto& [m, want] : cases) EXPECT_EQ(r.bucket_of(m), want) << m;
}

TEST(LookupAiterFmoe, DomainToTheTablesTokens) {
  // AITER's model_configs untuned fused-MoE files list exactly these tokens for a 32768-token envelope.
  const auto b = LookupRule::aiter_fmoe().buckets({1, 32768});
  std::vector<std::int64_t> tokens;
  for (const auto& x : b) tokens.push_back(x.m);
  EXPECT_EQ(tokens, (std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768}));
  EXPECT_EQ(b.back(), (Bucket{32768, 16385, 32768}));  // clipped to the domain
  expect_tiles(LookupRule::aiter_fmoe(), {1, 200000});
  expect_tiles(LookupRule::aiter_fmoe(), {300, 300});
  EXPECT_EQ(LookupRule::aiter_fmoe().buckets({100, 1000}).front(), (Bucket{128, 100, 128}));
}

TEST(LookupAiterGemm, PaddingMatchesAiterGetPaddedM) {
  // clang-format off
  const std::pair<std::int64_t, std::int64_t> fine[] = {
    {1, 1}, {3, 4}, {9, 16}, {15, 16}, {16, 16}, {17, 32}, {255, 256}, {256, 256}, {257, 288},
    {1024, 1024}, {1025, 1088}, {4096, 4096}, {4097, 4224}, {32767, 32768}};
  // clang-format on
  for (auto [m, want] : fine) EXPECT_EQ(aiter_gemm_padded_m(m, 7168, 0), want) << m;
  EXPECT_EQ(aiter_gemm_padded_m(8193, 4097, 1), 8192);   // M > 8192 and N > 4096: the 8192 row
  EXPECT_EQ(aiter_gemm_padded_m(8193, 4096, 1), 16384);  // N = 4096: next power of two
  EXPECT_EQ(aiter_gemm_padded_m(8192, 7168, 1), 8192);
  EXPECT_EQ(aiter_gemm_padded_m(257, 7168, 1), 512);
}

TEST(LookupAiterGemm, BucketEdges) {
  const auto narrow = LookupRule::aiter_gemm(4096), wide = LookupRule::aiter_gemm(7168);
  // clang-format off
  const std::pair<std::int64_t, Bucket> narrow_cases[] = {
    {1, {1, 1, 1}}, {256, {256, 129, 256}}, {257, {512, 257, 512}}, {513, {1024, 513, 1024}},
    {8192, {8192, 4097, 8192}}, {8193, {16384, 8193, 16384}}, {32767, {32768, 16385, 32768}},
    {32768, {32768, 16385, 32768}}, {131072, {131072, 65537, 131072}}};
  const std::pair<std::int64_t, Bucket> wide_cases[] = {
    {1, {1, 1, 1}}, {256, {256, 129, 256}}, {257, {512, 257, 512}}, {4096, {4096, 2049, 4096}},
    {4097, {8192, 4097, kMax}}, {8193, {8192, 4097, kMax}}, {32768, {8192, 4097, kMax}}, {131072, {8192, 4097, kMax}}};
  // clang-format on
  for (const auto& [m, want] : narrow_cases) EXPECT_EQ(narrow.bucket_of(m), want) << m;
  for (const auto& [m, want] : wide_cases) EXPECT_EQ(wide.bucket_of(m), want) << m;
  EXPECT_EQ(wide.buckets({1, 32768}).size(), 14u);  // 1..8192
  EXPECT_EQ(narrow.buckets({1, 32768}).size(), 16u);
}

TEST(LookupAiterGemm, ExactThenFineThenCoarse) {
  const auto r = LookupRule::aiter_gemm(7168);
  const std::set<std::int64_t> rows = {64, 80, 128, 8192};
  EXPECT_EQ(r.lookup(64, rows), 64);     // exact
  EXPECT_EQ(r.lookup(70, rows), 80);     // fine: multiple of 16
  EXPECT_EQ(r.lookup(100, rows), 128);   // fine 112 absent; coarse: next power of two
  EXPECT_EQ(r.lookup(200, rows), std::nullopt);  // 208 and 256 absent: AITER's default config
  EXPECT_EQ(r.lookup(20000, rows), 8192);        // wide N: the 8192 row
  EXPECT_EQ(LookupRule::aiter_gemm(4096).lookup(20000, rows), std::nullopt);
}

TEST(LookupVllmNearest, TiesGoToTheSmallerKey) {
  const auto r = LookupRule::vllm_nearest(vllm_default_keys(4096));
  // clang-format off
  const std::pair<std::int64_t, Bucket> cases[] = {
    {1, {1, 1, 1}}, {3, {2, 2, 3}}, {4, {4, 4, 6}}, {20, {16, 13, 20}}, {21, {24, 21, 28}},
    {256, {256, 193, 384}}, {384, {256, 193, 384}}, {385, {512, 385, 768}}, {3584, {3072, 2561, 3584}},
    {3585, {4096, 3585, kMax}}, {100000, {4096, 3585, kMax}}};
  // clang-format on
  for (const auto& [m, want] : cases) EXPECT_EQ(r.bucket_of(m), want) << m;
  EXPECT_EQ(r.lookup(3, {2, 4}), 2);
  EXPECT_EQ(r.lookup(1, {4, 8}), 4);
  EXPECT_EQ(r.lookup(9, {}), std::nullopt);
  EXPECT_EQ(vllm_default_keys(20000).back(), 32768);
  EXPECT_EQ(vllm_default_keys(100).back(), 4096);
}

TEST(LookupExact, OneRowPerM) {
  const auto r = LookupRule::exact();
  EXPECT_EQ(r.bucket_of(257), (Bucket{257, 257, 257}));
  EXPECT_EQ(r.buckets({1, 513}).size(), 513u);
  EXPECT_EQ(r.lookup(257, {256, 512}), std::nullopt);
}

TEST(Lookup, EachRuleFindsItsOwnRowsForEveryM) {
  const MDomain d{1, 140000};
  const LookupRule rules[] = {LookupRule::aiter_fmoe(), LookupRule::aiter_gemm(4096), LookupRule::aiter_gemm(7168),
                              LookupRule::aiter_gemm(3072, {257, 512}), LookupRule::aiter_gemm(7168, {17, 4096}),
                              LookupRule::vllm_nearest(vllm_default_keys(d.last)), LookupRule::exact()};
  for (const auto& r : rules) {
    const auto buckets = r.buckets(d);
    const auto rows = rows_of(buckets);
    expect_tiles(r, d);
    for (const auto& b : buckets) {
      for (std::int64_t m = b.first; m <= b.last; ++m) {
        ASSERT_EQ(r.lookup(m, rows), b.m) << to_string(r.kind()) << " m=" << m;
        ASSERT_EQ(r.bucket_of(m).m, b.m) << to_string(r.kind()) << " m=" << m;
      }
    }
  }
}

TEST(LookupAiterGemm, FineRowsSplitTheCoarseBucketsTheySpan) {
  const auto r = LookupRule::aiter_gemm(3072, {257, 512});
  EXPECT_EQ(r.bucket_of(256), (Bucket{256, 129, 256}));  // coarse below
  EXPECT_EQ(r.bucket_of(257), (Bucket{288, 257, 288}));
  EXPECT_EQ(r.bucket_of(336), (Bucket{352, 321, 352}));
  EXPECT_EQ(r.bucket_of(512), (Bucket{512, 481, 512}));
  EXPECT_EQ(r.bucket_of(513), (Bucket{1024, 513, 1024}));  // coarse above
  const auto buckets = r.buckets({1, 4096});
  const auto rows = rows_of(buckets);
  EXPECT_EQ(rows, (std::set<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 288, 320, 352, 384, 416, 448, 480, 512, 1024,
                                          2048, 4096}));
  EXPECT_EQ(r.lookup(336, rows), 352);  // the fine padding finds its row
  EXPECT_EQ(LookupRule::aiter_gemm(3072).lookup(336, rows), 352);  // the consumer's rule needs no range
  // Across tiers: 16-row steps up to 256, 32 up to 1024, 64 beyond.
  const auto wide = LookupRule::aiter_gemm(7168, {17, 4096});
  EXPECT_EQ(wide.bucket_of(17), (Bucket{32, 17, 32}));
  EXPECT_EQ(wide.bucket_of(1025), (Bucket{1088, 1025, 1088}));
  EXPECT_EQ(wide.bucket_of(4097), (Bucket{8192, 4097, kNoUpperBound}));
  for (const MDomain bad : {MDomain{300, 512}, MDomain{257, 500}, MDomain{9, 16}, MDomain{513, 256}, MDomain{4097, 8192}})
    EXPECT_THROW(LookupRule::aiter_gemm(3072, bad), Error) << bad.first << "-" << bad.last;
}

TEST(Lookup, RuleNamesRoundTrip) {
  for (auto k : {RuleKind::kAiterFmoe, RuleKind::kAiterGemm, RuleKind::kVllmNearest, RuleKind::kExact})
    EXPECT_EQ(rule_from_string(to_string(k)), k);
  try {
    rule_from_string("nearest");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("vllm-nearest"), std::string::npos) << e.what();
  }
}

TEST(LookupAiterFmoe, MissingTopTierFallsBackTo32768) {
  const auto r = LookupRule::aiter_fmoe();
  EXPECT_EQ(r.lookup(200000, {32768}), 32768);          // AITER's _lookup_cfg tier fallback
  EXPECT_EQ(r.lookup(200000, {32768, 131072}), 131072);
  EXPECT_EQ(r.lookup(20000, {16384, 131072}), std::nullopt);  // no fallback below the top tier
}

TEST(Lookup, ConstantUntilHoldsTheLookupMByM) {
  // Row sets with powers of two, odd Ms, a wide-N cap and large tiers; every M up to 140000 checked.
  const std::set<std::int64_t> row_sets[] = {
      {}, {8192}, {1, 2, 4, 64, 80, 100, 128, 8192, 16384}, {3, 17, 255, 4097, 9000, 32768, 131072}, {16, 32768}};
  const LookupRule rules[] = {LookupRule::aiter_fmoe(), LookupRule::aiter_gemm(4096), LookupRule::aiter_gemm(7168),
                              LookupRule::vllm_nearest({1}), LookupRule::exact()};
  for (const auto& rows : row_sets) {
    for (const auto& r : rules) {
      for (std::int64_t m = 1; m <= 140000;) {
        const auto want = r.lookup(m, rows);
        const std::int64_t last = std::min<std::int64_t>(r.constant_until(m, rows), 140000);
        ASSERT_GE(last, m) << to_string(r.kind()) << " m=" << m;
        for (std::int64_t x = m; x <= last; ++x)
          ASSERT_EQ(r.lookup(x, rows), want) << to_string(r.kind()) << " m=" << m << " x=" << x;
        m = last + 1;
      }
    }
  }
}
