#include "exporters/gaps.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "exporters/aiter_tuned.h"
#include "exporters/csv.h"
#include "exporters/vllm_moe_json.h"
#include "tuner/error.h"
#include "tuner/names.h"

namespace tunetab::exporters {

namespace {

constexpr std::int64_t kIndexLimit = std::int64_t{1} << 31;

// clang-format off
const std::pair<TableFormat, const char*> kFormatNames[] = {
  {TableFormat::kAiterFmoe,               "aiter-fmoe"},
  {TableFormat::kAiterBf16Gemm,           "aiter-bf16-gemm"},
  {TableFormat::kAiterA8w8BlockscaleGemm, "aiter-a8w8-blockscale-gemm"},
  {TableFormat::kVllmMoeJson,             "vllm-moe-json"},
};
const std::pair<GapKind, const char*> kKindNames[] = {
  {GapKind::kMiss,            "miss"},
  {GapKind::kExtrapolated,    "extrapolated"},
  {GapKind::kIndexOverflow,   "index-overflow"},
  {GapKind::kDuplicate,       "duplicate"},
  {GapKind::kConflict,        "conflict"},
  {GapKind::kNonPositiveTime, "non-positive-time"},
  {GapKind::kErrorRatio,      "error-ratio"},
  {GapKind::kUnreachable,     "unreachable"},
};
// clang-format on

bool is_fmoe(TableFormat f) { return f == TableFormat::kAiterFmoe || f == TableFormat::kVllmMoeJson; }
bool is_aiter(TableFormat f) { return f != TableFormat::kVllmMoeJson; }

profile::Quant gemm_quant(TableFormat f) {
  return f == TableFormat::kAiterBf16Gemm ? profile::Quant::kBf16 : profile::Quant::kFp8Block128;
}

/// AITER's untuned columns of a format, its M column first.
const std::vector<std::string>& aiter_columns(TableFormat f) {
  return f == TableFormat::kAiterFmoe ? profile::aiter_fmoe_columns() : profile::aiter_gemm_file(gemm_quant(f)).columns;
}

/// The M column (first) and the key columns of a format's key CSV.
std::vector<std::string> key_csv_columns(TableFormat f) {
  return is_aiter(f) ? aiter_columns(f) : std::vector<std::string>{"M", "E", "N"};
}

/// The columns that size a format's problem; a key CSV must give them as positive integers.
std::vector<std::string> size_columns(TableFormat f) {
  if (f == TableFormat::kAiterFmoe) return {"model_dim", "inter_dim", "expert", "topk"};
  return is_aiter(f) ? std::vector<std::string>{"N", "K"} : std::vector<std::string>{"E", "N"};
}

/// AITER's key: gfx, cu_num, then the untuned columns after M holding `values`.
KeyFields aiter_key(TableFormat f, const std::string& gfx, std::int64_t cu_num, const std::vector<std::string>& values) {
  const auto& columns = aiter_columns(f);
  TUNETAB_ASSERT(values.size() + 1 == columns.size(), "an AITER key has a value for every untuned column after M");
  KeyFields k = {{"gfx", gfx}, {"cu_num", std::to_string(cu_num)}};
  for (std::size_t i = 1; i < columns.size(); ++i) k.emplace_back(columns[i], values[i - 1]);
  return k;
}

KeyFields vllm_key(const VllmMoeSelector& s) {
  return {{"E", std::to_string(s.e)},
          {"N", std::to_string(s.n)},
          {"device_name", s.device_name},
          {"dtype", s.dtype},
          {"block_shape", s.block_shape}};
}

/// The file vLLM opens for E experts of intermediate size N on the deployment: vLLM names FP8 weights and
/// activations fp8_w8a8 and adds the block shape of block-scaled checkpoints; bf16 has neither.
VllmMoeSelector vllm_selector(std::int64_t e, std::int64_t n, const GapOptions& o) {
  const bool fp8 = o.quant != profile::Quant::kBf16;
  return {e, n, o.device_name, fp8 ? "fp8_w8a8" : "", o.quant == profile::Quant::kFp8Block128 ? "[128,128]" : ""};
}

const std::string& field(const KeyFields& k, const std::string& name) {
  for (const auto& [n, v] : k)
    if (n == name) return v;
  TUNETAB_THROW(kInfra, "key has no field '" + name + "'");
}

std::int64_t int_field(const KeyFields& k, const std::string& name) { return std::stoll(field(k, name)); }

std::string key_string(const KeyFields& k) {
  std::string out;
  for (const auto& [n, v] : k) out += n + "=" + v + '\x1f';
  return out;
}

/// The consumer's lookup rule for a key of a format. vLLM's keys come from the file, so its rule object
/// only ever searches the rows it is given.
profile::LookupRule rule_for(TableFormat f, const KeyFields& k) {
  switch (f) {
    case TableFormat::kAiterFmoe: return profile::LookupRule::aiter_fmoe();
    case TableFormat::kAiterBf16Gemm:
    case TableFormat::kAiterA8w8BlockscaleGemm: return profile::LookupRule::aiter_gemm(int_field(k, "N"));
    case TableFormat::kVllmMoeJson: return profile::LookupRule::vllm_nearest({1});
  }
  TUNETAB_THROW(kInfra, "unknown table format");
}

/// The field AITER retries as a wildcard when no row has the exact key: its fused MoE's act_type.
const char* wildcard_field(TableFormat f) { return f == TableFormat::kAiterFmoe ? "act_type" : nullptr; }

/// `k` with `field` matching anything, as AITER's fallback dict keys it.
std::string wildcard_key(KeyFields k, const char* field) {
  for (auto& [n, v] : k)
    if (n == field) v = "*";
  return key_string(k);
}

IndexModel index_model(TableFormat f, const KeyFields& k) {
  if (f == TableFormat::kAiterFmoe)
    return IndexModel::fused_moe(int_field(k, "model_dim"), int_field(k, "inter_dim"), int_field(k, "expert"),
                                 int_field(k, "topk"));
  return IndexModel::gemm(int_field(k, "N"), int_field(k, "K"));
}

AuditRow fmoe_row(const AiterFmoeRow& r, const std::string& source, const GapOptions& o) {
  AuditRow a;
  a.key = aiter_key(TableFormat::kAiterFmoe, r.gfx.empty() ? o.gfx : r.gfx, r.cu_num, r.key.fields());
  a.m = r.token;
  a.source = source;
  a.line = r.line;
  a.tag = r.tag;
  // NOTE: AITER's get_cfg_2stages drops these; they serve only when FlyDSL is missing, from their own table.
  a.serves = r.tag != "flydsl_fallback";
  a.rest = r.rest;
  a.times = {{"us", r.us}, {"us1", r.us1}};
  a.errors = {{"err1", r.err1}};
  if (!r.run_1stage) {
    a.times.emplace_back("us2", r.us2);
    a.errors.emplace_back("err2", r.err2);
  }
  a.block_m = r.block_m;
  return a;
}

AuditRow gemm_row(TableFormat f, const AiterGemmRow& r, const std::string& source, const GapOptions& o) {
  std::vector<std::string> values = {std::to_string(r.n), std::to_string(r.k)};
  values.insert(values.end(), r.key_rest.begin(), r.key_rest.end());
  AuditRow a;
  a.key = aiter_key(f, r.gfx.empty() ? o.gfx : r.gfx, r.cu_num, values);
  a.m = r.m;
  a.source = source;
  a.line = r.line;
  a.rest = r.rest;
  a.times = {{"us", r.us}};
  a.errors = {{"err_ratio", r.err_ratio}};
  return a;
}

AuditRow vllm_row(const VllmMoeFile& file, const VllmMoeConfig& c) {
  AuditRow a;
  a.key = vllm_key(file.selector);
  a.m = c.m;
  a.source = file.source;
  a.rest = c.config.dump();
  a.block_m = c.block_size_m;
  return a;
}

std::string percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", ratio * 100);
  return buf;
}

Gap defect(GapKind kind, const AuditRow& r, std::string detail) { return {kind, r.key, r.m, r.m, r, std::move(detail)}; }

/// The row's own defects: times that are no measurement, errors past the threshold, an M no lookup reaches.
void check_row(TableFormat f, const AuditRow& r, const GapOptions& o, std::vector<Gap>& out) {
  std::string bad;
  for (const auto& [name, us] : r.times)
    if (!(us > 0)) bad += (bad.empty() ? "" : ", ") + name + "=" + csv::py_float(us);
  if (!bad.empty()) out.push_back(defect(GapKind::kNonPositiveTime, r, r.where() + ": " + bad + ", not a measurement"));
  bad.clear();
  for (const auto& [name, err] : r.errors)
    if (!(err <= o.max_err_ratio)) bad += (bad.empty() ? "" : ", ") + name + "=" + percent(err);
  if (!bad.empty())
    out.push_back(defect(GapKind::kErrorRatio, r, r.where() + ": " + bad + ", above " + percent(o.max_err_ratio)));
  const auto rule = rule_for(f, r.key);
  if (rule.lookup(r.m, {r.m}) != r.m)
    out.push_back(defect(GapKind::kUnreachable, r,
                         r.where() + ": the " + profile::to_string(rule.kind()) + " lookup never asks for this M"));
}

/// A key's serving gaps, each range merged with the one before it when they are of one kind and row.
class KeyGaps {
 public:
  explicit KeyGaps(const AuditKey& key) : key_(key) {}

  /// Classifies first..last, which `row` (nullptr: none) serves.
  void serve(std::int64_t first, std::int64_t last, const AuditRow* row) {
    if (!row) {
      add(GapKind::kMiss, first, last, row, "no row: the consumer runs its untuned default");
      return;
    }
    if (last > row->m)
      add(GapKind::kExtrapolated, std::max(first, row->m + 1), last, row,
          "served by " + row->where() + ", measured at M=" + std::to_string(row->m));
    if (key_.index && row->index_bits < 64) {
      const std::int64_t wraps = key_.index->first_overflow_m(row->block_m);
      if (wraps <= last)
        add(GapKind::kIndexOverflow, std::max(first, wraps), last, row,
            "a buffer reaches 2^31 elements from M=" + std::to_string(wraps) + "; " + row->where() +
                " (M=" + std::to_string(row->m) + ") carries no proof of 64-bit indexing");
    }
  }

  /// The gaps in increasing M.
  std::vector<Gap> take() {
    std::stable_sort(gaps_.begin(), gaps_.end(), [](const Gap& a, const Gap& b) { return a.m_first < b.m_first; });
    return std::move(gaps_);
  }

 private:
  void add(GapKind kind, std::int64_t first, std::int64_t last, const AuditRow* row, std::string detail) {
    for (std::size_t i = gaps_.size(); i-- > 0;) {
      if (gaps_[i].kind != kind) continue;
      if (gaps_[i].m_last + 1 == first && rows_[i] == row) {
        gaps_[i].m_last = last;
        return;
      }
      break;
    }
    gaps_.push_back({kind, key_.fields, first, last, row ? std::optional<AuditRow>(*row) : std::nullopt, std::move(detail)});
    rows_.push_back(row);
  }

  const AuditKey& key_;
  std::vector<Gap> gaps_;
  std::vector<const AuditRow*> rows_;  // the row of each gap, to merge only ranges of one row
};

std::string key_text(const KeyFields& k) {
  std::string out;
  for (const auto& [n, v] : k) out += (out.empty() ? "" : " ") + n + "=" + v;
  return out;
}

/// A key's value in JSON: a number when it is an integer, else the table's text.
nlohmann::json json_value(const std::string& v) {
  if (!v.empty() && v.size() < 19 && v.find_first_not_of("0123456789") == std::string::npos) return std::stoll(v);
  return v;
}

}  // namespace

std::string to_string(TableFormat f) { return name_of(kFormatNames, f); }

TableFormat table_format_from_string(const std::string& s) { return value_named(kFormatNames, s, "--format"); }

std::string to_string(GapKind k) {
  for (const auto& [kind, name] : kKindNames)
    if (kind == k) return name;
  return "?";
}

bool is_serving_gap(GapKind k) { return k == GapKind::kMiss || k == GapKind::kExtrapolated || k == GapKind::kIndexOverflow; }

IndexModel IndexModel::gemm(std::int64_t n, std::int64_t k) { return {1, 0, std::max(n, k), n * k}; }

IndexModel IndexModel::fused_moe(std::int64_t model_dim, std::int64_t inter_dim, std::int64_t expert, std::int64_t topk) {
  return {topk, expert, std::max(model_dim, inter_dim), 0};
}

std::int64_t IndexModel::first_overflow_m(std::int64_t block_m) const {
  if (fixed_elems >= kIndexLimit) return 1;
  TUNETAB_ASSERT(row_elems > 0 && rows_per_m > 0, "an index model has rows of some width");
  const std::int64_t rows = (kIndexLimit + row_elems - 1) / row_elems;  // the fewest rows that reach the limit
  const std::int64_t padding = pad_blocks * block_m;
  if (padding >= rows) return 1;
  return std::max<std::int64_t>(1, (rows - padding + rows_per_m - 1) / rows_per_m);
}

std::string AuditRow::where() const { return line ? source + ":" + std::to_string(line) : source; }

std::size_t GapReport::count(GapKind k) const {
  return static_cast<std::size_t>(std::count_if(gaps.begin(), gaps.end(), [&](const Gap& g) { return g.kind == k; }));
}

bool GapReport::has_serving_gaps() const {
  return std::any_of(gaps.begin(), gaps.end(), [](const Gap& g) { return is_serving_gap(g.kind); });
}

GapOptions GapOptions::from(const profile::Envelope& env) {
  GapOptions o;
  o.gfx = env.gfx;
  o.cu_num = env.cu_num;
  o.quant = env.quant;
  return o;
}

std::vector<AuditRow> read_rows(TableFormat format, const std::vector<std::string>& paths, GapOptions& options) {
  std::vector<AuditRow> rows;
  std::set<std::string> devices;
  for (const auto& path : paths) {
    if (format == TableFormat::kAiterFmoe) {
      for (const auto& r : read_aiter_fmoe(path)) rows.push_back(fmoe_row(r, path, options));
    } else if (is_aiter(format)) {
      for (const auto& r : read_aiter_gemm(path, gemm_quant(format))) rows.push_back(gemm_row(format, r, path, options));
    } else {
      const VllmMoeFile file = read_vllm_moe_json(path);
      devices.insert(file.selector.device_name);
      // NOTE: vLLM builds a dict from the file, so the last of a repeated batch size is the one it uses.
      for (auto c = file.configs.rbegin(); c != file.configs.rend(); ++c) rows.push_back(vllm_row(file, *c));
    }
  }
  if (format == TableFormat::kVllmMoeJson && options.device_name.empty()) {
    if (devices.size() != 1) {
      std::string names;
      for (const auto& d : devices) names += (names.empty() ? "" : ", ") + d;
      throw_input("--device-name: the tables name several devices (" + names + "); say which one the deployment runs on");
    }
    options.device_name = *devices.begin();
  }
  return rows;
}

std::vector<AuditKey> matrix_keys(TableFormat format, const profile::Matrix& matrix, const GapOptions& options) {
  std::vector<AuditKey> keys;
  if (is_fmoe(format)) {
    for (const auto& e : matrix.fmoe) {
      const auto& k = e.key;
      const KeyFields fields = format == TableFormat::kAiterFmoe ? aiter_key(format, options.gfx, options.cu_num, k.fields())
                                                                 : vllm_key(vllm_selector(k.expert, k.inter_dim, options));
      keys.push_back({fields, e.domain, IndexModel::fused_moe(k.model_dim, k.inter_dim, k.expert, k.topk)});
    }
    return keys;
  }
  for (const auto& e : matrix.gemm) {
    if (e.key.quant != gemm_quant(format)) continue;
    keys.push_back({aiter_key(format, options.gfx, options.cu_num, profile::aiter_gemm_fields(e.key, matrix.envelope)), e.domain,
                    IndexModel::gemm(e.key.n, e.key.k)});
  }
  return keys;
}

std::vector<AuditKey> csv_keys(TableFormat format, const std::string& path, const GapOptions& options,
                               std::int64_t default_m_max) {
  const csv::Table t = csv::read_file(path);
  const std::vector<std::string> columns = key_csv_columns(format);
  for (std::size_t c = 1; c < columns.size(); ++c) t.column(columns[c]);
  const bool has_m = t.has_column(columns[0]);
  std::vector<AuditKey> keys;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const std::string where = path + ":" + std::to_string(t.line_of_row[i]);
    for (const auto& c : size_columns(format))
      if (csv::to_int(t, i, c) <= 0) throw_input(where + ": column '" + c + "': expected a positive integer");
    std::vector<std::string> values;
    for (std::size_t c = 1; c < columns.size(); ++c) values.push_back(aiter_key_field(t, i, columns[c]));
    const std::int64_t m = has_m ? csv::to_int(t, i, columns[0]) : default_m_max;
    if (m <= 0) throw_input(where + ": column '" + columns[0] + "': expected a positive integer");
    const KeyFields fields = is_aiter(format) ? aiter_key(format, options.gfx, options.cu_num, values)
                                              : vllm_key(vllm_selector(std::stoll(values[0]), std::stoll(values[1]), options));
    const auto [it, fresh] = index.emplace(key_string(fields), keys.size());
    if (!fresh) {
      keys[it->second].domain.last = std::max(keys[it->second].domain.last, m);
      continue;
    }
    std::optional<IndexModel> model;
    if (is_aiter(format)) model = index_model(format, fields);  // vLLM's key has no hidden size or topk
    keys.push_back({fields, profile::MDomain{1, m}, model});
  }
  return keys;
}

GapReport find_gaps(TableFormat format, const std::vector<AuditKey>& keys, const std::vector<AuditRow>& rows,
                    const GapOptions& options) {
  GapReport report;
  report.keys = keys.size();
  report.rows = rows.size();
  // The rows the lookup sees per key, the first of a repeated key and M serving (AITER keeps the first).
  std::map<std::string, const AuditRow*> first;
  std::map<std::string, std::map<std::int64_t, const AuditRow*>> exact, any_act;
  const char* wildcard = wildcard_field(format);
  std::vector<Gap> defects;
  for (const auto& r : rows) {
    check_row(format, r, options, defects);
    const std::string ks = key_string(r.key);
    const auto [seen, fresh] = first.emplace(ks + "_tag=" + r.tag + '\x1f' + std::to_string(r.m), &r);
    if (!fresh) {
      const AuditRow& kept = *seen->second;
      const bool same = kept.rest == r.rest;
      defects.push_back(defect(same ? GapKind::kDuplicate : GapKind::kConflict, r,
                               r.where() + ": repeats the key and M of " + kept.where() +
                                   (same ? " field for field" : " with other values") + "; the first serves"));
      continue;
    }
    if (!r.serves) continue;
    exact[ks].emplace(r.m, &r);
    if (wildcard) any_act[wildcard_key(r.key, wildcard)].emplace(r.m, &r);
  }

  for (const auto& key : keys) {
    TUNETAB_ASSERT(key.domain.first >= 1 && key.domain.first <= key.domain.last,
                   "an M domain is a non-empty range of positive M");
    std::map<std::int64_t, const AuditRow*> served = exact[key_string(key.fields)];
    // NOTE: AITER retries an M without a row under the key with act_type disabled: any activation's row serves.
    if (wildcard)
      for (const auto& [m, r] : any_act[wildcard_key(key.fields, wildcard)]) served.emplace(m, r);
    std::set<std::int64_t> ms;
    for (const auto& [m, r] : served) ms.insert(m);
    const auto rule = rule_for(format, key.fields);
    KeyGaps gaps(key);
    for (std::int64_t m = key.domain.first;;) {
      const auto row = rule.lookup(m, ms);
      const std::int64_t last = std::min(rule.constant_until(m, ms), key.domain.last);
      gaps.serve(m, last, row ? served.at(*row) : nullptr);
      if (last == key.domain.last) break;
      m = last + 1;
    }
    auto found = gaps.take();
    if (found.empty()) ++report.complete_keys;
    report.gaps.insert(report.gaps.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  }
  report.gaps.insert(report.gaps.end(), std::make_move_iterator(defects.begin()), std::make_move_iterator(defects.end()));
  return report;
}

std::string to_text(const GapReport& report) {
  std::ostringstream os;
  for (const auto& g : report.gaps) {
    const std::string range =
        g.m_first == g.m_last ? std::to_string(g.m_first) : std::to_string(g.m_first) + ".." + std::to_string(g.m_last);
    char head[64];
    std::snprintf(head, sizeof(head), "%-17s M %-15s ", to_string(g.kind).c_str(), range.c_str());
    os << head << key_text(g.key) << ": " << g.detail << "\n";
  }
  os << "summary: " << report.keys << " keys, " << report.complete_keys << " complete; " << report.rows << " rows;";
  for (const auto& [kind, name] : kKindNames)
    os << " " << name << " " << report.count(kind) << (kind == GapKind::kIndexOverflow ? ";" : "");
  os << "\n";
  return os.str();
}

nlohmann::json to_json(const GapReport& report) {
  nlohmann::json gaps = nlohmann::json::array();
  for (const auto& g : report.gaps) {
    nlohmann::json key = nlohmann::json::object();
    for (const auto& [n, v] : g.key) key[n] = json_value(v);
    nlohmann::json gap = {
        {"key", key}, {"m_first", g.m_first}, {"m_last", g.m_last}, {"kind", to_string(g.kind)}, {"detail", g.detail}};
    if (g.row) {
      gap["row"] = {{"m", g.row->m}, {"source", g.row->source}};
      if (g.row->line) gap["row"]["line"] = g.row->line;
    }
    gaps.push_back(std::move(gap));
  }
  nlohmann::json summary = {{"keys", report.keys}, {"complete_keys", report.complete_keys}, {"rows", report.rows}};
  for (const auto& [kind, name] : kKindNames) summary[name] = report.count(kind);
  return {{"gaps", gaps}, {"summary", summary}};
}

std::string aiter_untuned_csv(TableFormat format, const GapReport& report) {
  if (!is_aiter(format)) throw_input("--emit-untuned: " + to_string(format) + " has no untuned CSV; it is for AITER's tables");
  std::ostringstream os;
  csv::write_row(os, aiter_columns(format));
  std::set<std::vector<std::string>> written;
  for (const auto& g : report.gaps) {
    if (g.kind != GapKind::kMiss) continue;
    for (const auto& b : rule_for(format, g.key).buckets({g.m_first, g.m_last})) {
      std::vector<std::string> row = {std::to_string(b.m)};
      for (std::size_t i = 2; i < g.key.size(); ++i) row.push_back(g.key[i].second);  // after gfx and cu_num
      if (written.insert(row).second) csv::write_row(os, row);
    }
  }
  return os.str();
}

}  // namespace tunetab::exporters
