#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "db/store.h"
#include "kernels/gemm/gemm.h"
#include "tuner/family_ops.h"
#include "tuner/hash.h"
#include "tuner/jit/compiler.h"
#include "tuner/jit/embedded.h"
#include "tuner/runner.h"

using namespace tunetab;

#if defined(TUNETAB_PLATFORM_NVIDIA)
static const char* kArch = "sm_90a";
static const char* kOtherArch = "sm_100a";
static const char* kOtherPlatformArch = "gfx942";
#else
static const char* kArch = "gfx90a";
static const char* kOtherArch = "gfx942";
static const char* kOtherPlatformArch = "sm_90a";
#endif

static KernelSource some_kernel(int bits = 32) {
  return gemm::kernels(gemm::Config::from_name("m64n64k64_w32x32_s3_mma_v8_sk1"), bits)[0];
}

TEST(JitKey, CoversFlagsArchSourceAndInstance) {
  const jit::Compiler base({kArch, {}});
  const std::string key = base.key_text(some_kernel());
  EXPECT_EQ(key, jit::Compiler({kArch, {}}).key_text(some_kernel()));  // stable
  EXPECT_NE(key, jit::Compiler({kArch, {"-DEXTRA=1"}}).key_text(some_kernel()));
  EXPECT_NE(key, jit::Compiler({kOtherArch, {}}).key_text(some_kernel()));
  EXPECT_NE(key, base.key_text(some_kernel(64)));
  KernelSource changed = some_kernel();
  changed.source += "// edit\n";
  EXPECT_NE(key, base.key_text(changed));
  EXPECT_NE(key.find(jit::Compiler::version()), std::string::npos);
  EXPECT_NE(key.find(jit::headers_hash_for(some_kernel().source, jit::embedded_headers())), std::string::npos);
  EXPECT_NE(key.find("tunetab=" TUNETAB_VERSION), std::string::npos);
}

TEST(JitKey, HeadersHashCoversWhatTheSourceIncludesAndNothingElse) {
  std::vector<jit::EmbeddedHeader> h = {{"a.h", "#include \"b.h\"\n"},
                                        {"b.h", "#if X\n#  include <c.h>\n#endif\n"},
                                        {"c.h", "int c;\n"},
                                        {"d.h", "int d;\n"}};
  const std::string src = "#include \"a.h\"\n";
  EXPECT_EQ(jit::included_headers(src, h), (std::vector<std::string>{"a.h", "b.h", "c.h"}));
  const std::string before = jit::headers_hash_for(src, h);
  h[3].text = "int d2;\n";  // a header nothing here includes
  EXPECT_EQ(jit::headers_hash_for(src, h), before);
  h[2].text = "int c2;\n";  // one included through two others, under a conditional
  EXPECT_NE(jit::headers_hash_for(src, h), before);
  EXPECT_TRUE(jit::included_headers("int x;\n", h).empty());
  // The real templates: the FP8 GEMM builds on the bf16 GEMM's header; the fused MoE on neither.
  const auto all = jit::embedded_headers();
  const auto fp8 = jit::included_headers("#include \"gemm_fp8_blockscale.h\"\n", all);
  for (const char* name : {"gemm_fp8_blockscale.h", "gemm_bf16.h", "tt_async.h", "tt_common.h"})
    EXPECT_NE(std::find(fp8.begin(), fp8.end(), name), fp8.end()) << name;
  const auto moe = jit::included_headers("#include \"moe_gemm.h\"\n", all);
  EXPECT_EQ(std::find(moe.begin(), moe.end(), "gemm_bf16.h"), moe.end());
  EXPECT_EQ(std::find(moe.begin(), moe.end(), "gemm_fp8_blockscale.h"), moe.end());
  EXPECT_NE(std::find(moe.begin(), moe.end(), "tt_async.h"), moe.end());
}

TEST(JitKey, HashIsStableAndSensitive) {
  EXPECT_EQ(hash_hex("abc"), hash_hex("abc"));
  EXPECT_NE(hash_hex("abc"), hash_hex("abd"));
  EXPECT_EQ(hash_hex("").size(), 32u);
}

TEST(JitEmbedded, TemplatesAreEmbedded) {
  bool gemm = false, common = false;
  for (const auto& h : jit::embedded_headers()) {
    gemm |= h.name == "gemm_bf16.h" && h.text.find("gemm_bf16_tn") != std::string_view::npos;
    common |= h.name == "tt_common.h";
  }
  EXPECT_TRUE(gemm);
  EXPECT_TRUE(common);
}

TEST(JitCompile, CompilesCachesAndReportsErrors) {
  db::Store cache(":memory:");
  const jit::Compiler c({kArch, {}});
  std::size_t compiled = 9;
  const auto first = jit::compile_all(c, {some_kernel()}, &cache, 1, false, &compiled);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(compiled, 1u);
  ASSERT_TRUE(first[0].ok) << first[0].log;
  EXPECT_FALSE(first[0].binary.empty());
  EXPECT_FALSE(first[0].lowered_name.empty());
  EXPECT_GT(first[0].compile_ms, 0);
  // Second time: served from the cache, the very same bytes.
  const auto again = jit::compile_all(c, {some_kernel()}, &cache, 1, false, &compiled);
  EXPECT_EQ(again[0].binary, first[0].binary);
  EXPECT_EQ(compiled, 0u);
  EXPECT_EQ(again[0].key_hash, first[0].key_hash);
  // A broken source is a failed record with the compiler's log, not an exception.
  KernelSource broken = some_kernel();
  broken.source += "this is not C++;\n";
  const auto bad = c.compile(broken);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.log.find("error"), std::string::npos) << bad.log;
}

TEST(JitKey, ExportKeepsOnlyRowsJudgedOnTheCodeItBuildsNow) {
  const FamilyOps& ops = family_ops(gemm::kFamily);
  const std::string config = "m64n64k64_w32x32_s3_mma_v8_sk1";
  // The key a tune stores with the row's coverage: its compile's.
  const auto rec = jit::Compiler({kArch, {}}).compile(ops.kernels(config, 32).at(0));
  auto row = [&](const std::string& arch, std::optional<std::string> code_key) {
    db::BestRow r;
    r.config_name = config;
    r.problem_json = R"({"m":16,"n":64,"k":64})";
    r.device.arch = arch;
    if (code_key) {
      db::CoverageRecord c;
      c.index_bits = 32;
      c.code_key = *code_key;
      r.coverage = c;
    }
    return r;
  };
  std::vector<StaleRow> stale;
  const auto kept = rows_on_current_code(
      ops, {row(kArch, rec.key_hash), row(kArch, "the key of an older template"), row(kArch, std::nullopt), row(kOtherPlatformArch, rec.key_hash)},
      {}, &stale);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].coverage->code_key, rec.key_hash);
  ASSERT_EQ(stale.size(), 3u);
  EXPECT_NE(stale[0].text().find("other code"), std::string::npos) << stale[0].text();
  EXPECT_NE(stale[0].text().find(config), std::string::npos) << stale[0].text();
  EXPECT_NE(stale[1].text().find("no coverage"), std::string::npos) << stale[1].text();
  EXPECT_NE(stale[2].text().find("cannot build"), std::string::npos) << stale[2].text();
  // The tune's flags are part of its code: a row tuned without them is other code for a build with them.
  EXPECT_TRUE(rows_on_current_code(ops, {row(kArch, rec.key_hash)}, {"-DEXTRA=1"}, nullptr).empty());
}

#if defined(TUNETAB_PLATFORM_NVIDIA)
// ptxas serializes a wgmma pipeline whose accumulators are read between MMA groups, and says so only in its
// log: the compile check (the jit tests) must fail such a kernel. A planted one, and a real TMA kernel that must not.
TEST(JitCompile, SerializedWgmmaPipelineFailsTheCompileCheck) {
  KernelSource planted;
  planted.family = "planted";
  planted.source = R"(#include "gemm_bf16.h"
namespace tt {
__global__ void planted_serialized(GemmArgs p) {
#if TT_HAS_WGMMA
  extern __shared__ u32x4 smem[];
  float acc[32];
  for (int i = 0; i < 32; ++i) acc[i] = 0.f;
  const u64 d = wgmma_desc(smem);
  for (int kt = 0; kt < p.k; ++kt) {
    wgmma_fence();
    wgmma_bf16<64>(acc, d, d);
    wgmma_commit();
    if (acc[kt % 32] > 1.f) p.c[kt] = 1;  // an accumulator read under a branch, between MMA groups
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  p.c[thread_x()] = f32_to_bf16(acc[0]);
#endif
}
}
)";
  planted.name_expression = "tt::planted_serialized";
  planted.parameters = "tt::GemmArgs";
  TuneOptions opt;
  opt.jobs = 1;
  opt.progress = false;
  const jit::Compiler c({"sm_90a", {}});
  const auto rec = c.compile(planted);
  ASSERT_TRUE(rec.ok) << rec.log;  // it compiles and would run: only the log tells
  if (!has_ptxas_report(rec.log)) GTEST_SKIP() << "this NVRTC returns no ptxas report: the check is blind here";
  EXPECT_NE(wgmma_serialization_note(rec.log).find("C751"), std::string::npos) << rec.log;
  // The same source again: served from the CUDA compute cache, NVRTC would return no report (seen on the H200
  // machine); jit::Compiler switches that cache off.
  EXPECT_STREQ(std::getenv("CUDA_CACHE_DISABLE"), "1");
  EXPECT_TRUE(has_ptxas_report(c.compile(planted).log)) << "a repeated compile came back without ptxas's report";
  EXPECT_EQ(compile_and_report({planted}, "sm_90a", opt, nullptr), 1);
  // The swapped-operand TMA kernel: its transposed epilogue once serialized the main loop (a NaN branch in
  // the bf16 rounding); it must compile clean.
  const auto swap = gemm::kernels(gemm::Config::from_name("m192n88k64_w64x88_s6_tma_swap_v8_sk1"), 32);
  EXPECT_EQ(compile_and_report(swap, "sm_90a", opt, nullptr), 0);
}
#endif
