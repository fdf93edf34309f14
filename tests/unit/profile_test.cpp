#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "exporters/csv.h"
#include "tuner/error.h"
#include "tuner/text_file.h"
#include "tuner/profile/matrix.h"
#include "tuner/shapes.h"
#include "test_files.h"

namespace po = boost::program_options;
using namespace tunetab;
using namespace tunetab::profile;
using tunetab::testing::expect_input_error;

namespace {

std::string repo(const std::string& rel) { return std::string(TUNETAB_SOURCE_DIR) + "/" + rel; }
std::string aiter(const std::string& rel) { return std::string(TUNETAB_SHARED_DIR) + "/aiter-configs/" + rel; }

/// The envelope as `tunetab shapes` builds it: `flags` on the command line over `profile` (repo-relative
/// unless absolute).
Envelope envelope(const std::vector<std::string>& flags, const std::string& profile = "") {
  po::variables_map vm;
  po::store(po::command_line_parser(flags).options(envelope_options()).run(), vm);
  return envelope_from(vm, profile.empty() || profile[0] == '/' ? profile : repo(profile));
}

Matrix derive(const std::string& profile, const std::vector<std::string>& flags = {}) {
  const Envelope env = envelope(flags, profile);
  return derive_matrix(read_model(env.hf_config), env);
}

std::string join(const std::vector<std::string>& fields) {
  std::string out;
  for (const auto& f : fields) out += (out.empty() ? "" : ",") + f;
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// A fused-MoE key as an AITER tuned table keys it: "[gfx,]cu_num,model_dim,...,doweight_stage1".
std::string device_key(const Matrix& m, bool with_gfx) {
  EXPECT_EQ(m.fmoe.size(), 1u);
  return (with_gfx ? m.envelope.gfx + "," : "") + std::to_string(m.envelope.cu_num) + "," + join(m.fmoe.at(0).key.fields());
}

/// Every fused-MoE key of a real AITER table, device columns first when it has them.
std::set<std::string> table_fmoe_keys(const std::string& path) {
  const csv::Table t = csv::read_file(path);
  std::vector<std::string> cols;
  for (const char* c : {"gfx", "cu_num"})
    if (t.has_column(c)) cols.push_back(c);
  for (const char* c : {"model_dim", "inter_dim", "expert", "topk", "act_type", "dtype", "q_dtype_a", "q_dtype_w", "q_type",
                        "use_g1u1", "doweight_stage1"})
    cols.push_back(c);
  std::set<std::string> keys;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    std::vector<std::string> f;
    for (const auto& c : cols) f.push_back(csv::field(t, i, c));
    keys.insert(join(f));
  }
  return keys;
}

/// Every "N,K" of real AITER GEMM tables (some pad their fields with spaces).
std::set<std::string> table_nk(const std::vector<std::string>& paths) {
  std::set<std::string> out;
  for (const auto& p : paths) {
    const csv::Table t = csv::read_file(aiter(p));
    for (std::size_t i = 0; i < t.rows.size(); ++i) out.insert(trim(csv::field(t, i, "N")) + "," + trim(csv::field(t, i, "K")));
  }
  return out;
}

/// The "N,K" of the GEMM key a layer runs.
std::string nk_of(const Matrix& m, const std::string& layer) {
  for (const auto& e : m.gemm)
    if (std::find(e.key.layers.begin(), e.key.layers.end(), layer) != e.key.layers.end())
      return std::to_string(e.key.n) + "," + std::to_string(e.key.k);
  ADD_FAILURE() << "no GEMM key runs " << layer;
  return "";
}

std::string table(const Matrix& m, const std::string& name) {
  for (const auto& [file, text] : aiter_untuned_tables(m))
    if (file == name) return text;
  return "";
}

/// A config.json in the temp folder, removed with the object.
struct TempConfig {
  std::filesystem::path path;
  TempConfig(const std::string& name, const std::string& text) : path(std::filesystem::temp_directory_path() / name) {
    std::ofstream(path) << text;
  }
  ~TempConfig() { std::filesystem::remove(path); }
};

class ProfileTables : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(aiter("model_configs"))) GTEST_SKIP() << "shared/aiter-configs not present";
  }
};

}  // namespace

TEST_F(ProfileTables, DeepSeekV3Tp8FusedSharedExpertMatchesAiter) {
  const Matrix m = derive("profiles/deepseek-v3-fp8-tp8.cfg");
  ASSERT_EQ(m.fmoe.size(), 1u);
  const FmoeKey& k = m.fmoe[0].key;
  EXPECT_EQ(k.model_dim, 7168);
  EXPECT_EQ(k.inter_dim, 256);
  EXPECT_EQ(k.expert, 257);
  EXPECT_EQ(k.topk, 9);
  EXPECT_TRUE(table_fmoe_keys(aiter("model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv")).count(device_key(m, false)))
      << device_key(m, false);
  // AITER's own untuned file for this deployment, byte for byte: same key, same tokens.
  EXPECT_EQ(table(m, "untuned_fmoe.csv"), read_text_file(aiter("model_configs/a8w8_blockscale_untuned_fmoe_ds_v3.csv")));
}

TEST_F(ProfileTables, DeepSeekV3Ep8OnGfx942MatchesAiter) {
  const Matrix m = derive("profiles/deepseek-v3-fp8-ep8-gfx942.cfg");
  EXPECT_EQ(device_key(m, false),
            "304,7168,2048,33,9,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fnuz,torch.float8_e4m3fnuz,"
            "QuantType.per_1x128,1,0");
  EXPECT_TRUE(table_fmoe_keys(aiter("model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv")).count(device_key(m, false)));
}

TEST_F(ProfileTables, Qwen3Tp4AndEp8MatchAiter) {
  const Matrix tp4 = derive("profiles/qwen3-235b-fp8-tp4.cfg");
  const Matrix ep8 = derive("profiles/qwen3-235b-fp8-ep8.cfg");
  const auto& a = tp4.fmoe.at(0).key;
  const auto& b = ep8.fmoe.at(0).key;
  EXPECT_EQ((std::vector<std::int64_t>{a.model_dim, a.inter_dim, a.expert, a.topk}), (std::vector<std::int64_t>{4096, 384, 128, 8}));
  EXPECT_EQ((std::vector<std::int64_t>{b.model_dim, b.inter_dim, b.expert, b.topk}), (std::vector<std::int64_t>{4096, 1536, 16, 8}));
  const auto keys = table_fmoe_keys(aiter("model_configs/a8w8_blockscale_tuned_fmoe_qwen3_235b.csv"));
  EXPECT_TRUE(keys.count(device_key(tp4, false))) << device_key(tp4, false);
  EXPECT_TRUE(keys.count(device_key(ep8, false))) << device_key(ep8, false);
  // AITER's untuned file holds both deployments: EP8's rows, then TP4's.
  const std::string tp4_rows = table(tp4, "untuned_fmoe.csv");
  EXPECT_EQ(table(ep8, "untuned_fmoe.csv") + tp4_rows.substr(tp4_rows.find('\n') + 1),
            read_text_file(aiter("model_configs/a8w8_blockscale_untuned_fmoe_qwen3_235b.csv")));
}

TEST_F(ProfileTables, Glm5OnGfx942MatchesAiterUnderEp8AndTp8) {
  const auto keys = table_fmoe_keys(aiter("model_configs/a8w8_blockscale_tuned_fmoe_glm5_1.csv"));
  const Matrix ep8 = derive("profiles/glm-5-fp8-ep8-gfx942.cfg");
  EXPECT_EQ(device_key(ep8, true),
            "gfx942,304,6144,2048,32,8,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fnuz,torch.float8_e4m3fnuz,"
            "QuantType.per_1x128,1,0");
  EXPECT_TRUE(keys.count(device_key(ep8, true)));
  // Flags override the profile: the same deployment at TP8 with the shared expert fused.
  const Matrix tp8 = derive("profiles/glm-5-fp8-ep8-gfx942.cfg", {"--ep", "1", "--fuse-shared-experts"});
  EXPECT_EQ(tp8.envelope.tp, 8);
  EXPECT_EQ(tp8.envelope.ep, 1);
  EXPECT_TRUE(keys.count(device_key(tp8, true))) << device_key(tp8, true);
  EXPECT_EQ(tp8.fmoe.at(0).key.expert, 257);
}

TEST_F(ProfileTables, Glm45PerTokenFp8MatchesAiter) {
  const Matrix m = derive("profiles/glm-4.5-fp8-per-token-tp8.cfg");
  EXPECT_EQ(m.fmoe.at(0).key.q_type, "QuantType.per_Token");
  EXPECT_TRUE(table_fmoe_keys(aiter("model_configs/glm47_fp8_tuned_fmoe.csv")).count(device_key(m, false))) << device_key(m, false);
  const auto nk = table_nk({"model_configs/a8w8_bpreshuffle_untuned_gemm_glm47.csv"});
  for (const char* layer : {"qkv_proj", "o_proj", "mlp.gate_up_proj"}) EXPECT_TRUE(nk.count(nk_of(m, layer))) << layer;
  // At TP4 o_proj and the dense down_proj have the same shape: one key runs both.
  const Matrix tp4 = derive("profiles/glm-4.5-fp8-per-token-tp8.cfg", {"--tp", "4"});
  EXPECT_EQ(nk_of(tp4, "o_proj"), "5120,3072");
  EXPECT_EQ(nk_of(tp4, "mlp.down_proj"), "5120,3072");
  for (const char* layer : {"qkv_proj", "o_proj", "mlp.gate_up_proj"}) EXPECT_TRUE(nk.count(nk_of(tp4, layer))) << layer;
}

TEST_F(ProfileTables, MiniMaxM2AndMixtralMatchAiter) {
  const auto mm = table_fmoe_keys(aiter("model_configs/a8w8_blockscale_tuned_fmoe_minimax-m2_5.csv"));
  const Matrix tp4 = derive("profiles/minimax-m2-fp8-tp4.cfg");
  const Matrix ep4 = derive("profiles/minimax-m2-fp8-tp4.cfg", {"--ep=4"});
  EXPECT_TRUE(mm.count(device_key(tp4, false))) << device_key(tp4, false);
  EXPECT_TRUE(mm.count(device_key(ep4, false))) << device_key(ep4, false);
  EXPECT_EQ(ep4.fmoe.at(0).key.expert, 64);
  // Mixtral-8x22B at TP4 in bf16, from flags alone: a row of AITER's untuned_fmoe.csv.
  const Envelope env = envelope({"--hf-config", repo("profiles/models/mixtral-8x22b.json"), "--tp", "4"});
  const Matrix mx = derive_matrix(read_model(env.hf_config), env);
  EXPECT_TRUE(table_fmoe_keys(aiter("untuned_fmoe.csv")).count(join(mx.fmoe.at(0).key.fields()))) << join(mx.fmoe.at(0).key.fields());
}

TEST_F(ProfileTables, DenseGemmKeysMatchAiterTables) {
  // DeepSeek-V3 TP8 with the shared expert as dense GEMMs: MLA projections, dense layers, shared expert.
  const Matrix ds = derive("profiles/deepseek-v3-fp8-tp8.cfg", {"--fuse-shared-experts=false"});
  const auto ds_fp8 = table_nk({"model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv", "model_configs/a8w8_blockscale_untuned_gemm_ds_v3.csv",
                                "model_configs/a8w8_blockscale_bpreshuffle_untuned_gemm_dsv3.csv"});
  const auto ds_bf16 = table_nk({"model_configs/dsv3_bf16_untuned_gemm.csv"});
  for (const auto& e : ds.gemm) {
    const std::string nk = std::to_string(e.key.n) + "," + std::to_string(e.key.k);
    EXPECT_TRUE((e.key.quant == Quant::kBf16 ? ds_bf16 : ds_fp8).count(nk)) << e.key.layers[0] << " " << nk;
  }
  EXPECT_EQ(nk_of(ds, "shared_experts.gate_up_proj"), "512,7168");
  EXPECT_EQ(nk_of(ds, "lm_head"), "16160,7168");

  const auto qwen = table_nk({"model_configs/a8w8_blockscale_tuned_gemm_qwen3_235b.csv"});
  for (const char* tp : {"4", "8"}) {
    const Matrix m = derive("profiles/qwen3-235b-fp8-tp4.cfg", {"--tp", tp});
    for (const char* layer : {"qkv_proj", "o_proj"}) EXPECT_TRUE(qwen.count(nk_of(m, layer))) << "tp" << tp << " " << layer;
  }

  const Matrix glm5 = derive("profiles/glm-5-fp8-ep8-gfx942.cfg");
  const auto glm5_fp8 = table_nk({"model_configs/a8w8_blockscale_tuned_gemm_glm5_1.csv"});
  const auto glm5_bf16 = table_nk({"model_configs/glm5_untuned_gemm_bf16.csv"});
  for (const char* layer : {"fused_qkv_a_proj", "q_b_proj", "o_proj", "indexer.wq_b", "mlp.gate_up_proj", "mlp.down_proj",
                            "shared_experts.gate_up_proj", "shared_experts.down_proj"})
    EXPECT_TRUE(glm5_fp8.count(nk_of(glm5, layer))) << layer << " " << nk_of(glm5, layer);
  for (const char* layer : {"indexer.wk", "indexer.weights_proj", "mlp.gate"})
    EXPECT_TRUE(glm5_bf16.count(nk_of(glm5, layer))) << layer << " " << nk_of(glm5, layer);

  const Envelope env = envelope({"--hf-config", repo("profiles/models/llama-3.1-70b.json"), "--tp", "8"});
  const Matrix llama = derive_matrix(read_model(env.hf_config), env);
  EXPECT_TRUE(llama.fmoe.empty());
  const auto llama_nk = table_nk({"model_configs/llama70B_untuned_gemm_bf16.csv"});
  for (const char* layer : {"qkv_proj", "o_proj", "mlp.gate_up_proj", "mlp.down_proj"})
    EXPECT_TRUE(llama_nk.count(nk_of(llama, layer))) << layer << " " << nk_of(llama, layer);
}

TEST_F(ProfileTables, UntunedCsvsHaveAitersColumnsAndReadBack) {
  const Matrix m = derive("profiles/deepseek-v3-fp8-tp8.cfg");
  auto header = [](const std::string& text) { return text.substr(0, text.find('\n')); };
  EXPECT_EQ(header(table(m, "untuned_fmoe.csv")), header(read_text_file(aiter("untuned_fmoe.csv"))));
  EXPECT_EQ(header(table(m, "a8w8_blockscale_untuned_gemm.csv")), header(read_text_file(aiter("a8w8_blockscale_untuned_gemm.csv"))));
  EXPECT_EQ(header(table(m, "bf16_untuned_gemm.csv")), header(read_text_file(aiter("bf16_untuned_gemm.csv"))));
  EXPECT_EQ(header(table(derive("profiles/glm-4.5-fp8-per-token-tp8.cfg"), "a8w8_untuned_gemm.csv")),
            header(read_text_file(aiter("a8w8_untuned_gemm.csv"))));
  // The bf16 file feeds `tunetab tune --shapes-file`: one problem per bucket of each bf16 key.
  const auto path = std::filesystem::temp_directory_path() / "tunetab_profile_bf16_untuned.csv";
  std::ofstream(path) << table(m, "bf16_untuned_gemm.csv");
  std::size_t rows = 0;
  for (const auto& e : m.gemm) rows += e.key.quant == Quant::kBf16 ? e.buckets.size() : 0;
  EXPECT_EQ(read_aiter_untuned_gemm(path.string()).size(), rows);
  std::filesystem::remove(path);
}

TEST(Profile, MDomainsFollowTheEnvelope) {
  const Matrix m = derive("profiles/deepseek-v3-fp8-tp8.cfg", {"--max-num-batched-tokens", "20000", "--max-num-seqs", "300"});
  EXPECT_EQ(m.fmoe.at(0).domain, (MDomain{1, 20000}));
  EXPECT_EQ(m.fmoe.at(0).buckets.back(), (Bucket{32768, 16385, 20000}));
  for (const auto& e : m.gemm) {
    const bool lm_head = e.key.layers == std::vector<std::string>{"lm_head"};
    EXPECT_EQ(e.domain, (MDomain{1, lm_head ? 300 : 20000})) << e.key.layers[0];
    EXPECT_EQ(e.rule, RuleKind::kAiterGemm);
  }
  const Matrix v = derive_matrix(m.model, m.envelope, Rules{RuleKind::kVllmNearest, RuleKind::kExact});
  EXPECT_EQ(v.fmoe.at(0).buckets.back().m, 16384);  // keys double past 4096; 16384 is the nearest to 20000
  EXPECT_EQ(v.gemm.back().buckets.size(), 300u);
}

TEST(Profile, FineGemmRowsComeFromTheEnvelope) {
  const Matrix m = derive("profiles/glm-5-fp8-ep8-h200.cfg", {});
  EXPECT_EQ(m.envelope.gemm_fine_rows, (MDomain{129, 512}));
  for (const auto& e : m.gemm) {
    std::set<std::int64_t> rows;
    for (const auto& b : e.buckets) rows.insert(b.m);
    const bool lm_head = e.key.layers == std::vector<std::string>{"lm_head"};
    EXPECT_EQ(rows.count(240), 1u) << e.key.layers[0];  // 16-row steps up to 256, then 32-row steps
    EXPECT_EQ(rows.count(248), 0u) << e.key.layers[0];
    EXPECT_EQ(rows.count(352), lm_head ? 0u : 1u) << e.key.layers[0];  // lm_head's Ms end at max-num-seqs (256)
    EXPECT_EQ(rows.count(384), lm_head ? 0u : 1u) << e.key.layers[0];
  }
  for (const auto& b : m.fmoe.at(0).buckets) EXPECT_NE(b.m, 352);  // the MoE table keeps its own rule
  const Matrix coarse = derive("profiles/glm-5-fp8-ep8-h200.cfg", {"--gemm-fine-rows", "1025-2048"});
  for (const auto& b : coarse.gemm.at(0).buckets) EXPECT_NE(b.m, 352);
  EXPECT_EQ(std::count_if(coarse.gemm.at(0).buckets.begin(), coarse.gemm.at(0).buckets.end(),
                          [](const Bucket& b) { return b.m > 1024 && b.m <= 2048; }), 16);  // 64-row steps
}

TEST(Profile, ProfileSettingsAndFlagPrecedence) {
  const Envelope env = envelope({"--tp", "4", "--max-num-seqs=128"}, "profiles/qwen3-235b-fp8-ep8.cfg");
  EXPECT_EQ(env.tp, 4);  // flag
  EXPECT_EQ(env.ep, 8);  // file
  EXPECT_EQ(env.max_num_seqs, 128);
  EXPECT_EQ(env.quant, Quant::kFp8Block128);
  EXPECT_EQ(env.hf_config, repo("profiles/models/qwen3-235b-a22b.json"));  // relative to the profile
  EXPECT_EQ(env.fp8_torch_dtype(), "torch.float8_e4m3fn");
  const Envelope d = envelope({"--hf-config", "x.json", "--gfx", "gfx942"});
  EXPECT_EQ(d.hf_config, "x.json");
  EXPECT_EQ(d.cu_num, 304);
  EXPECT_EQ(d.fp8_torch_dtype(), "torch.float8_e4m3fnuz");
}

TEST(Profile, BadEnvelopeNamesTheSetting) {
  expect_input_error([] { quant_from_string("int4"); }, "--quant 'int4': expected one of bf16, fp8-block128, fp8-per-token");
  expect_input_error([] { envelope({"--hf-config", "x.json", "--quant", "fp4"}); }, "--quant 'fp4'");
  expect_input_error([] { envelope({"--tp", "2"}); }, "--hf-config");
  expect_input_error([] { envelope({"--hf-config", "x.json", "--tp", "0"}); }, "--tp 0");
  expect_input_error([] { envelope({"--hf-config", "x.json", "--max-num-batched-tokens", "64"}); },
                     "--max-num-batched-tokens 64: must be at least --max-num-seqs (256)");
  expect_input_error([] { envelope({"--hf-config", "x.json", "--gfx", "mi300x"}); }, "--gfx 'mi300x'");
  expect_input_error([] { envelope({}, "profiles/nope.cfg"); }, "nope.cfg: cannot open the profile");
  expect_input_error([] { envelope({"--hf-config", "x.json", "--gemm-fine-rows", "257..512"}); },
                     "--gemm-fine-rows '257..512': expected FIRST-LAST");
  expect_input_error([] { envelope({"--hf-config", "x.json", "--gemm-fine-rows", "300-512"}); },
                     "--gemm-fine-rows 300-512: expected FIRST-LAST with FIRST - 1 and LAST powers of two");
  const TempConfig bad("tunetab_bad_profile.cfg", "tp = 8\ntensor-parallel = 8\n");
  expect_input_error([&] { envelope({}, bad.path.string()); }, "tunetab_bad_profile.cfg: ");
  expect_input_error([&] { envelope({}, bad.path.string()); }, "'tensor-parallel'");
  // A bad value read from a profile names the file and its key; a flag's names the flag, even with a profile.
  const TempConfig quant("tunetab_bad_quant.cfg", "hf-config = x.json\nquant = fp9\ntp = 0\n");
  expect_input_error([&] { envelope({"--tp", "8"}, quant.path.string()); },
                     quant.path.string() + ": quant 'fp9': expected one of bf16, fp8-block128, fp8-per-token");
  expect_input_error([&] { envelope({"--quant", "bf16"}, quant.path.string()); }, quant.path.string() + ": tp 0: expected");
  expect_input_error([&] { envelope({"--quant", "fp4", "--tp", "8"}, quant.path.string()); }, "--quant 'fp4'");
  EXPECT_EQ(envelope({"--quant", "bf16", "--tp", "8"}, quant.path.string()).tp, 8);
}

TEST(Profile, BadConfigNamesFileAndField) {
  expect_input_error([] { read_model("/nonexistent/config.json"); }, "/nonexistent/config.json: cannot open");
  const TempConfig malformed("tunetab_malformed.json", "{\"hidden_size\": 7168,\n \"architectures\": [\"X\"\n}");
  expect_input_error([&] { read_model(malformed.path.string()); }, "tunetab_malformed.json: malformed JSON");

  auto qwen = nlohmann::json::parse(read_text_file(repo("profiles/models/qwen3-235b-a22b.json")));
  qwen.erase("num_experts_per_tok");
  expect_input_error([&] { parse_model(qwen, "q.json"); }, "q.json: field 'num_experts_per_tok' missing (Qwen3MoeForCausalLM needs it)");
  qwen["num_experts_per_tok"] = "eight";
  expect_input_error([&] { parse_model(qwen, "q.json"); }, "q.json: field 'num_experts_per_tok' must be an integer >= 1, got \"eight\"");

  const nlohmann::json unknown = {{"architectures", {"FooForCausalLM"}}, {"hidden_size", 1024}, {"num_experts", 8}};
  expect_input_error([&] { parse_model(unknown, "foo.json"); },
                     "foo.json: unknown architecture 'FooForCausalLM' (known: DeepseekV3ForCausalLM");
  expect_input_error([&] { parse_model(unknown, "foo.json"); },
                     "lacks: moe_intermediate_size or intermediate_size; experts per token (num_experts_per_tok)");
}

TEST(Profile, UnknownArchitectureWithMoeFieldsIsReadGenerically) {
  const nlohmann::json foo = {{"architectures", {"FooMoeForCausalLM"}}, {"hidden_size", 2048}, {"moe_intermediate_size", 1000},
                              {"num_local_experts", 24}, {"num_experts_per_tok", 4}};
  const Model m = parse_model(foo, "foo.json");
  Envelope env;
  env.hf_config = "foo.json";
  env.tp = 2;
  const Matrix x = derive_matrix(m, env);
  EXPECT_EQ(join(x.fmoe.at(0).key.fields()),
            "2048,500,24,4,ActivationType.Silu,torch.bfloat16,torch.bfloat16,torch.bfloat16,QuantType.No,1,0");
  EXPECT_EQ(x.gemm.size(), 1u);  // the router only: no attention or vocabulary fields
  env.tp = 16;
  expect_input_error([&] { derive_matrix(m, env); }, "foo.json: moe_intermediate_size 1000 is not divisible by --tp 16");
  env.tp = 1;
  env.ep = 5;
  expect_input_error([&] { derive_matrix(m, env); }, "foo.json: num_local_experts 24 is not divisible by --ep 5");
  env.ep = 1;
  env.fuse_shared_experts = true;
  expect_input_error([&] { derive_matrix(m, env); }, "--fuse-shared-experts: foo.json has no shared experts");
}

TEST(Profile, DenseModelRejectsExpertParallelism) {
  const Envelope env = envelope({"--ep", "2"}, "profiles/llama-3.1-8b-bf16-tp1.cfg");
  expect_input_error([&] { derive_matrix(read_model(env.hf_config), env); }, "--ep 2: ");
  const Envelope tp3 = envelope({"--tp", "3"}, "profiles/llama-3.1-8b-bf16-tp1.cfg");
  expect_input_error([&] { derive_matrix(read_model(tp3.hf_config), tp3); }, "num_attention_heads 32 is not divisible by --tp 3");
}
