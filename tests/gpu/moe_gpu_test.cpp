// Fused-MoE GPU tests (label gpu): the whole pipeline (align, [quant,] stage 1, stage 2, reduce) against the
// Eigen reference on random data, NaN-poisoned outputs and guard bands; skipped without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "kernels/moe/moe.h"
#include "tuner/hip/runtime.h"
#include "tuner/jit/compiler.h"
#include "tuner/timing.h"
#include "module_cache.h"
#include "time_spec.h"

using namespace tunetab;

namespace {

/// Stage 2's workspace for up to `splits` splits.
std::size_t split_ws(const moe::Problem& p, int splits) {
  moe::Config c;
  c.split_k = splits;
  return moe::workspace_bytes(p, c);
}

class MoeGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (device_count(&why) == 0) GTEST_SKIP() << "no GPU: " << why;
    facts_ = open_device(0);
    modules_ = std::make_unique<ModuleCache>(facts_.arch);
  }

  static std::vector<ModuleCache::Entry> entries(const moe::Config& c, int bits) {
    const auto sources = moe::kernels(c, bits);
    const auto smem = moe::dynamic_shared_bytes(c);
    std::vector<ModuleCache::Entry> out;
    for (std::size_t i = 0; i < sources.size(); ++i) out.push_back({sources[i], static_cast<std::size_t>(smem[i])});
    return out;
  }
  /// The pipeline's modules for `c` at `bits`, compiled once.
  std::vector<const Module*> pipeline_for(const moe::Config& c, int bits) {
    std::vector<const Module*> out;
    for (const auto& e : entries(c, bits)) out.push_back(&modules_->get(e));
    return out;
  }
  /// Compiles, in parallel, the pipelines a test's loop will launch.
  void prepare(const std::vector<std::pair<moe::Config, int>>& configs) {
    std::vector<ModuleCache::Entry> all;
    for (const auto& [c, bits] : configs)
      for (auto& e : entries(c, bits)) all.push_back(std::move(e));
    modules_->prepare(all);
  }

  struct Outcome {
    gemm::Comparison cmp;
    std::optional<std::string> guard;
    bool deterministic = true;
  };

  /// Poisons, launches, checks guards and compares; then launches again and requires the same bits.
  Outcome run(moe::Workload& w, const moe::Problem& p, const moe::Config& c, int bits) {
    const auto pipeline = pipeline_for(c, bits);
    Stream s;
    Outcome o;
    w.poison_output();
    w.launch(c, pipeline, 0, s);
    EXPECT_TRUE(s.synchronize_for(20000)) << "pipeline timed out";
    o.guard = w.guard_violation();
    const auto first = w.download_output();
    // The current M's rows against the first rows of the capacity's reference (Workload::set_m).
    o.cmp = gemm::compare(first.data(), w.reference().data(), first.size(), moe::tolerance(p));
    // The routing layout the GPU built: same padded count and block experts as the CPU mirror, and the
    // same slots in each expert's range (their order inside it follows the GPU's atomics).
    const auto gpu = w.download_alignment(c.block_m);
    const auto& all_ids = w.host().routing.topk_ids;
    const std::vector<int> ids(all_ids.begin(), all_ids.begin() + w.m() * p.topk);
    const auto cpu = moe::align_cpu(ids, static_cast<int>(p.experts), c.block_m);
    EXPECT_EQ(gpu.num_padded, cpu.num_padded);
    EXPECT_EQ(gpu.expert_ids, cpu.expert_ids);
    std::map<int, std::multiset<int>> gpu_by_expert, cpu_by_expert;
    for (std::size_t r = 0; r < gpu.sorted_ids.size() && r / c.block_m < gpu.expert_ids.size(); ++r)
      gpu_by_expert[gpu.expert_ids[r / c.block_m]].insert(gpu.sorted_ids[r]);
    for (std::size_t r = 0; r < cpu.sorted_ids.size(); ++r) cpu_by_expert[cpu.expert_ids[r / c.block_m]].insert(cpu.sorted_ids[r]);
    EXPECT_EQ(gpu_by_expert, cpu_by_expert) << "each expert's padded range holds its slots and padding";
    if (c.math == moe::Math::kWgmma2) {  // its stage-1 quantization stores each token by the inverse map
      int wrong = 0;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const int r = gpu.sorted_pos[i];
        wrong += r < 0 || r >= gpu.num_padded || gpu.sorted_ids[static_cast<std::size_t>(r)] != static_cast<int>(i);
      }
      EXPECT_EQ(wrong, 0) << "slots whose sorted_pos does not point back at them";
    }
    w.poison_output();
    w.launch(c, pipeline, 0, s);
    s.synchronize();
    o.deterministic = w.download_output() == first;
    if (c.math == moe::Math::kWgmma2) {  // replayed from a graph, as timing does (the split tiles' counters reset each launch)
      w.poison_output();
      Graph g(s, [&] { w.launch(c, pipeline, 0, s); });
      g.replay(s);
      s.synchronize();
      o.deterministic = o.deterministic && w.download_output() == first;
    }
    return o;
  }

  DeviceFacts facts_;
  std::unique_ptr<ModuleCache> modules_;
};

// clang-format off
const char* kBf16Configs[] = {
  "bf16_m16w16_n64x64_k64_s3_mma_sk1",   "bf16_m32w16_n32x128_k64_s4_mma_sk2",  "bf16_m64w32_n128x64_k64_s3_mma_sk1",
  "bf16_m128w32_n64x128_k64_s4_mma_sk4", "bf16_m16w16_n64x64_k64_s2_simt_sk2",
};
const char* kFp8Configs[] = {
  "fp8_m16w16_n64x64_k128_s3_mma_sk1",   "fp8_m16w16_n32x128_k128_s4_mma_sk2",  "fp8_m32w16_n64x64_k128_s3_mma_sk1",
  "fp8_m64w32_n64x128_k128_s4_mma_sk4",  "fp8_m128w32_n32x64_k128_s3_mma_sk1",  "fp8_m16w16_n64x64_k128_s2_simt_sk1",
};
// sm_90a only: the TMA + wgmma stages (one to four consumer warpgroups, every MMA width, split-K, clusters of
// 2 and 4 CTAs sharing W by multicast), and wgmma2's (its 96-token tiles with the producer's registers given up, one
// with stage 2 in two 128-row halves, the 64-token tile the M=512 row exported, and two token groups sharing each W tile).
const char* kFp8WgmmaConfigs[] = {
  "fp8_m32w32_n128x128_k128_s4_wgmma_sk2", "fp8_m64w64_n64x64_k128_s6_wgmma_sk1", "fp8_m32w32_n256x256_k128_s3_wgmma_sk4",
  "fp8_m64w64_n128x128_k128_s4_wgmma_sk1", "fp8_m128w32_n256x256_k128_s3_wgmma_sk1", "fp8_m64w32_n128x128_k128_s4_wgmma_sk2",
  "fp8_m96w96_n128x128_k128_s4_wgmma2_sk1", "fp8_m32w32_n256x128_k128_s3_wgmma2_sk1", "fp8_m96w96_n128x64_k128_s3_wgmma2_sk1",
  "fp8_m64w64_n128x256_k128_s4_wgmma2_sk1", "fp8_m128w64_n64x128_k128_s4_wgmma2_sk1", "fp8_m64w32_n64x128_k128_s6_wgmma2_sk1",
  "fp8_m96w96_n128x256_k128_s3_wgmma2_sk1",
};
// sm_90a only, decode only: the 1-stage variant (both GEMMs in one kernel), every pipeline depth.
const char* kFp8FusedConfigs[] = {
  "fp8_m32w32_n128x128_k128_s3_fused_sk1", "fp8_m32w32_n128x128_k128_s4_fused_sk1", "fp8_m32w32_n128x128_k128_s5_fused_sk1",
};
// clang-format on

/// The FP8 configs a test runs on `arch`: the wgmma ones only where they exist.
std::vector<const char*> fp8_configs(const std::string& arch) {
  std::vector<const char*> out(std::begin(kFp8Configs), std::end(kFp8Configs));
  if (arch == "sm_90a") out.insert(out.end(), std::begin(kFp8WgmmaConfigs), std::end(kFp8WgmmaConfigs));
  return out;
}

}  // namespace

TEST_F(MoeGpu, PipelineMatchesReferenceAcrossMRoutingAndDtype) {
  // GLM-like: model_dim 6144, 32 local experts, topk 8; inter_dim 1024 (half GLM's 2048) for speed.
  // One workload per (dtype, routing) at M = 336 serves the smaller M through set_m (their routing is the
  // first tokens' of the 336-token draw).
  const Target t = Target::from_arch(facts_.arch);
  const std::int64_t ms[] = {336, 304, 64, 7, 1};
  // Both index widths on a rotating subset: every config meets 64-bit at one of the Ms.
  auto bits_of = [](std::size_t config, std::size_t m_index) { return (config + m_index) % 3 == 0 ? 64 : 32; };
  std::vector<std::pair<moe::Config, int>> needed;
  for (std::size_t mi = 0; mi < std::size(ms); ++mi) {
    for (std::size_t i = 0; i < std::size(kBf16Configs); ++i) needed.emplace_back(moe::Config::from_name(kBf16Configs[i]), bits_of(i, mi));
    const auto fp8 = fp8_configs(facts_.arch);
    for (std::size_t i = 0; i < fp8.size(); ++i) needed.emplace_back(moe::Config::from_name(fp8[i]), bits_of(i, mi));
  }
  prepare(needed);
  int checked = 0;
  for (auto q : {moe::Quant::kBf16, moe::Quant::kFp8})
    for (auto routing : {moe::Routing::kBalanced, moe::Routing::kSkewed}) {
      const moe::Problem cap{336, 6144, 1024, 32, 8, q, routing};
      moe::Workload w(cap, 100 + static_cast<std::uint64_t>(routing), 1, split_ws(cap, 4));
      for (std::size_t mi = 0; mi < std::size(ms); ++mi) {
        const std::int64_t m = ms[mi];
        const moe::Problem p{m, 6144, 1024, 32, 8, q, routing};
        w.set_m(m);
        std::vector<const char*> names;
        if (q == moe::Quant::kBf16) names.assign(std::begin(kBf16Configs), std::end(kBf16Configs));
        else names = fp8_configs(facts_.arch);
        for (std::size_t i = 0; i < names.size(); ++i) {
          const auto c = moe::Config::from_name(names[i]);
          ASSERT_FALSE(moe::why_unsupported(p, c, t)) << *moe::why_unsupported(p, c, t);
          const int bits = bits_of(i, mi);
          const auto o = run(w, p, c, bits);
          EXPECT_TRUE(o.cmp.passed) << p.key() << " " << names[i] << " index" << bits << ": " << o.cmp.summary();
          EXPECT_FALSE(o.guard) << p.key() << " " << names[i] << ": " << *o.guard;
          EXPECT_TRUE(o.deterministic) << p.key() << " " << names[i] << ": two launches (wgmma2: and a graph's replay) gave different bits";
          ++checked;
        }
      }
    }
  // 5 bf16 + 6 fp8 (+ 13 wgmma and wgmma2 on sm_90a) configs per (M, routing)
  EXPECT_EQ(checked, (5 + static_cast<int>(fp8_configs(facts_.arch).size())) * 5 * 2);
}

TEST(MoeGpuConfigs, TestConfigsAreInTheEnumeratedSpace) {
  const auto all = moe::enumerate();
  for (const char* n : kBf16Configs) EXPECT_NE(std::find(all.begin(), all.end(), moe::Config::from_name(n)), all.end()) << n;
  for (const char* n : kFp8Configs) EXPECT_NE(std::find(all.begin(), all.end(), moe::Config::from_name(n)), all.end()) << n;
  for (const char* n : kFp8WgmmaConfigs)
    EXPECT_NE(std::find(all.begin(), all.end(), moe::Config::from_name(n)), all.end()) << n;
  for (const char* n : kFp8FusedConfigs)
    EXPECT_NE(std::find(all.begin(), all.end(), moe::Config::from_name(n)), all.end()) << n;
}

// The 1-stage variant at the M it serves (decode), GLM-like with inter_dim 1024, both routings, both index
// widths, against the reference of the re-quantized pipeline (the same numerics: bf16 intermediate quantized per
// 1x128); and at the edges: topk = E (every expert in every token's path) and most experts idle.
TEST_F(MoeGpu, FusedVariantMatchesReferenceAtDecodeM) {
  if (facts_.arch != "sm_90a") GTEST_SKIP() << "the fused variant is sm_90a only";
  const Target t = Target::from_arch(facts_.arch);
  int checked = 0;
  auto check = [&](moe::Workload& w, const moe::Problem& p, const char* name, int bits) {
    const auto c = moe::Config::from_name(name);
    ASSERT_FALSE(moe::why_unsupported(p, c, t)) << *moe::why_unsupported(p, c, t);
    const auto o = run(w, p, c, bits);
    EXPECT_TRUE(o.cmp.passed) << p.key() << " " << name << " index" << bits << ": " << o.cmp.summary();
    EXPECT_FALSE(o.guard) << p.key() << " " << name << ": " << *o.guard;
    EXPECT_TRUE(o.deterministic) << p.key() << " " << name << ": two launches (wgmma2: and a graph's replay) gave different bits";
    ++checked;
  };
  for (auto routing : {moe::Routing::kBalanced, moe::Routing::kSkewed}) {
    const moe::Problem cap{16, 6144, 1024, 32, 8, moe::Quant::kFp8, routing};
    moe::Workload w(cap, 300 + static_cast<std::uint64_t>(routing), 1,
                    moe::workspace_bytes(cap, moe::Config::from_name(kFp8FusedConfigs[0])));
    for (std::int64_t m : {16, 7, 2, 1}) {
      const moe::Problem p{m, 6144, 1024, 32, 8, moe::Quant::kFp8, routing};
      w.set_m(m);
      for (std::size_t i = 0; i < std::size(kFp8FusedConfigs); ++i)
        check(w, p, kFp8FusedConfigs[i], (i + static_cast<std::size_t>(m)) % 2 ? 64 : 32);
    }
  }
  for (const moe::Problem& p : {moe::Problem{1, 256, 256, 8, 8, moe::Quant::kFp8, moe::Routing::kBalanced},
                                moe::Problem{2, 512, 384, 64, 4, moe::Quant::kFp8, moe::Routing::kSkewed}}) {
    moe::Workload w(p, 9, 1, moe::workspace_bytes(p, moe::Config::from_name(kFp8FusedConfigs[0])));
    check(w, p, kFp8FusedConfigs[1], 32);
  }
  EXPECT_EQ(checked, 3 * 4 * 2 + 2);
}

TEST_F(MoeGpu, EdgeRoutingTopkEqualsExpertsAndIdleExperts) {
  const Target t = Target::from_arch(facts_.arch);
  // topk = E: every token visits every expert; M = 1..3 with skewed routing over 64 experts leaves most idle.
  // Then odd K block counts in both stages (3 and 5); the last: top-12, more sorted rows a token than the wgmma2
  // quantization loads at once (8).
  const moe::Problem problems[] = {{1, 256, 256, 8, 8, moe::Quant::kFp8, moe::Routing::kBalanced},
                                   {3, 384, 128, 8, 8, moe::Quant::kBf16, moe::Routing::kSkewed},
                                   {2, 512, 256, 64, 4, moe::Quant::kFp8, moe::Routing::kSkewed},
                                   {17, 256, 384, 64, 6, moe::Quant::kBf16, moe::Routing::kBalanced},
                                   {37, 384, 640, 16, 4, moe::Quant::kFp8, moe::Routing::kSkewed},
                                   {21, 512, 256, 16, 12, moe::Quant::kFp8, moe::Routing::kSkewed}};
  int odd_wgmma2 = 0, top12_wgmma2 = 0;
  for (const auto& p : problems) {
    moe::Workload w(p, 7, 1, split_ws(p, 4));
    const std::vector<const char*> names = p.quant == moe::Quant::kBf16
                                               ? std::vector<const char*>(std::begin(kBf16Configs), std::end(kBf16Configs))
                                               : fp8_configs(facts_.arch);
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto c = moe::Config::from_name(names[i]);
      if (moe::why_unsupported(p, c, t)) continue;
      const auto o = run(w, p, c, 32);
      EXPECT_TRUE(o.cmp.passed) << p.key() << " " << names[i] << ": " << o.cmp.summary();
      EXPECT_FALSE(o.guard) << p.key() << " " << names[i] << ": " << *o.guard;
      EXPECT_TRUE(o.deterministic) << p.key() << " " << names[i];
      if (c.math == moe::Math::kWgmma2 && p.model_dim == 384) ++odd_wgmma2;
      if (c.math == moe::Math::kWgmma2 && p.topk == 12) ++top12_wgmma2;
    }
  }
  if (facts_.arch == "sm_90a") {
    EXPECT_GE(odd_wgmma2, 2) << "the odd K block counts ran no wgmma2 config";
    EXPECT_GE(top12_wgmma2, 2) << "top-12 ran no wgmma2 config";
  }
}

TEST_F(MoeGpu, PoisonedOutputFailsWhenNothingIsWritten) {
  const moe::Problem p{5, 256, 256, 4, 2, moe::Quant::kFp8, moe::Routing::kBalanced};
  moe::Workload w(p, 5, 1, 0);
  w.poison_output();
  const auto cmp = gemm::compare(w.download_output(), w.reference(), moe::tolerance(p));
  EXPECT_FALSE(cmp.passed);
  EXPECT_EQ(cmp.non_finite, p.m * p.model_dim);
}

TEST_F(MoeGpu, AnotherDrawFailsTheComparison) {
  // The comparison is not trivially satisfied: a correct pipeline on another draw of operands and routing fails.
  const moe::Problem p{64, 512, 256, 8, 2, moe::Quant::kBf16, moe::Routing::kSkewed};
  const auto c = moe::Config::from_name("bf16_m16w16_n64x64_k64_s3_mma_sk1");
  moe::Workload good(p, 9, 1, 0);
  EXPECT_TRUE(run(good, p, c, 32).cmp.passed);
  // Same operands with another routing seed: the output differs from this workload's reference.
  moe::Workload other(p, 10, 1, 0);
  const auto pipeline = pipeline_for(c, 32);
  Stream s;
  other.poison_output();
  other.launch(c, pipeline, 0, s);
  s.synchronize();
  EXPECT_FALSE(gemm::compare(other.download_output(), good.reference(), moe::tolerance(p)).passed);
}

TEST_F(MoeGpu, PipelineTimingIsStableAndReportsWeightBandwidth) {
  // The performance target's shape (inter_dim 2048): print the time and the weight-read rate per M.
  const moe::Problem base{16, 6144, 2048, 32, 8, moe::Quant::kFp8, moe::Routing::kBalanced};
  for (std::int64_t m : {16, 64, 336}) {
    moe::Problem p = base;
    p.m = m;
    moe::Workload w(p, 3, 2, 0);
    for (const char* name : {"fp8_m16w16_n64x64_k128_s4_mma_sk1", "fp8_m32w16_n64x128_k128_s3_mma_sk1",
                             "fp8_m64w64_n128x128_k128_s4_wgmma_sk1", "fp8_m32w32_n128x128_k128_s4_wgmma_sk1",
                             "fp8_m32w32_n256x256_k128_s3_wgmma_sk1", "fp8_m128w32_n256x256_k128_s3_wgmma_sk1"}) {
      const auto c = moe::Config::from_name(name);
      if (moe::why_unsupported(p, c, Target::from_arch(facts_.arch))) continue;
      const auto pipeline = pipeline_for(c, 32);
      Stream s;
      const auto st = time_launches([&](int i) { w.launch(c, pipeline, i % w.sets(), s); }, s, TimingPlan{});
      EXPECT_GT(st.median_us, 1.0);
      EXPECT_LE(st.min_us, st.median_us);
      EXPECT_LT(st.spread, 0.5);
      std::printf("moe M=%lld %s: %.1f us, weights %.0f GB/s\n", static_cast<long long>(m), name, st.median_us,
                  p.weight_bytes() / (st.median_us * 1e-6) / 1e9);
    }
  }
}

// A tool more than a test: with TUNETAB_TIME_MOE="M[,skewed]:config,...[;...]" it validates each config on the GLM-5
// EP8 shape (model_dim 6144, inter_dim 2048, 32 experts, top-8; the dtype is the config's) and times the whole
// pipeline with the tuner's method: A/B comparisons of kernel changes, and a target for Nsight.
TEST_F(MoeGpu, TimeConfigsFromEnvironment) {
  const char* spec = std::getenv("TUNETAB_TIME_MOE");
  if (spec == nullptr) GTEST_SKIP() << "set TUNETAB_TIME_MOE=M[,skewed]:config,... to time configs";
  const auto specs = parse_time_specs(spec);
  ASSERT_TRUE(specs) << "TUNETAB_TIME_MOE: expected M[,skewed]:config,...[;M[,skewed]:config,...]";
  // Each spec's problem: its M and routing, in its first config's dtype.
  std::vector<moe::Problem> problems;
  for (const TimeSpec& ts : *specs) {
    const auto comma = ts.head.find(',');
    moe::Problem p{std::stoll(ts.head.substr(0, comma)), 6144, 2048, 32, 8, moe::Quant::kFp8, moe::Routing::kBalanced};
    if (comma != std::string::npos) p.routing = moe::routing_from_string(ts.head.substr(comma + 1));
    p.quant = moe::Config::from_name(ts.configs.front()).quant;
    problems.push_back(p);
  }
  // One workload per (dtype, routing), at the largest M asked for; set_m() serves the smaller ones from it
  // with the inputs a workload of their own would have had (the hidden states and the routing are drawn token
  // by token from the same seed), so the weights (1.2 GB at this shape) and the reference are made once, not
  // once per M: the tuner's own method.
  std::map<std::pair<moe::Quant, moe::Routing>, std::unique_ptr<moe::Workload>> workloads;
  for (const moe::Problem& p : problems) {
    auto& w = workloads[{p.quant, p.routing}];
    moe::Problem cap = p;
    for (const moe::Problem& o : problems)
      if (o.quant == p.quant && o.routing == p.routing) cap.m = std::max(cap.m, o.m);
    // The workspace of the widest split-K, or of a spec's fused config (a plane per 128 columns) at its M.
    std::size_t ws = split_ws(cap, 4);
    for (std::size_t i = 0; i < specs->size(); ++i)
      if (problems[i].quant == p.quant && problems[i].routing == p.routing)
        for (const std::string& name : (*specs)[i].configs)
          ws = std::max(ws, moe::workspace_bytes(problems[i], moe::Config::from_name(name)));
    if (!w) w = std::make_unique<moe::Workload>(cap, 3, 2, ws);
  }
  std::vector<std::pair<moe::Config, int>> needed;
  for (std::size_t i = 0; i < specs->size(); ++i)
    for (const std::string& name : (*specs)[i].configs) {
      const auto c = moe::Config::from_name(name);
      if (c.quant == problems[i].quant && !moe::why_unsupported(problems[i], c, Target::from_arch(facts_.arch)))
        needed.emplace_back(c, 32);
    }
  prepare(needed);
  for (std::size_t i = 0; i < specs->size(); ++i) {
    const moe::Problem& p = problems[i];
    moe::Workload& w = *workloads.at({p.quant, p.routing});
    w.set_m(p.m);
    for (const std::string& name : (*specs)[i].configs) {
      const auto c = moe::Config::from_name(name);
      if (const auto why = c.quant != p.quant ? std::optional<std::string>("not the first config's dtype")
                                              : moe::why_unsupported(p, c, Target::from_arch(facts_.arch))) {
        std::printf("TIME %s %s unsupported: %s\n", p.key().c_str(), name.c_str(), why->c_str());
        continue;
      }
      const auto o = run(w, p, c, 32);
      EXPECT_TRUE(o.cmp.passed) << name << ": " << o.cmp.summary();
      EXPECT_FALSE(o.guard) << name << ": " << *o.guard;
      const auto pipeline = pipeline_for(c, 32);
      Stream s;
      const auto st = time_launches([&](int i) { w.launch(c, pipeline, i % w.sets(), s); }, s, TimingPlan{});
      std::printf("TIME %s %s median_us=%.2f min_us=%.2f spread=%.3f weights_GBps=%.0f\n", p.key().c_str(), name.c_str(),
                  st.median_us, st.min_us, st.spread, p.weight_bytes() / (st.median_us * 1e-6) / 1e9);
    }
  }
}

TEST_F(MoeGpu, DecodesEveryE4m3CodeExactly) {
  // The MMA path's fragment decode (sm_80+: shift + bf16x2 FMA, four codes a load) on all 256 codes,
  // against the host codec.
  for (bool fnuz : {false, true}) {
    KernelSource k;
    k.family = "moe_decode_check";
    k.source = "#include \"moe_gemm.h\"\nnamespace tt {\ntemplate <bool kFnuz> __global__ void moe_decode_check(const u8* codes, u32* out) {\n"
               "  const int i = static_cast<int>(thread_x());\n  moe_quad<true, kFnuz>(codes, 4 * i, out[2 * i], out[2 * i + 1]);\n}\n}\n";
    k.name_expression = std::string("tt::moe_decode_check<") + (fnuz ? "true" : "false") + ">";
    const auto rec = modules_->compiler().compile(k);
    ASSERT_TRUE(rec.ok) << rec.log;
    Module m(rec.binary, rec.lowered_name);
    std::vector<std::uint8_t> codes(512);
    for (int i = 0; i < 256; ++i) {
      codes[2 * i] = static_cast<std::uint8_t>(i);
      codes[2 * i + 1] = static_cast<std::uint8_t>(255 - i);
    }
    DeviceBuffer in(codes.size()), out(256 * 4);
    in.upload(codes.data(), codes.size());
    TUNETAB_HIP_CHECK(hipDeviceSynchronize());
    void* a = in.get();
    void* b = out.get();
    void* params[] = {&a, &b};
    LaunchDims d;
    d.block[0] = 128;
    Stream s;
    launch(m, d, s, params);
    s.synchronize();
    std::vector<std::uint32_t> got(256);
    out.download(got.data(), 256 * 4);
    for (int i = 0; i < 256; ++i)
      for (int h = 0; h < 2; ++h) {
        const std::uint8_t code = codes[2 * i + h];
        if ((!fnuz && (code & 0x7f) == 0x7f) || (fnuz && code == 0x80)) continue;  // NaN encodings
        const float want = moe::e4m3_to_float(code, fnuz);
        const std::uint16_t bits = static_cast<std::uint16_t>(got[i] >> (16 * h));
        EXPECT_EQ(gemm::bf16_to_float(bits), want) << "code " << int(code) << (fnuz ? " fnuz" : " fn");
      }
  }
}

TEST_F(MoeGpu, SmallerMServedFromTheCapacityWorkload) {
  // One allocation at M = 336 serves every smaller M (coverage validation): each prefix matches the
  // capacity's reference rows, and nothing is written after row m.
  const moe::Problem p{336, 2048, 512, 32, 8, moe::Quant::kFp8, moe::Routing::kSkewed};
  moe::Workload w(p, 21, 1, split_ws(p, 4));
  const auto c = moe::Config::from_name("fp8_m16w16_n32x128_k128_s4_mma_sk2");
  const auto pipeline = pipeline_for(c, 32);
  Stream s;
  for (std::int64_t m : {336, 257, 64, 7, 1}) {
    w.set_m(m);
    w.poison_output();
    w.launch(c, pipeline, 0, s);
    ASSERT_TRUE(s.synchronize_for(20000));
    const auto out = w.download_output();
    ASSERT_EQ(out.size(), static_cast<std::size_t>(m * p.model_dim));
    const auto cmp = gemm::compare(out.data(), w.reference().data(), out.size(), moe::tolerance(p));
    EXPECT_TRUE(cmp.passed) << "M=" << m << ": " << cmp.summary();
    const auto g = w.guard_violation();
    EXPECT_FALSE(g) << "M=" << m << ": " << *g;
  }
}
