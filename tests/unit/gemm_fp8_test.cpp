// gemm_fp8_blockscale host side: fp8 codes, config space and constraints, operands and the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/gemm_fp8/gemm_fp8.h"
#include "tuner/error.h"

using namespace tunetab;
using gemm_fp8::Fp8;

namespace {

/// The e4m3 value of a code by the formats' definitions, written independently of fp8_to_float:
/// fn (OCP): bias 7, S.1111.111 NaN; fnuz: bias 8, 0x80 NaN.
double expected_value(int code, Fp8 f) {
  const bool fnuz = f == Fp8::kE4m3fnuz;
  const int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
  if (fnuz && code == 0x80) return NAN;
  if (!fnuz && e == 15 && m == 7) return NAN;
  const int bias = fnuz ? 8 : 7;
  const double mag = e == 0 ? (m / 8.0) * std::pow(2.0, 1 - bias) : (1 + m / 8.0) * std::pow(2.0, e - bias);
  return s ? -mag : mag;
}

}  // namespace

TEST(GemmFp8Codes, DecodeMatchesTheFormatDefinitionForAll256Codes) {
  for (Fp8 f : {Fp8::kE4m3fn, Fp8::kE4m3fnuz})
    for (int c = 0; c < 256; ++c) {
      const double want = expected_value(c, f);
      const float got = gemm_fp8::fp8_to_float(static_cast<std::uint8_t>(c), f);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << gemm_fp8::to_string(f) << " code " << c;
      } else {
        EXPECT_EQ(static_cast<double>(got), want) << gemm_fp8::to_string(f) << " code " << c;
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << gemm_fp8::to_string(f) << " code " << c;
      }
    }
  // Landmarks from the OCP FP8 spec and AMD's fnuz.
  EXPECT_EQ(gemm_fp8::fp8_to_float(0x7e, Fp8::kE4m3fn), 448.0f);
  EXPECT_EQ(gemm_fp8::fp8_to_float(0x38, Fp8::kE4m3fn), 1.0f);
  EXPECT_EQ(gemm_fp8::fp8_to_float(0xb8, Fp8::kE4m3fn), -1.0f);
  EXPECT_EQ(gemm_fp8::fp8_to_float(0x01, Fp8::kE4m3fn), std::ldexp(1.0f, -9));
  EXPECT_EQ(gemm_fp8::fp8_to_float(0x7f, Fp8::kE4m3fnuz), 240.0f);
  EXPECT_EQ(gemm_fp8::fp8_to_float(0x40, Fp8::kE4m3fnuz), 1.0f);
  EXPECT_EQ(gemm_fp8::fp8_to_float(0x01, Fp8::kE4m3fnuz), std::ldexp(1.0f, -10));
  EXPECT_TRUE(std::isnan(gemm_fp8::fp8_to_float(0x80, Fp8::kE4m3fnuz)));
  EXPECT_TRUE(std::isnan(gemm_fp8::fp8_to_float(0xff, Fp8::kE4m3fn)));
}

TEST(GemmFp8Codes, EncodeRoundTripsEveryCodeRoundsTiesToEvenAndSaturates) {
  for (Fp8 f : {Fp8::kE4m3fn, Fp8::kE4m3fnuz}) {
    const std::string fmt = gemm_fp8::to_string(f);
    for (int c = 0; c < 256; ++c) {
      const float v = gemm_fp8::fp8_to_float(static_cast<std::uint8_t>(c), f);
      if (std::isnan(v)) continue;
      EXPECT_EQ(gemm_fp8::float_to_fp8(v, f), c) << fmt << " code " << c;
    }
    // Between neighbouring positive codes: below the midpoint the lower one, above it the upper, at it the
    // one with an even mantissa.
    const int top = f == Fp8::kE4m3fnuz ? 0x7f : 0x7e;
    for (int c = 0; c < top; ++c) {
      const double lo = gemm_fp8::fp8_to_float(static_cast<std::uint8_t>(c), f);
      const double hi = gemm_fp8::fp8_to_float(static_cast<std::uint8_t>(c + 1), f);
      const double mid = (lo + hi) / 2, eps = (hi - lo) / 16;
      EXPECT_EQ(gemm_fp8::float_to_fp8(static_cast<float>(mid - eps), f), c) << fmt << " code " << c;
      EXPECT_EQ(gemm_fp8::float_to_fp8(static_cast<float>(mid + eps), f), c + 1) << fmt << " code " << c;
      EXPECT_EQ(gemm_fp8::float_to_fp8(static_cast<float>(mid), f), c % 2 == 0 ? c : c + 1) << fmt << " tie at code " << c;
      EXPECT_EQ(gemm_fp8::float_to_fp8(static_cast<float>(-(mid + eps)), f), (c + 1) | 0x80) << fmt << " code " << c;
    }
    EXPECT_EQ(gemm_fp8::float_to_fp8(1e6f, f), top) << fmt;
    EXPECT_EQ(gemm_fp8::float_to_fp8(-1e6f, f), top | 0x80) << fmt;
    EXPECT_EQ(gemm_fp8::float_to_fp8(NAN, f), f == Fp8::kE4m3fnuz ? 0x80 : 0x7f) << fmt;
    EXPECT_EQ(gemm_fp8::float_to_fp8(1e-9f, f), 0) << fmt;
  }
  EXPECT_EQ(gemm_fp8::float_to_fp8(-1e-9f, Fp8::kE4m3fnuz), 0);  // no negative zero: 0x80 is fnuz's NaN
  EXPECT_EQ(gemm_fp8::float_to_fp8(-1e-9f, Fp8::kE4m3fn), 0x80);
}

TEST(GemmFp8Codes, DtypeNamesAndNativeFormats) {
  EXPECT_EQ(gemm_fp8::fp8_from_string("e4m3fnuz"), Fp8::kE4m3fnuz);
  EXPECT_EQ(gemm_fp8::fp8_from_string("torch.float8_e4m3fn"), Fp8::kE4m3fn);
  EXPECT_EQ(gemm_fp8::to_torch(Fp8::kE4m3fnuz), "torch.float8_e4m3fnuz");
  EXPECT_THROW(gemm_fp8::fp8_from_string("e5m2"), Error);
  EXPECT_EQ(gemm_fp8::native_fp8("gfx942"), Fp8::kE4m3fnuz);
  EXPECT_EQ(gemm_fp8::native_fp8("gfx950"), Fp8::kE4m3fn);
  EXPECT_EQ(gemm_fp8::native_fp8("sm_90a"), Fp8::kE4m3fn);
}

TEST(GemmFp8Config, NamesRoundTripAndTheSpaceHasNoDuplicates) {
  std::set<std::string> names;
  for (const auto& c : gemm_fp8::enumerate()) {
    EXPECT_EQ(gemm_fp8::Config::from_name(c.name()), c) << c.name();
    EXPECT_TRUE(names.insert(c.name()).second) << "duplicate " << c.name();
    EXPECT_LE(c.threads(), 1024) << c.name();
    EXPECT_EQ(c.threads() % 32, 0) << c.name();
  }
  EXPECT_GT(names.size(), 200u);
  EXPECT_EQ(gemm_fp8::Config::from_name("m128n128k128_w64x128_s4_wgmma_sk2").threads(), 256);
  // TMA: a consumer warpgroup per 64 x warp_n plus the producer's.
  const auto tma = gemm_fp8::Config::from_name("m128n128k128_w64x64_s6_tma_sk1");
  EXPECT_EQ(tma.math, gemm_fp8::Math::kTma);
  EXPECT_EQ(tma.threads(), 5 * 128);
  EXPECT_EQ(tma.shared_bytes(), 6 * 256 * 128 + 1024);
  EXPECT_THROW(gemm_fp8::Config::from_name("m128n128k128_w64x128_s4_wgws_sk2"), Error);
  EXPECT_THROW(gemm_fp8::Config::from_name("m128n128k32_w64x64_s4_mma_v8_sk1"), Error);  // a bf16 name
}

TEST(GemmFp8Config, KeysSayTheFormat) {
  gemm_fp8::Problem p{304, 3072, 1536};
  EXPECT_EQ(p.key(), "m=304,n=3072,k=1536,in=e4m3fn,out=bf16,scale=1x128x128");
  p.in = Fp8::kE4m3fnuz;
  EXPECT_EQ(p.to_json().at("in"), "e4m3fnuz");
  EXPECT_EQ(p.scale_k(), 12);
  EXPECT_EQ(p.scale_n(), 24);
  EXPECT_EQ(p.min_bytes(), 304 * 1536 + 3072 * 1536 + 4 * (304 + 24) * 12 + 2 * 304 * 3072);
}

TEST(GemmFp8Config, ConstraintsRejectBeforeCompiling) {
  const Target sm90 = Target::from_arch("sm_90a");
  const Target gfx942 = Target::from_arch("gfx942");
  const auto wgmma = gemm_fp8::Config::from_name("m128n128k128_w64x128_s4_wgmma_sk1");
  const auto mma = gemm_fp8::Config::from_name("m64n64k128_w32x32_s3_mma_sk1");
  const auto simt = gemm_fp8::Config::from_name("m16n64k128_w16x16_s2_simt_sk1");
  const auto skinny = gemm_fp8::Config::from_name("m1n8k512_w1x2_s1_skinny_sk1");
  gemm_fp8::Problem p{304, 3072, 1536};
  EXPECT_FALSE(gemm_fp8::why_unsupported(p, wgmma, sm90));
  EXPECT_FALSE(gemm_fp8::why_unsupported(p, mma, sm90));
  // fnuz: the tensor cores take e4m3fn only; the software-decode paths serve it anywhere.
  p.in = Fp8::kE4m3fnuz;
  EXPECT_NE(gemm_fp8::why_unsupported(p, wgmma, sm90).value_or("").find("e4m3fnuz"), std::string::npos);
  EXPECT_NE(gemm_fp8::why_unsupported(p, mma, sm90).value_or("").find("e4m3fnuz"), std::string::npos);
  EXPECT_FALSE(gemm_fp8::why_unsupported(p, simt, sm90));
  EXPECT_FALSE(gemm_fp8::why_unsupported(p, mma, gfx942));
  // 64 KiB of LDS on gfx942: the 128 x 128 x 4-stage tiles do not fit.
  EXPECT_NE(gemm_fp8::why_unsupported(p, wgmma, gfx942).value_or("").find("shared memory"), std::string::npos);
  p.in = Fp8::kE4m3fn;
  EXPECT_NE(gemm_fp8::why_unsupported(p, wgmma, Target::from_arch("sm_80")).value_or("").find("sm_90a"), std::string::npos);
  // TMA: sm_90a and e4m3fn only; stages must fit in shared memory.
  const auto tma = gemm_fp8::Config::from_name("m128n128k128_w64x128_s6_tma_sk1");
  EXPECT_FALSE(gemm_fp8::why_unsupported(p, tma, sm90));
  EXPECT_NE(gemm_fp8::why_unsupported(p, tma, gfx942).value_or("").find("TMA"), std::string::npos);
  EXPECT_NE(gemm_fp8::why_unsupported(p, tma, Target::from_arch("sm_89")).value_or("").find("TMA"), std::string::npos);
  EXPECT_NE(gemm_fp8::why_unsupported({304, 3072, 1536, Fp8::kE4m3fnuz}, tma, sm90).value_or("").find("e4m3fnuz"),
            std::string::npos);
  EXPECT_NE(gemm_fp8::why_unsupported(p, gemm_fp8::Config::from_name("m64n256k128_w64x128_s8_tma_sk1"), sm90)
                .value_or("")
                .find("shared memory"),
            std::string::npos);
  // Registers: 192 wide fits one consumer (256 threads), and two with the producer's registers given up
  // (setmaxnreg); two consumers 256 wide each do not fit at all.
  EXPECT_FALSE(gemm_fp8::why_unsupported(p, gemm_fp8::Config::from_name("m64n192k128_w64x192_s6_tma_sk1"), sm90));
  EXPECT_FALSE(gemm_fp8::why_unsupported(p, gemm_fp8::Config::from_name("m128n192k128_w64x192_s4_tma_sk1"), sm90));
  EXPECT_NE(gemm_fp8::why_unsupported(p, gemm_fp8::Config::from_name("m128n256k128_w64x256_s4_tma_sk1"), sm90)
                .value_or("")
                .find("registers"),
            std::string::npos);
  EXPECT_NE(gemm_fp8::why_unsupported({16, 64, 256}, mma, Target::from_arch("sm_80")).value_or("").find("sm_89"),
            std::string::npos);
  // Persistent TMA grids: one CTA per SM of the target, split-K 1, and only where tiles outnumber the CTAs.
  const auto pers = gemm_fp8::Config::from_name("m128n192k128_w64x192_s4_tma_p132_sk1");
  EXPECT_EQ(pers.persistent, 132);
  EXPECT_EQ(pers.name(), "m128n192k128_w64x192_s4_tma_p132_sk1");
  EXPECT_EQ(gemm_fp8::Config::from_name("m128n192k128_w64x192_s4_tma_sk1").persistent, 0);
  EXPECT_NE(gemm_fp8::kernels(pers, 32)[0].name_expression.find("<128, 192, 192, 4, 132, int>"), std::string::npos)
      << gemm_fp8::kernels(pers, 32)[0].name_expression;
  Target h200 = sm90;
  h200.cu_count = 132;
  EXPECT_FALSE(gemm_fp8::why_unsupported({4096, 2624, 6144}, pers, h200));  // 32 x 14 tiles
  EXPECT_NE(gemm_fp8::why_unsupported({256, 2624, 6144}, pers, h200).value_or("").find("more output tiles"), std::string::npos);
  EXPECT_FALSE(gemm_fp8::why_unsupported({256, 2624, 6144}, pers, sm90));  // no CU count (coverage): no speed rule
  Target h100_pcie = h200;
  h100_pcie.cu_count = 114;
  EXPECT_NE(gemm_fp8::why_unsupported({4096, 2624, 6144}, pers, h100_pcie).value_or("").find("114 SMs"), std::string::npos);
  auto pers_split = pers;
  pers_split.split_k = 2;
  EXPECT_NE(gemm_fp8::why_unsupported({4096, 2624, 6144}, pers_split, h200).value_or("").find("split-K 1"), std::string::npos);
  auto pers_wgmma = gemm_fp8::Config::from_name("m128n128k128_w64x128_s4_wgmma_sk1");
  pers_wgmma.persistent = 132;
  EXPECT_NE(gemm_fp8::why_unsupported({4096, 2624, 6144}, pers_wgmma, h200).value_or("").find("TMA"), std::string::npos);
  // tma2: the TMA kernel of its own header (tma's code keys stay), the same shape, registers and targets as tma;
  // warp_n 64, 96, 128 or 192; split-K 1 and split-K > 1 compiled apart.
  const auto tma2 = gemm_fp8::Config::from_name("m128n192k128_w64x192_s4_tma2_sk1");
  EXPECT_EQ(tma2.math, gemm_fp8::Math::kTma2);
  EXPECT_EQ(tma2.name(), "m128n192k128_w64x192_s4_tma2_sk1");
  EXPECT_EQ(tma2.threads(), 3 * 128);
  EXPECT_EQ(tma2.shared_bytes(), 4 * (128 + 192) * 128 + 1024);
  const auto space = gemm_fp8::enumerate();
  EXPECT_EQ(std::count(space.begin(), space.end(), tma2), 1);
  const auto k2 = gemm_fp8::kernels(tma2, 64)[0];
  EXPECT_EQ(k2.name_expression, "tt::gemm_fp8_blockscale_tma2<128, 192, 192, 4, false, 0, long long>");
  EXPECT_EQ(k2.parameters, "const tt::Fp8GemmTmaArgs");
  EXPECT_NE(k2.source.find("gemm_fp8_tma2.h"), std::string::npos);
  EXPECT_NE(gemm_fp8::kernels(tma, 32)[0].source.find("gemm_fp8_blockscale.h"), std::string::npos);
  EXPECT_FALSE(gemm_fp8::why_unsupported(p, tma2, sm90));
  EXPECT_NE(gemm_fp8::why_unsupported(p, tma2, gfx942).value_or("").find("TMA"), std::string::npos);
  EXPECT_NE(gemm_fp8::why_unsupported({304, 3072, 1536, Fp8::kE4m3fnuz}, tma2, sm90).value_or("").find("e4m3fnuz"),
            std::string::npos);
  EXPECT_EQ(gemm_fp8::kernels(gemm_fp8::Config::from_name("m128n192k128_w64x192_s4_tma2_sk2"), 32)[0].name_expression,
            "tt::gemm_fp8_blockscale_tma2<128, 192, 192, 4, true, 0, int>");
  // A persistent tma2 (tma's rules) stages its output tile in a buffer after the stages: 128 x (192 x 2 + 16) bytes.
  const auto tma2_pers = gemm_fp8::Config::from_name("m128n192k128_w64x192_s4_tma2_p132_sk1");
  EXPECT_EQ(tma2_pers.persistent, 132);
  EXPECT_EQ(std::count(space.begin(), space.end(), tma2_pers), 1);
  EXPECT_EQ(tma2_pers.shared_bytes(), tma2.shared_bytes() + 128 * (192 * 2 + 16));
  EXPECT_EQ(gemm_fp8::kernels(tma2_pers, 32)[0].name_expression, "tt::gemm_fp8_blockscale_tma2<128, 192, 192, 4, false, 132, int>");
  EXPECT_FALSE(gemm_fp8::why_unsupported({4096, 2624, 6144}, tma2_pers, h200));
  EXPECT_NE(gemm_fp8::why_unsupported({256, 2624, 6144}, tma2_pers, h200).value_or("").find("more output tiles"), std::string::npos);
  auto tma2_pers_split = tma2_pers;
  tma2_pers_split.split_k = 2;
  EXPECT_NE(gemm_fp8::why_unsupported({4096, 2624, 6144}, tma2_pers_split, h200).value_or("").find("split-K 1"), std::string::npos);
  auto tma2_wide = gemm_fp8::Config::from_name("m64n256k128_w64x256_s4_tma2_sk1");
  EXPECT_NE(gemm_fp8::why_unsupported(p, tma2_wide, sm90).value_or("").find("warp_n"), std::string::npos);
  // tma2 alone has warp_n 96 (its own wgmma wrapper): m64n192 and m128n96 with two consumers of 96 columns, m64n96
  // with one, splits 1, 2, 4 and persistent; tma's header has no 96-wide MMA, so the name is refused there.
  const auto w96 = gemm_fp8::Config::from_name("m128n96k128_w64x96_s4_tma2_sk2");
  EXPECT_EQ(w96.threads(), 3 * 128);
  EXPECT_FALSE(gemm_fp8::why_unsupported({336, 3072, 6144}, w96, h200));
  EXPECT_EQ(gemm_fp8::kernels(w96, 32)[0].name_expression, "tt::gemm_fp8_blockscale_tma2<128, 96, 96, 4, true, 0, int>");
  EXPECT_EQ(std::count_if(space.begin(), space.end(),
                          [](const auto& c) { return c.warp_n == 96 && c.math == gemm_fp8::Math::kTma2; }), 12);
  // 64 x 96: one consumer at 128 registers a thread, two CTAs an SM by registers and shared memory.
  const auto w96_one = gemm_fp8::Config::from_name("m64n96k128_w64x96_s4_tma2_sk1");
  EXPECT_EQ(w96_one.threads(), 2 * 128);
  EXPECT_FALSE(gemm_fp8::why_unsupported({256, 6144, 2048}, w96_one, h200));
  EXPECT_LE(2 * w96_one.shared_bytes(), 227 * 1024);
  EXPECT_EQ(gemm_fp8::kernels(w96_one, 32)[0].name_expression, "tt::gemm_fp8_blockscale_tma2<64, 96, 96, 4, false, 0, int>");
  EXPECT_EQ(std::count_if(space.begin(), space.end(),
                          [](const auto& c) {
                            return c.warp_n == 96 && c.math != gemm_fp8::Math::kTma2 && !c.chunked();
                          }), 0);
  auto tma_w96 = w96;
  tma_w96.math = gemm_fp8::Math::kTma;
  EXPECT_NE(gemm_fp8::why_unsupported({336, 3072, 6144}, tma_w96, h200).value_or("").find("warp_n"), std::string::npos);
  // tma3: tma2's tiles up to 128 wide with the promotion overlapped (its own header), split-K 1, plain and
  // persistent; its two promotion fragments count in the register need (3 x 128 / 2 + 40 = 232 with two consumers).
  const auto tma3 = gemm_fp8::Config::from_name("m128n96k128_w64x96_s4_tma3_sk1");
  EXPECT_EQ(tma3.math, gemm_fp8::Math::kTma3);
  EXPECT_EQ(tma3.name(), "m128n96k128_w64x96_s4_tma3_sk1");
  EXPECT_EQ(tma3.threads(), 3 * 128);
  EXPECT_EQ(tma3.shared_bytes(), w96.shared_bytes());
  EXPECT_EQ(std::count(space.begin(), space.end(), tma3), 1);
  EXPECT_EQ(std::count_if(space.begin(), space.end(), [](const auto& c) { return c.math == gemm_fp8::Math::kTma3; }), 20);
  // The dynamic and the static shared memory together fit the target's 227 KiB: tma3's 6-stage 128 x 128 fits plain
  // (192 KiB of stages), not persistent (its output tile takes the rest, and the scale rows and barriers are static).
  Target h200_smem = h200;
  h200_smem.max_smem_per_block = 232448;
  const auto deep = gemm_fp8::Config::from_name("m128n128k128_w64x128_s6_tma3_sk1");
  EXPECT_EQ(deep.static_shared_bytes(), 2 * 6 * 8 + 6 * (128 + 1 + 2) * 4 + 32);
  EXPECT_FALSE(gemm_fp8::why_unsupported({336, 4096, 2048}, deep, h200_smem));
  const auto deep_pers = gemm_fp8::Config::from_name("m128n128k128_w64x128_s6_tma3_p132_sk1");
  EXPECT_EQ(deep_pers.shared_bytes(), 232448);
  EXPECT_NE(gemm_fp8::why_unsupported({2048, 2048, 2048}, deep_pers, h200_smem).value_or("").find("shared memory"),
            std::string::npos);
  EXPECT_FALSE(gemm_fp8::why_unsupported({336, 3072, 6144}, tma3, h200));
  EXPECT_NE(gemm_fp8::why_unsupported({336, 3072, 6144}, tma3, gfx942).value_or("").find("TMA"), std::string::npos);
  const auto k3 = gemm_fp8::kernels(tma3, 32)[0];
  EXPECT_EQ(k3.name_expression, "tt::gemm_fp8_blockscale_tma3<128, 96, 96, 4, 0, int>");
  EXPECT_NE(k3.source.find("gemm_fp8_tma3.h"), std::string::npos);
  const auto tma3_pers = gemm_fp8::Config::from_name("m128n128k128_w64x128_s4_tma3_p132_sk1");
  EXPECT_EQ(tma3_pers.shared_bytes(), gemm_fp8::Config::from_name("m128n128k128_w64x128_s4_tma2_p132_sk1").shared_bytes());
  EXPECT_EQ(gemm_fp8::kernels(tma3_pers, 64)[0].name_expression, "tt::gemm_fp8_blockscale_tma3<128, 128, 128, 4, 132, long long>");
  EXPECT_FALSE(gemm_fp8::why_unsupported({4096, 2624, 6144}, tma3_pers, h200));
  auto tma3_sk2 = tma3;
  tma3_sk2.split_k = 2;
  EXPECT_NE(gemm_fp8::why_unsupported({336, 3072, 6144}, tma3_sk2, h200).value_or("").find("split-K 1"), std::string::npos);
  EXPECT_NE(gemm_fp8::why_unsupported({336, 3072, 6144}, gemm_fp8::Config::from_name("m128n192k128_w64x192_s4_tma3_sk1"), h200)
                .value_or("")
                .find("warp_n"),
            std::string::npos);
  // tma4: tma3's tiles and stages (a CTA a tile) with each tile's scales copied once, into static shared memory;
  // the bulk copies' rows of scales are a multiple of 16 bytes only for ceil(K / 128) a multiple of 4 (K 400 passes),
  // and hold K <= 8192.
  const auto tma4 = gemm_fp8::Config::from_name("m128n128k128_w64x128_s6_tma4_sk1");
  EXPECT_EQ(tma4.math, gemm_fp8::Math::kTma4);
  EXPECT_EQ(tma4.name(), "m128n128k128_w64x128_s6_tma4_sk1");
  EXPECT_TRUE(tma4.tma() && tma4.chunked() && tma3.chunked() && !tma2.chunked());
  EXPECT_EQ(std::count_if(space.begin(), space.end(), [](const auto& c) { return c.math == gemm_fp8::Math::kTma4; }), 40);
  EXPECT_EQ(std::count_if(space.begin(), space.end(), [](const auto& c) { return c.cluster_m * c.cluster_n > 1; }), 30);
  EXPECT_EQ(tma4.shared_bytes(), deep.shared_bytes());
  EXPECT_EQ(tma4.static_shared_bytes(), 2 * 6 * 8 + 8 + (128 + 3) * 64 * 4 + 32);
  EXPECT_LE(tma4.shared_bytes() + tma4.static_shared_bytes(), 232448);
  EXPECT_FALSE(gemm_fp8::why_unsupported({336, 3072, 6144}, tma4, h200_smem));
  EXPECT_FALSE(gemm_fp8::why_unsupported({336, 4096, 8192}, tma4, h200_smem));
  EXPECT_NE(gemm_fp8::why_unsupported({336, 4096, 1664}, tma4, h200_smem).value_or("").find("multiple of 4"), std::string::npos);
  EXPECT_FALSE(gemm_fp8::why_unsupported({130, 200, 400}, tma4, h200_smem));
  EXPECT_NE(gemm_fp8::why_unsupported({336, 4096, 8704}, tma4, h200_smem).value_or("").find("at most 8192"), std::string::npos);
  EXPECT_FALSE(gemm_fp8::why_unsupported({336, 4096, 1664}, deep, h200_smem));
  EXPECT_NE(gemm_fp8::why_unsupported({336, 3072, 6144}, tma4, gfx942).value_or("").find("TMA"), std::string::npos);
  auto tma4_sk2 = tma4;
  tma4_sk2.split_k = 2;
  EXPECT_NE(gemm_fp8::why_unsupported({336, 3072, 6144}, tma4_sk2, h200).value_or("").find("tma4: split-K 1"), std::string::npos);
  EXPECT_NE(gemm_fp8::why_unsupported({4096, 3072, 6144}, gemm_fp8::Config::from_name("m128n128k128_w64x128_s4_tma4_p132_sk1"), h200)
                .value_or("")
                .find("a CTA a tile"),
            std::string::npos);
  const auto k4 = gemm_fp8::kernels(gemm_fp8::Config::from_name("m64n192k128_w64x96_s4_tma4_sk1"), 64)[0];
  EXPECT_EQ(k4.name_expression, "tt::gemm_fp8_blockscale_tma4<64, 192, 96, 4, 1, 1, long long>");
  EXPECT_NE(k4.source.find("gemm_fp8_tma4.h"), std::string::npos);
  // tma4 clusters (split-K 1): CTAs along N sharing A ("_cn2", "_cn4") or along M sharing B ("_c2"), each copying its
  // slice of a shared tile (the launch's boxes), the grid padded to whole clusters.
  const auto cn2 = gemm_fp8::Config::from_name("m128n96k128_w64x96_s6_tma4_cn2_sk1");
  EXPECT_EQ(cn2.cluster_n, 2);
  EXPECT_EQ(cn2.cluster_m, 1);
  EXPECT_EQ(cn2.name(), "m128n96k128_w64x96_s6_tma4_cn2_sk1");
  EXPECT_EQ(cn2.to_json().at("cluster_n"), 2);
  EXPECT_EQ(gemm_fp8::kernels(cn2, 32)[0].name_expression, "tt::gemm_fp8_blockscale_tma4<128, 96, 96, 6, 1, 2, int>");
  EXPECT_EQ(cn2.shared_bytes(), gemm_fp8::Config::from_name("m128n96k128_w64x96_s6_tma4_sk1").shared_bytes());
  EXPECT_EQ(std::count(space.begin(), space.end(), cn2), 1);
  EXPECT_FALSE(gemm_fp8::why_unsupported({336, 3072, 6144}, cn2, h200_smem));
  const auto c2 = gemm_fp8::Config::from_name("m64n192k128_w64x96_s4_tma4_c2_sk1");
  EXPECT_EQ(c2.cluster_m, 2);
  EXPECT_EQ(c2.name(), "m64n192k128_w64x96_s4_tma4_c2_sk1");
  EXPECT_EQ(std::count(space.begin(), space.end(), c2), 1);
  EXPECT_EQ(gemm_fp8::Config::from_name("m128n128k128_w64x128_s6_tma4_c2_cn2_sk1").name(), "m128n128k128_w64x128_s6_tma4_c2_cn2_sk1");
  for (const char* one : {"m128n96k128_w64x96_s6_tma4_c1_sk1", "m128n96k128_w64x96_s6_tma4_cn1_sk1", "m128n96k128_w64x96_s6_tma4_c0_sk1"})
    EXPECT_THROW(gemm_fp8::Config::from_name(one), Error) << one;  // one name per config
  // Refused: one tile along the shared dimension (a speed rule: coverage, with no CU count, runs it); other kernels;
  // more than 4 CTAs; slices not of whole 8-row atoms.
  EXPECT_NE(gemm_fp8::why_unsupported({64, 3072, 6144}, c2, h200).value_or("").find("row tiles"), std::string::npos);
  EXPECT_FALSE(gemm_fp8::why_unsupported({64, 3072, 6144}, c2, sm90));
  EXPECT_NE(gemm_fp8::why_unsupported({336, 96, 6144}, cn2, h200).value_or("").find("column tiles"), std::string::npos);
  auto cn2_tma3 = cn2;
  cn2_tma3.math = gemm_fp8::Math::kTma3;
  EXPECT_NE(gemm_fp8::why_unsupported({336, 3072, 6144}, cn2_tma3, h200).value_or("").find("tma4 only"), std::string::npos);
  auto c8 = c2;
  c8.cluster_m = 8;
  EXPECT_NE(gemm_fp8::why_unsupported({336, 3072, 6144}, c8, h200).value_or("").find("at most 4"), std::string::npos);
  auto cn4_64 = gemm_fp8::Config::from_name("m64n192k128_w64x96_s4_tma4_cn4_sk1");  // 64 / 4: 16-row slices of A
  EXPECT_FALSE(gemm_fp8::why_unsupported({336, 3072, 6144}, cn4_64, h200));
  auto c4_96 = cn2;  // 96 / 4 = 24-row slices of B: whole atoms
  c4_96.cluster_n = 1;
  c4_96.cluster_m = 4;
  EXPECT_FALSE(gemm_fp8::why_unsupported({1024, 3072, 6144}, c4_96, h200));
  auto c4_n64 = gemm_fp8::Config::from_name("m128n64k128_w64x64_s4_tma4_sk1");
  c4_n64.cluster_m = 4;  // 64 / 4 = 16-row slices of B: whole atoms
  EXPECT_FALSE(gemm_fp8::why_unsupported({1024, 3072, 6144}, c4_n64, h200));
  EXPECT_NE(gemm_fp8::why_unsupported({336, 3072, 6144}, cn2, gfx942).value_or("").find("TMA"), std::string::npos);
  // The workspace: split-K's partial planes, none without.
  EXPECT_EQ(gemm_fp8::workspace_bytes({336, 3072, 6144}, tma2), 0u);
  auto tma2_sk2 = tma2;
  tma2_sk2.split_k = 2;
  EXPECT_EQ(gemm_fp8::workspace_bytes({336, 3072, 6144}, tma2_sk2), 2u * 336 * 3072 * 4);
  EXPECT_EQ(gemm_fp8::index_bounds({336, 3072, 6144}, tma2_sk2).back().max_offset, 2 * 336 * 3072 - 1);
  // K in 16-byte vectors; skinny only up to its rows; split-K in whole scale blocks.
  EXPECT_NE(gemm_fp8::why_unsupported({16, 64, 200}, mma, sm90).value_or("").find("multiple of 16"), std::string::npos);
  EXPECT_NE(gemm_fp8::why_unsupported({2, 64, 256}, skinny, sm90).value_or("").find("M <= 1"), std::string::npos);
  EXPECT_FALSE(gemm_fp8::why_unsupported({1, 3072, 1536}, skinny, sm90));
  auto split3 = mma;
  split3.split_k = 3;
  EXPECT_NE(gemm_fp8::why_unsupported({16, 64, 256}, split3, sm90).value_or("").find("empty splits"), std::string::npos);
  EXPECT_FALSE(gemm_fp8::why_unsupported({16, 64, 384}, split3, sm90));
  EXPECT_EQ(gemm_fp8::k_per_split({16, 64, 400}, split3), 256);  // ceil(400/3) = 134 -> 256: 2 splits only
  split3.split_k = 2;
  EXPECT_EQ(gemm_fp8::k_per_split({16, 64, 400}, split3), 256);
}

TEST(GemmFp8Config, MOneIsServedOnEveryTarget) {
  for (const char* arch : {"sm_90a", "gfx90a", "gfx942", "gfx950"}) {
    Target t = Target::from_arch(arch);
    t.cu_count = 132;
    gemm_fp8::Problem p{1, 3072, 1536, gemm_fp8::native_fp8(arch)};
    int served = 0;
    for (const auto& c : gemm_fp8::enumerate()) served += gemm_fp8::why_unsupported(p, c, t) ? 0 : 1;
    EXPECT_GT(served, 20) << arch;
  }
}

TEST(GemmFp8Config, IndexBoundsPickTheWideInstance) {
  const auto c = gemm_fp8::Config::from_name("m128n128k128_w64x128_s4_wgmma_sk2");
  EXPECT_EQ(required_index_bits(gemm_fp8::index_bounds({4096, 3072, 1536}, c)), 32);
  // A: 2^20 rows x 4096 = 2^32 elements.
  EXPECT_EQ(required_index_bits(gemm_fp8::index_bounds({1 << 20, 512, 4096}, c)), 64);
  const auto k32 = gemm_fp8::kernels(c, 32), k64 = gemm_fp8::kernels(c, 64);
  ASSERT_EQ(k32.size(), 1u);
  EXPECT_EQ(k32[0].name_expression, "tt::gemm_fp8_blockscale<128, 128, 64, 128, 4, 2, int>");
  EXPECT_EQ(k64[0].name_expression, "tt::gemm_fp8_blockscale<128, 128, 64, 128, 4, 2, long long>");
  EXPECT_EQ(gemm_fp8::kernels(gemm_fp8::Config::from_name("m4n32k1024_w4x4_s1_skinny_sk3"), 32)[0].name_expression,
            "tt::gemm_fp8_blockscale_skinny<4, 32, 4, 2, int>");
  // Split-K is run-time: the same code object for every split count.
  auto c1 = c;
  c1.split_k = 1;
  EXPECT_EQ(gemm_fp8::kernels(c1, 32)[0].name_expression, k32[0].name_expression);
}

TEST(GemmFp8Reference, OperandsDoNotDependOnTheThreadCount) {
#ifdef _OPENMP
  // The groups are quantized in parallel: one thread and several must draw the same codes and scales.
  const gemm_fp8::Problem p{37, 520, 400, Fp8::kE4m3fn};  // ragged N and K blocks
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = gemm_fp8::random_operands(p, 5);
  omp_set_num_threads(4);
  const auto four = gemm_fp8::random_operands(p, 5);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.a, four.a);
  EXPECT_EQ(one.b, four.b);
  EXPECT_EQ(one.a_scale, four.a_scale);
  EXPECT_EQ(one.b_scale, four.b_scale);
  EXPECT_NE(one.b, gemm_fp8::random_operands(p, 6).b);
#else
  GTEST_SKIP() << "built without OpenMP";
#endif
}

TEST(GemmFp8Reference, OperandsAreBlockQuantizedNeverZeroAndMixedInSign) {
  for (Fp8 f : {Fp8::kE4m3fn, Fp8::kE4m3fnuz}) {
    const gemm_fp8::Problem p{7, 300, 272, f};  // ragged N and K blocks
    const auto o = gemm_fp8::random_operands(p, 11);
    ASSERT_EQ(o.a.size(), 7u * 272);
    ASSERT_EQ(o.a_scale.size(), 7u * 3);
    ASSERT_EQ(o.b_scale.size(), 3u * 3);
    int negative = 0;
    for (auto q : o.a) {
      EXPECT_NE(q & 0x7f, 0);
      EXPECT_FALSE(std::isnan(gemm_fp8::fp8_to_float(q, f)));
      negative += (q & 0x80) ? 1 : 0;
    }
    for (auto q : o.b) EXPECT_NE(q & 0x7f, 0);
    EXPECT_GT(negative, 7 * 272 / 3);
    // scale = amax / max: each group's largest code is the format's max.
    for (std::int64_t r = 0; r < p.m; ++r)
      for (std::int64_t kb = 0; kb < p.scale_k(); ++kb) {
        float amax = 0;
        for (std::int64_t k = kb * 128; k < std::min<std::int64_t>(p.k, kb * 128 + 128); ++k)
          amax = std::max(amax, std::fabs(gemm_fp8::fp8_to_float(o.a[r * p.k + k], f)));
        EXPECT_EQ(amax, gemm_fp8::fp8_max(f)) << r << "," << kb;
        EXPECT_GT(o.a_scale[r * p.scale_k() + kb], 0.f);
      }
    std::set<float> scales(o.b_scale.begin(), o.b_scale.end());
    EXPECT_GT(scales.size(), 3u);  // block magnitudes differ, so a misplaced scale shows
  }
}

TEST(GemmFp8Reference, MatchesANaiveBlockByBlockLoop) {
  for (Fp8 f : {Fp8::kE4m3fn, Fp8::kE4m3fnuz})
    for (const gemm_fp8::Problem& shape : {gemm_fp8::Problem{1, 8, 16}, gemm_fp8::Problem{5, 130, 272}, gemm_fp8::Problem{33, 257, 400}}) {
      gemm_fp8::Problem p = shape;
      p.in = f;
      const auto o = gemm_fp8::random_operands(p, 42 + p.m);
      const auto ref = gemm_fp8::reference_gemm(p, o);
      ASSERT_EQ(ref.size(), static_cast<std::size_t>(p.m * p.n));
      double err = 0, norm = 0;
      for (std::int64_t m = 0; m < p.m; ++m)
        for (std::int64_t n = 0; n < p.n; ++n) {
          // The kernels' formulation: per 128 of K, the raw fp8 dot product, then both scales.
          double c = 0;
          for (std::int64_t kb = 0; kb < p.scale_k(); ++kb) {
            double dot = 0;
            for (std::int64_t k = kb * 128; k < std::min<std::int64_t>(p.k, kb * 128 + 128); ++k)
              dot += static_cast<double>(gemm_fp8::fp8_to_float(o.a[m * p.k + k], f)) * gemm_fp8::fp8_to_float(o.b[n * p.k + k], f);
            c += dot * o.a_scale[m * p.scale_k() + kb] * o.b_scale[(n / 128) * p.scale_k() + kb];
          }
          err += (c - ref[m * p.n + n]) * (c - ref[m * p.n + n]);
          norm += c * c;
        }
      EXPECT_GT(norm, 0);
      EXPECT_LT(std::sqrt(err / norm), 1e-5) << p.key();
      // The comparison the runner uses passes the reference against itself rounded to bf16, and fails a
      // result with one block's scale dropped.
      std::vector<std::uint16_t> out(ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i) out[i] = gemm::float_to_bf16(ref[i]);
      EXPECT_TRUE(gemm_fp8::compare(out, ref, gemm_fp8::tolerance(f)).passed) << p.key();
      auto wrong = o;
      wrong.b_scale[0] *= 2;
      const auto bad = gemm_fp8::reference_gemm(p, wrong);
      for (std::size_t i = 0; i < ref.size(); ++i) out[i] = gemm::float_to_bf16(bad[i]);
      EXPECT_FALSE(gemm_fp8::compare(out, ref, gemm_fp8::tolerance(f)).passed) << p.key();
    }
}

TEST(GemmFp8Reference, MagnitudeSlackAdmitsRoundedSumsButNotAWrongBlock) {
  // The fp8 MMA's sums keep ~14 bits: the tolerance's slack grows with each element's sum |a_k b_k| (its
  // magnitude), so an element whose value cancels to ~0 may be off by a rounding of its terms, not more.
  const gemm_fp8::Problem p{9, 256, 512};
  const auto o = gemm_fp8::random_operands(p, 7);
  const auto ref = gemm_fp8::reference_gemm(p, o);
  const auto mag = gemm_fp8::magnitude_gemm(p, o);
  const auto tol = gemm_fp8::tolerance(p.in);
  ASSERT_GT(tol.mag_rel, 0);
  // Magnitudes bound the values and equal a naive |a||b| sum.
  for (std::size_t i : {std::size_t{0}, std::size_t{300}, ref.size() - 1}) {
    EXPECT_GE(mag[i] * (1 + 1e-5), std::fabs(ref[i]));
    const std::int64_t r = static_cast<std::int64_t>(i) / p.n, c = static_cast<std::int64_t>(i) % p.n;
    double s = 0;
    for (std::int64_t k = 0; k < p.k; ++k)
      s += std::fabs(gemm_fp8::fp8_to_float(o.a[r * p.k + k], p.in) * o.a_scale[r * p.scale_k() + k / 128] *
                     gemm_fp8::fp8_to_float(o.b[c * p.k + k], p.in) * o.b_scale[(c / 128) * p.scale_k() + k / 128]);
    EXPECT_NEAR(mag[i], s, 1e-4 * s);
  }
  // One element off by half its slack passes with magnitudes and fails without them (where the slack exceeds
  // the value-based bound); off by twice its slack it fails.
  double rms = 0;
  for (float v : ref) rms += static_cast<double>(v) * v;
  rms = std::sqrt(rms / static_cast<double>(ref.size()));
  std::size_t at = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (tol.mag_rel * mag[i] - tol.atol_rms * rms - tol.rtol * std::fabs(ref[i]) >
        tol.mag_rel * mag[at] - tol.atol_rms * rms - tol.rtol * std::fabs(ref[at]))
      at = i;
  const double slack = tol.mag_rel * mag[at];
  ASSERT_GT(slack, 4 * (tol.atol_rms * rms + tol.rtol * std::fabs(ref[at]))) << "no element where the terms dominate";
  std::vector<std::uint16_t> out(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) out[i] = gemm::float_to_bf16(ref[i]);
  out[at] = gemm::float_to_bf16(static_cast<float>(ref[at] + 0.5 * slack));
  EXPECT_TRUE(gemm::compare(out.data(), ref.data(), ref.size(), tol, mag.data()).passed);
  EXPECT_FALSE(gemm::compare(out.data(), ref.data(), ref.size(), tol).passed);
  out[at] = gemm::float_to_bf16(static_cast<float>(ref[at] + 2 * slack));
  const auto cmp = gemm::compare(out.data(), ref.data(), ref.size(), tol, mag.data());
  EXPECT_FALSE(cmp.passed);
  EXPECT_EQ(cmp.first_bad, static_cast<std::int64_t>(at));
  // A dropped block scale is off by a block's sum: far outside the slack.
  auto wrong = o;
  wrong.b_scale[1] *= 2;
  const auto bad = gemm_fp8::reference_gemm(p, wrong);
  for (std::size_t i = 0; i < ref.size(); ++i) out[i] = gemm::float_to_bf16(bad[i]);
  EXPECT_FALSE(gemm::compare(out.data(), ref.data(), ref.size(), tol, mag.data()).passed);
}
