#include <gtest/gtest.h>

#include "db/store.h"
#include "kernels/gemm/gemm.h"
#include "tuner/hash.h"
#include "tuner/jit/compiler.h"
#include "tuner/jit/embedded.h"

using namespace tunetab;

#if defined(TUNETAB_PLATFORM_NVIDIA)
static const char* kArch = "sm_90a";
static const char* kOtherArch = "sm_100a";
#else
static const char* kArch = "gfx90a";
static const char* kOtherArch = "gfx942";
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
  EXPECT_NE(key.find(jit::embedded_headers_hash()), std::string::npos);
  EXPECT_NE(key.find("tunetab=" TUNETAB_VERSION), std::string::npos);
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
  const auto first = jit::compile_all(c, {some_kernel()}, &cache, 1, false);
  ASSERT_EQ(first.size(), 1u);
  ASSERT_TRUE(first[0].ok) << first[0].log;
  EXPECT_FALSE(first[0].binary.empty());
  EXPECT_FALSE(first[0].lowered_name.empty());
  EXPECT_GT(first[0].compile_ms, 0);
  // Second time: served from the cache, the very same bytes.
  const auto again = jit::compile_all(c, {some_kernel()}, &cache, 1, false);
  EXPECT_EQ(again[0].binary, first[0].binary);
  EXPECT_EQ(again[0].key_hash, first[0].key_hash);
  // A broken source is a failed record with the compiler's log, not an exception.
  KernelSource broken = some_kernel();
  broken.source += "this is not C++;\n";
  const auto bad = c.compile(broken);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.log.find("error"), std::string::npos) << bad.log;
}
