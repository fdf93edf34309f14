// The device compare's host bookkeeping (kernels/validate): prefix sums of ref^2, atol, and the reduction of
// per-block partials, against gemm::compare on the same data. No GPU: host_partial() models the kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "kernels/gemm/gemm.h"
#include "kernels/validate/validate.h"

using namespace tunetab;

namespace {

constexpr std::size_t kRows = 37, kRow = 96;

std::vector<float> random_ref(std::size_t count, std::uint64_t seed) {
  const auto bits = gemm::random_bf16(count * 2, seed);
  std::vector<float> ref(count);
  // A GEMM-like reference: sums of a few products, not bf16-exact.
  for (std::size_t i = 0; i < count; ++i)
    ref[i] = 3.0f * gemm::bf16_to_float(bits[2 * i]) + 0.01f * gemm::bf16_to_float(bits[2 * i + 1]);
  return ref;
}

std::vector<std::uint16_t> rounded(const std::vector<float>& ref) {
  std::vector<std::uint16_t> out(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) out[i] = gemm::float_to_bf16(ref[i]);
  return out;
}

/// The bf16 value next to ref[i], one bf16 step outside (or the last one inside) atol + rtol * |r|.
std::uint16_t at_tolerance(float r, double atol, double rtol, bool outside) {
  std::uint16_t h = gemm::float_to_bf16(r), inside = h;
  const double limit = atol + rtol * std::fabs(static_cast<double>(r));
  for (;;) {
    const std::uint16_t next = static_cast<std::uint16_t>(h + 1);  // away from zero, same sign
    const double d = std::fabs(static_cast<double>(gemm::bf16_to_float(next)) - r);
    if (d > limit) return outside ? next : inside;
    inside = h = next;
  }
}

gemm::Comparison via_partials(const std::vector<std::uint16_t>& out, const std::vector<float>& ref, std::size_t count,
                              const gemm::Tolerance& tol) {
  const validate::RefSquares sq(ref.data(), ref.size(), kRow);
  const double ref_sq = sq.sum(count);
  const double atol = validate::atol_of(ref_sq, count, tol);
  // Split as a grid would: uneven chunks reduced in an arbitrary order.
  validate::Partial total;
  for (std::size_t begin = 0; begin < count;) {
    const std::size_t n = std::min<std::size_t>(count - begin, 1 + (begin * 7919) % 1000);
    validate::Partial p = validate::host_partial(out.data() + begin, ref.data() + begin, n, atol, tol.rtol);
    if (p.first_bad >= 0) p.first_bad += static_cast<std::int64_t>(begin);
    validate::accumulate(total, p);
    begin += n;
  }
  return validate::finish(total, ref_sq, count, tol);
}

void expect_same(const gemm::Comparison& a, const gemm::Comparison& b, const std::string& what) {
  EXPECT_EQ(a.passed, b.passed) << what;
  EXPECT_EQ(a.first_bad, b.first_bad) << what;
  EXPECT_EQ(a.non_finite, b.non_finite) << what;
  EXPECT_DOUBLE_EQ(a.err_ratio, b.err_ratio) << what;
  if (std::isfinite(b.rel_l2)) {
    EXPECT_NEAR(a.rel_l2, b.rel_l2, 1e-9 * b.rel_l2 + 1e-300) << what;
  } else {
    EXPECT_EQ(a.rel_l2, b.rel_l2) << what;
  }
  EXPECT_EQ(a.max_abs, b.max_abs) << what;
}

}  // namespace

TEST(Validate, PrefixSumsMatchDirectSums) {
  const auto ref = random_ref(kRows * kRow + 5, 1);  // a ragged last row
  const validate::RefSquares sq(ref.data(), ref.size(), kRow);
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, kRow - 1, kRow, kRow + 1, 5 * kRow, 17 * kRow + 33, ref.size()}) {
    double direct = 0;
    for (std::size_t i = 0; i < count; ++i) direct += static_cast<double>(ref[i]) * ref[i];
    EXPECT_NEAR(sq.sum(count), direct, 1e-12 * direct) << count;
  }
  EXPECT_THROW(sq.sum(ref.size() + 1), Error);
}

TEST(Validate, AtolIsAtolRmsTimesRms) {
  const gemm::Tolerance tol{1.0 / 128, 1e-3, 5e-3};
  EXPECT_DOUBLE_EQ(validate::atol_of(400.0, 100, tol), 1e-3 * 2.0);
  EXPECT_EQ(validate::atol_of(0.0, 0, tol), 0.0);
}

TEST(Validate, PartialsReduceToHostCompare) {
  const gemm::Tolerance tol;
  const auto ref = random_ref(kRows * kRow, 2);
  const auto good = rounded(ref);
  const double atol = validate::atol_of(validate::RefSquares(ref.data(), ref.size(), kRow).sum(ref.size()), ref.size(), tol);

  std::map<std::string, std::vector<std::uint16_t>> cases;
  cases["all correct"] = good;
  cases["nan"] = good;
  cases["nan"][3 * kRow + 7] = 0x7fc0;
  cases["inf"] = good;
  cases["inf"][20 * kRow + 1] = 0xff80;  // -Inf
  cases["just outside"] = good;
  cases["just outside"][11 * kRow + 50] = at_tolerance(ref[11 * kRow + 50], atol, tol.rtol, true);
  cases["just inside"] = good;
  cases["just inside"][11 * kRow + 50] = at_tolerance(ref[11 * kRow + 50], atol, tol.rtol, false);
  cases["poisoned tail"] = good;
  for (std::size_t i = 30 * kRow; i < ref.size(); ++i) cases["poisoned tail"][i] = 0xffff;

  for (const auto& [name, out] : cases)
    for (std::size_t m : {std::size_t{1}, std::size_t{4}, std::size_t{12}, std::size_t{21}, std::size_t{31}, kRows}) {
      const std::size_t count = m * kRow;
      const auto host = gemm::compare(out.data(), ref.data(), count, tol);
      expect_same(via_partials(out, ref, count, tol), host, name + " at M=" + std::to_string(m));
    }
  // The planted cases do what they say on the whole output.
  EXPECT_TRUE(gemm::compare(cases["all correct"], ref, tol).passed);
  EXPECT_TRUE(gemm::compare(cases["just inside"], ref, tol).passed);
  EXPECT_FALSE(gemm::compare(cases["just outside"], ref, tol).passed);
  EXPECT_EQ(gemm::compare(cases["just outside"], ref, tol).first_bad, static_cast<std::int64_t>(11 * kRow + 50));
  EXPECT_EQ(gemm::compare(cases["inf"], ref, tol).non_finite, 1);
}

TEST(Validate, KernelIsOneInstanceOfItsOwnFamily) {
  const KernelSource k = validate::kernel();
  EXPECT_EQ(k.family, "validate");
  EXPECT_EQ(k.name_expression, "tt::validate_bf16<256>");
  EXPECT_NE(k.source.find("validate.h"), std::string::npos);
}

TEST(Validate, MagnitudeSlackMatchesTheHostCompare) {
  // With per-element magnitudes (the fp8 MMA's slack), the kernel's rule and gemm::compare still agree.
  const auto ref = random_ref(kRows * kRow, 21);
  std::vector<float> mag(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) mag[i] = std::fabs(ref[i]) * 3 + static_cast<float>(i % 7);
  gemm::Tolerance tol;
  tol.mag_rel = 1.0 / 256;
  auto out = rounded(ref);
  out[100] = gemm::float_to_bf16(ref[100] + 0.5f * static_cast<float>(tol.mag_rel) * mag[100] + 0.02f);
  out[2000] = gemm::float_to_bf16(ref[2000] + 3.0f * static_cast<float>(tol.mag_rel) * mag[2000] + 0.05f);
  const validate::RefSquares sq(ref.data(), ref.size(), kRow);
  const double atol = validate::atol_of(sq.sum(ref.size()), ref.size(), tol);
  for (bool with_mag : {false, true}) {
    const float* m = with_mag ? mag.data() : nullptr;
    const auto p = validate::host_partial(out.data(), ref.data(), ref.size(), atol, tol.rtol, m, tol.mag_rel);
    const auto host = gemm::compare(out.data(), ref.data(), ref.size(), tol, m);
    expect_same(validate::finish(p, sq.sum(ref.size()), ref.size(), tol), host, with_mag ? "magnitudes" : "none");
    EXPECT_EQ(host.first_bad, with_mag ? 2000 : 100);
  }
}
