// A deployment's tune plan: its support matrix (tuner/profile/matrix.h) as the tuner runs it. Each key
// gets a family (GEMM by quantization: bf16 -> gemm_bf16, fp8-block128 -> gemm_fp8_blockscale; fused MoE
// -> fused_moe, bf16 or FP8 per-1x128 from the key), one problem per bucket (table row, M = bucket.m), the
// lookup rule and M domain its rows are validated under, and the anchor rows that sweep the whole config
// space (the other rows start from the anchors' best: TuneOptions::anchor_ms).
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/profile/matrix.h"

namespace tunetab {

enum class PlanKind { kGemm, kFmoe };

/// One key of the matrix as the tuner runs it.
struct PlanKey {
  PlanKind kind = PlanKind::kGemm;
  std::size_t index = 0;                  // into Matrix::gemm or Matrix::fmoe
  std::string family;                     // gemm_bf16, gemm_fp8_blockscale or fused_moe
  std::string label;                      // "gemm N=2624 K=6144 fp8-block128 (fused_qkv_a_proj)"
  profile::RuleKind rule = profile::RuleKind::kExact;
  profile::MDomain domain;
  std::vector<profile::Bucket> buckets;   // the table rows, ascending M
  std::vector<nlohmann::json> problems;   // one per bucket, M = bucket.m
  std::set<std::int64_t> anchors;         // rows swept over the whole config space
};

struct TunePlan {
  std::vector<PlanKey> keys;          // GEMM keys, then fused-MoE keys, in matrix order
  std::vector<std::string> skipped;   // keys no family serves, with why (only with skip_unsupported)

  /// "13 keys (12 gemm: 4 gemm_bf16, 8 gemm_fp8_blockscale; 1 fused_moe), 160 rows, 52 anchors".
  std::string summary() const;
  /// The keys of the families in `list` ("gemm_fp8_blockscale,fused_moe"; "moe" for fused_moe), in plan order. Input
  /// error naming `option` for an unknown family, or when the plan has no key of them.
  TunePlan only_families(const std::string& list, const std::string& option) const;
  /// The same plan with every row whose M lies in `range` ("FIRST-LAST", e.g. "257-352") an anchor too: it tries the
  /// whole config space, and the rows between anchors draw from it. Input error naming `option` for a malformed range,
  /// or one that holds no row of the plan.
  TunePlan with_anchors_in(const std::string& range, const std::string& option) const;
};

/// The anchor rows among `rows`: the smallest, the largest, and the rows nearest 16, 256 and 1024 (ties to the
/// smaller row); empty for no rows.
// NOTE: 1024 since session 30. Between anchors 256 and 4096 the rows 512..2048 tried only the best 8 of those two, and
// the 1025..2048 row of the FP8 N=512 K=6144 GEMM never tried m64n64_tma2_sk1, 9th at 256 and slow at 4096: on the
// H200 it takes 20.5 us over that bucket, where the row's m64n64_sk2 took 27.6 (docs/performance.md).
std::set<std::int64_t> anchor_rows(const std::set<std::int64_t>& rows);

/// The family tuning GEMM keys of a quantization; nullopt where tunetab has none (fp8-per-token).
std::optional<std::string> gemm_family(profile::Quant q);

/// The fused-MoE problem of a key at M = m: moe::Problem::to_json() with the key's quantization (bf16, or
/// fp8 / fp8fnuz for per_1x128) and `routing` ("balanced", "skewed"). Input error naming the key's field
/// when no family serves it (another activation, q_type, use_g1u1 or doweight_stage1).
nlohmann::json fmoe_problem(const profile::FmoeKey& key, std::int64_t m, const std::string& routing = "balanced");
/// The GEMM problem of a key at M = m for its family (`fp8_format`: e4m3fn or e4m3fnuz, from the envelope).
nlohmann::json gemm_problem(const profile::GemmKey& key, std::int64_t m, const std::string& fp8_format);

/// Every key of `matrix`. A key no family serves is an Input error naming it and what is supported, or
/// with `skip_unsupported` a line in `skipped`.
TunePlan make_tune_plan(const profile::Matrix& matrix, bool skip_unsupported = false);

}  // namespace tunetab
