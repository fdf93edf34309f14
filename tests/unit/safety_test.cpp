// The safety engine without a GPU: served ranges and coverage Ms, index-width proofs, guard-band scanning,
// worker restart and resume with crashing workers, the coverage store, and the certificate format.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "db/store.h"
#include "exporters/certificate.h"
#include "kernels/gemm/gemm.h"
#include "test_files.h"
#include "tuner/family_ops.h"
#include "tuner/hip/runtime.h"
#include "tuner/safety/certify.h"
#include "tuner/safety/coverage.h"
#include "tuner/safety/executor.h"
#include "tuner/safety/planted.h"
#include "tuner/worker.h"

using namespace tunetab;
using safety::MRange;
namespace fs = std::filesystem;

namespace {

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("tunetab_safety_" + std::to_string(::getpid()) + "_" + name);
}

bool in_ranges(const std::vector<MRange>& rs, std::int64_t m) {
  for (const auto& r : rs)
    if (m >= r.first && m <= r.last) return true;
  return false;
}

}  // namespace

TEST(Coverage, ServedRangesMatchTheConsumersLookupMByM) {
  std::mt19937_64 rng(7);
  for (auto kind : {profile::RuleKind::kAiterGemm, profile::RuleKind::kAiterFmoe, profile::RuleKind::kExact,
                    profile::RuleKind::kVllmNearest}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::set<std::int64_t> rows;
      const int count = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < count; ++i) rows.insert(1 + static_cast<std::int64_t>(rng() % 9000));
      if (trial % 3 == 0) rows.insert(8192);
      const std::int64_t n = trial % 2 ? 3072 : 6144;
      const std::int64_t m_max = 12000;
      const auto rule = profile::LookupRule::make(kind, n, m_max);
      const auto served = safety::served_ranges(rule, rows, m_max);
      for (std::int64_t m = 1; m <= m_max; ++m) {
        const auto want = rule.lookup(m, rows);
        int holders = 0;
        for (const auto& [row, rs] : served)
          if (in_ranges(rs, m)) {
            ++holders;
            ASSERT_TRUE(want && *want == row) << profile::to_string(kind) << " M=" << m << " is served by " << row;
          }
        ASSERT_EQ(holders, want ? 1 : 0) << profile::to_string(kind) << " M=" << m;
      }
    }
  }
}

TEST(Coverage, AiterGemmRowsServeTheirPaddedBuckets) {
  const auto rule = profile::LookupRule::aiter_gemm(3072);
  const auto served = safety::served_ranges(rule, {1, 16, 64, 304, 336, 1024, 4096}, 32768);
  EXPECT_EQ(served.at(4096), (std::vector<MRange>{{2049, 4096}}));
  EXPECT_EQ(served.at(1024), (std::vector<MRange>{{513, 1024}}));
  // Above 256 the fine padding steps by 32: 304 and 336 are hit only by their own M.
  EXPECT_EQ(served.at(304), (std::vector<MRange>{{304, 304}}));
  EXPECT_EQ(served.at(64), (std::vector<MRange>{{33, 64}}));
  EXPECT_EQ(served.at(16), (std::vector<MRange>{{9, 16}}));
  EXPECT_EQ(safety::largest_served(served.at(336), 336), 336);
  // N > 4096: the 8192 row serves everything above 4096, up to the domain's end.
  const auto wide = safety::served_ranges(profile::LookupRule::aiter_gemm(6144), {8192}, 100000);
  EXPECT_EQ(wide.at(8192), (std::vector<MRange>{{4097, 100000}}));
}

// The Ms a row's final candidates are timed at: the smallest it serves, the midpoint, and its own; never above it.
TEST(Coverage, TimingSampleSpansTheBucketUpToTheRow) {
  const auto served = safety::served_ranges(profile::LookupRule::aiter_gemm(3072), {1, 16, 304, 1024}, 32768);
  EXPECT_EQ(safety::timing_sample(served.at(1024), 1024), (std::vector<std::int64_t>{513, 768, 1024}));
  EXPECT_EQ(safety::timing_sample(served.at(16), 16), (std::vector<std::int64_t>{9, 12, 16}));
  EXPECT_EQ(safety::timing_sample(served.at(304), 304), (std::vector<std::int64_t>{304}));
  EXPECT_EQ(safety::timing_sample(served.at(1), 1), (std::vector<std::int64_t>{1}));
  // The last row also serves the Ms above it; the tuning case holds M <= the row, so the sample stops there.
  EXPECT_EQ(safety::timing_sample({{4097, 100000}}, 8192), (std::vector<std::int64_t>{4097, 6144, 8192}));
  // A midpoint the row does not serve is left out.
  EXPECT_EQ(safety::timing_sample({{10, 12}, {30, 32}}, 32), (std::vector<std::int64_t>{10, 32}));
  EXPECT_EQ(safety::timing_sample({}, 64), (std::vector<std::int64_t>{64}));
  // More points: evenly spaced from the smallest served M to the row (the fused MoE's nine over 257..512).
  EXPECT_EQ(safety::timing_sample(served.at(1024), 1024, 9),
            (std::vector<std::int64_t>{513, 576, 640, 704, 768, 832, 896, 960, 1024}));
  EXPECT_EQ(safety::timing_sample({{257, 512}}, 512, 9), (std::vector<std::int64_t>{257, 288, 320, 352, 384, 416, 448, 480, 512}));
  EXPECT_EQ(safety::timing_sample({{9, 16}}, 16, 9), (std::vector<std::int64_t>{9, 10, 11, 12, 13, 14, 15, 16}));
  EXPECT_EQ(safety::timing_sample({{257, 512}}, 512, 1), (std::vector<std::int64_t>{512}));
}

// The fused MoE's time steps inside a bucket (experts crossing a block_m multiple): its rows are timed at nine Ms;
// the GEMMs keep three.
TEST(Coverage, TimingPointsByFamily) {
  EXPECT_EQ(family_ops("fused_moe").timing_points(), 9);
  EXPECT_EQ(family_ops("gemm_fp8_blockscale").timing_points(), 3);
  EXPECT_EQ(family_ops("gemm_bf16").timing_points(), 3);
  // ... and twice as many finalists (its screening at the row's M alone filters for the bucket less well).
  EXPECT_EQ(family_ops("fused_moe").finalists(4), 8u);
  EXPECT_EQ(family_ops("gemm_fp8_blockscale").finalists(4), 4u);
  EXPECT_EQ(family_ops("gemm_bf16").finalists(1), 1u);
}

TEST(Coverage, EveryMUpToTheLimitThenTheEdgesAbove) {
  const std::vector<MRange> ranges = {{3000, 5000}, {70000, 1100000}};
  const std::int64_t limit = 4096, n = 2048;
  const auto set = safety::coverage_ms(ranges, limit, {n, 8});
  // Every M up to the limit, nothing else below it.
  std::vector<std::int64_t> want;
  for (std::int64_t m = 3000; m <= 4096; ++m) want.push_back(m);
  EXPECT_EQ(set.every, want);
  const std::set<std::int64_t> s(set.sampled.begin(), set.sampled.end());
  EXPECT_TRUE(std::is_sorted(set.sampled.begin(), set.sampled.end()));
  for (std::int64_t m : set.sampled) {
    EXPECT_GT(m, limit);
    EXPECT_TRUE(in_ranges(ranges, m)) << m;
  }
  for (std::int64_t m : {4097LL, 5000LL, 70000LL, 1100000LL, 131072LL, 262144LL, 524288LL, 1048576LL}) EXPECT_TRUE(s.count(m)) << m;
  // Straddling 2^31 / N: the first M whose C offsets reach 2^31 and its neighbours.
  for (std::int64_t m : {1048575LL, 1048576LL, 1048577LL}) EXPECT_TRUE(s.count(m)) << m;
  // Tile edges around a power of two, and primes.
  EXPECT_TRUE(s.count(131071) && s.count(131073));
  int primes = 0;
  for (std::int64_t m : set.sampled) primes += safety::is_prime(m);
  EXPECT_GE(primes, 3);
  EXPECT_TRUE(safety::is_prime(4099) && !safety::is_prime(4097) && safety::is_prime(2) && !safety::is_prime(1));
  // A domain below the limit is validated M by M, with no sample.
  const auto small = safety::coverage_ms({{9, 16}}, 16384, {3072});
  EXPECT_EQ(small.every.size(), 8u);
  EXPECT_TRUE(small.sampled.empty());
}

TEST(Coverage, RangesCoverAndJsonRoundTrip) {
  EXPECT_TRUE(safety::ranges_cover({{1, 10}, {11, 20}}, {{5, 15}}));
  EXPECT_FALSE(safety::ranges_cover({{1, 10}, {12, 20}}, {{5, 15}}));
  EXPECT_TRUE(safety::ranges_cover({{1, 100}}, {{3, 4}, {50, 60}}));
  const std::vector<MRange> r = {{1, 1}, {9, 16}};
  EXPECT_EQ(safety::ranges_from_json(safety::ranges_json(r), "x"), r);
  tunetab::testing::expect_input_error([] { safety::ranges_from_json(Json::parse("[[5, 2]]"), "cert.json: rows[0].served"); },
                           "cert.json: rows[0].served[0]: expected [first, last]");
  EXPECT_NE(safety::domain_text(profile::RuleKind::kAiterGemm, 16384, r),
            safety::domain_text(profile::RuleKind::kAiterGemm, 16384, {{1, 1}, {9, 15}}));
}

TEST(IndexProof, WidthIsProvenForTheBucketsLargestM) {
  const FamilyOps& ops = family_ops("gemm_bf16");
  const Json p = gemm::Problem{1024, 2048, 8}.to_json();
  const std::string c = "m128n128k32_w64x64_s4_mma_v8_sk1";
  // C = M x 2048: offsets reach 2^31 exactly when M * 2048 - 1 > 2^31 - 1.
  EXPECT_EQ(ops.proven_index_bits(p, c, 1048576), 32);
  EXPECT_EQ(ops.proven_index_bits(p, c, 1048577), 64);
  const Target t = Target::from_arch("sm_90a");
  for (const auto& cand : ops.plan(p, t, 1048577)) {
    EXPECT_EQ(cand.index_bits, 64) << cand.config;
    EXPECT_EQ(cand.proof_m, 1048577);
  }
  for (const auto& cand : ops.plan(p, t, 1024)) EXPECT_EQ(cand.index_bits, 32) << cand.config;
  // Split-K's fp32 workspace (splits x M x N) needs 64 bits sooner than C.
  EXPECT_EQ(ops.proven_index_bits(p, "m128n128k32_w64x64_s4_mma_v8_sk4", 300000), 64);
  EXPECT_EQ(ops.proven_index_bits(p, "m128n128k32_w64x64_s4_mma_v8_sk1", 300000), 32);
  // Random bounds: the width is 64 exactly when some offset exceeds INT32_MAX.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200; ++i) {
    std::vector<BufferBound> b;
    bool big = false;
    for (int j = 0; j < 3; ++j) {
      const std::int64_t off = static_cast<std::int64_t>(rng() % (std::int64_t{1} << 33));
      big |= off > 0x7fffffff;
      b.push_back({"b" + std::to_string(j), off});
    }
    EXPECT_EQ(required_index_bits(b), big ? 64 : 32);
  }
  EXPECT_EQ(safety::row_widths(ops.index_bounds(ops.with_m(p, 1), c), ops.index_bounds(ops.with_m(p, 2), c)),
            (std::vector<std::int64_t>{8, 2048}));
}

TEST(GuardBands, RandomCorruptionIsFoundWithSideAndFirstOffset) {
  std::mt19937_64 rng(3);
  const unsigned char canary = DeviceBuffer::kCanary;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t guard = 256 * (1 + rng() % 8), payload = 1 + rng() % 100000;
    std::vector<unsigned char> before(guard, canary), after(guard, canary);
    const int hits = static_cast<int>(rng() % 4);
    std::int64_t first_after = -1, last_before = 1;
    for (int h = 0; h < hits; ++h) {
      const bool in_after = rng() % 2;
      const std::size_t i = rng() % guard;
      const unsigned char v = static_cast<unsigned char>(rng() % 255);
      if (v == canary) continue;
      if (in_after) {
        after[i] = v;
        if (first_after < 0 || static_cast<std::int64_t>(i) < first_after) first_after = static_cast<std::int64_t>(i);
      } else {
        before[i] = v;
        const std::int64_t off = -static_cast<std::int64_t>(guard) + static_cast<std::int64_t>(i);
        if (last_before > 0 || off < last_before) last_before = off;
      }
    }
    const auto v = find_guard_violation(before, after, payload, canary);
    if (first_after < 0 && last_before > 0) {
      EXPECT_FALSE(v);
      continue;
    }
    ASSERT_TRUE(v);
    if (first_after >= 0) {
      EXPECT_EQ(v->side, "after");
      EXPECT_EQ(v->offset, static_cast<std::int64_t>(payload) + first_after);
    } else {
      EXPECT_EQ(v->side, "before");
      EXPECT_EQ(v->offset, last_before);
    }
  }
  // The window after a smaller M's rows is scanned the same way (no leading band).
  std::vector<unsigned char> window(512, canary);
  window[17] = 0;
  const auto w = find_guard_violation({}, window, 4096, canary);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->offset, 4096 + 17);
}

namespace {

/// A sweep as the runner does it: stored candidates are skipped (resume; a failed one is quarantined),
/// the rest run in a worker; a crash or hang is stored as faulted / timed_out and the sweep goes on.
int sweep(db::Store& s, Worker& w, const std::vector<std::string>& plan, int kill_after = -1) {
  const auto dev = s.upsert_device({"fake", "sm_90a", 1, 1, 1, 1, 1, 1, "x"});
  const auto run = s.begin_run("sweep", "v", dev);
  const auto prob = s.upsert_problem("gemm_bf16", "p", "{}");
  int calls = 0, stored = 0;
  for (const auto& what : plan) {
    const auto cfg = s.upsert_config("gemm_bf16", what + std::to_string(&what - plan.data()), "{}");
    if (s.find_result(dev, prob, cfg, "v")) continue;
    ++calls;
    const auto reply = w.call({{"do", what}}, 300);
    db::ResultRecord r;
    r.run_id = run;
    r.device_id = dev;
    r.problem_id = prob;
    r.config_id = cfg;
    r.disposition = reply.status == WorkerReply::Status::kCrashed    ? db::Disposition::kFaulted
                    : reply.status == WorkerReply::Status::kTimedOut ? db::Disposition::kTimedOut
                                                                     : db::Disposition::kPassed;
    r.detail = reply.detail;
    s.put_result(r, "v");
    if (++stored == kill_after) ::kill(::getpid(), SIGKILL);  // the whole run dies mid-sweep
  }
  s.finish_run(run, "finished");
  return calls;
}

nlohmann::json crashy(const nlohmann::json& req) {
  const std::string what = req.at("do");
  if (what == "abort") std::abort();
  if (what == "segv") ::raise(SIGSEGV);
  if (what == "hang") ::pause();
  return {{"ok", true}};
}

}  // namespace

TEST(WorkerResume, CrashesAreStoredQuarantinedAndAKilledRunResumes) {
  const fs::path path = temp_path("sweep.db");
  fs::remove(path);
  const std::vector<std::string> plan = {"ok", "abort", "ok", "hang", "segv", "ok", "ok", "abort", "ok"};
  // A first run that is killed (SIGKILL, no cleanup) after 4 stored results.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    db::Store s(path.string());
    Worker w(crashy);
    sweep(s, w, plan, 4);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  db::Store s(path.string());
  EXPECT_EQ(s.disposition_counts(), (std::vector<std::pair<std::string, std::int64_t>>{{"faulted", 1}, {"passed", 2}, {"timed_out", 1}}));
  // The rerun resumes: only the 5 unstored candidates run; crashes and hangs cost a worker each.
  Worker w(crashy);
  EXPECT_EQ(sweep(s, w, plan), 5);
  EXPECT_EQ(w.restarts(), 2);  // segv, abort
  EXPECT_EQ(s.disposition_counts(), (std::vector<std::pair<std::string, std::int64_t>>{{"faulted", 3}, {"passed", 5}, {"timed_out", 1}}));
  // A third run finds everything stored: nothing runs, the quarantined candidates are never retried.
  EXPECT_EQ(sweep(s, w, plan), 0);
  fs::remove(path);
}

TEST(Executor, WithoutADeviceSaysSoFromEitherSide) {
  std::string why;
  if (device_count(&why) > 0) GTEST_SKIP() << "a GPU is present";
  std::string isolated_why;
  EXPECT_EQ(safety::probe_devices(true, &isolated_why), 0);
  EXPECT_FALSE(isolated_why.empty());
  safety::Executor ex(true, 0);
  const auto facts = ex.facts();
  EXPECT_EQ(facts.at("count"), 0);
  EXPECT_TRUE(ex.isolated());
}

TEST(CoverageStore, CoveredResultsAreTheRowsExportTakes) {
  db::Store s(":memory:");
  const auto dev = s.upsert_device({"H200", "sm_90a", 132, 1, 1, 1, 1, 1, "nvrtc"});
  const auto run = s.begin_run("t", "v", dev);
  const auto prob = s.upsert_problem("gemm_bf16", "m=16", gemm::Problem{16, 64, 64}.to_json().dump());
  std::vector<std::int64_t> cfgs;
  for (const char* c : {"fast", "mid", "slow"}) cfgs.push_back(s.upsert_config("gemm_bf16", c, "{\"split_k\": 1}"));
  for (std::size_t i = 0; i < cfgs.size(); ++i) {
    db::ResultRecord r;
    r.run_id = run;
    r.device_id = dev;
    r.problem_id = prob;
    r.config_id = cfgs[i];
    r.disposition = db::Disposition::kPassed;
    r.median_us = 1.0 + static_cast<double>(i);
    r.timing_phase = "final";
    r.tolerance = kToleranceBf16.to_json().dump();
    r.proof_m = 16;
    r.index_bits = 32;
    r.code_key = "k";
    s.put_result(r, "v");
  }
  EXPECT_TRUE(s.covered_results("gemm_bf16").empty());  // nothing passed coverage yet: nothing to export
  auto cover = [&](std::int64_t cfg, db::Disposition d, const std::string& code_key = "k") {
    db::CoverageRecord c;
    c.run_id = run;
    c.device_id = dev;
    c.problem_id = prob;
    c.config_id = cfg;
    c.domain = "d1";
    c.disposition = d;
    c.failed_m = d == db::Disposition::kPassed ? std::nullopt : std::optional<std::int64_t>(13);
    c.ms_checked = 8;
    c.served = "[[9,16]]";
    c.sampled = "[]";
    c.every_m_limit = 16384;
    c.index_bits = 32;
    c.proof_m = 16;
    c.index_bounds = "[]";
    c.tolerance = kToleranceBf16.to_json().dump();
    c.code_key = code_key;
    c.code_hash = "h";
    s.put_coverage(c, "v");
  };
  cover(cfgs[0], db::Disposition::kOutOfBounds);  // the fastest fails coverage: the next-best is taken
  cover(cfgs[1], db::Disposition::kPassed);
  // A later pass on other code than the result judged (the template changed between them) admits nothing.
  cover(cfgs[2], db::Disposition::kPassed, "stale");
  const auto rows = s.covered_results("gemm_bf16");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].config_name, "mid");
  ASSERT_TRUE(rows[0].coverage);
  EXPECT_EQ(rows[0].coverage->served, "[[9,16]]");
  EXPECT_EQ(rows[0].result.tolerance, kToleranceBf16.to_json().dump());
  const auto failed = s.find_coverage(dev, prob, cfgs[0], "v", "d1");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->disposition, db::Disposition::kOutOfBounds);
  EXPECT_EQ(failed->failed_m, 13);
  EXPECT_FALSE(s.find_coverage(dev, prob, cfgs[0], "v", "d2"));  // another domain is validated afresh
  EXPECT_EQ(s.coverage_counts(), (std::vector<std::pair<std::string, std::int64_t>>{{"out_of_bounds", 1}, {"passed", 2}}));
  // A spot check's stored verdict (tune --profile's skewed-routing checks, a few Ms) is found again by its domain,
  // and never admits a row to the export, even a later one on the row's code.
  auto spot = *s.find_coverage(dev, prob, cfgs[1], "v", "d1");
  spot.config_id = cfgs[0];
  spot.domain = "spot:[9,16]";
  s.put_coverage(spot, "v");
  ASSERT_TRUE(s.find_coverage(dev, prob, cfgs[0], "v", "spot:[9,16]"));
  const auto after = s.covered_results("gemm_bf16");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].config_name, "mid");
  EXPECT_EQ(after[0].coverage->domain, "d1");
}

namespace {
exporters::Certificate sample_certificate() {
  exporters::Certificate c;
  c.table = "bf16_tuned_gemm.csv";
  c.table_format = "aiter-bf16-gemm";
  c.table_hash = "abc";
  c.tunetab_version = TUNETAB_VERSION;
  c.lookup_rule = "aiter-gemm";
  c.m_max = 32768;
  c.device = {{"name", "NVIDIA H200"}, {"arch", "sm_90a"}, {"cu_count", 132}};
  exporters::CertificateRow r;
  r.line = 2;
  r.family = "gemm_bf16";
  r.config = "m128n128k32_w64x64_s4_mma_v8_sk1";
  r.kernel_name = "tunetab_gemm_bf16_" + r.config;
  r.problem = gemm::Problem{4096, 3072, 1536}.to_json();
  r.served = {{2049, 4096}};
  r.every_m_limit = 16384;
  r.ms_checked = 2048;
  r.checks = exporters::certificate_checks();
  r.tolerance = kToleranceBf16.to_json();
  r.index_bits = 32;
  r.proof_m = 4096;
  r.index_bounds = Json::array({{{"buffer", "C"}, {"max_offset", 4096 * 3072 - 1}}});
  r.code_key = "key";
  r.code_hash = "hash";
  c.rows.push_back(r);
  r.line = 3;
  r.served = {{20000, 40000}};
  r.sampled = {20000, 32768, 40000};
  r.proof_m = 40000;
  c.rows.push_back(r);
  return c;
}
}  // namespace

TEST(Certificate, WritesAndReadsBack) {
  const auto c = sample_certificate();
  const fs::path path = temp_path("t.csv.cert.json");
  exporters::write_certificate(path.string(), c);
  const auto back = exporters::read_certificate(path.string());
  EXPECT_EQ(exporters::to_json(back), exporters::to_json(c));
  EXPECT_EQ(back.rows[1].sampled, (std::vector<std::int64_t>{20000, 32768, 40000}));
  EXPECT_EQ(back.rows[0].served, (std::vector<MRange>{{2049, 4096}}));
  EXPECT_EQ(exporters::certificate_path_for("out/bf16_tuned_gemm.csv"), "out/bf16_tuned_gemm.csv.cert.json");
  fs::remove(path);
}

TEST(Certificate, SchemaErrorsNameTheFieldPath) {
  auto broken = [](const std::function<void(Json&)>& edit, const std::string& want) {
    Json j = exporters::to_json(sample_certificate());
    edit(j);
    tunetab::testing::expect_input_error([&] { exporters::certificate_from_json(j, "t.cert.json"); }, want);
  };
  broken([](Json& j) { j["format"] = "other"; }, "t.cert.json: format: expected \"tunetab-certificate\"");
  broken([](Json& j) { j.erase("m_max"); }, "t.cert.json: m_max: missing");
  broken([](Json& j) { j["lookup_rule"] = "nearest"; }, "lookup rule 'nearest'");
  broken([](Json& j) { j["rows"][1]["served"] = Json::parse("[[5, 1]]"); }, "rows[1].served[0]: expected [first, last]");
  broken([](Json& j) { j["rows"][0]["index"]["bits"] = 16; }, "rows[0].index.bits: expected 32 or 64");
  broken([](Json& j) { j["rows"][1]["validated"]["sampled_above"] = Json::array({5}); }, "rows[1].validated.sampled_above");
  broken([](Json& j) { j["rows"][0]["checks"] = Json::array({"poison"}); }, "rows[0].checks: missing \"guard_bands\"");
  broken([](Json& j) { j["rows"][1]["index"]["proof_m"] = 30000; }, "rows[1].index.proof_m: the row serves M up to 40000");
  broken([](Json& j) { j["rows"][0].erase("code"); }, "rows[0].code: missing");
  const fs::path bad = temp_path("bad.cert.json");
  std::ofstream(bad) << "{\"format\": ";
  tunetab::testing::expect_input_error([&] { exporters::read_certificate(bad.string()); }, "bad.cert.json: malformed JSON");
  fs::remove(bad);
}

TEST(Families, AdapterRegistryAndPlantedFaultsStayOutOfTheRealSpace) {
  EXPECT_EQ(family_names(), (std::vector<std::string>{"gemm_bf16", "gemm_bf16_planted", "gemm_fp8_blockscale", "fused_moe"}));
  // The FP8 family came in through one adapter file: its problems, tolerance and index proof.
  const FamilyOps& fp8 = family_ops("gemm_fp8_blockscale");
  EXPECT_EQ(fp8.tolerance(fp8.with_m(Json{{"m", 1}, {"n", 256}, {"k", 256}}, 64)), kToleranceFp8Block128);
  EXPECT_FALSE(fp8.configs().empty());
  EXPECT_EQ(fp8.proven_index_bits(Json{{"m", 1}, {"n", 2048}, {"k", 256}}, fp8.configs().front(), 1048577), 64);
  tunetab::testing::expect_input_error([] { family_ops("gemm_fp9"); }, "family 'gemm_fp9': expected one of gemm_bf16");
  const FamilyOps& gemm_ops = family_ops("gemm_bf16");
  EXPECT_EQ(gemm_ops.configs().size(), gemm::enumerate().size());
  for (const auto& c : gemm_ops.configs()) EXPECT_EQ(c.find("planted"), std::string::npos);
  const FamilyOps& planted = family_ops(kPlantedFamily);
  std::set<std::string> names;
  for (const auto& c : planted.configs()) names.insert(c);
  for (PlantedFault f : planted_faults()) {
    const std::string c = "planted_" + planted_fault_name(f);
    EXPECT_TRUE(names.count(c)) << c;
    EXPECT_NE(planted.kernels(c, 64)[0].name_expression.find("planted_gemm<" + std::to_string(static_cast<int>(f)) + ", long long>"),
              std::string::npos);
  }
  EXPECT_EQ(expected_disposition(PlantedFault::kHang), "timed_out");
  EXPECT_EQ(safety::family_and_config("tunetab_gemm_bf16_planted_planted_hang"),
            (std::pair<std::string, std::string>{"gemm_bf16_planted", "planted_hang"}));
  EXPECT_EQ(safety::family_and_config("tunetab_gemm_bf16_m16n64k64_w16x16_s4_mma_v8_sk1"),
            (std::pair<std::string, std::string>{"gemm_bf16", "m16n64k64_w16x16_s4_mma_v8_sk1"}));
  tunetab::testing::expect_input_error([] { safety::family_and_config("aiter_gemm_a16w16"); }, "is not a tunetab kernel");
  // The adapter's problem and tolerance views.
  const Json p = gemm::Problem{300, 1000, 512}.to_json();
  EXPECT_EQ(gemm_ops.key(p), "m=300,n=1000,k=512,in=bf16,out=bf16,bias=0");
  EXPECT_EQ(gemm_ops.group_key(p), gemm_ops.group_key(gemm_ops.with_m(p, 7)));
  EXPECT_EQ(gemm_ops.tolerance(p), kToleranceBf16);
  EXPECT_EQ(tolerance_named("fp8_block128"), kToleranceFp8Block128);
  EXPECT_EQ(tolerance_named("fp8_block128_2stage"), kToleranceFp8TwoStage);
  // A stored verdict under another tolerance: passes hold when judged at least as strictly, failures when
  // judged at least as loosely; other verdicts always.
  const std::string strict = kToleranceBf16.to_json().dump(), loose = kToleranceFp8Block128.to_json().dump();
  EXPECT_TRUE(verdict_holds(strict, kToleranceBf16, "passed"));
  EXPECT_TRUE(verdict_holds(strict, kToleranceBf16, "incorrect"));
  EXPECT_TRUE(verdict_holds(strict, kToleranceFp8Block128, "passed"));
  EXPECT_FALSE(verdict_holds(strict, kToleranceFp8Block128, "incorrect"));
  EXPECT_FALSE(verdict_holds(loose, kToleranceBf16, "passed"));
  EXPECT_TRUE(verdict_holds(loose, kToleranceBf16, "incorrect"));
  EXPECT_TRUE(verdict_holds(loose, kToleranceBf16, "out_of_bounds"));
  EXPECT_FALSE(verdict_holds("not json", kToleranceBf16, "passed"));
  tunetab::testing::expect_input_error([] { tolerance_named("int4"); }, "tolerance 'int4'");
  tunetab::testing::expect_input_error([&] { gemm_ops.key(Json::parse("{\"m\": 1}")); }, "gemm problem");
}

TEST(Comparison, PrefixOfTheCapacityReferenceJudgesASmallerM) {
  // Rows are independent: a smaller M's reference is the first rows of the capacity's.
  const std::int64_t n = 24, k = 40, cap = 37, m = 11;
  const auto a = gemm::random_bf16(cap * k, 1), b = gemm::random_bf16(n * k, 2);
  const auto full = gemm::reference_gemm(a, b, cap, n, k);
  const auto small = gemm::reference_gemm(std::vector<std::uint16_t>(a.begin(), a.begin() + m * k), b, m, n, k);
  std::vector<std::uint16_t> out(small.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = gemm::float_to_bf16(small[i]);
  EXPECT_TRUE(gemm::compare(out.data(), full.data(), out.size(), {}).passed);
  out[5] = 0xffff;  // NaN never passes
  const auto bad = gemm::compare(out.data(), full.data(), out.size(), {});
  EXPECT_FALSE(bad.passed);
  EXPECT_EQ(bad.non_finite, 1);
  EXPECT_EQ(bad.first_bad, 5);
}

TEST(Certify, ExportedRowsAreCheckedAgainstTheMsTheTableServes) {
  db::Store s(":memory:");
  const auto dev = s.upsert_device({"NVIDIA H200", "sm_90a", 132, 1, 1, 1, 1, 1, "nvrtc 13.0"});
  const auto run = s.begin_run("t", "v", dev);
  const FamilyOps& ops = family_ops("gemm_bf16");
  const std::string config = "m16n64k64_w16x16_s4_mma_v8_sk1";
  const auto cfg = s.upsert_config("gemm_bf16", config, ops.config_json(config).dump());
  auto add = [&](std::int64_t m, const std::string& served) {
    const Json p = gemm::Problem{m, 3072, 1536}.to_json();
    const auto prob = s.upsert_problem("gemm_bf16", ops.key(p), p.dump());
    db::ResultRecord r;
    r.run_id = run;
    r.device_id = dev;
    r.problem_id = prob;
    r.config_id = cfg;
    r.disposition = db::Disposition::kPassed;
    r.median_us = 5;
    r.index_bits = 32;
    r.tolerance = kToleranceBf16.to_json().dump();
    r.code_key = "k";
    s.put_result(r, TUNETAB_VERSION);
    db::CoverageRecord c;
    c.run_id = run;
    c.device_id = dev;
    c.problem_id = prob;
    c.config_id = cfg;
    c.domain = served;
    c.ms_checked = 8;
    c.served = served;
    c.sampled = "[]";
    c.every_m_limit = 16384;
    c.index_bits = 32;
    c.proof_m = 16;
    c.index_bounds = "[]";
    c.tolerance = kToleranceBf16.to_json().dump();
    c.code_key = "k";
    c.code_hash = "h";
    s.put_coverage(c, TUNETAB_VERSION);
  };
  add(1, "[[1,1]]");
  add(16, "[[9,16]]");
  const auto rows = s.covered_results("gemm_bf16");
  ASSERT_EQ(rows.size(), 2u);
  const auto cert = safety::certify(ops, rows, profile::RuleKind::kAiterGemm, 32768, "out/t.csv", "aiter-bf16-gemm", "text");
  ASSERT_EQ(cert.rows.size(), 2u);
  EXPECT_EQ(cert.table, "t.csv");
  EXPECT_EQ(cert.rows[1].served, (std::vector<MRange>{{9, 16}}));
  EXPECT_EQ(cert.rows[1].line, 3);
  EXPECT_EQ(cert.rows[1].kernel_name, "tunetab_gemm_bf16_" + config);
  EXPECT_EQ(exporters::certificate_from_json(exporters::to_json(cert), "x").rows.size(), 2u);
  // Under the exact rule the same coverage suffices; under vLLM's nearest key the rows serve far more.
  EXPECT_NO_THROW(safety::certify(ops, rows, profile::RuleKind::kExact, 32768, "t.csv", "aiter-bf16-gemm", "text"));
  tunetab::testing::expect_input_error(
      [&] { safety::certify(ops, rows, profile::RuleKind::kVllmNearest, 32768, "t.csv", "aiter-bf16-gemm", "text"); },
      "row 2 (m=1,n=3072,k=1536,in=bf16,out=bf16,bias=0, " + config + ") serves M [[1,8]] under vllm-nearest");
}

TEST(WorkerResume, CodeObjectsCrossThePipeAsBytes) {
  // Requests carry code objects as binary values (CBOR), byte for byte, large ones included.
  Worker w([](const nlohmann::json& req) -> nlohmann::json {
    const auto& bin = req.at("codes").at(0).at("binary").get_binary();
    std::uint64_t sum = 0;
    for (std::uint8_t b : bin) sum = sum * 131 + b;
    return {{"size", bin.size()}, {"sum", sum}, {"echo", nlohmann::json::binary(std::vector<std::uint8_t>(bin.begin(), bin.begin() + 16))}};
  });
  std::mt19937_64 rng(5);
  std::vector<std::uint8_t> image(3 << 20);
  for (auto& b : image) b = static_cast<std::uint8_t>(rng());
  std::uint64_t sum = 0;
  for (std::uint8_t b : image) sum = sum * 131 + b;
  const auto r = w.call({{"codes", {{{"binary", nlohmann::json::binary(image)}}}}}, 20000);
  ASSERT_EQ(r.status, WorkerReply::Status::kOk) << r.detail;
  EXPECT_EQ(r.body.at("size"), image.size());
  EXPECT_EQ(r.body.at("sum").get<std::uint64_t>(), sum);
  const auto& echo = r.body.at("echo").get_binary();
  EXPECT_TRUE(std::equal(echo.begin(), echo.end(), image.begin()));
}
