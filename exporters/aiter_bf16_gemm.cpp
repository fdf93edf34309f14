#include "exporters/aiter_bf16_gemm.h"

#include <sstream>

#include <nlohmann/json.hpp>

#include "exporters/csv.h"
#include "tuner/error.h"
#include "tuner/text_file.h"

namespace tunetab::exporters {

const std::vector<std::string>& aiter_bf16_gemm_columns() {
  static const std::vector<std::string> cols = {"gfx",     "cu_num",     "M",      "N",       "K",     "bias",
                                                "dtype",   "outdtype",   "scaleAB", "bpreshuffle", "libtype", "solidx",
                                                "splitK",  "us",         "kernelName", "err_ratio", "tflops", "bw"};
  return cols;
}

std::vector<AiterBf16GemmRow> read_aiter_bf16_gemm(std::istream& in, const std::string& source) {
  const csv::Table t = csv::read(in, source);
  for (const auto& c : aiter_bf16_gemm_columns()) t.column(c);  // every column must be there
  std::vector<AiterBf16GemmRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    AiterBf16GemmRow r;
    r.gfx = csv::field(t, i, "gfx");
    r.cu_num = csv::to_int(t, i, "cu_num");
    r.m = csv::to_int(t, i, "M");
    r.n = csv::to_int(t, i, "N");
    r.k = csv::to_int(t, i, "K");
    r.bias = csv::to_bool(t, i, "bias");
    r.dtype = csv::field(t, i, "dtype");
    r.outdtype = csv::field(t, i, "outdtype");
    r.scale_ab = csv::to_bool(t, i, "scaleAB");
    r.bpreshuffle = csv::to_bool(t, i, "bpreshuffle");
    r.libtype = csv::field(t, i, "libtype");
    r.solidx = csv::to_int(t, i, "solidx");
    r.split_k = csv::to_int(t, i, "splitK");
    r.us = csv::to_number(t, i, "us");
    r.kernel_name = csv::field(t, i, "kernelName");
    r.err_ratio = csv::to_number(t, i, "err_ratio");
    r.tflops = csv::to_number(t, i, "tflops");
    r.bw = csv::to_number(t, i, "bw");
    r.line = t.line_of_row[i];
    if (r.m <= 0 || r.n <= 0 || r.k <= 0)
      throw_input(source + ":" + std::to_string(r.line) + ": M, N and K must be positive");
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<AiterBf16GemmRow> read_aiter_bf16_gemm(const std::string& path) {
  std::istringstream in(read_text_file(path));
  return read_aiter_bf16_gemm(in, path);
}

void write_aiter_bf16_gemm(std::ostream& out, const std::vector<AiterBf16GemmRow>& rows) {
  csv::write_row(out, aiter_bf16_gemm_columns());
  for (const auto& r : rows)
    csv::write_row(out, {r.gfx, std::to_string(r.cu_num), std::to_string(r.m), std::to_string(r.n), std::to_string(r.k),
                         csv::py_bool(r.bias), r.dtype, r.outdtype, csv::py_bool(r.scale_ab), csv::py_bool(r.bpreshuffle),
                         r.libtype, std::to_string(r.solidx), std::to_string(r.split_k), r.us.str(),
                         r.kernel_name, r.err_ratio.str(), r.tflops.str(), r.bw.str()});
}

static double round_to(double v, int digits) { return std::stod(csv::py_round(v, digits)); }

std::vector<AiterBf16GemmRow> aiter_bf16_gemm_rows(db::Store& store) {
  return aiter_bf16_gemm_rows(store.best_results("gemm_bf16"));
}

std::vector<AiterBf16GemmRow> aiter_bf16_gemm_rows(const std::vector<db::BestRow>& best) {
  std::vector<AiterBf16GemmRow> rows;
  for (const auto& b : best) {
    const auto p = nlohmann::json::parse(b.problem_json);
    const auto c = nlohmann::json::parse(b.config_json);
    TUNETAB_ASSERT(b.result.disposition == db::Disposition::kPassed && b.result.median_us, "exporting an unvalidated row");
    AiterBf16GemmRow r;
    r.gfx = b.device.arch;
    r.cu_num = b.device.cu_count;
    r.m = p.at("m").get<std::int64_t>();
    r.n = p.at("n").get<std::int64_t>();
    r.k = p.at("k").get<std::int64_t>();
    r.bias = p.at("bias").get<bool>();
    r.libtype = "tunetab";
    r.solidx = b.result.config_id;
    r.split_k = c.at("split_k").get<std::int64_t>();
    r.us = round_to(*b.result.median_us, 4);
    r.kernel_name = "tunetab_" + b.family + "_" + b.config_name;
    r.err_ratio = round_to(b.result.err_ratio.value_or(0), 4);
    r.tflops = round_to(b.result.tflops.value_or(0), 2);
    r.bw = round_to(b.result.bw_gbs.value_or(0), 2);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace tunetab::exporters
