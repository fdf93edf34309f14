#include "exporters/certificate.h"

#include <algorithm>

#include "tuner/error.h"
#include "tuner/text_file.h"

namespace tunetab::exporters {

const std::vector<std::string>& certificate_checks() {
  static const std::vector<std::string> checks = {"guard_bands", "poison", "reference_compare", "index_proof"};
  return checks;
}

namespace {

nlohmann::json ranges(const std::vector<profile::MDomain>& rs) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rs) j.push_back({r.first, r.last});
  return j;
}

/// Field access with errors that name the source and the path.
class Fields {
 public:
  Fields(const nlohmann::json& j, std::string source, std::string path) : j_(j), source_(std::move(source)), path_(std::move(path)) {
    if (!j_.is_object()) fail("", "expected an object");
  }
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw_input(source_ + ": " + path_ + (path_.empty() || field.empty() ? "" : ".") + field + ": " + what);
  }
  const nlohmann::json& at(const std::string& f) const {
    if (!j_.contains(f)) fail(f, "missing");
    return j_.at(f);
  }
  std::string str(const std::string& f) const {
    const auto& v = at(f);
    if (!v.is_string()) fail(f, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  std::int64_t i64(const std::string& f, std::int64_t min = 0) const {
    const auto& v = at(f);
    if (!v.is_number_integer() || v.get<std::int64_t>() < min)
      fail(f, "expected an integer >= " + std::to_string(min) + ", got " + v.dump());
    return v.get<std::int64_t>();
  }
  const nlohmann::json& obj(const std::string& f) const {
    const auto& v = at(f);
    if (!v.is_object()) fail(f, "expected an object, got " + v.dump());
    return v;
  }
  const nlohmann::json& arr(const std::string& f) const {
    const auto& v = at(f);
    if (!v.is_array()) fail(f, "expected an array, got " + v.dump());
    return v;
  }
  std::string where(const std::string& f) const { return source_ + ": " + path_ + (path_.empty() ? "" : ".") + f; }

 private:
  const nlohmann::json& j_;
  std::string source_, path_;
};

std::vector<profile::MDomain> ranges_from(const Fields& f, const std::string& field) {
  const auto& j = f.arr(field);
  std::vector<profile::MDomain> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& r = j[i];
    if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() || !r[1].is_number_integer() ||
        r[0].get<std::int64_t>() < 1 || r[0].get<std::int64_t>() > r[1].get<std::int64_t>())
      throw_input(f.where(field) + "[" + std::to_string(i) + "]: expected [first, last] with 1 <= first <= last, got " + r.dump());
    out.push_back({r[0].get<std::int64_t>(), r[1].get<std::int64_t>()});
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const Certificate& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : c.rows)
    rows.push_back({{"line", r.line},
                    {"family", r.family},
                    {"config", r.config},
                    {"kernel_name", r.kernel_name},
                    {"problem", r.problem},
                    {"served", ranges(r.served)},
                    {"validated", {{"every_m_up_to", r.every_m_limit}, {"sampled_above", r.sampled}, {"ms_checked", r.ms_checked}}},
                    {"checks", r.checks},
                    {"tolerance", r.tolerance},
                    {"index", {{"bits", r.index_bits}, {"proof_m", r.proof_m}, {"bounds", r.index_bounds}}},
                    {"code", {{"key", r.code_key}, {"hash", r.code_hash}}}});
  return {{"format", kCertificateFormat},
          {"version", kCertificateVersion},
          {"table", c.table},
          {"table_format", c.table_format},
          {"table_hash", c.table_hash},
          {"tunetab_version", c.tunetab_version},
          {"lookup_rule", c.lookup_rule},
          {"m_max", c.m_max},
          {"device", c.device},
          {"rows", rows}};
}

Certificate certificate_from_json(const nlohmann::json& j, const std::string& source) {
  const Fields top(j, source, "");
  if (top.str("format") != kCertificateFormat)
    top.fail("format", "expected \"" + std::string(kCertificateFormat) + "\", got \"" + top.str("format") + "\"");
  if (top.i64("version") != kCertificateVersion)
    top.fail("version", "this tunetab reads version " + std::to_string(kCertificateVersion));
  Certificate c;
  c.table = top.str("table");
  c.table_format = top.str("table_format");
  c.table_hash = top.str("table_hash");
  c.tunetab_version = top.str("tunetab_version");
  c.lookup_rule = top.str("lookup_rule");
  profile::rule_from_string(c.lookup_rule);
  c.m_max = top.i64("m_max", 1);
  c.device = top.obj("device");
  const auto& rows = top.arr("rows");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Fields f(rows[i], source, "rows[" + std::to_string(i) + "]");
    CertificateRow r;
    r.line = static_cast<int>(f.i64("line", 2));
    r.family = f.str("family");
    r.config = f.str("config");
    r.kernel_name = f.str("kernel_name");
    r.problem = f.obj("problem");
    r.served = ranges_from(f, "served");
    const Fields v(f.obj("validated"), source, "rows[" + std::to_string(i) + "].validated");
    r.every_m_limit = v.i64("every_m_up_to");
    for (const auto& m : v.arr("sampled_above")) {
      if (!m.is_number_integer() || m.get<std::int64_t>() <= r.every_m_limit)
        v.fail("sampled_above", "expected Ms above every_m_up_to, got " + m.dump());
      r.sampled.push_back(m.get<std::int64_t>());
    }
    r.ms_checked = v.i64("ms_checked", 1);
    for (const auto& ch : f.arr("checks")) {
      if (!ch.is_string()) f.fail("checks", "expected strings, got " + ch.dump());
      r.checks.push_back(ch.get<std::string>());
    }
    for (const auto& need : certificate_checks())
      if (std::find(r.checks.begin(), r.checks.end(), need) == r.checks.end()) f.fail("checks", "missing \"" + need + "\"");
    r.tolerance = f.obj("tolerance");
    const Fields ix(f.obj("index"), source, "rows[" + std::to_string(i) + "].index");
    r.index_bits = static_cast<int>(ix.i64("bits"));
    if (r.index_bits != 32 && r.index_bits != 64) ix.fail("bits", "expected 32 or 64");
    r.proof_m = ix.i64("proof_m", 1);
    r.index_bounds = ix.arr("bounds");
    for (const auto& s : r.served)
      if (s.last > r.proof_m) ix.fail("proof_m", "the row serves M up to " + std::to_string(s.last) + ", beyond the proof");
    const Fields code(f.obj("code"), source, "rows[" + std::to_string(i) + "].code");
    r.code_key = code.str("key");
    r.code_hash = code.str("hash");
    c.rows.push_back(std::move(r));
  }
  return c;
}

void write_certificate(const std::string& path, const Certificate& c) {
  write_text_file(path, to_json(c).dump(1) + "\n");
}

Certificate read_certificate(const std::string& path) {
  const std::string text = read_text_file(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw_input(path + ": malformed JSON: " + e.what());
  }
  return certificate_from_json(j, path);
}

std::string certificate_path_for(const std::string& table_path) { return table_path + ".cert.json"; }

}  // namespace tunetab::exporters
