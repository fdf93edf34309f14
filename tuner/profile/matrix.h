// The support matrix of one deployment: every fused-MoE and dense GEMM problem a model hits on one rank
// under its serving envelope, keyed as AITER keys them, each with its M domain and the buckets (table
// rows) a lookup rule serves it from.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/profile/envelope.h"
#include "tuner/profile/lookup.h"
#include "tuner/profile/model.h"

namespace tunetab::profile {

/// AITER's fused-MoE key without the token: the columns of untuned_fmoe.csv after `token`.
struct FmoeKey {
  std::int64_t model_dim = 0, inter_dim = 0, expert = 0, topk = 0;
  std::string act_type, dtype, q_dtype_a, q_dtype_w, q_type;  // AITER's spellings, e.g. QuantType.per_1x128
  int use_g1u1 = 1;
  int doweight_stage1 = 0;

  /// The key's columns in untuned_fmoe.csv order, after `token`.
  std::vector<std::string> fields() const;
  bool operator==(const FmoeKey&) const = default;
};

/// A dense GEMM as the kernel sees it, C[M,N] = A[M,K] * W[N,K]^T, and the linears that run it.
struct GemmKey {
  std::int64_t n = 0, k = 0;
  Quant quant = Quant::kBf16;       // bf16 for linears checkpoints keep unquantized (router, lm_head)
  std::vector<std::string> layers;  // e.g. {"o_proj", "mlp.down_proj"}
};

/// A key with its M domain and the buckets its lookup rule serves it from.
template <typename Key>
struct Entry {
  Key key;
  MDomain domain;
  RuleKind rule = RuleKind::kExact;
  std::vector<Bucket> buckets;  // rule applied to domain
};

/// The lookup rule each kind of key is bucketed with.
struct Rules {
  RuleKind fmoe = RuleKind::kAiterFmoe;
  RuleKind gemm = RuleKind::kAiterGemm;
};

/// Every key of one deployment, on one rank.
struct Matrix {
  Model model;
  Envelope envelope;
  std::vector<Entry<FmoeKey>> fmoe;
  std::vector<Entry<GemmKey>> gemm;  // one entry per distinct (N, K, quant)
};

/// Every key `model` hits on one rank under `env`; Input error naming the field and flag when the
/// parallelism does not divide the model (tp and an intermediate size, ep and the expert count, ...).
Matrix derive_matrix(const Model& model, const Envelope& env, const Rules& rules = {});

/// Every key with its M domain, rule and buckets.
nlohmann::json to_json(const Matrix& m);

/// AITER's untuned_fmoe.csv columns: token, then the FmoeKey::fields() columns.
const std::vector<std::string>& aiter_fmoe_columns();

/// AITER's untuned GEMM file for one quantization: its name and columns, M, N and K first.
struct AiterGemmFile {
  Quant quant;
  std::string name;
  std::vector<std::string> columns;
};
/// Every such file, in the order aiter_untuned_tables writes them.
const std::vector<AiterGemmFile>& aiter_gemm_files();
/// The file of one quantization.
const AiterGemmFile& aiter_gemm_file(Quant q);
/// A GEMM key's fields in its AITER untuned file after M: N, K, then the rest of AITER's key.
std::vector<std::string> aiter_gemm_fields(const GemmKey& key, const Envelope& env);

/// AITER untuned CSVs, one row per bucket: {file name, contents}; untuned_fmoe.csv, then one GEMM file
/// per quantization present (bf16_untuned_gemm.csv, a8w8_blockscale_untuned_gemm.csv, a8w8_untuned_gemm.csv).
std::vector<std::pair<std::string, std::string>> aiter_untuned_tables(const Matrix& m);

}  // namespace tunetab::profile
