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
};

/// One row of a best-per-problem query, joined with the problem, config and device it names.
struct BestRow {
  std::string family, problem_json, config_name, config_json;
  DeviceRecord device;
  ResultRecord result;
};

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

  /// Passing results of a problem on a device, fastest first.
  std::vector<ResultRecord> passed_results(std::int64_t device_id, std::int64_t problem_id, const std::string& version);
  /// The fastest passing result of every (device, problem) of a family, final timings preferred.
  std::vector<BestRow> best_results(const std::string& family);
  /// Counts of results by disposition (for summaries).
  std::vector<std::pair<std::string, std::int64_t>> disposition_counts(std::int64_t run_id = 0);

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
