// SQLite store: devices, runs, problems, configs, code objects and results. Knows nothing of HIP.
// Every write is a transaction; a killed run leaves the database consistent and a rerun skips what is stored.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace tunetab::db {

struct DeviceRecord {
  std::string name, arch;
  int cu_count = 0, clock_khz = 0, mem_clock_khz = 0, l2_bytes = 0, driver_version = 0, runtime_version = 0;
  std::string compiler_version;
};

struct CodeObjectRecord {
  std::string key_hash, key_text, family, name_expression, lowered_name, arch, compiler_version, tunetab_version;
  bool ok = false;
  std::vector<char> binary;
  std::string log;
  double compile_ms = 0;
};

enum class Disposition { kPassed, kIncorrect, kOutOfBounds, kFaulted, kTimedOut, kCompileFailed, kLaunchFailed, kNotSupported };
std::string to_string(Disposition d);
Disposition disposition_from_string(const std::string& s);

struct ResultRecord {
  std::int64_t run_id = 0, device_id = 0, problem_id = 0, config_id = 0;
  Disposition disposition = Disposition::kNotSupported;
  std::string detail, code_key;
  int index_bits = 0;
  std::optional<double> rel_l2, max_abs, err_ratio, median_us, min_us, spread, tflops, bw_gbs;
  std::optional<std::int64_t> iterations;
  std::string timing_phase;  // "screen" or "final"
  std::string tolerance;     // ToleranceSpec::to_json() the result was judged by
  std::optional<std::int64_t> proof_m;  // the M index_bits was proven for (the bucket's largest)
  // Final results: the median at each of a sample of the Ms the row serves (served_ms, JSON [M, ...], the row's M
  // included), averaged: what the row's choice ranks by. NULL with served_ms set: a sampled M does not support it.
  std::optional<double> served_us;
  std::string served_ms;
  // The screening median at the row's M, kept when a final re-time replaces median_us or the final phase quarantines
  // it (NULL for a final stored before schema 4). What a row's finalists are picked by (tuner/search.h).
  std::optional<double> screen_us;
};

/// Coverage validation of one (device, problem, config) over the Ms its row serves under one domain
/// (lookup rule, served ranges, every-M limit). Passed: every M checked passed, and the index proof holds.
struct CoverageRecord {
  std::int64_t run_id = 0, device_id = 0, problem_id = 0, config_id = 0;
  std::string domain;  // canonical text; a changed rule or row set is a new domain
  Disposition disposition = Disposition::kPassed;
  std::string detail;
  std::optional<std::int64_t> failed_m;
  std::int64_t ms_checked = 0;
  std::string served;   // JSON [[first, last], ...]
  std::string sampled;  // JSON [M, ...]: the Ms checked above every_m_limit
  std::int64_t every_m_limit = 0;
  int index_bits = 0;
  std::int64_t proof_m = 0;
  std::string index_bounds;  // JSON [{"buffer", "max_offset"}] at proof_m
  std::string tolerance;
  std::string code_key, code_hash;
  std::optional<double> rel_l2, max_abs, err_ratio;
};

/// One row of a best-per-problem query, joined with the problem, config and device it names.
struct BestRow {
  std::string family, problem_json, config_name, config_json;
  DeviceRecord device;
  ResultRecord result;
  std::optional<CoverageRecord> coverage;  // covered_results(): the coverage that admitted the row
};

/// Ranks one row's passing results, best first: final (re-timed) results ahead of screening ones; the finals by
/// their mean over the served sample (served_us; one a sampled M cannot run last) when every final of the row has
/// one over the same sample, else (results stored before the served timing, which a rerun does not re-measure, or
/// under another lookup rule) by the median at the row's M; screening results by their median. Ties go to the
/// lower median, then the lower config id.
void rank_row(std::vector<ResultRecord>& passed);
/// The same ranking as indices into `passed`, best first.
std::vector<std::size_t> row_order(const std::vector<ResultRecord>& passed);

class Transaction;

class Store {
 public:
  /// Opens (creating if needed) and migrates. A file that is not a tunetab database is an Input error.
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int schema_version() const;
  static int latest_schema_version();

  std::int64_t upsert_device(const DeviceRecord& d);
  std::int64_t begin_run(const std::string& command, const std::string& version, std::int64_t device_id);
  void finish_run(std::int64_t run_id, const std::string& status);
  std::int64_t upsert_problem(const std::string& family, const std::string& key, const std::string& json);
  std::int64_t upsert_config(const std::string& family, const std::string& name, const std::string& json);

  std::optional<CodeObjectRecord> find_code_object(const std::string& key_hash);
  void put_code_object(const CodeObjectRecord& c);

  std::optional<ResultRecord> find_result(std::int64_t device_id, std::int64_t problem_id, std::int64_t config_id,
                                          const std::string& version);
  void put_result(const ResultRecord& r, const std::string& version);

  /// Final results of a problem on a device whose served sample is not `served_ms` (stored before served timings, or
  /// over the Ms of another row set) become screening results: their median at the row's M stands, their served mean
  /// goes. A row's finals then share one sample, and its final phase re-times the fastest over the current one.
  /// Returns how many changed.
  int demote_other_finals(std::int64_t device_id, std::int64_t problem_id, const std::string& version, const std::string& served_ms);
  /// Passing results of a problem on a device, fastest first.
  std::vector<ResultRecord> passed_results(std::int64_t device_id, std::int64_t problem_id, const std::string& version);
  /// The fastest passing result of every (device, problem) of a family, final timings preferred.
  std::vector<BestRow> best_results(const std::string& family);
  void put_coverage(const CoverageRecord& c, const std::string& version);
  std::optional<CoverageRecord> find_coverage(std::int64_t device_id, std::int64_t problem_id, std::int64_t config_id,
                                              const std::string& version, const std::string& domain);
  /// Per (device, problem) of a family, the result whose coverage passed most recently on the code that result
  /// judged (equal code keys): the row export takes.
  std::vector<BestRow> covered_results(const std::string& family);
  std::string config_name(std::int64_t config_id);
  /// Counts of coverage records by disposition.
  std::vector<std::pair<std::string, std::int64_t>> coverage_counts(std::int64_t run_id = 0);
  /// Counts of results by disposition (for summaries).
  std::vector<std::pair<std::string, std::int64_t>> disposition_counts(std::int64_t run_id = 0);
  /// Counts of runs by status (running, finished, failed, interrupted).
  std::vector<std::pair<std::string, std::int64_t>> run_counts();
  /// The compile cache: code objects that compiled, and those that failed.
  std::pair<std::int64_t, std::int64_t> cache_counts();

  sqlite3* handle() const { return db_; }

 private:
  friend class Transaction;
  void exec(const std::string& sql);
  void migrate();
  sqlite3* db_ = nullptr;
  std::string path_;
};

/// BEGIN IMMEDIATE ... COMMIT; rolls back if destroyed before commit().
class Transaction {
 public:
  explicit Transaction(Store& s);
  ~Transaction();
  void commit();

 private:
  Store& store_;
  bool done_ = false;
};

}  // namespace tunetab::db
