// Pass/fail tolerances per output dtype and quantization. A family's compare() judges each element by
// |out - ref| <= rtol * |ref| + atol_rms * RMS(ref), and the whole output by relative L2 <= max_rel_l2;
// NaN or Inf never passes. The values travel with every stored result and into certificates.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "tuner/error.h"

namespace tunetab {

struct ToleranceSpec {
  std::string name;  // "bf16", "fp8_block128", "fp8_per_token"
  double rtol = 0;
  double atol_rms = 0;
  double max_rel_l2 = 0;
  /// Slack per element as a fraction of its magnitude sum(|a_k b_k|) (0: none): where the MMA's own sums are
  /// inexact, an element's error scales with its terms, not with its value (which cancellation can make ~0).
  double mag_rel = 0;

  nlohmann::json to_json() const {
    nlohmann::json j = {{"name", name}, {"rtol", rtol}, {"atol_rms", atol_rms}, {"max_rel_l2", max_rel_l2},
                        {"non_finite", "never passes"}};
    if (mag_rel > 0) j["mag_rel"] = mag_rel;
    return j;
  }
  bool operator==(const ToleranceSpec&) const = default;
};

// clang-format off
/// bf16 in, fp32 accumulate, bf16 out: bf16 rounding is 2^-9 relative, 4x margin.
inline const ToleranceSpec kToleranceBf16        {"bf16",          1.0 / 128, 1e-3, 5e-3};
/// fp8 e4m3 operands with 1x128 activation and 128x128 weight scales, bf16 out, against the reference on the
/// dequantized operands: the operands are exact, so the error is the fp8 MMA's reduced-precision
/// accumulation plus bf16 rounding. sm_90's fp8 MMA keeps ~14 bits while it sums a K block, truncating: on
/// the H200 one element of 3.7M (M 1025, N 3584, K 512) was off by 7.98 where its value was -2.86 and its
/// terms summed to 8066 in magnitude (1e-3 of them; the same for every fp8 wgmma/TMA kernel, exact on the
/// bf16-decoding ones). So the slack includes 2^-8 of sum |a_k b_k| (4x that): a wrong K block, scale or
/// tile is off by a block's sum, far more.
inline const ToleranceSpec kToleranceFp8Block128 {"fp8_block128",  1.0 / 64,  2e-3, 1e-2, 1.0 / 256};
/// A pipeline with a bf16 intermediate (fused MoE: SiLU(gate) * up is stored as bf16, then multiplied again):
/// where the kernel's and the reference's fp32 sums straddle a rounding boundary the intermediate differs by
/// one bf16 ulp (2^-8), and the second GEMM carries that into the output. On the H200 the bf16 MoE configs
/// matched the reference at rel_l2 1.7e-3 but had 6e-5..1.8e-4 of elements just outside bf16's per-element bound.
inline const ToleranceSpec kToleranceBf16TwoStage {"bf16_2stage",   1.0 / 64,  4e-3, 5e-3};
/// An FP8 pipeline whose intermediate is re-quantized (fused MoE per-1x128: stage 1's output rounded to bf16, then
/// to e4m3 per 1x128, as AITER's 2-stage FP8 MoE does; the reference does the same): both of the above, and the
/// noise of stage 1's fp8 MMA sums (sm_90a wgmma, ~14 bits per K block), which stage 2 spreads over every output
/// element whatever its value. Through a bf16 intermediate it was 8.4e-4 RMS(ref) on the H200 (GLM-5 EP8 shape,
/// 25M output elements at M 4096: rel_l2 1.86e-3 against 1.66e-3 for the exact-sum `mma` configs). A rounding
/// step D turns a perturbation e << D into a flip of D with probability e / D, a variance of D e: e4m3's step is
/// 16x bf16's, so the same sums give 4x the noise. Simulated (1152 outputs of 2048-term rows, SiLU(g) * u
/// inputs, the perturbation that gives the measured bf16 figure): 3..5e-3 RMS(ref), 1.9..2.4e-2 at most, the
/// scales' amax flips a small part of it. atol 5e-2 RMS is 10..16 sigma of that; rel_l2 stays 1e-2 (predicted
/// ~4.5e-3). Measured in the H200 profile tune (session 11): the wgmma configs at rel_l2 4.8e-3 mean, 5.8e-3 at
/// most, the `mma` ones at 1.66e-3: an added 4.5e-3 RMS(ref), as predicted; max_abs 5.3e-3 (2.1e-3 before).
/// A wrong expert, token, weight, K block or tile edge is off by 10-35% of RMS(ref).
inline const ToleranceSpec kToleranceFp8TwoStage {"fp8_block128_2stage", 1.0 / 64, 5e-2, 1e-2};
/// fp8 with per-token / per-channel scales: the same operand exactness, one scale per row.
inline const ToleranceSpec kToleranceFp8PerToken {"fp8_per_token", 1.0 / 64,  2e-3, 1e-2};
// clang-format on

/// Whether a verdict stored with the tolerance `judged` (to_json()'s text) still holds under `now`: a pass
/// judged no more loosely in any bound, an "incorrect" judged no more strictly, any other verdict (out of
/// bounds, fault, hang, unsupported) always. A tolerance that changed between runs re-judges the rest.
inline bool verdict_holds(const std::string& judged, const ToleranceSpec& now, const std::string& disposition) {
  if (disposition != "passed" && disposition != "incorrect") return true;
  const nlohmann::json j = nlohmann::json::parse(judged, nullptr, false);
  if (!j.is_object()) return false;
  const double was[] = {j.value("rtol", -1.0), j.value("atol_rms", -1.0), j.value("max_rel_l2", -1.0), j.value("mag_rel", 0.0)};
  const double is[] = {now.rtol, now.atol_rms, now.max_rel_l2, now.mag_rel};
  for (int i = 0; i < 4; ++i)
    if (was[i] < 0 || (disposition == "passed" ? was[i] > is[i] : was[i] < is[i])) return false;
  return true;
}

/// The tolerance named `name` (a stored result's or a certificate's); Input error otherwise.
inline ToleranceSpec tolerance_named(const std::string& name) {
  for (const ToleranceSpec* t :
       {&kToleranceBf16, &kToleranceBf16TwoStage, &kToleranceFp8Block128, &kToleranceFp8TwoStage, &kToleranceFp8PerToken})
    if (t->name == name) return *t;
  throw_input("tolerance '" + name + "': expected bf16, bf16_2stage, fp8_block128, fp8_block128_2stage or fp8_per_token");
}

}  // namespace tunetab
