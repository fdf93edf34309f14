#include "exporters/aiter_tuned.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "tuner/error.h"
#include "tuner/text_file.h"

namespace tunetab::exporters {

namespace {

const std::set<std::string> kBoolColumns = {"bias", "scaleAB", "bpreshuffle"};
const std::set<std::string> kIntColumns = {
    "cu_num", "token", "M", "N", "K", "model_dim", "inter_dim", "expert", "topk", "use_g1u1", "doweight_stage1"};

std::string where(const csv::Table& t, std::size_t row) { return t.source + ":" + std::to_string(t.line_of_row[row]); }

/// The gfx column's value, or AITER's backfill when the table has no such column or the field is blank.
std::string gfx_of(const csv::Table& t, std::size_t row) {
  if (t.has_column("gfx")) {
    const std::string& g = csv::field(t, row, "gfx");
    // NOTE: AITER's _ensure_gfx_column backfills these spellings of "missing" too.
    if (!g.empty() && g != "0" && g != "nan" && g != "None") return g;
  }
  return aiter_gfx_from_cu_num(csv::to_int(t, row, "cu_num"));
}

/// Every field outside `key` (and outside gfx and cu_num), as name=value joined by ';'.
std::string rest_of(const csv::Table& t, std::size_t row, const std::vector<std::string>& key) {
  std::string out;
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    const std::string& name = t.header[c];
    if (name == "gfx" || name == "cu_num" || std::find(key.begin(), key.end(), name) != key.end()) continue;
    out += (out.empty() ? "" : ";") + name + "=" + t.rows[row][c];
  }
  return out;
}

/// A positive integer key column; Input error naming the row and the column otherwise.
std::int64_t positive(const csv::Table& t, std::size_t row, const std::string& col) {
  const std::int64_t v = csv::to_int(t, row, col);
  if (v <= 0) throw_input(where(t, row) + ": column '" + col + "': expected a positive integer, got " + std::to_string(v));
  return v;
}

/// An error ratio as a fraction: AITER's fused-MoE tuner writes "16.6%", its GEMM tuners 0.166.
double ratio(const csv::Table& t, std::size_t row, const std::string& col) {
  const std::string& f = csv::field(t, row, col);
  if (f.empty() || f.back() != '%') return csv::to_double(t, row, col);
  char* end = nullptr;
  const std::string digits = f.substr(0, f.size() - 1);
  const double v = std::strtod(digits.c_str(), &end);
  if (digits.empty() || end != digits.c_str() + digits.size())
    throw_input(where(t, row) + ": column '" + col + "': expected a ratio such as 0.8% or 0.008, got '" + f + "'");
  return v / 100;
}

/// An empty field: a 1-stage row may leave its stage-2 fields so.
bool blank(const csv::Table& t, std::size_t row, const std::string& col) { return csv::field(t, row, col).empty(); }

}  // namespace

std::string aiter_gfx_from_cu_num(std::int64_t cu_num) {
  // AITER's _LEGACY_CU_NUM_TO_GFX: the one arch each count was ever tuned on before the gfx column.
  if (cu_num == 256) return "gfx950";
  if (cu_num == 80 || cu_num == 228 || cu_num == 304) return "gfx942";
  return "";
}

std::string aiter_key_field(const csv::Table& t, std::size_t row, const std::string& column) {
  if (kBoolColumns.count(column)) return csv::py_bool(csv::to_bool(t, row, column));
  if (kIntColumns.count(column)) return std::to_string(csv::to_int(t, row, column));
  return csv::field(t, row, column);
}

std::vector<AiterFmoeRow> read_aiter_fmoe(std::istream& in, const std::string& source) {
  // NOTE: some real tables end a row before its last (_tag) field; AITER's pandas reads it as blank.
  const csv::Table t = csv::read(in, source, true);
  const auto& key_columns = profile::aiter_fmoe_columns();
  for (const char* c :
       {"cu_num", "block_m", "ksplit", "us1", "kernelName1", "err1", "us2", "kernelName2", "err2", "us", "run_1stage"})
    t.column(c);
  for (const auto& c : key_columns) t.column(c);
  std::vector<AiterFmoeRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    AiterFmoeRow r;
    r.gfx = gfx_of(t, i);
    r.cu_num = positive(t, i, "cu_num");
    r.token = positive(t, i, "token");
    r.key.model_dim = positive(t, i, "model_dim");
    r.key.inter_dim = positive(t, i, "inter_dim");
    r.key.expert = positive(t, i, "expert");
    r.key.topk = positive(t, i, "topk");
    r.key.act_type = csv::field(t, i, "act_type");
    r.key.dtype = csv::field(t, i, "dtype");
    r.key.q_dtype_a = csv::field(t, i, "q_dtype_a");
    r.key.q_dtype_w = csv::field(t, i, "q_dtype_w");
    r.key.q_type = csv::field(t, i, "q_type");
    r.key.use_g1u1 = static_cast<int>(csv::to_int(t, i, "use_g1u1"));
    r.key.doweight_stage1 = static_cast<int>(csv::to_int(t, i, "doweight_stage1"));
    r.block_m = csv::to_int(t, i, "block_m");
    r.ksplit = csv::to_int(t, i, "ksplit");
    r.run_1stage = csv::to_bool(t, i, "run_1stage");
    r.kernel_name1 = csv::field(t, i, "kernelName1");
    r.kernel_name2 = csv::field(t, i, "kernelName2");
    r.us = csv::to_double(t, i, "us");
    r.us1 = csv::to_double(t, i, "us1");
    r.err1 = ratio(t, i, "err1");
    if (!(r.run_1stage && blank(t, i, "us2"))) r.us2 = csv::to_double(t, i, "us2");
    if (!(r.run_1stage && blank(t, i, "err2"))) r.err2 = ratio(t, i, "err2");
    if (t.has_column("_tag")) r.tag = csv::field(t, i, "_tag");
    r.rest = rest_of(t, i, key_columns);
    r.line = t.line_of_row[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<AiterFmoeRow> read_aiter_fmoe(const std::string& path) {
  std::istringstream in(read_text_file(path));
  return read_aiter_fmoe(in, path);
}

std::vector<AiterGemmRow> read_aiter_gemm(std::istream& in, const std::string& source, profile::Quant quant) {
  const csv::Table t = csv::read(in, source, true);
  const std::vector<std::string>& key_columns = profile::aiter_gemm_file(quant).columns;
  for (const char* c : {"cu_num", "us", "kernelName"}) t.column(c);
  for (const auto& c : key_columns) t.column(c);
  const char* err_column = t.has_column("err_ratio") ? "err_ratio" : "errRatio";
  if (!t.has_column(err_column)) throw_input(source + ": missing column 'errRatio' (or 'err_ratio') in the header");
  std::vector<AiterGemmRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    AiterGemmRow r;
    r.gfx = gfx_of(t, i);
    r.cu_num = positive(t, i, "cu_num");
    r.m = positive(t, i, "M");
    r.n = positive(t, i, "N");
    r.k = positive(t, i, "K");
    for (std::size_t c = 3; c < key_columns.size(); ++c) r.key_rest.push_back(aiter_key_field(t, i, key_columns[c]));
    if (t.has_column("libtype")) r.libtype = csv::field(t, i, "libtype");
    r.kernel_name = csv::field(t, i, "kernelName");
    r.us = csv::to_double(t, i, "us");
    r.err_ratio = ratio(t, i, err_column);
    r.rest = rest_of(t, i, key_columns);
    r.line = t.line_of_row[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<AiterGemmRow> read_aiter_gemm(const std::string& path, profile::Quant quant) {
  std::istringstream in(read_text_file(path));
  return read_aiter_gemm(in, path, quant);
}

}  // namespace tunetab::exporters
