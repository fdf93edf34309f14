// `tunetab tune --profile` without a GPU: the profile -> tune plan expansion (families, rows, anchors), the
// tiered search's choice of configs, the export of a synthetic store to all four table formats with their
// certificates (and a clean gap report on them), the one device whose rows an export takes, and keys no family serves.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <set>

#include "db/store.h"
#include "exporters/aiter_tuned.h"
#include "exporters/certificate.h"
#include "exporters/vllm_moe_json.h"
#include "kernels/moe/moe.h"
#include "test_files.h"
#include "tuner/family_ops.h"
#include "tuner/jit/compiler.h"
#include "tuner/profile/matrix.h"
#include "tuner/runner.h"
#include "tuner/safety/coverage.h"
#include "tuner/search.h"
#include "tuner/table_export.h"
#include "tuner/tune_plan.h"

using namespace tunetab;

namespace {
/// The code keys an export checks a row's coverage against: this build's keys of the config's kernels for
/// the H200 (NVIDIA builds; an AMD build has no compiler for sm_90a, and its export leaves such rows out).
std::string current_code_keys(const FamilyOps& ops, const std::string& config) {
#if defined(TUNETAB_PLATFORM_NVIDIA)
  return code_key_of(jit::Compiler({"sm_90a", {}}), ops, config, 32);
#else
  return "k";
#endif
}

/// The Ms each row of `key` serves with every row of the key present (the share a tune's coverage validates).
std::map<std::int64_t, std::vector<safety::MRange>> served_by_row(const FamilyOps& ops, const PlanKey& key) {
  std::set<std::int64_t> rows;
  for (const auto& b : key.buckets) rows.insert(b.m);
  return safety::served_ranges(profile::LookupRule::make(key.rule, ops.lookup_n(key.problems[0]), key.domain.last), rows,
                               key.domain.last);
}

/// The first config of the space that runs `p` at M up to `m_max` on the H200; with `fused_first`, the first 1-stage
/// fused-MoE one if any does.
std::string first_supported(const FamilyOps& ops, const Json& p, std::int64_t m_max, bool fused_first = false) {
  const Target sm90 = Target::from_arch("sm_90a");
  for (const bool fused_only : {fused_first, false})
    for (const auto& c : ops.configs())
      if ((!fused_only || c.find("_fused_") != std::string::npos) && !ops.why_unsupported(ops.with_m(p, m_max), c, sm90)) return c;
  return "";
}

/// A passing final result of `config` for `p` and its passed coverage of `served` (JSON ranges), judged on the code
/// `code_key`, as the runner stores them.
std::pair<db::ResultRecord, db::CoverageRecord> put_covered(db::Store& s, std::int64_t run, std::int64_t dev, const FamilyOps& ops,
                                                            const Json& p, const std::string& config, const std::string& served,
                                                            const std::string& code_key) {
  db::ResultRecord r;
  r.run_id = run;
  r.device_id = dev;
  r.problem_id = s.upsert_problem(ops.family(), ops.key(p), p.dump());
  r.config_id = s.upsert_config(ops.family(), config, ops.config_json(config).dump());
  r.disposition = db::Disposition::kPassed;
  r.median_us = 7.5;
  r.err_ratio = 0;
  r.index_bits = 32;
  r.timing_phase = "final";
  r.tolerance = ops.tolerance(p).to_json().dump();
  r.code_key = code_key;
  s.put_result(r, TUNETAB_VERSION);
  db::CoverageRecord c;
  c.run_id = run;
  c.device_id = dev;
  c.problem_id = r.problem_id;
  c.config_id = r.config_id;
  c.served = c.domain = served;
  c.ms_checked = 4;
  c.sampled = c.index_bounds = "[]";
  c.every_m_limit = 16384;
  c.index_bits = 32;
  c.proof_m = 40;
  c.tolerance = r.tolerance;
  c.code_key = r.code_key;
  c.code_hash = "h";
  s.put_coverage(c, TUNETAB_VERSION);
  return {r, c};
}
}  // namespace
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

profile::Matrix matrix_of(const std::string& profile_rel, const std::vector<std::string>& flags = {}) {
  po::variables_map vm;
  po::store(po::command_line_parser(flags).options(profile::envelope_options()).run(), vm);
  const auto env = profile::envelope_from(vm, tunetab::testing::repo_file(profile_rel));
  return profile::derive_matrix(profile::read_model(env.hf_config), env);
}

std::set<std::int64_t> row_ms(const PlanKey& k) {
  std::set<std::int64_t> out;
  for (const auto& b : k.buckets) out.insert(b.m);
  return out;
}

/// A small deployment for the export tests: sm_90a, 132 CUs, M up to 40, the envelope's quantization `q`.
profile::Matrix small_matrix(profile::Quant q) {
  profile::Matrix m;
  m.envelope.gfx = "sm_90a";
  m.envelope.cu_num = 132;
  m.envelope.quant = q;
  m.envelope.max_num_batched_tokens = 40;
  return m;
}

/// A GEMM key of small_matrix: N x K in `q`, M 1..40 in the buckets of `rule`.
profile::Entry<profile::GemmKey> small_gemm(std::int64_t n, std::int64_t k, profile::Quant q, profile::RuleKind rule) {
  profile::Entry<profile::GemmKey> e;
  e.key = {n, k, q, {"layer"}};
  e.domain = {1, 40};
  e.rule = rule;
  e.buckets = profile::LookupRule::make(e.rule, n, 40).buckets(e.domain);
  return e;
}
}  // namespace

TEST(TunePlan, GlmFiveOnH200ExpandsToFamiliesRowsAndAnchors) {
  const auto matrix = matrix_of("profiles/glm-5-fp8-ep8-h200.cfg");
  EXPECT_EQ(matrix.envelope.gfx, "sm_90a");
  EXPECT_EQ(matrix.envelope.cu_num, 132);
  const TunePlan plan = make_tune_plan(matrix);
  EXPECT_TRUE(plan.skipped.empty());
  ASSERT_EQ(plan.keys.size(), matrix.gemm.size() + matrix.fmoe.size());
  std::map<std::string, int> families;
  for (const auto& k : plan.keys) ++families[k.family];
  EXPECT_EQ(families["fused_moe"], 1);
  EXPECT_EQ(families["gemm_fp8_blockscale"], 9);  // the fp8-block128 linears
  EXPECT_EQ(families["gemm_bf16"], 4);            // router, indexer wk / weights_proj and lm_head stay bf16
  const PlanKey& moe = plan.keys.back();
  EXPECT_EQ(moe.kind, PlanKind::kFmoe);
  EXPECT_EQ(moe.rule, profile::RuleKind::kAiterFmoe);
  EXPECT_EQ(moe.domain, (profile::MDomain{1, 4096}));
  EXPECT_EQ(row_ms(moe), (std::set<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}));
  EXPECT_EQ(moe.anchors, (std::set<std::int64_t>{1, 16, 256, 1024, 4096}));
  // One problem per row, M = the row's M: GLM-5's experts on one EP8 rank, FP8 e4m3fn, balanced routing.
  ASSERT_EQ(moe.problems.size(), moe.buckets.size());
  const FamilyOps& moe_ops = family_ops("fused_moe");
  EXPECT_EQ(moe_ops.key(moe.problems[9]),
            "m=512,model_dim=6144,inter_dim=2048,experts=32,topk=8,act=silu,g1u1=1,quant=fp8,routing=balanced");
  EXPECT_EQ(moe_ops.lookup_n(moe.problems[0]), 2048);
  EXPECT_EQ(moe_ops.tolerance(moe.problems[0]), kToleranceFp8TwoStage);
  // The bucket 257..512 (the one whose gap started the project) is a row of its own.
  EXPECT_EQ(moe.buckets[9], (profile::Bucket{512, 257, 512}));
  for (const auto& k : plan.keys) {
    for (std::size_t i = 0; i < k.problems.size(); ++i)
      EXPECT_EQ(family_ops(k.family).m_of(k.problems[i]), k.buckets[i].m) << k.label;
    if (k.family == "gemm_fp8_blockscale") {
      EXPECT_EQ(k.problems[0].at("in"), "e4m3fn") << k.label;
    }
    if (k.label.find("lm_head") != std::string::npos) {
      EXPECT_EQ(k.domain.last, 256);  // max-num-seqs
      EXPECT_EQ(k.anchors, (std::set<std::int64_t>{1, 16, 256}));
    }
  }
  // The profile's gemm-fine-rows 129-512: 12 GEMM keys reach M 512 and hold 8 rows from 129 to 256 and 8 from 257 to
  // 512 where 2 were, lm_head (M up to 256) 8 from 129 to 256 where 1 was: 178 + 12 x 14 + 7.
  EXPECT_NE(plan.summary().find("14 keys (1 fused_moe, 4 gemm_bf16, 9 gemm_fp8_blockscale), 353 rows, 68 anchor rows"), std::string::npos)
      << plan.summary();
}

TEST(TunePlan, TheGfx942ProfileTunesE4m3fnuz) {
  const TunePlan plan = make_tune_plan(matrix_of("profiles/glm-5-fp8-ep8-gfx942.cfg"));
  for (const auto& k : plan.keys) {
    if (k.family == "gemm_fp8_blockscale") {
      EXPECT_EQ(k.problems[0].at("in"), "e4m3fnuz");
    }
    if (k.family == "fused_moe") {
      EXPECT_EQ(k.problems[0].at("quant"), "fp8fnuz");
    }
  }
}

TEST(TunePlan, AnchorsAreTheEndsAndTheRowsNearest16And256And1024) {
  EXPECT_EQ(anchor_rows({1, 2, 4, 8, 16, 32, 64, 128, 256, 512}), (std::set<std::int64_t>{1, 16, 256, 512}));
  EXPECT_EQ(anchor_rows({1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}),
            (std::set<std::int64_t>{1, 16, 256, 1024, 4096}));
  EXPECT_EQ(anchor_rows({1, 16, 256, 768, 1536, 4096}), (std::set<std::int64_t>{1, 16, 256, 768, 4096}));  // nearest in log2
  EXPECT_EQ(anchor_rows({1, 16, 256, 512, 2048, 4096}), (std::set<std::int64_t>{1, 16, 256, 512, 4096}));   // a tie: 512
  EXPECT_EQ(anchor_rows({1, 2, 4, 8, 32, 64}), (std::set<std::int64_t>{1, 8, 64}));  // a tie goes to the smaller row
  EXPECT_EQ(anchor_rows({300}), (std::set<std::int64_t>{300}));
  EXPECT_TRUE(anchor_rows({}).empty());
}

TEST(TunePlan, TieredSearchTakesTheAnchorsBestAndWhatTheyCouldNotRun) {
  // The best two of each nearest anchor that this row supports (b is not: it takes no place), then every
  // config this row supports that neither anchor could run (e, x: never measured there).
  const auto got = tiered_configs({{"a", "b", "c", "z"}, {"c", "d", "a"}}, {{"a", "b", "c", "z"}, {"a", "c", "d"}},
                                  {"a", "c", "d", "e", "x", "z"}, 2);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "c", "d", "e", "x"}));
  EXPECT_TRUE(tiered_configs({}, {}, {}, 8).empty());
  EXPECT_EQ(tiered_configs({}, {}, {"q"}, 8), (std::vector<std::string>{"q"}));  // no anchor: all it supports
}

TEST(TunePlan, AnAnchorsBestAreItsFastestMediansNotItsFinalsFirst) {
  // A resumed tune's anchor holds earlier runs' re-timed results (finals) beside this run's screens: the tiered
  // search ranks them all by median (db::rank_row, for the exported row, puts the finals first).
  auto rec = [](std::int64_t config, double us, const char* phase) {
    db::ResultRecord r;
    r.config_id = config;
    r.median_us = us;
    r.timing_phase = phase;
    r.disposition = db::Disposition::kPassed;
    return r;
  };
  std::vector<db::ResultRecord> passed = {rec(1, 12.0, "final"), rec(2, 9.5, "screen"), rec(3, 10.0, "final"),
                                          rec(4, 30.0, "final"), rec(5, 11.0, "screen")};
  EXPECT_EQ(anchor_ranking(passed), (std::vector<std::int64_t>{2, 3, 5, 1, 4}));
  db::rank_row(passed);
  EXPECT_EQ(passed.front().config_id, 3);  // the export's order: finals first
  EXPECT_EQ(passed[3].config_id, 2);
  EXPECT_TRUE(anchor_ranking({}).empty());
}

// A row's final phase re-times the fastest few by screening_time. A resume must pick the same few, whatever their finals
// did: re-timed slower than a fifth config's screening median, or quarantined. It picked by median_us among the passed,
// so each resume brought in another finalist (session 45: 63 of 243 FP8 rows, and 3 rows a new choice, on resumes).
TEST(FinalPhase, AResumePicksTheFinalistsTheRunPicked) {
  std::vector<db::ResultRecord> row(6);
  const std::vector<double> screen = {10.2, 10.0, 11.0, 10.6, 11.4, 12.0};  // 4 and 5 are not finalists
  for (std::size_t i = 0; i < row.size(); ++i) {
    row[i].disposition = db::Disposition::kPassed;
    row[i].median_us = row[i].screen_us = screen[i];
    row[i].timing_phase = "screen";
  }
  auto pick = [&] {
    std::vector<double> us;
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < row.size(); ++i)
      if (const auto t = screening_time(row[i])) {
        us.push_back(*t);
        at.push_back(i);
      }
    std::set<std::size_t> out;
    for (const std::size_t k : fastest(us, 4)) out.insert(at[k]);
    return out;
  };
  const std::set<std::size_t> first = {0, 1, 2, 3};
  ASSERT_EQ(pick(), first);
  for (const std::size_t i : first) {  // re-timed slower than config 4's screening median; config 1 quarantined
    row[i].median_us = 11.5 + 0.1 * static_cast<double>(i);
    row[i].timing_phase = "final";
  }
  row[1].disposition = db::Disposition::kOutOfBounds;
  EXPECT_EQ(pick(), first);
  // Without screen_us (a final stored before schema 4) a passed result ranks by its median; one that failed screening
  // (no screening median) is no finalist.
  row[0].screen_us.reset();
  EXPECT_EQ(screening_time(row[0]), std::optional<double>(11.5));
  EXPECT_EQ(pick(), (std::set<std::size_t>{1, 2, 3, 4}));
  db::ResultRecord failed;
  failed.disposition = db::Disposition::kIncorrect;
  EXPECT_FALSE(screening_time(failed).has_value());
}

TEST(TunePlan, KeysWithoutAFamilyAreClearErrorsOrSkipped) {
  // GLM-4.5 with per-token FP8: neither its GEMMs nor its fused MoE have a tunetab family.
  const auto matrix = matrix_of("profiles/glm-4.5-fp8-per-token-tp8.cfg");
  tunetab::testing::expect_input_error([&] { make_tune_plan(matrix); },
                                       "quant fp8-per-token has no tunetab GEMM family (bf16 -> gemm_bf16, fp8-block128 -> gemm_fp8_blockscale)");
  const TunePlan plan = make_tune_plan(matrix, true);
  EXPECT_FALSE(plan.skipped.empty());
  for (const auto& k : plan.keys) EXPECT_EQ(k.family, "gemm_bf16") << k.label;
  bool moe_skipped = false;
  for (const auto& s : plan.skipped) moe_skipped = moe_skipped || s.find("QuantType.per_Token") != std::string::npos;
  EXPECT_TRUE(moe_skipped);
  auto key = matrix_of("profiles/glm-5-fp8-ep8-h200.cfg").fmoe.at(0).key;
  key.act_type = "ActivationType.Gelu";
  tunetab::testing::expect_input_error([&] { fmoe_problem(key, 1); }, "act_type 'ActivationType.Gelu' has no tunetab fused-MoE family");
}

TEST(TunePlan, OnlyFamiliesKeepsThoseKeysInPlanOrder) {
  // `tune --profile --families`: GLM-5 on the H200 has 4 bf16, 9 FP8 GEMM keys and one fused-MoE key.
  const TunePlan plan = make_tune_plan(matrix_of("profiles/glm-5-fp8-ep8-h200.cfg"));
  const TunePlan moe = plan.only_families("moe", "--families");
  ASSERT_EQ(moe.keys.size(), 1u);
  EXPECT_EQ(moe.keys[0].family, "fused_moe");
  EXPECT_EQ(moe.keys[0].label, plan.keys.back().label);
  const TunePlan gemms = plan.only_families("gemm_fp8_blockscale, gemm_bf16", "--families");
  ASSERT_EQ(gemms.keys.size(), plan.keys.size() - 1);
  for (std::size_t i = 0; i < gemms.keys.size(); ++i) EXPECT_EQ(gemms.keys[i].label, plan.keys[i].label);
  tunetab::testing::expect_input_error([&] { plan.only_families("fused_moe,gemm_fp9", "--families"); },
                                       "--families 'gemm_fp9': expected gemm_bf16, gemm_fp8_blockscale or fused_moe");
  tunetab::testing::expect_input_error([&] { plan.only_families("", "--families"); }, "--families '': expected");
  const TunePlan llama = make_tune_plan(matrix_of("profiles/llama-3.1-8b-bf16-tp1.cfg"));
  tunetab::testing::expect_input_error([&] { llama.only_families("fused_moe", "--families"); },
                                       "--families 'fused_moe': the plan has no key of these families");
}

TEST(TunePlan, SweepRowsMakesTheRowsInTheRangeAnchors) {
  // `tune --profile --sweep-rows 257-352`: GLM-5's dense keys have fine rows every 32 Ms from 257 to 512, so 288, 320
  // and 352 join each key's anchors; the fused-MoE key's rows are powers of two (512 lies outside), so it keeps its own.
  const TunePlan plan = make_tune_plan(matrix_of("profiles/glm-5-fp8-ep8-h200.cfg"));
  const TunePlan swept = plan.with_anchors_in("257-352", "--sweep-rows");
  ASSERT_EQ(swept.keys.size(), plan.keys.size());
  int fine_keys = 0;
  for (std::size_t i = 0; i < plan.keys.size(); ++i) {
    const PlanKey& before = plan.keys[i];
    const PlanKey& after = swept.keys[i];
    std::set<std::int64_t> expected = before.anchors;
    for (const auto& b : before.buckets)
      if (b.m >= 257 && b.m <= 352) expected.insert(b.m);
    EXPECT_EQ(after.anchors, expected) << after.label;
    EXPECT_EQ(after.problems.size(), before.problems.size()) << after.label;
    if (after.anchors.count(288) && after.anchors.count(320) && after.anchors.count(352)) ++fine_keys;
  }
  EXPECT_GT(fine_keys, 0);
  EXPECT_EQ(swept.keys.back().family, "fused_moe");
  EXPECT_EQ(swept.keys.back().anchors, plan.keys.back().anchors);
  tunetab::testing::expect_input_error([&] { plan.with_anchors_in("352-257", "--sweep-rows"); },
                                       "--sweep-rows '352-257': expected FIRST-LAST with 1 <= FIRST <= LAST");
  tunetab::testing::expect_input_error([&] { plan.with_anchors_in("300", "--sweep-rows"); }, "--sweep-rows '300': expected");
  tunetab::testing::expect_input_error([&] { plan.with_anchors_in("5000-6000", "--sweep-rows"); },
                                       "--sweep-rows '5000-6000': no row of the plan has M in that range");
}

TEST(FusedMoeFamily, AdapterOptsEveryPipelineModuleInToItsSharedMemory) {
  const FamilyOps& ops = family_ops("fused_moe");
  const std::string fp8 = "fp8_m16w16_n32x64_k128_s2_simt_sk2";
  EXPECT_EQ(ops.kernels(fp8, 32).size(), 5u);  // align, quant, stage 1, stage 2, reduce
  const auto smem = ops.pipeline_shared_bytes(fp8);
  ASSERT_EQ(smem.size(), 5u);
  EXPECT_EQ(smem, moe::dynamic_shared_bytes(moe::Config::from_name(fp8)));
  EXPECT_EQ(smem[0], 0);
  EXPECT_GT(smem[2], 0);
  // Single-kernel families: the config's shared memory for its one module.
  const FamilyOps& gemm_ops = family_ops("gemm_bf16");
  const std::string g = gemm_ops.configs().front();
  EXPECT_EQ(gemm_ops.pipeline_shared_bytes(g), std::vector<int>(gemm_ops.kernels(g, 32).size(), gemm_ops.shared_bytes(g)));
}

TEST(ExportPlan, ASyntheticStoreExportsAllFourFormatsWithCertificatesAndNoGaps) {
  // A small deployment: one bf16 and one FP8 GEMM key and one FP8 fused-MoE key, M up to 40.
  profile::Matrix m = small_matrix(profile::Quant::kFp8Block128);
  m.gemm = {small_gemm(256, 512, profile::Quant::kBf16, profile::RuleKind::kAiterGemm),
            small_gemm(512, 256, profile::Quant::kFp8Block128, profile::RuleKind::kAiterGemm)};
  profile::Entry<profile::FmoeKey> f;
  f.key = {256, 128, 8, 2, "ActivationType.Silu", "torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e4m3fn",
           "QuantType.per_1x128", 1, 0};
  f.domain = {1, 40};
  f.rule = profile::RuleKind::kAiterFmoe;
  f.buckets = profile::LookupRule::make(f.rule, 128, 40).buckets(f.domain);
  m.fmoe = {f};
  const TunePlan plan = make_tune_plan(m);
  ASSERT_EQ(plan.keys.size(), 3u);

  // Every row tuned and covered on an H200, as the runner stores them.
  const fs::path dir = fs::temp_directory_path() / ("tunetab_export_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  db::Store s(":memory:");
  const auto dev = s.upsert_device({"NVIDIA H200", "sm_90a", 132, 1, 1, 1, 1, 1, "nvrtc 13.0"});
  const auto run = s.begin_run("t", "v", dev);
  for (const PlanKey& key : plan.keys) {
    const FamilyOps& ops = family_ops(key.family);
    const auto served = served_by_row(ops, key);
    for (const Json& p : key.problems) {
      // The first supported config; for the MoE key its 1-stage variant (the export marks those rows run_1stage).
      const std::string config = first_supported(ops, p, 40, key.family == "fused_moe");
      ASSERT_FALSE(config.empty()) << key.label;
      const auto [r, c] = put_covered(s, run, dev, ops, p, config, safety::ranges_json(served.at(ops.m_of(p))).dump(),
                                      current_code_keys(ops, config));
      if (key.family == "gemm_bf16" && p == key.problems.front()) {
        // A row of a shape this plan does not hold, judged on older code: left out, and not this plan's miss.
        Json other = p;
        other["n"] = 1024;
        db::ResultRecord ro = r;
        ro.problem_id = s.upsert_problem(key.family, ops.key(other), other.dump());
        ro.code_key = "the key of an older template";
        s.put_result(ro, TUNETAB_VERSION);
        db::CoverageRecord co = c;
        co.problem_id = ro.problem_id;
        co.code_key = ro.code_key;
        s.put_coverage(co, TUNETAB_VERSION);
      }
    }
  }

  const ExportResult ex = export_plan(s, plan, m, {dir.string(), "NVIDIA H200", "", {}});
#if !defined(TUNETAB_PLATFORM_NVIDIA)
  // This build cannot build the H200's code, so it cannot tell whether the rows judged today's: it exports
  // none of them, and says why.
  ASSERT_FALSE(ex.missing.empty());
  EXPECT_NE(ex.missing[0].find("its row was left out: "), std::string::npos) << ex.missing[0];
  EXPECT_NE(ex.missing[0].find("cannot build its code for sm_90a"), std::string::npos) << ex.missing[0];
  fs::remove_all(dir);
  return;
#endif
  EXPECT_TRUE(ex.missing.empty()) << ex.missing.front();
  std::map<exporters::TableFormat, std::string> written;
  for (const auto& t : ex.tables) {
    written[t.format] = fs::path(t.path).filename().string();
    EXPECT_TRUE(fs::exists(t.cert_path)) << t.cert_path;
    const auto cert = exporters::read_certificate(t.cert_path);
    EXPECT_FALSE(cert.rows.empty()) << t.path;
    EXPECT_EQ(cert.device.at("name"), "NVIDIA H200");
    EXPECT_EQ(cert.device.at("proxy"), false);  // the profile is the H200's own keys
  }
  using exporters::TableFormat;
  EXPECT_EQ(written[TableFormat::kAiterBf16Gemm], "bf16_tuned_gemm.csv");
  EXPECT_EQ(written[TableFormat::kAiterA8w8BlockscaleGemm], "a8w8_blockscale_tuned_gemm.csv");
  EXPECT_EQ(written[TableFormat::kAiterFmoe], "tuned_fmoe.csv");
  EXPECT_EQ(written[TableFormat::kVllmMoeJson], "E=8,N=128,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json");
  const auto fmoe_rows = exporters::read_aiter_fmoe((dir / "tuned_fmoe.csv").string());
  ASSERT_EQ(fmoe_rows.size(), plan.keys[2].buckets.size());
  EXPECT_EQ(fmoe_rows[0].cu_num, 132);
  for (const auto& r : fmoe_rows) EXPECT_TRUE(r.run_1stage) << "row M=" << r.token << ": " << r.kernel_name1;
  EXPECT_NE(fmoe_rows[0].kernel_name1.find("_fused_sk1"), std::string::npos) << fmoe_rows[0].kernel_name1;
  const auto vllm = exporters::read_vllm_moe_json((dir / written[TableFormat::kVllmMoeJson]).string());
  EXPECT_EQ(vllm.configs.size(), 40u);  // every M of the domain

  // The gap report on what was written: no serving gap for any format.
  const auto gaps = check_gaps(ex.tables, m);
  EXPECT_EQ(gaps.size(), 4u);
  for (const auto& g : gaps) {
    EXPECT_FALSE(g.report.has_serving_gaps()) << exporters::to_text(g.report);
    EXPECT_TRUE(g.report.gaps.empty()) << exporters::to_text(g.report);
    EXPECT_EQ(g.report.complete_keys, g.report.keys);
    EXPECT_GE(g.report.keys, 1u);
  }

  // A profile for another GPU (gfx942, 304 CUs) tuned on the H200: the certificates say it is a proxy.
  profile::Matrix amd = m;
  amd.envelope.gfx = "gfx942";
  amd.envelope.cu_num = 304;
  const fs::path dir2 = dir / "proxy";
  const auto ex2 = export_plan(s, make_tune_plan(amd), amd, {dir2.string(), "", "", {}});
  // NOTE: the gfx942 plan asks for e4m3fnuz problems, which this store does not hold: only bf16 rows export.
  EXPECT_FALSE(ex2.missing.empty());
  const auto cert = exporters::read_certificate((dir2 / "bf16_tuned_gemm.csv.cert.json").string());
  EXPECT_EQ(cert.device.at("proxy"), true);
  EXPECT_EQ(cert.device.at("table_gfx"), "gfx942");
  const auto rows = exporters::read_aiter_gemm((dir2 / "bf16_tuned_gemm.csv").string(), profile::Quant::kBf16);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].gfx, "gfx942");
  EXPECT_EQ(rows[0].cu_num, 304);
  // Rows that did not pass coverage are not exported, and the gap report names them.
  bool gap = false;
  for (const auto& g : check_gaps(ex2.tables, amd)) gap = gap || g.report.has_serving_gaps();
  EXPECT_TRUE(gap);
  fs::remove_all(dir);
}

TEST(ExportPlan, TakesTheRowsOfOneDeviceAndNamesThemWhenThereAreSeveral) {
  // `tunetab export --profile` on a database: a table mixing two GPUs' choices would certify neither.
  const TunePlan plan = make_tune_plan(matrix_of("profiles/llama-3.1-8b-bf16-tp1.cfg"));
  ASSERT_FALSE(plan.keys.empty());
  const PlanKey& key = plan.keys.front();
  const FamilyOps& ops = family_ops(key.family);
  db::Store s(":memory:");
  EXPECT_EQ(export_device(s, plan, "", "t.db"), "");  // nothing covered: no device, and no error
  const std::string config = ops.configs().front();
  auto put_on = [&](const std::string& device, const Json& problem) {
    const auto dev = s.upsert_device({device, "sm_90a", 132, 1, 1, 1, 1, 1, "nvrtc 13.0"});
    put_covered(s, s.begin_run("t", "v", dev), dev, ops, problem, config, "[[1,1]]", "k");
  };
  put_on("NVIDIA H200", key.problems.front());
  EXPECT_EQ(export_device(s, plan, "", "t.db"), "NVIDIA H200");
  EXPECT_EQ(export_device(s, plan, "NVIDIA H200", "t.db"), "NVIDIA H200");
  try {
    export_device(s, plan, "NVIDIA H100 80GB HBM3", "t.db");
    ADD_FAILURE() << "a device the database holds no row of was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device-name 'NVIDIA H100 80GB HBM3': t.db holds covered rows of 'NVIDIA H200' only"),
              std::string::npos) << e.what();
  }
  put_on("NVIDIA H100 80GB HBM3", key.problems.back());
  try {
    export_device(s, plan, "", "t.db");
    ADD_FAILURE() << "rows of two devices, and none was asked for";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.db holds covered rows of several devices ('NVIDIA H100 80GB HBM3', 'NVIDIA H200'): pick "
                                         "one with --device-name"),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(export_device(s, plan, "NVIDIA H100 80GB HBM3", "t.db"), "NVIDIA H100 80GB HBM3");
}

TEST(ExportPlan, ARowThatWouldServeMsBeyondItsCoverageIsLeftOutAndNamed) {
  // A cut tune (or `tune --families`, or `export --profile` on a partial database): one row of a key has no covered
  // result. Under vLLM's nearest-key rule its Ms go to its neighbours, whose coverage validated only their own share:
  // they are left out too (and named), and what is written is certified, never an error.
#if !defined(TUNETAB_PLATFORM_NVIDIA)
  GTEST_SKIP() << "this build cannot compute the H200's code keys, so its export leaves every such row out";
#endif
  profile::Matrix m = small_matrix(profile::Quant::kBf16);
  m.gemm = {small_gemm(256, 512, profile::Quant::kBf16, profile::RuleKind::kVllmNearest)};
  const TunePlan plan = make_tune_plan(m);
  ASSERT_EQ(plan.keys.size(), 1u);
  const PlanKey& key = plan.keys[0];
  ASSERT_GE(key.problems.size(), 4u);
  const FamilyOps& ops = family_ops(key.family);
  const auto served = served_by_row(ops, key);
  db::Store s(":memory:");
  const auto dev = s.upsert_device({"NVIDIA H200", "sm_90a", 132, 1, 1, 1, 1, 1, "nvrtc 13.0"});
  const auto run = s.begin_run("t", "v", dev);
  const std::size_t hole = key.problems.size() / 2;  // this row was never covered
  for (std::size_t i = 0; i < key.problems.size(); ++i) {
    if (i == hole) continue;
    const Json& p = key.problems[i];
    const std::string config = first_supported(ops, p, 40);
    // Each row's coverage: its share with every row present.
    put_covered(s, run, dev, ops, p, config, safety::ranges_json(served.at(ops.m_of(p))).dump(), current_code_keys(ops, config));
  }
  const fs::path dir = fs::temp_directory_path() / ("tunetab_export_hole_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ExportResult ex;
  ASSERT_NO_THROW(ex = export_plan(s, plan, m, {dir.string(), "NVIDIA H200", "", {}}));
  const std::string hole_m = "M=" + std::to_string(key.buckets[hole].m) + ": ";
  std::size_t never = 0, beyond = 0;
  for (const auto& miss : ex.missing) {
    never += miss.find(hole_m + "no row passed coverage") != std::string::npos ? 1 : 0;
    beyond += miss.find("beyond the Ms its coverage validated") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(never, 1u);
  EXPECT_GE(beyond, 1u);  // at least a neighbour of the hole
  ASSERT_EQ(ex.tables.size(), 1u);
  EXPECT_EQ(ex.tables[0].rows + ex.missing.size(), key.problems.size());
  // Every row written serves only Ms it was validated on: the certificate says so (it throws otherwise).
  const auto cert = exporters::read_certificate(ex.tables[0].cert_path);
  EXPECT_EQ(cert.rows.size(), ex.tables[0].rows);
  fs::remove_all(dir);
}
