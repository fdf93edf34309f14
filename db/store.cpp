#include "db/store.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <sqlite3.h>

#include <string_view>

#include "tuner/error.h"

namespace tunetab {
std::string_view embedded_schema();
}

namespace tunetab::db {

namespace {

/// RAII prepared statement; bind() takes 1-based positions in order.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      TUNETAB_THROW(kInfra, "sqlite prepare failed: " + std::string(sqlite3_errmsg(db)) + " in: " + sql);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(std::int64_t v) { check(sqlite3_bind_int64(stmt_, ++pos_, v)); return *this; }
  Statement& bind(int v) { return bind(static_cast<std::int64_t>(v)); }
  Statement& bind(const std::string& v) { check(sqlite3_bind_text(stmt_, ++pos_, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT)); return *this; }
  Statement& bind(const char* v) { return bind(std::string(v)); }
  Statement& bind(const std::optional<double>& v) {
    check(v ? sqlite3_bind_double(stmt_, ++pos_, *v) : sqlite3_bind_null(stmt_, ++pos_));
    return *this;
  }
  Statement& bind(const std::optional<std::int64_t>& v) {
    check(v ? sqlite3_bind_int64(stmt_, ++pos_, *v) : sqlite3_bind_null(stmt_, ++pos_));
    return *this;
  }
  Statement& bind_blob(const std::vector<char>& v) {
    check(v.empty() ? sqlite3_bind_null(stmt_, ++pos_)
                    : sqlite3_bind_blob(stmt_, ++pos_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  /// True while a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    TUNETAB_THROW(kInfra, "sqlite step failed: " + std::string(sqlite3_errmsg(db_)));
  }
  std::int64_t i64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double f64(int col) const { return sqlite3_column_double(stmt_, col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::optional<double> opt_f64(int col) const { return is_null(col) ? std::nullopt : std::optional<double>(f64(col)); }
  std::optional<std::int64_t> opt_i64(int col) const { return is_null(col) ? std::nullopt : std::optional<std::int64_t>(i64(col)); }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : "";
  }
  std::vector<char> blob(int col) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p ? std::vector<char>(p, p + sqlite3_column_bytes(stmt_, col)) : std::vector<char>{};
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) TUNETAB_THROW(kInfra, "sqlite bind failed: " + std::string(sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int pos_ = 0;
};

struct Migration {
  int version;
  std::string sql;
};

std::vector<Migration> migrations() {
  std::vector<Migration> out;
  const std::string text(embedded_schema());
  const std::string marker = "-- @migration ";
  std::size_t pos = text.find(marker);
  while (pos != std::string::npos) {
    const std::size_t eol = text.find('\n', pos);
    const int version = std::stoi(text.substr(pos + marker.size(), eol - pos - marker.size()));
    const std::size_t next = text.find(marker, eol);
    out.push_back({version, text.substr(eol + 1, next == std::string::npos ? std::string::npos : next - eol - 1)});
    pos = next;
  }
  return out;
}

const char* kResultColumns =
    "run_id, device_id, problem_id, config_id, disposition, detail, code_key, index_bits, rel_l2, max_abs, err_ratio, "
    "median_us, min_us, spread, iterations, timing_phase, tflops, bw_gbs, tolerance, proof_m, served_us, served_ms, screen_us";

ResultRecord read_result(const Statement& s, int c0) {
  ResultRecord r;
  r.run_id = s.i64(c0 + 0);
  r.device_id = s.i64(c0 + 1);
  r.problem_id = s.i64(c0 + 2);
  r.config_id = s.i64(c0 + 3);
  r.disposition = disposition_from_string(s.text(c0 + 4));
  r.detail = s.text(c0 + 5);
  r.code_key = s.text(c0 + 6);
  r.index_bits = static_cast<int>(s.i64(c0 + 7));
  r.rel_l2 = s.opt_f64(c0 + 8);
  r.max_abs = s.opt_f64(c0 + 9);
  r.err_ratio = s.opt_f64(c0 + 10);
  r.median_us = s.opt_f64(c0 + 11);
  r.min_us = s.opt_f64(c0 + 12);
  r.spread = s.opt_f64(c0 + 13);
  r.iterations = s.opt_i64(c0 + 14);
  r.timing_phase = s.text(c0 + 15);
  r.tflops = s.opt_f64(c0 + 16);
  r.bw_gbs = s.opt_f64(c0 + 17);
  r.tolerance = s.text(c0 + 18);
  r.proof_m = s.opt_i64(c0 + 19);
  r.served_us = s.opt_f64(c0 + 20);
  r.served_ms = s.text(c0 + 21);
  r.screen_us = s.opt_f64(c0 + 22);
  return r;
}

const char* kCoverageColumns =
    "run_id, device_id, problem_id, config_id, domain, disposition, detail, failed_m, ms_checked, served, sampled, "
    "every_m_limit, index_bits, proof_m, index_bounds, tolerance, code_key, code_hash, rel_l2, max_abs, err_ratio";

CoverageRecord read_coverage(const Statement& s, int c0) {
  CoverageRecord c;
  c.run_id = s.i64(c0 + 0);
  c.device_id = s.i64(c0 + 1);
  c.problem_id = s.i64(c0 + 2);
  c.config_id = s.i64(c0 + 3);
  c.domain = s.text(c0 + 4);
  c.disposition = disposition_from_string(s.text(c0 + 5));
  c.detail = s.text(c0 + 6);
  c.failed_m = s.opt_i64(c0 + 7);
  c.ms_checked = s.i64(c0 + 8);
  c.served = s.text(c0 + 9);
  c.sampled = s.text(c0 + 10);
  c.every_m_limit = s.i64(c0 + 11);
  c.index_bits = static_cast<int>(s.i64(c0 + 12));
  c.proof_m = s.i64(c0 + 13);
  c.index_bounds = s.text(c0 + 14);
  c.tolerance = s.text(c0 + 15);
  c.code_key = s.text(c0 + 16);
  c.code_hash = s.text(c0 + 17);
  c.rel_l2 = s.opt_f64(c0 + 18);
  c.max_abs = s.opt_f64(c0 + 19);
  c.err_ratio = s.opt_f64(c0 + 20);
  return c;
}

/// "a, b" as "t.a, t.b": a column list of one table under its alias in a join.
std::string prefixed(std::string_view columns, const char* alias) {
  std::string out = std::string(alias) + ".";
  for (char ch : columns) {
    out += ch;
    if (ch == ' ') out += std::string(alias) + ".";
  }
  return out;
}

std::size_t column_count(std::string_view columns) {
  return static_cast<std::size_t>(std::count(columns.begin(), columns.end(), ',')) + 1;
}

/// A BestRow's leading columns (its problem, config and device), then results' (aliased r); read_best_row reads them.
constexpr std::string_view kBestRowLeadColumns =
    "p.family, p.json, c.name, c.json, d.name, d.arch, d.cu_count, d.clock_khz, d.mem_clock_khz, d.l2_bytes, "
    "d.driver_version, d.runtime_version, d.compiler_version";
const std::string kBestRowColumns = std::string(kBestRowLeadColumns) + ", " + prefixed(kResultColumns, "r");
const int kBestRowLead = static_cast<int>(column_count(kBestRowLeadColumns));  // the columns before the result's

BestRow read_best_row(const Statement& s) {
  BestRow b;
  b.family = s.text(0);
  b.problem_json = s.text(1);
  b.config_name = s.text(2);
  b.config_json = s.text(3);
  b.device = DeviceRecord{s.text(4), s.text(5), static_cast<int>(s.i64(6)), static_cast<int>(s.i64(7)),
                          static_cast<int>(s.i64(8)), static_cast<int>(s.i64(9)), static_cast<int>(s.i64(10)),
                          static_cast<int>(s.i64(11)), s.text(12)};
  b.result = read_result(s, kBestRowLead);
  return b;
}

}  // namespace

std::string to_string(Disposition d) {
  switch (d) {
    case Disposition::kPassed: return "passed";
    case Disposition::kIncorrect: return "incorrect";
    case Disposition::kOutOfBounds: return "out_of_bounds";
    case Disposition::kFaulted: return "faulted";
    case Disposition::kTimedOut: return "timed_out";
    case Disposition::kCompileFailed: return "compile_failed";
    case Disposition::kLaunchFailed: return "launch_failed";
    case Disposition::kNotSupported: return "not_supported";
  }
  return "?";
}

Disposition disposition_from_string(const std::string& s) {
  for (auto d : {Disposition::kPassed, Disposition::kIncorrect, Disposition::kOutOfBounds, Disposition::kFaulted,
                 Disposition::kTimedOut, Disposition::kCompileFailed, Disposition::kLaunchFailed, Disposition::kNotSupported})
    if (to_string(d) == s) return d;
  TUNETAB_THROW(kInfra, "unknown disposition '" + s + "' in database");
}

Store::Store(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw_input("database '" + path + "': cannot open: " + msg);
  }
  sqlite3_busy_timeout(db_, 10000);
  try {
    // NOTE: a file that is not SQLite fails on its first read, here; report it as the user's input.
    exec("PRAGMA foreign_keys = ON");
    if (path != ":memory:") exec("PRAGMA journal_mode = WAL");
    exec("PRAGMA synchronous = NORMAL");
    {
      Statement s(db_, "PRAGMA quick_check");
      if (s.step() && s.text(0) != "ok") throw_input("database '" + path + "' is corrupt: " + s.text(0));
    }
    migrate();
  } catch (const Error& e) {
    sqlite3_close(db_);
    db_ = nullptr;
    if (e.kind() == ErrorKind::kInput) throw;
    throw_input("database '" + path + "' is not a usable tunetab database: " + e.detail());
  }
}

Store::~Store() {
  if (db_) sqlite3_close(db_);
}

void Store::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown";
    sqlite3_free(err);
    TUNETAB_THROW(kInfra, "sqlite: " + msg);
  }
}

int Store::schema_version() const {
  Statement s(db_, "PRAGMA user_version");
  s.step();
  return static_cast<int>(s.i64(0));
}

int Store::latest_schema_version() { return migrations().empty() ? 0 : migrations().back().version; }

void Store::migrate() {
  const int current = schema_version();
  if (current > latest_schema_version())
    throw_input("database '" + path_ + "' has schema version " + std::to_string(current) +
                ", newer than this tunetab understands (" + std::to_string(latest_schema_version()) + ")");
  if (current == 0) {
    // A non-empty database without our version is someone else's file: refuse to write into it.
    Statement s(db_, "SELECT count(*) FROM sqlite_master");
    s.step();
    if (s.i64(0) != 0) throw_input("database '" + path_ + "' has tables but is not a tunetab database");
  }
  for (const Migration& m : migrations()) {
    if (m.version <= current) continue;
    Transaction t(*this);
    exec(m.sql);
    exec("PRAGMA user_version = " + std::to_string(m.version));
    t.commit();
  }
}

std::int64_t Store::upsert_device(const DeviceRecord& d) {
  Statement ins(db_, "INSERT OR IGNORE INTO devices (name, arch, cu_count, clock_khz, mem_clock_khz, l2_bytes, driver_version, "
                     "runtime_version, compiler_version) VALUES (?,?,?,?,?,?,?,?,?)");
  ins.bind(d.name).bind(d.arch).bind(d.cu_count).bind(d.clock_khz).bind(d.mem_clock_khz).bind(d.l2_bytes)
      .bind(d.driver_version).bind(d.runtime_version).bind(d.compiler_version);
  ins.step();
  Statement sel(db_, "SELECT id FROM devices WHERE name=? AND arch=? AND cu_count=? AND clock_khz=? AND mem_clock_khz=? AND "
                     "driver_version=? AND runtime_version=? AND compiler_version=?");
  sel.bind(d.name).bind(d.arch).bind(d.cu_count).bind(d.clock_khz).bind(d.mem_clock_khz).bind(d.driver_version)
      .bind(d.runtime_version).bind(d.compiler_version);
  TUNETAB_ASSERT(sel.step(), "device row vanished");
  return sel.i64(0);
}

std::int64_t Store::begin_run(const std::string& command, const std::string& version, std::int64_t device_id) {
  // Runs left 'running' by a killed process are marked so; their stored results stay valid.
  exec("UPDATE runs SET status='interrupted' WHERE status='running'");
  Statement s(db_, "INSERT INTO runs (command, tunetab_version, device_id) VALUES (?,?,?)");
  s.bind(command).bind(version);
  if (device_id) s.bind(device_id); else s.bind(std::optional<std::int64_t>{});
  s.step();
  return sqlite3_last_insert_rowid(db_);
}

void Store::finish_run(std::int64_t run_id, const std::string& status) {
  Statement s(db_, "UPDATE runs SET status=?, finished_at=strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id=?");
  s.bind(status).bind(run_id);
  s.step();
}

/// INSERT OR IGNORE then SELECT id, for the (family, <name column>) keyed tables.
static std::int64_t upsert_keyed(sqlite3* db, const std::string& table, const std::string& column,
                                 const std::string& family, const std::string& key, const std::string& json) {
  Statement ins(db, "INSERT OR IGNORE INTO " + table + " (family, " + column + ", json) VALUES (?,?,?)");
  ins.bind(family).bind(key).bind(json);
  ins.step();
  Statement sel(db, "SELECT id FROM " + table + " WHERE family=? AND " + column + "=?");
  sel.bind(family).bind(key);
  TUNETAB_ASSERT(sel.step(), table + " row vanished");
  return sel.i64(0);
}

std::int64_t Store::upsert_problem(const std::string& family, const std::string& key, const std::string& json) {
  return upsert_keyed(db_, "problems", "key", family, key, json);
}

std::int64_t Store::upsert_config(const std::string& family, const std::string& name, const std::string& json) {
  return upsert_keyed(db_, "configs", "name", family, name, json);
}

std::optional<CodeObjectRecord> Store::find_code_object(const std::string& key_hash) {
  Statement s(db_, "SELECT key_hash, key_text, family, name_expression, lowered_name, arch, compiler_version, "
                   "tunetab_version, ok, binary, log, compile_ms FROM code_objects WHERE key_hash=?");
  s.bind(key_hash);
  if (!s.step()) return std::nullopt;
  CodeObjectRecord c{s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5), s.text(6), s.text(7),
                     s.i64(8) != 0, s.blob(9), s.text(10), s.f64(11)};
  return c;
}

void Store::put_code_object(const CodeObjectRecord& c) {
  Statement s(db_, "INSERT OR REPLACE INTO code_objects (key_hash, key_text, family, name_expression, lowered_name, arch, "
                   "compiler_version, tunetab_version, ok, binary, log, compile_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(c.key_hash).bind(c.key_text).bind(c.family).bind(c.name_expression).bind(c.lowered_name).bind(c.arch)
      .bind(c.compiler_version).bind(c.tunetab_version).bind(c.ok ? 1 : 0).bind_blob(c.binary).bind(c.log);
  s.bind(std::optional<double>(c.compile_ms));
  s.step();
}

std::optional<ResultRecord> Store::find_result(std::int64_t device_id, std::int64_t problem_id, std::int64_t config_id,
                                               const std::string& version) {
  Statement s(db_, std::string("SELECT ") + kResultColumns +
                       " FROM results WHERE device_id=? AND problem_id=? AND config_id=? AND tunetab_version=?");
  s.bind(device_id).bind(problem_id).bind(config_id).bind(version);
  if (!s.step()) return std::nullopt;
  return read_result(s, 0);
}

void Store::put_result(const ResultRecord& r, const std::string& version) {
  Statement s(db_, std::string("INSERT OR REPLACE INTO results (") + kResultColumns +
                       ", tunetab_version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(r.run_id).bind(r.device_id).bind(r.problem_id).bind(r.config_id).bind(to_string(r.disposition)).bind(r.detail)
      .bind(r.code_key).bind(r.index_bits).bind(r.rel_l2).bind(r.max_abs).bind(r.err_ratio).bind(r.median_us)
      .bind(r.min_us).bind(r.spread).bind(r.iterations).bind(r.timing_phase).bind(r.tflops).bind(r.bw_gbs).bind(r.tolerance).bind(r.proof_m)
      .bind(r.served_us).bind(r.served_ms).bind(r.screen_us).bind(version);
  s.step();
}

int Store::demote_other_finals(std::int64_t device_id, std::int64_t problem_id, const std::string& version,
                               const std::string& served_ms) {
  Statement s(db_, "UPDATE results SET timing_phase='screen', served_us=NULL, served_ms='' "
                   "WHERE device_id=? AND problem_id=? AND tunetab_version=? AND timing_phase='final' AND served_ms<>?");
  s.bind(device_id).bind(problem_id).bind(version).bind(served_ms);
  s.step();
  return sqlite3_changes(db_);
}

std::vector<ResultRecord> Store::passed_results(std::int64_t device_id, std::int64_t problem_id, const std::string& version) {
  Statement s(db_, std::string("SELECT ") + kResultColumns +
                       " FROM results WHERE device_id=? AND problem_id=? AND tunetab_version=? AND disposition='passed' "
                       "ORDER BY median_us ASC");
  s.bind(device_id).bind(problem_id).bind(version);
  std::vector<ResultRecord> out;
  while (s.step()) out.push_back(read_result(s, 0));
  return out;
}

std::vector<std::size_t> row_order(const std::vector<ResultRecord>& passed) {
  // The served means are compared only when every final has one over the same sample.
  std::optional<std::string> sample;
  bool all_served = true;
  for (const auto& r : passed)
    if (r.timing_phase == "final") {
      if (r.served_ms.empty() || (sample && *sample != r.served_ms)) all_served = false;
      sample = r.served_ms;
    }
  all_served = all_served && sample.has_value();
  const double inf = std::numeric_limits<double>::infinity();
  const auto key = [&](const ResultRecord& r) {
    if (r.timing_phase == "final" && all_served) return r.served_us.value_or(inf);
    return r.median_us.value_or(inf);
  };
  std::vector<std::size_t> order(passed.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // NOTE: a total order (ties by the median, then the config), so that every caller picks the same row.
  std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
    const ResultRecord &a = passed[i], &b = passed[j];
    if ((a.timing_phase == "final") != (b.timing_phase == "final")) return a.timing_phase == "final";
    if (key(a) != key(b)) return key(a) < key(b);
    if (a.median_us.value_or(inf) != b.median_us.value_or(inf)) return a.median_us.value_or(inf) < b.median_us.value_or(inf);
    return a.config_id < b.config_id;
  });
  return order;
}

void rank_row(std::vector<ResultRecord>& passed) {
  std::vector<ResultRecord> ranked;
  ranked.reserve(passed.size());
  for (std::size_t i : row_order(passed)) ranked.push_back(std::move(passed[i]));
  passed = std::move(ranked);
}

std::vector<BestRow> Store::best_results(const std::string& family) {
  // The best passing result per (device, problem), as rank_row ranks them.
  Statement s(db_, "SELECT " + kBestRowColumns +
                       " FROM results r JOIN problems p ON p.id = r.problem_id JOIN configs c ON c.id = r.config_id "
                       "JOIN devices d ON d.id = r.device_id "
                       "WHERE p.family = ? AND r.disposition = 'passed' ORDER BY d.id, p.id, r.id");
  s.bind(family);
  std::vector<BestRow> all;
  while (s.step()) all.push_back(read_best_row(s));
  std::vector<BestRow> out;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    std::vector<ResultRecord> row;
    for (; j < all.size() && all[j].result.device_id == all[i].result.device_id &&
           all[j].result.problem_id == all[i].result.problem_id;
         ++j)
      row.push_back(all[j].result);
    out.push_back(std::move(all[i + row_order(row).front()]));
    i = j;
  }
  return out;
}

void Store::put_coverage(const CoverageRecord& c, const std::string& version) {
  Statement s(db_, std::string("INSERT OR REPLACE INTO coverage (") + kCoverageColumns +
                       ", tunetab_version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(c.run_id).bind(c.device_id).bind(c.problem_id).bind(c.config_id).bind(c.domain).bind(to_string(c.disposition))
      .bind(c.detail).bind(c.failed_m).bind(c.ms_checked).bind(c.served).bind(c.sampled).bind(c.every_m_limit)
      .bind(c.index_bits).bind(c.proof_m).bind(c.index_bounds).bind(c.tolerance).bind(c.code_key).bind(c.code_hash)
      .bind(c.rel_l2).bind(c.max_abs).bind(c.err_ratio).bind(version);
  s.step();
}

std::optional<CoverageRecord> Store::find_coverage(std::int64_t device_id, std::int64_t problem_id, std::int64_t config_id,
                                                   const std::string& version, const std::string& domain) {
  Statement s(db_, std::string("SELECT ") + kCoverageColumns +
                       " FROM coverage WHERE device_id=? AND problem_id=? AND config_id=? AND tunetab_version=? AND domain=?");
  s.bind(device_id).bind(problem_id).bind(config_id).bind(version).bind(domain);
  if (!s.step()) return std::nullopt;
  return read_coverage(s, 0);
}

std::vector<BestRow> Store::covered_results(const std::string& family) {
  Statement s(db_, "SELECT " + kBestRowColumns + ", " + prefixed(kCoverageColumns, "v") + " "
                       "FROM coverage v JOIN results r ON r.device_id = v.device_id AND r.problem_id = v.problem_id "
                       "AND r.config_id = v.config_id AND r.tunetab_version = v.tunetab_version "
                       "JOIN problems p ON p.id = v.problem_id JOIN configs c ON c.id = v.config_id JOIN devices d ON d.id = v.device_id "
                       "WHERE p.family = ? AND r.disposition = 'passed' AND v.id = ("
                       "  SELECT v2.id FROM coverage v2 JOIN results r2 ON r2.device_id = v2.device_id "
                       "  AND r2.problem_id = v2.problem_id AND r2.config_id = v2.config_id AND r2.tunetab_version = v2.tunetab_version "
                       "  WHERE v2.device_id = v.device_id AND v2.problem_id = v.problem_id AND v2.disposition = 'passed' "
                       "  AND r2.disposition = 'passed' AND v2.code_key = r2.code_key AND v2.domain NOT LIKE 'spot:%' "
                       "  ORDER BY v2.id DESC LIMIT 1) "
                       "ORDER BY d.id, p.id");
  s.bind(family);
  std::vector<BestRow> out;
  while (s.step()) {
    BestRow b = read_best_row(s);
    b.coverage = read_coverage(s, kBestRowLead + static_cast<int>(column_count(kResultColumns)));
    out.push_back(std::move(b));
  }
  return out;
}

std::string Store::config_name(std::int64_t config_id) {
  Statement s(db_, "SELECT name FROM configs WHERE id=?");
  s.bind(config_id);
  TUNETAB_ASSERT(s.step(), "no config with id " + std::to_string(config_id));
  return s.text(0);
}

std::vector<std::pair<std::string, std::int64_t>> Store::coverage_counts(std::int64_t run_id) {
  Statement s(db_, run_id ? "SELECT disposition, count(*) FROM coverage WHERE run_id=? GROUP BY disposition ORDER BY 1"
                          : "SELECT disposition, count(*) FROM coverage GROUP BY disposition ORDER BY 1");
  if (run_id) s.bind(run_id);
  std::vector<std::pair<std::string, std::int64_t>> out;
  while (s.step()) out.emplace_back(s.text(0), s.i64(1));
  return out;
}

std::vector<std::pair<std::string, std::int64_t>> Store::disposition_counts(std::int64_t run_id) {
  Statement s(db_, run_id ? "SELECT disposition, count(*) FROM results WHERE run_id=? GROUP BY disposition ORDER BY 1"
                          : "SELECT disposition, count(*) FROM results GROUP BY disposition ORDER BY 1");
  if (run_id) s.bind(run_id);
  std::vector<std::pair<std::string, std::int64_t>> out;
  while (s.step()) out.emplace_back(s.text(0), s.i64(1));
  return out;
}

std::vector<std::pair<std::string, std::int64_t>> Store::run_counts() {
  Statement s(db_, "SELECT status, count(*) FROM runs GROUP BY status ORDER BY 1");
  std::vector<std::pair<std::string, std::int64_t>> out;
  while (s.step()) out.emplace_back(s.text(0), s.i64(1));
  return out;
}

std::pair<std::int64_t, std::int64_t> Store::cache_counts() {
  Statement s(db_, "SELECT coalesce(sum(ok != 0), 0), coalesce(sum(ok = 0), 0) FROM code_objects");
  s.step();
  return {s.i64(0), s.i64(1)};
}

Transaction::Transaction(Store& s) : store_(s) { store_.exec("BEGIN IMMEDIATE"); }
Transaction::~Transaction() {
  if (!done_) sqlite3_exec(store_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
}
void Transaction::commit() {
  store_.exec("COMMIT");
  done_ = true;
}

}  // namespace tunetab::db
