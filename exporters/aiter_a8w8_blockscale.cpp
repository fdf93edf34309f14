#include "exporters/aiter_a8w8_blockscale.h"

#include <sstream>

#include <nlohmann/json.hpp>

#include "tuner/error.h"
#include "tuner/text_file.h"

namespace tunetab::exporters {

const std::vector<std::string>& aiter_a8w8_blockscale_columns() {
  static const std::vector<std::string> cols = {"gfx", "cu_num",  "M",  "N",          "K",      "libtype", "kernelId",
                                                "splitK", "us", "kernelName", "tflops", "bw",      "errRatio"};
  return cols;
}

std::vector<AiterA8w8BlockscaleRow> read_aiter_a8w8_blockscale(std::istream& in, const std::string& source) {
  const csv::Table t = csv::read(in, source);
  for (const auto& c : aiter_a8w8_blockscale_columns()) t.column(c);  // every column must be there
  std::vector<AiterA8w8BlockscaleRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    AiterA8w8BlockscaleRow r;
    r.gfx = csv::field(t, i, "gfx");
    r.cu_num = csv::to_int(t, i, "cu_num");
    r.m = csv::to_int(t, i, "M");
    r.n = csv::to_int(t, i, "N");
    r.k = csv::to_int(t, i, "K");
    r.libtype = csv::field(t, i, "libtype");
    r.kernel_id = csv::to_int(t, i, "kernelId");
    r.split_k = csv::to_int(t, i, "splitK");
    r.us = csv::to_number(t, i, "us");
    r.kernel_name = csv::field(t, i, "kernelName");
    r.tflops = csv::to_number(t, i, "tflops");
    r.bw = csv::to_number(t, i, "bw");
    r.err_ratio = csv::to_number(t, i, "errRatio");
    r.line = t.line_of_row[i];
    if (r.m <= 0 || r.n <= 0 || r.k <= 0)
      throw_input(source + ":" + std::to_string(r.line) + ": M, N and K must be positive");
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<AiterA8w8BlockscaleRow> read_aiter_a8w8_blockscale(const std::string& path) {
  std::istringstream in(read_text_file(path));
  return read_aiter_a8w8_blockscale(in, path);
}

void write_aiter_a8w8_blockscale(std::ostream& out, const std::vector<AiterA8w8BlockscaleRow>& rows) {
  csv::write_row(out, aiter_a8w8_blockscale_columns());
  for (const auto& r : rows)
    csv::write_row(out, {r.gfx, std::to_string(r.cu_num), std::to_string(r.m), std::to_string(r.n),
                         std::to_string(r.k), r.libtype, std::to_string(r.kernel_id), std::to_string(r.split_k),
                         r.us.str(), r.kernel_name, r.tflops.str(), r.bw.str(), r.err_ratio.str()});
}

namespace {
// NOTE: the store's spellings of kernels/gemm_fp8 (exporters depend on the store, not on kernel families).
const char* kFamily = "gemm_fp8_blockscale";
/// AITER's fp8 on `arch`, as gemm_fp8::native_fp8 spells it.
std::string native_fp8(const std::string& arch) {
  return arch == "gfx940" || arch == "gfx941" || arch == "gfx942" ? "e4m3fnuz" : "e4m3fn";
}
double round_to(double v, int digits) { return std::stod(csv::py_round(v, digits)); }
}  // namespace

std::vector<AiterA8w8BlockscaleRow> aiter_a8w8_blockscale_rows(db::Store& store) {
  std::vector<db::BestRow> native;
  for (auto& b : store.best_results(kFamily))
    if (nlohmann::json::parse(b.problem_json).at("in").get<std::string>() == native_fp8(b.device.arch)) native.push_back(std::move(b));
  return aiter_a8w8_blockscale_rows(native);
}

std::vector<AiterA8w8BlockscaleRow> aiter_a8w8_blockscale_rows(const std::vector<db::BestRow>& best) {
  std::vector<AiterA8w8BlockscaleRow> rows;
  for (const auto& b : best) {
    const auto p = nlohmann::json::parse(b.problem_json);
    const auto c = nlohmann::json::parse(b.config_json);
    TUNETAB_ASSERT(b.result.disposition == db::Disposition::kPassed && b.result.median_us, "exporting an unvalidated row");
    AiterA8w8BlockscaleRow r;
    r.gfx = b.device.arch;
    r.cu_num = b.device.cu_count;
    r.m = p.at("m").get<std::int64_t>();
    r.n = p.at("n").get<std::int64_t>();
    r.k = p.at("k").get<std::int64_t>();
    r.libtype = "tunetab";
    r.kernel_id = b.result.config_id;
    r.split_k = c.at("split_k").get<std::int64_t>();
    r.us = round_to(*b.result.median_us, 4);
    r.kernel_name = std::string("tunetab_") + kFamily + "_" + b.config_name;
    r.tflops = round_to(b.result.tflops.value_or(0), 2);
    r.bw = round_to(b.result.bw_gbs.value_or(0), 2);
    r.err_ratio = round_to(b.result.err_ratio.value_or(0), 4);
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace tunetab::exporters
