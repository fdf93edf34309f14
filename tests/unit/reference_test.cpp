#include <gtest/gtest.h>

#include <cmath>

#include "kernels/gemm/gemm.h"

using namespace tunetab;

TEST(GemmReference, MatchesNaiveDoubleProduct) {
  const std::int64_t m = 37, n = 70, k = 96;
  const auto a = gemm::random_bf16(m * k, 1), b = gemm::random_bf16(n * k, 2);
  const auto ref = gemm::reference_gemm(a, b, m, n, k);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::int64_t l = 0; l < k; ++l) acc += double(gemm::bf16_to_float(a[i * k + l])) * gemm::bf16_to_float(b[j * k + l]);
      ASSERT_NEAR(ref[i * n + j], acc, 1e-4 * (1 + std::fabs(acc))) << i << "," << j;
    }
}

TEST(GemmReference, RandomDataIsNotZeroAndSeedsDiffer) {
  const auto a = gemm::random_bf16(4096, 7), b = gemm::random_bf16(4096, 8);
  int zeros = 0, same = 0;
  double lo = 1, hi = -1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float f = gemm::bf16_to_float(a[i]);
    zeros += f == 0;
    same += a[i] == b[i];
    lo = std::min<double>(lo, f);
    hi = std::max<double>(hi, f);
  }
  EXPECT_LT(zeros, 10);
  EXPECT_LT(same, 100);
  EXPECT_LT(lo, -0.9);
  EXPECT_GT(hi, 0.9);
}

TEST(GemmCompare, PassesRoundedOutputAndCatchesFaults) {
  const std::int64_t m = 33, n = 64, k = 128;
  const auto a = gemm::random_bf16(m * k, 3), b = gemm::random_bf16(n * k, 4);
  const auto ref = gemm::reference_gemm(a, b, m, n, k);
  std::vector<std::uint16_t> out(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) out[i] = gemm::float_to_bf16(ref[i]);
  const auto ok = gemm::compare(out, ref, {});
  EXPECT_TRUE(ok.passed) << ok.summary();
  EXPECT_LT(ok.rel_l2, 3e-3);

  auto unwritten = out;
  unwritten[500] = 0xffff;  // the NaN poison: an element the kernel never wrote
  const auto nan = gemm::compare(unwritten, ref, {});
  EXPECT_FALSE(nan.passed);
  EXPECT_EQ(nan.non_finite, 1);
  EXPECT_EQ(nan.first_bad, 500);

  auto wrong = out;
  wrong[1000] = gemm::float_to_bf16(ref[1000] * 1.1f + 0.5f);  // one wrong element in 2112
  const auto bad = gemm::compare(wrong, ref, {});
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.first_bad, 1000);
  EXPECT_NEAR(bad.err_ratio, 1.0 / ref.size(), 1e-12);
}

TEST(GemmCompare, Bf16RoundingIsNearestEven) {
  EXPECT_EQ(gemm::float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(gemm::float_to_bf16(1.00390625f), 0x3f80);  // exactly half-way to 0x3f81: ties to even
  EXPECT_EQ(gemm::float_to_bf16(1.01171875f), 0x3f82);  // half-way between 0x3f81 and 0x3f82: to even
  EXPECT_EQ(gemm::float_to_bf16(std::nanf("")) & 0x7fc0, 0x7fc0);
}
