#include "exporters/aiter_fmoe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "exporters/csv.h"
#include "tuner/error.h"
#include "tuner/text_file.h"

namespace tunetab::exporters {

namespace {

/// AITER's fused-MoE tuner writes error ratios as f"{err:.1%}".
std::string percent(double fraction) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f%%", fraction * 100);
  return buf;
}

std::int64_t element_bytes(const std::string& torch_dtype) {
  return torch_dtype.find("float8") != std::string::npos ? 1 : 2;
}

}  // namespace

const std::vector<std::string>& aiter_fmoe_columns_tuned() {
  static const std::vector<std::string> cols = {
      "cu_num",   "token",       "model_dim", "inter_dim", "expert",      "topk", "act_type",   "dtype", "q_dtype_a",
      "q_dtype_w", "q_type",     "use_g1u1",  "doweight_stage1", "block_m", "ksplit", "us1",    "kernelName1",
      "err1",     "us2",         "kernelName2", "err2",    "us",          "run_1stage", "tflops", "bw",  "_tag"};
  return cols;
}

profile::FmoeKey aiter_fmoe_key(std::int64_t model_dim, std::int64_t inter_dim, std::int64_t expert, std::int64_t topk,
                                const std::string& q_dtype) {
  profile::FmoeKey k;
  k.model_dim = model_dim;
  k.inter_dim = inter_dim;
  k.expert = expert;
  k.topk = topk;
  k.act_type = "ActivationType.Silu";
  k.dtype = "torch.bfloat16";
  k.q_dtype_a = k.q_dtype_w = q_dtype;
  k.q_type = q_dtype == "torch.bfloat16" ? "QuantType.No" : "QuantType.per_1x128";
  k.use_g1u1 = 1;
  k.doweight_stage1 = 0;
  return k;
}

double fmoe_tflops(const FmoeChoice& c) {
  if (c.us <= 0) return 0;
  const double flops = 2.0 * c.token * c.key.topk * c.key.model_dim * 3.0 * c.key.inter_dim;
  return flops / (c.us * 1e-6) / 1e12;
}

double fmoe_bandwidth_gbs(const FmoeChoice& c) {
  if (c.us <= 0) return 0;
  const double hit = std::min<double>(c.key.expert, static_cast<double>(c.token) * c.key.topk);
  const double weights = hit * 3.0 * c.key.inter_dim * c.key.model_dim * element_bytes(c.key.q_dtype_w);
  const double acts = 2.0 * c.token * c.key.model_dim * 2;
  return (weights + acts) / (c.us * 1e-6) / 1e9;
}

void write_aiter_fmoe(std::ostream& out, const std::vector<FmoeChoice>& rows) {
  csv::write_row(out, aiter_fmoe_columns_tuned());
  for (const auto& r : rows) {
    const auto& k = r.key;
    const double tflops = r.tflops > 0 ? r.tflops : fmoe_tflops(r);
    const double bw = r.bw > 0 ? r.bw : fmoe_bandwidth_gbs(r);
    csv::write_row(out, {std::to_string(r.cu_num), std::to_string(r.token), std::to_string(k.model_dim),
                         std::to_string(k.inter_dim), std::to_string(k.expert), std::to_string(k.topk), k.act_type, k.dtype,
                         k.q_dtype_a, k.q_dtype_w, k.q_type, std::to_string(k.use_g1u1), std::to_string(k.doweight_stage1),
                         std::to_string(r.block_m), std::to_string(r.ksplit), csv::py_float(r.us1), r.kernel_name1,
                         percent(r.err1), csv::py_float(r.us2), r.kernel_name2, percent(r.err2), csv::py_float(r.us),
                         r.run_1stage ? "1" : "0", csv::py_round(tflops, 2), csv::py_round(bw, 2), r.tag});
  }
}

void write_aiter_fmoe(const std::string& path, const std::vector<FmoeChoice>& rows) {
  std::ostringstream text;
  write_aiter_fmoe(text, rows);
  write_text_file(path, text.str());
}

}  // namespace tunetab::exporters
