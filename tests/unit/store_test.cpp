#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "db/store.h"
#include "tuner/error.h"

using namespace tunetab;
namespace fs = std::filesystem;

namespace {
fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("tunetab_test_" + std::to_string(::getpid()) + "_" + name);
}
db::DeviceRecord h200() { return {"NVIDIA H200", "sm_90a", 132, 1980000, 3201000, 60 << 20, 13000, 13000, "nvrtc 13.0"}; }
/// Stores a passing fused_moe result of `config` for (run, device, problem) with these timings; returns its config id.
std::int64_t put_timed(db::Store& s, std::int64_t run, std::int64_t dev, std::int64_t prob, const char* config, double median,
                       std::optional<double> served, const char* phase, const char* sample) {
  db::ResultRecord r;
  r.run_id = run;
  r.device_id = dev;
  r.problem_id = prob;
  r.config_id = s.upsert_config("fused_moe", config, "{}");
  r.disposition = db::Disposition::kPassed;
  r.median_us = median;
  r.min_us = median;
  r.spread = 0.01;
  r.tflops = 1;
  r.bw_gbs = 1;
  r.timing_phase = phase;
  r.served_ms = sample;
  r.served_us = served;
  s.put_result(r, "v");
  return r.config_id;
}
}  // namespace

TEST(Store, MigratesFreshDatabaseToLatestVersion) {
  db::Store s(":memory:");
  EXPECT_EQ(s.schema_version(), db::Store::latest_schema_version());
  EXPECT_GE(s.schema_version(), 1);
}

TEST(Store, UpsertsAreIdempotent) {
  db::Store s(":memory:");
  const auto d1 = s.upsert_device(h200());
  EXPECT_EQ(s.upsert_device(h200()), d1);
  auto other = h200();
  other.clock_khz = 1500000;  // a different clock is a different measurement context
  EXPECT_NE(s.upsert_device(other), d1);
  const auto p = s.upsert_problem("gemm_bf16", "k1", "{}");
  EXPECT_EQ(s.upsert_problem("gemm_bf16", "k1", "{}"), p);
  EXPECT_NE(s.upsert_problem("gemm_bf16", "k2", "{}"), p);
}

TEST(Store, ResultsSurviveReopenAndAreFoundForResume) {
  const fs::path path = temp_path("resume.db");
  fs::remove(path);
  std::int64_t dev, prob, cfg;
  {
    db::Store s(path.string());
    dev = s.upsert_device(h200());
    const auto run = s.begin_run("tune", "v", dev);
    prob = s.upsert_problem("gemm_bf16", "p", "{}");
    cfg = s.upsert_config("gemm_bf16", "c", "{}");
    db::ResultRecord r;
    r.run_id = run;
    r.device_id = dev;
    r.problem_id = prob;
    r.config_id = cfg;
    r.disposition = db::Disposition::kFaulted;
    r.detail = "illegal address";
    s.put_result(r, "v");
    // No finish_run: as if the process was killed.
  }
  {
    db::Store s(path.string());
    auto found = s.find_result(dev, prob, cfg, "v");
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->disposition, db::Disposition::kFaulted);
    EXPECT_EQ(found->detail, "illegal address");
    EXPECT_FALSE(s.find_result(dev, prob, cfg, "other-version").has_value());
    s.begin_run("tune", "v", dev);  // marks the killed run interrupted
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(s.handle(), "SELECT status FROM runs ORDER BY id", -1, &st, nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "interrupted");
    sqlite3_finalize(st);
  }
  fs::remove(path);
}

// A row's choice ranks final results by their mean over the served sample (served_us), not by the median at the
// row's M; one a sampled M could not run (served_ms set, served_us NULL) ranks last, even with the best median.
TEST(Store, BestResultRanksFinalsByTheirServedMean) {
  db::Store s(":memory:");
  const auto dev = s.upsert_device(h200());
  const auto run = s.begin_run("tune", "v", dev);
  const auto prob = s.upsert_problem("fused_moe", "p", "{\"m\":512}");
  auto put = [&](const char* name, double median, std::optional<double> served, const char* phase) {
    put_timed(s, run, dev, prob, name, median, served, phase, std::string(phase) == "final" ? "[257,384,512]" : "");
  };
  put("fast_at_512", 647.0, 560.0, "final");
  put("fast_over_bucket", 753.0, 512.0, "final");
  put("cannot_run_257", 600.0, std::nullopt, "final");
  put("screen_only", 100.0, std::nullopt, "screen");
  const auto best = s.best_results("fused_moe");
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].config_name, "fast_over_bucket");
  EXPECT_EQ(best[0].result.served_us, std::optional<double>(512.0));
  EXPECT_EQ(best[0].result.served_ms, "[257,384,512]");
  const auto back = s.find_result(dev, prob, s.upsert_config("fused_moe", "cannot_run_257", "{}"), "v");
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->served_us.has_value());
  EXPECT_EQ(back->served_ms, "[257,384,512]");
  EXPECT_EQ(*back->median_us, 600.0);
  // A row with a final stored before the served timing (no sample; a rerun does not re-measure it) ranks all of its
  // finals by their median at the row's M.
  std::vector<db::ResultRecord> row(2);
  row[0].timing_phase = row[1].timing_phase = "final";
  row[0].config_id = 1;
  row[0].median_us = 700.0;
  row[0].served_us = 500.0;
  row[0].served_ms = "[257,384,512]";
  row[1].config_id = 2;
  row[1].median_us = 650.0;
  db::rank_row(row);
  EXPECT_EQ(row.front().config_id, 2);
  row.front().served_ms = "[257,384,512]";  // now both have a sample: the served means rank them
  row.front().served_us = 520.0;
  db::rank_row(row);
  EXPECT_EQ(row.front().config_id, 1);
  // The sampled final first in the input, the legacy one second: still the medians.
  row[0].served_ms.clear();
  row[0].served_us.reset();
  std::swap(row[0], row[1]);
  db::rank_row(row);
  EXPECT_EQ(row.front().config_id, 2);  // 650 < 700
  // Samples over other Ms (another lookup rule) are not compared either.
  row[0].served_ms = "[257,384,512]";
  row[0].served_us = 520.0;
  row[1].served_ms = "[129,192,256]";
  row[1].served_us = 400.0;
  db::rank_row(row);
  EXPECT_EQ(row.front().config_id, 2);  // by the medians: 650 < 700, not 400 < 520
  // Finals a sampled M cannot run tie at the end: the lower median, then the lower config id, goes first.
  std::vector<db::ResultRecord> tied(3);
  for (int i = 0; i < 3; ++i) {
    tied[i].timing_phase = "final";
    tied[i].served_ms = "[257,384,512]";
    tied[i].config_id = 3 - i;
    tied[i].median_us = i == 0 ? 800.0 : 700.0;
  }
  db::rank_row(tied);
  EXPECT_EQ(tied[0].config_id, 1);
  EXPECT_EQ(tied[1].config_id, 2);
  EXPECT_EQ(tied[2].config_id, 3);
}

// The runner's final phase first demotes finals timed over another sample (none, or another row set's Ms): they keep
// their median as a screening time, and the row ranks the finals over the current sample first.
TEST(Store, FinalsOverOtherSamplesGoBackToScreening) {
  db::Store s(":memory:");
  const auto dev = s.upsert_device(h200());
  const auto run = s.begin_run("tune", "v", dev);
  const auto prob = s.upsert_problem("fused_moe", "p", "{\"m\":512}");
  const auto other = s.upsert_problem("fused_moe", "q", "{\"m\":256}");
  auto put = [&](std::int64_t problem, const char* name, double median, std::optional<double> served, const char* phase,
                 const char* sample) { return put_timed(s, run, dev, problem, name, median, served, phase, sample); };
  const auto current = put(prob, "current", 667.0, 526.0, "final", "[257,384,512]");
  const auto legacy = put(prob, "legacy", 665.0, std::nullopt, "final", "");
  const auto moved = put(prob, "moved", 600.0, 400.0, "final", "[481,496,512]");
  put(prob, "screened", 700.0, std::nullopt, "screen", "");
  put(other, "legacy", 300.0, std::nullopt, "final", "");  // another problem: untouched
  // Before: the legacy final makes the row rank every final by its median.
  auto row = s.passed_results(dev, prob, "v");
  db::rank_row(row);
  EXPECT_EQ(row.front().config_id, moved);
  EXPECT_EQ(s.demote_other_finals(dev, prob, "v", "[257,384,512]"), 2);
  for (const auto id : {legacy, moved}) {
    const auto r = s.find_result(dev, prob, id, "v");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->timing_phase, "screen");
    EXPECT_EQ(r->served_ms, "");
    EXPECT_FALSE(r->served_us.has_value());
  }
  EXPECT_EQ(*s.find_result(dev, prob, moved, "v")->median_us, 600.0);
  row = s.passed_results(dev, prob, "v");
  db::rank_row(row);
  EXPECT_EQ(row.front().config_id, current);  // the only final over the current sample, ahead of faster medians
  EXPECT_EQ(s.find_result(dev, other, legacy, "v")->timing_phase, "final");
  EXPECT_EQ(s.demote_other_finals(dev, prob, "v", "[257,384,512]"), 0);  // nothing left to demote
}

// A final re-time replaces median_us and keeps screen_us, the screening median the final phase picks finalists by
// (tuner/search.h, screening_time); so does a quarantine.
TEST(Store, AResultKeepsItsScreeningMedianThroughItsFinalAndAQuarantine) {
  db::Store s(":memory:");
  const auto dev = s.upsert_device(h200());
  const auto run = s.begin_run("tune", "v", dev);
  const auto prob = s.upsert_problem("fused_moe", "p", "{\"m\":512}");
  for (const char* name : {"retimed", "quarantined"}) {
    const auto id = put_timed(s, run, dev, prob, name, 10.0, std::nullopt, "screen", "");
    auto r = *s.find_result(dev, prob, id, "v");
    EXPECT_FALSE(r.screen_us.has_value());
    r.screen_us = r.median_us;  // as the runner's screening stores it
    r.median_us = 11.5;
    r.timing_phase = "final";
    if (std::string(name) == "quarantined") r.disposition = db::Disposition::kIncorrect;
    s.put_result(r, "v");
    const auto back = *s.find_result(dev, prob, id, "v");
    EXPECT_EQ(back.screen_us, std::optional<double>(10.0)) << name;
    EXPECT_EQ(back.median_us, std::optional<double>(11.5)) << name;
  }
}

// A schema-3 database (no screen_us) opened by this tunetab: its screening results get their median as their screening
// median, its finals none (unknown), and every result is kept.
TEST(Store, SchemaFourGivesOldScreeningResultsTheirScreeningMedian) {
  const fs::path path = temp_path("schema3.db");
  fs::remove(path);
  std::int64_t dev, prob, screened, retimed;
  {
    db::Store s(path.string());
    dev = s.upsert_device(h200());
    const auto run = s.begin_run("tune", "v", dev);
    prob = s.upsert_problem("fused_moe", "p", "{\"m\":512}");
    screened = put_timed(s, run, dev, prob, "screened", 10.5, std::nullopt, "screen", "");
    retimed = put_timed(s, run, dev, prob, "final", 11.5, 11.0, "final", "[512]");
  }
  {  // back to schema 3, as a database written before migration 4
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.string().c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE results DROP COLUMN screen_us; PRAGMA user_version = 3;", nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  {
    db::Store s(path.string());
    EXPECT_EQ(s.schema_version(), db::Store::latest_schema_version());
    const auto a = s.find_result(dev, prob, screened, "v");
    const auto b = s.find_result(dev, prob, retimed, "v");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->screen_us, std::optional<double>(10.5));
    EXPECT_FALSE(b->screen_us.has_value());
    EXPECT_EQ(b->median_us, std::optional<double>(11.5));
    EXPECT_EQ(b->served_us, std::optional<double>(11.0));
  }
  fs::remove(path);
}

TEST(Store, TransactionRollsBackWhenNotCommitted) {
  db::Store s(":memory:");
  {
    db::Transaction t(s);
    s.upsert_problem("gemm_bf16", "gone", "{}");
  }
  const auto id = s.upsert_problem("gemm_bf16", "kept", "{}");
  EXPECT_EQ(id, 1);  // the rolled-back row never took id 1
}

TEST(Store, GarbageFileIsAnInputErrorNamingIt) {
  const fs::path path = temp_path("garbage.db");
  {
    std::ofstream f(path, std::ios::binary);
    for (int i = 0; i < 4096; ++i) f << static_cast<char>((i * 7919) & 0xff);
  }
  try {
    db::Store s(path.string());
    FAIL() << "opened a garbage file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  fs::remove(path);
}

TEST(Store, ForeignSqliteDatabaseIsRefused) {
  const fs::path path = temp_path("foreign.db");
  fs::remove(path);
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE other(x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_THROW(db::Store s(path.string()), Error);
  fs::remove(path);
}

TEST(Store, CodeObjectsRoundTrip) {
  db::Store s(":memory:");
  db::CodeObjectRecord c{"h", "key text", "gemm_bf16", "tt::k<1>", "_Z1kILi1EEvv", "sm_90a", "nvrtc 13.0", "0.1.0",
                         true, {'\x7f', 'E', 'L', 'F', '\0', '\x01'}, "", 12.5};
  s.put_code_object(c);
  auto got = s.find_code_object("h");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->binary, c.binary);
  EXPECT_EQ(got->lowered_name, c.lowered_name);
  EXPECT_DOUBLE_EQ(got->compile_ms, 12.5);
  EXPECT_FALSE(s.find_code_object("nope"));
}

TEST(Store, CountsRunsByStatusAndTheCacheByOutcome) {
  // `tunetab db`'s summary lines.
  db::Store s(":memory:");
  EXPECT_TRUE(s.run_counts().empty());
  EXPECT_EQ(s.cache_counts(), (std::pair<std::int64_t, std::int64_t>{0, 0}));
  const auto dev = s.upsert_device(h200());
  s.finish_run(s.begin_run("tune a", "v", dev), "finished");
  s.finish_run(s.begin_run("tune b", "v", dev), "finished");
  s.finish_run(s.begin_run("tune c", "v", dev), "interrupted");
  s.begin_run("tune d", "v", dev);  // still running (a kill leaves it so)
  const std::vector<std::pair<std::string, std::int64_t>> runs = {{"finished", 2}, {"interrupted", 1}, {"running", 1}};
  EXPECT_EQ(s.run_counts(), runs);
  for (const char* key : {"a", "b", "c"}) {
    db::CodeObjectRecord c{key, "key text", "gemm_bf16", "tt::k<1>", "", "sm_90a", "nvrtc 13.0", "0.1.0", key[0] != 'b', {}, "", 1.0};
    s.put_code_object(c);
  }
  EXPECT_EQ(s.cache_counts(), (std::pair<std::int64_t, std::int64_t>{2, 1}));
}
