#include "tuner/tune_plan.h"

#include <cmath>
#include <cstdlib>
#include <map>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm_fp8/gemm_fp8.h"
#include "kernels/moe/moe.h"
#include "tuner/error.h"

namespace tunetab {

namespace {

std::string gemm_label(const profile::GemmKey& k) {
  std::string layers;
  for (const auto& l : k.layers) layers += (layers.empty() ? "" : ", ") + l;
  return "gemm N=" + std::to_string(k.n) + " K=" + std::to_string(k.k) + " " + profile::to_string(k.quant) + " (" + layers + ")";
}

std::string fmoe_label(const profile::FmoeKey& k) {
  return "fmoe model_dim=" + std::to_string(k.model_dim) + " inter_dim=" + std::to_string(k.inter_dim) +
         " expert=" + std::to_string(k.expert) + " topk=" + std::to_string(k.topk) + " " + k.q_type + " " + k.q_dtype_w;
}

/// The row of `rows` nearest `target` in ratio (ties to the smaller).
std::int64_t nearest_row(const std::set<std::int64_t>& rows, std::int64_t target) {
  std::int64_t best = *rows.begin();
  double best_d = 1e300;
  for (std::int64_t r : rows) {
    const double d = std::abs(std::log2(static_cast<double>(r)) - std::log2(static_cast<double>(target)));
    if (d < best_d) {
      best_d = d;
      best = r;
    }
  }
  return best;
}

template <typename Key>
PlanKey plan_key(PlanKind kind, std::size_t index, std::string family, std::string label, const profile::Entry<Key>& e) {
  PlanKey k;
  k.kind = kind;
  k.index = index;
  k.family = std::move(family);
  k.label = std::move(label);
  k.rule = e.rule;
  k.domain = e.domain;
  k.buckets = e.buckets;
  std::set<std::int64_t> rows;
  for (const auto& b : e.buckets) rows.insert(b.m);
  k.anchors = anchor_rows(rows);
  return k;
}

}  // namespace

std::string TunePlan::summary() const {
  std::map<std::string, int> per_family;
  std::size_t rows = 0, anchors = 0;
  for (const auto& k : keys) {
    ++per_family[k.family];
    rows += k.problems.size();
    anchors += k.anchors.size();
  }
  std::string families;
  for (const auto& [f, n] : per_family) families += (families.empty() ? "" : ", ") + std::to_string(n) + " " + f;
  return std::to_string(keys.size()) + " keys (" + families + "), " + std::to_string(rows) + " rows, " +
         std::to_string(anchors) + " anchor rows swept fully" +
         (skipped.empty() ? "" : ", " + std::to_string(skipped.size()) + " keys skipped");
}

TunePlan TunePlan::only_families(const std::string& list, const std::string& option) const {
  std::set<std::string> wanted;
  std::size_t at = 0;
  for (std::size_t end = 0; end != std::string::npos; at = end + 1) {
    end = list.find(',', at);
    std::string f = list.substr(at, end == std::string::npos ? std::string::npos : end - at);
    f.erase(0, f.find_first_not_of(' '));
    f.erase(f.find_last_not_of(' ') + 1);
    if (f == "moe") f = moe::kFamily;
    if (f != gemm::kFamily && f != gemm_fp8::kFamily && f != moe::kFamily)
      throw_input(option + " '" + f + "': expected gemm_bf16, gemm_fp8_blockscale or fused_moe (comma-separated)");
    wanted.insert(f);
  }
  TunePlan out = *this;
  out.skipped.clear();  // the plan's, reported with it
  std::erase_if(out.keys, [&](const PlanKey& k) { return !wanted.count(k.family); });
  if (out.keys.empty()) throw_input(option + " '" + list + "': the plan has no key of these families (" + summary() + ")");
  return out;
}

TunePlan TunePlan::with_anchors_in(const std::string& range, const std::string& option) const {
  const auto [first, last] = profile::parse_m_range(range, option, "257-352");
  if (first < 1 || first > last)
    throw_input(option + " '" + range + "': expected FIRST-LAST with 1 <= FIRST <= LAST, e.g. 257-352");
  TunePlan out = *this;
  bool any = false;
  for (PlanKey& k : out.keys)
    for (const auto& b : k.buckets)
      if (b.m >= first && b.m <= last) {
        k.anchors.insert(b.m);
        any = true;
      }
  if (!any) throw_input(option + " '" + range + "': no row of the plan has M in that range (" + summary() + ")");
  return out;
}

std::set<std::int64_t> anchor_rows(const std::set<std::int64_t>& rows) {
  if (rows.empty()) return {};
  return {*rows.begin(), *rows.rbegin(), nearest_row(rows, 16), nearest_row(rows, 256), nearest_row(rows, 1024)};
}

std::optional<std::string> gemm_family(profile::Quant q) {
  switch (q) {
    case profile::Quant::kBf16: return std::string(gemm::kFamily);
    case profile::Quant::kFp8Block128: return std::string(gemm_fp8::kFamily);
    case profile::Quant::kFp8PerToken: return std::nullopt;
  }
  return std::nullopt;
}

nlohmann::json fmoe_problem(const profile::FmoeKey& key, std::int64_t m, const std::string& routing) {
  const std::string label = fmoe_label(key);
  auto fail = [&](const std::string& field, const std::string& value, const std::string& supported) {
    throw_input(label + ": " + field + " '" + value + "' has no tunetab fused-MoE family (supported: " + supported + ")");
  };
  if (key.act_type != "ActivationType.Silu") fail("act_type", key.act_type, "ActivationType.Silu");
  if (key.use_g1u1 != 1) fail("use_g1u1", std::to_string(key.use_g1u1), "1, gate and up fused");
  if (key.doweight_stage1 != 0) fail("doweight_stage1", std::to_string(key.doweight_stage1), "0, weights applied in stage 2");
  if (key.dtype != "torch.bfloat16") fail("dtype", key.dtype, "torch.bfloat16 hidden states");
  moe::Problem p;
  if (key.q_type == "QuantType.No" && key.q_dtype_a == "torch.bfloat16" && key.q_dtype_w == "torch.bfloat16")
    p.quant = moe::Quant::kBf16;
  else if (key.q_type == "QuantType.per_1x128" && key.q_dtype_a == key.q_dtype_w && key.q_dtype_w == "torch.float8_e4m3fn")
    p.quant = moe::Quant::kFp8;
  else if (key.q_type == "QuantType.per_1x128" && key.q_dtype_a == key.q_dtype_w && key.q_dtype_w == "torch.float8_e4m3fnuz")
    p.quant = moe::Quant::kFp8Fnuz;
  else
    fail("q_type/q_dtype", key.q_type + " " + key.q_dtype_a + "/" + key.q_dtype_w,
         "QuantType.No with torch.bfloat16, or QuantType.per_1x128 with torch.float8_e4m3fn[uz]");
  p.m = m;
  p.model_dim = key.model_dim;
  p.inter_dim = key.inter_dim;
  p.experts = key.expert;
  p.topk = key.topk;
  p.routing = moe::routing_from_string(routing);
  return p.to_json();
}

nlohmann::json gemm_problem(const profile::GemmKey& key, std::int64_t m, const std::string& fp8_format) {
  const auto family = gemm_family(key.quant);
  if (!family)
    throw_input(gemm_label(key) + ": quant " + profile::to_string(key.quant) +
                " has no tunetab GEMM family (bf16 -> gemm_bf16, fp8-block128 -> gemm_fp8_blockscale)");
  if (*family == gemm::kFamily) {
    gemm::Problem p;
    p.m = m;
    p.n = key.n;
    p.k = key.k;
    return p.to_json();
  }
  gemm_fp8::Problem p;
  p.m = m;
  p.n = key.n;
  p.k = key.k;
  p.in = gemm_fp8::fp8_from_string(fp8_format);
  return p.to_json();
}

TunePlan make_tune_plan(const profile::Matrix& matrix, bool skip_unsupported) {
  TunePlan plan;
  const std::string fp8 = matrix.envelope.fp8_torch_dtype() == "torch.float8_e4m3fnuz" ? "e4m3fnuz" : "e4m3fn";
  auto unsupported = [&](const Error& e) {
    if (!skip_unsupported || e.kind() != ErrorKind::kInput) throw;
    plan.skipped.push_back(e.detail());
  };
  for (std::size_t i = 0; i < matrix.gemm.size(); ++i) {
    const auto& e = matrix.gemm[i];
    try {
      PlanKey k = plan_key(PlanKind::kGemm, i, gemm_family(e.key.quant).value_or(""), gemm_label(e.key), e);
      for (const auto& b : e.buckets) k.problems.push_back(gemm_problem(e.key, b.m, fp8));
      plan.keys.push_back(std::move(k));
    } catch (const Error& err) {
      unsupported(err);
    }
  }
  for (std::size_t i = 0; i < matrix.fmoe.size(); ++i) {
    const auto& e = matrix.fmoe[i];
    try {
      PlanKey k = plan_key(PlanKind::kFmoe, i, moe::kFamily, fmoe_label(e.key), e);
      for (const auto& b : e.buckets) k.problems.push_back(fmoe_problem(e.key, b.m));
      plan.keys.push_back(std::move(k));
    } catch (const Error& err) {
      unsupported(err);
    }
  }
  return plan;
}

}  // namespace tunetab
