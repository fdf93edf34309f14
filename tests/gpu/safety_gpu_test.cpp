// GPU tests of the safety engine (label gpu; skipped without a device): every planted fault is caught with
// its disposition while the run carries on, the good candidates still give a complete certified table,
// a rerun retries nothing, `verify` re-validates the table, and one allocation serves every smaller M.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "db/store.h"
#include "exporters/aiter_bf16_gemm.h"
#include "exporters/certificate.h"
#include "kernels/gemm/gemm.h"
#include "tuner/family_ops.h"
#include "tuner/hip/runtime.h"
#include "tuner/jit/compiler.h"
#include "tuner/runner.h"
#include "tuner/safety/certify.h"
#include "tuner/safety/coverage.h"
#include "tuner/safety/executor.h"
#include "tuner/safety/planted.h"

using namespace tunetab;
namespace fs = std::filesystem;

namespace {

bool have_gpu(std::string* why) {
  // NOTE: counted in a worker, like the tune below: this process stays off the GPU until the last test.
  return safety::probe_devices(true, why) > 0;
}

bool matches(const std::string& disposition_and_detail, const std::string& expected) {
  const std::string d = disposition_and_detail.substr(0, disposition_and_detail.find(':'));
  return ("|" + expected + "|").find("|" + d + "|") != std::string::npos;
}

}  // namespace

// Runs first in this binary; its workers are fresh processes (tests/test_main.cpp serves them).
TEST(SafetyGpu, PlantedFaultsAreCaughtWhileTheRunCompletesAndTheTableIsCertified) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no GPU: " << why;
  const fs::path dir = fs::temp_directory_path() / ("tunetab_safety_gpu_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  db::Store store((dir / "planted.db").string());
  TuneOptions opt;
  opt.progress = false;
  opt.command_line = "safety gpu test";
  opt.launch_timeout_ms = 2000;
  opt.final_top = 2;
  opt.m_max = 1048704;  // the big row's bucket (1048577..1048704) lies past 2^31 / N
  const FamilyOps& ops = family_ops(kPlantedFamily);
  // 300 is ragged for 64-row tiles (tail_store); 1048704 x 2048 reaches 2^31 output elements (wrap32).
  const std::vector<Json> problems = {gemm::Problem{300, 1024, 64}.to_json(), gemm::Problem{1048704, 2048, 8}.to_json()};
  const auto sums = tune(ops, problems, opt, store);
  ASSERT_EQ(sums.size(), 2u);
  const auto& ragged = sums[0];
  const auto& big = sums[1];
  auto disp = [](const ProblemSummary& s, PlantedFault f) {
    return s.config_dispositions.at("planted_" + planted_fault_name(f));
  };
  EXPECT_TRUE(matches(disp(ragged, PlantedFault::kTailStore), "out_of_bounds")) << disp(ragged, PlantedFault::kTailStore);
  EXPECT_TRUE(matches(disp(big, PlantedFault::kWrap32), "out_of_bounds|faulted")) << disp(big, PlantedFault::kWrap32);
  // The wrapped stores land 2^31 elements before C, in the leading guard sized for exactly that.
  if (matches(disp(big, PlantedFault::kWrap32), "out_of_bounds")) {
    EXPECT_NE(disp(big, PlantedFault::kWrap32).find("int32"), std::string::npos) << disp(big, PlantedFault::kWrap32);
  }
  EXPECT_TRUE(matches(disp(ragged, PlantedFault::kWrap32), "passed"));  // no wrap at 300 x 1024
  // Each row's finalists were timed over the Ms it serves (the big row: its bucket's first M, midpoint and own M).
  EXPECT_EQ(ragged.served_ms, "[300]");
  EXPECT_EQ(big.served_ms, "[1048577,1048640,1048704]");
  EXPECT_GT(big.served_us, 0.0);
  for (const auto* s : {&ragged, &big}) {
    EXPECT_TRUE(matches(disp(*s, PlantedFault::kHang), "timed_out")) << disp(*s, PlantedFault::kHang);
    EXPECT_TRUE(matches(disp(*s, PlantedFault::kSkipTile), "incorrect")) << disp(*s, PlantedFault::kSkipTile);
    EXPECT_TRUE(matches(disp(*s, PlantedFault::kWrong), "incorrect")) << disp(*s, PlantedFault::kWrong);
    EXPECT_TRUE(matches(disp(*s, PlantedFault::kNone), "passed")) << disp(*s, PlantedFault::kNone);
    // The run carried on: good candidates passed and one of them passed coverage for the row.
    EXPECT_FALSE(s->covered_config.empty()) << s->key;
    EXPECT_EQ(s->covered_config.find("planted_") == 0 && s->covered_config != "planted_none", false) << s->covered_config;
  }
  // Certified export: every row, every served M.
  const std::string table = (dir / "planted.csv").string();
  const auto best = store.covered_results(kPlantedFamily);
  ASSERT_EQ(best.size(), 2u);
  std::ostringstream text;
  exporters::write_aiter_bf16_gemm(text, exporters::aiter_bf16_gemm_rows(best));
  const auto cert = safety::certify(ops, best, opt.rule, opt.m_max, table, "aiter-bf16-gemm", text.str());
  std::ofstream(table) << text.str();
  exporters::write_certificate(exporters::certificate_path_for(table), cert);
  const auto back = exporters::read_certificate(exporters::certificate_path_for(table));
  ASSERT_EQ(back.rows.size(), 2u);
  EXPECT_EQ(back.rows[1].served, (std::vector<safety::MRange>{{1048577, 1048704}}));
  EXPECT_EQ(back.rows[1].index_bits, 64);
  EXPECT_GT(back.rows[1].sampled.size(), 4u);
  EXPECT_EQ(back.rows[0].served, (std::vector<safety::MRange>{{300, 300}}));

  // A rerun resumes: every candidate is stored (faulted and hung ones quarantined), nothing runs again.
  const auto before = store.disposition_counts();
  const auto coverage_before = store.coverage_counts();
  tune(ops, problems, opt, store);
  EXPECT_EQ(store.disposition_counts(), before);
  EXPECT_EQ(store.coverage_counts(), coverage_before);

  // A stored verdict stands only for the code it judged. Export takes a row only where its coverage ran the
  // code its result timed; a rerun judges again a result and coverage whose keys are not the current code's
  // (as after a template edit) and exports the row only then.
  auto count = [&](const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(store.handle(), sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    const std::int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n;
  };
  const std::string covered = "(SELECT id FROM configs WHERE name = '" + ragged.covered_config + "')";
  auto make_stale = [&](const char* table) {
    const std::string sql = std::string("UPDATE ") + table + " SET code_key = 'stale' WHERE config_id = " + covered;
    ASSERT_EQ(sqlite3_exec(store.handle(), sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  };
  make_stale("coverage");
  EXPECT_LT(store.covered_results(kPlantedFamily).size(), 2u);  // coverage of other code admits no row
  make_stale("results");  // both on the old code: the store alone cannot tell, the rerun does
  tune(ops, problems, opt, store);
  EXPECT_EQ(count("SELECT COUNT(*) FROM results WHERE code_key = 'stale'"), 0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM coverage WHERE code_key = 'stale'"), 0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM results WHERE config_id = " + covered + " AND run_id = (SELECT MAX(id) FROM runs)"), 2);
  EXPECT_EQ(store.covered_results(kPlantedFamily).size(), 2u);

  // verify re-runs the certificate's validation on this device.
  safety::VerifyOptions v;
  v.table = table;
  v.cert = exporters::certificate_path_for(table);
  v.launch_timeout_ms = 2000;
  v.progress = false;
  EXPECT_EQ(safety::verify_table(v), 0);
  fs::remove_all(dir);
}

TEST(SafetyGpu, OneAllocationServesEverySmallerMAndCatchesStoresPastIt) {
  std::string why;
  if (!have_gpu(&why)) GTEST_SKIP() << "no GPU: " << why;
  const DeviceFacts facts = open_device(0);
  jit::Compiler compiler({facts.arch, {}});
  const FamilyOps& ops = family_ops(kPlantedFamily);
  auto load = [&](const std::string& config) {
    const auto rec = compiler.compile(ops.kernels(config, 32)[0]);
    EXPECT_TRUE(rec.ok) << rec.log;
    return std::make_unique<Module>(rec.binary, rec.lowered_name);
  };
  const Json p = gemm::Problem{256, 320, 72}.to_json();
  auto c = ops.make_case(p, 256, 5, 1, 0);
  Stream s;
  const auto good = load("m64n64k32_w32x32_s2_simt_v8_sk1");
  const auto tail = load("planted_tail_store");
  for (std::int64_t m : {1, 17, 63, 64, 65, 129, 200, 255, 256}) {
    const auto ok = c->validate("m64n64k32_w32x32_s2_simt_v8_sk1", {good.get()}, m, s, 5000);
    EXPECT_EQ(ok.disposition, db::Disposition::kPassed) << "M=" << m << ": " << ok.detail;
    const auto bad = c->validate("planted_tail_store", {tail.get()}, m, s, 5000);
    if (m % 64 == 0) {
      EXPECT_EQ(bad.disposition, db::Disposition::kPassed) << "M=" << m << ": " << bad.detail;
    } else {
      EXPECT_EQ(bad.disposition, db::Disposition::kOutOfBounds) << "M=" << m;
      EXPECT_NE(bad.detail.find("C: "), std::string::npos) << bad.detail;
    }
  }
}
