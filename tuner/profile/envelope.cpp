#include "tuner/profile/envelope.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "tuner/error.h"
#include "tuner/names.h"

namespace po = boost::program_options;

namespace tunetab::profile {

namespace {

// clang-format off
const std::pair<Quant, const char*> kQuantNames[] = {
  {Quant::kBf16,         "bf16"},
  {Quant::kFp8Block128,  "fp8-block128"},
  {Quant::kFp8PerToken,  "fp8-per-token"},
};
// clang-format on

/// The CU count of the usual part for an arch (MI300X/MI325X, MI355X); 0 where there is no single one.
int usual_cu_num(const std::string& gfx) {
  if (gfx == "gfx942") return 304;
  if (gfx == "gfx950") return 256;
  return 0;
}

}  // namespace

std::string to_string(Quant q) { return name_of(kQuantNames, q); }

Quant quant_from_string(const std::string& s) { return value_named(kQuantNames, s, "--quant"); }

std::string Envelope::fp8_torch_dtype() const {
  static const std::regex fnuz("gfx94[0-2]");
  return std::regex_match(gfx, fnuz) ? "torch.float8_e4m3fnuz" : "torch.float8_e4m3fn";
}

void Envelope::validate() const {
  if (tp < 1) throw_input("--tp " + std::to_string(tp) + ": expected a positive tensor-parallel size");
  if (ep < 1) throw_input("--ep " + std::to_string(ep) + ": expected a positive expert-parallel size");
  if (max_num_seqs < 1) throw_input("--max-num-seqs " + std::to_string(max_num_seqs) + ": expected a positive count");
  // NOTE: vLLM refuses the same combination: a step must fit one token of every sequence.
  if (max_num_batched_tokens < max_num_seqs)
    throw_input("--max-num-batched-tokens " + std::to_string(max_num_batched_tokens) +
                ": must be at least --max-num-seqs (" + std::to_string(max_num_seqs) + ")");
  static const std::regex arch("gfx[0-9a-f]+|sm_[0-9]+a?");
  if (!std::regex_match(gfx, arch)) throw_input("--gfx '" + gfx + "': expected an arch name such as gfx942, gfx950 or sm_90a");
  if (cu_num < 0) throw_input("--cu-num " + std::to_string(cu_num) + ": expected a CU (or SM) count");
  if (gemm_fine_rows.first != 0) validate_fine_rows(gemm_fine_rows, "--gemm-fine-rows");
}

nlohmann::json Envelope::to_json() const {
  return {{"hf_config", hf_config},
          {"tp", tp},
          {"ep", ep},
          {"fuse_shared_experts", fuse_shared_experts},
          {"max_num_batched_tokens", max_num_batched_tokens},
          {"max_num_seqs", max_num_seqs},
          {"quant", to_string(quant)},
          {"gfx", gfx},
          {"cu_num", cu_num},
          {"gemm_fine_rows", gemm_fine_rows.first == 0 ? nlohmann::json(nullptr)
                                                       : nlohmann::json{gemm_fine_rows.first, gemm_fine_rows.last}}};
}

po::options_description envelope_options() {
  const Envelope d;
  po::options_description o("serving envelope (flags, or keys of a --profile file)");
  o.add_options()
      ("hf-config", po::value<std::string>(), "the model's Hugging Face config.json")
      ("tp", po::value<int>()->default_value(d.tp), "tensor-parallel size")
      ("ep", po::value<int>()->default_value(d.ep), "expert-parallel size: experts split E/ep per rank, intermediate not split")
      ("fuse-shared-experts", po::value<bool>()->default_value(false)->implicit_value(true),
       "shared experts run inside the fused MoE (AITER): expert += n_shared, topk += n_shared")
      ("max-num-batched-tokens", po::value<std::int64_t>()->default_value(d.max_num_batched_tokens), "largest tokens per step (M)")
      ("max-num-seqs", po::value<std::int64_t>()->default_value(d.max_num_seqs), "largest sequences per step (lm_head M)")
      ("quant", po::value<std::string>()->default_value(to_string(d.quant)), "bf16, fp8-block128 or fp8-per-token")
      ("gfx", po::value<std::string>()->default_value(d.gfx), "device arch key (gfx942: e4m3fnuz; gfx950, sm_*: e4m3fn)")
      ("cu-num", po::value<int>()->default_value(0), "device CU count key (0: 304 on gfx942, 256 on gfx950)")
      ("gemm-fine-rows", po::value<std::string>(),
       "FIRST-LAST (e.g. 257-512): AITER GEMM tables hold a row per fine padding of M (16/32/64 rows) there, "
       "instead of one per power of two, each tuned and validated on its own Ms");
  return o;
}

namespace {

/// The envelope from `vm` as stored (flags over the profile's keys), checked.
Envelope read_envelope(const po::variables_map& vm, const std::string& profile, bool hf_config_flag, bool need_model) {
  Envelope env;
  if (vm.count("hf-config")) {
    std::filesystem::path p = vm["hf-config"].as<std::string>();
    if (!hf_config_flag && p.is_relative()) p = std::filesystem::path(profile).parent_path() / p;
    env.hf_config = p.string();
  }
  env.tp = vm["tp"].as<int>();
  env.ep = vm["ep"].as<int>();
  env.fuse_shared_experts = vm["fuse-shared-experts"].as<bool>();
  env.max_num_batched_tokens = vm["max-num-batched-tokens"].as<std::int64_t>();
  env.max_num_seqs = vm["max-num-seqs"].as<std::int64_t>();
  env.quant = quant_from_string(vm["quant"].as<std::string>());
  env.gfx = vm["gfx"].as<std::string>();
  env.cu_num = vm["cu-num"].as<int>();
  if (vm.count("gemm-fine-rows")) env.gemm_fine_rows = parse_m_range(vm["gemm-fine-rows"].as<std::string>(), "--gemm-fine-rows", "257-512");
  if (need_model && env.hf_config.empty())
    throw_input("--hf-config: no model config.json given (a flag or the profile's hf-config)");
  env.validate();
  if (env.cu_num == 0) env.cu_num = usual_cu_num(env.gfx);
  return env;
}

}  // namespace

Envelope envelope_from(po::variables_map& vm, const std::string& profile, bool need_model) {
  std::set<std::string> flags;  // keys given as flags: the rest came from the profile (or are defaults)
  for (const auto& [key, value] : vm)
    if (!value.defaulted()) flags.insert(key);
  if (!profile.empty()) {
    std::ifstream in(profile);
    if (!in) throw_input(profile + ": cannot open the profile");
    try {
      // NOTE: store() keeps values already stored from flags, so flags override the file.
      po::store(po::parse_config_file(in, envelope_options()), vm);
    } catch (const po::error& e) {
      throw_input(profile + ": " + e.what());
    }
  }
  po::notify(vm);
  try {
    return read_envelope(vm, profile, flags.count("hf-config") > 0, need_model);
  } catch (const Error& e) {
    // Errors name the setting as a flag ("--quant 'fp9': ..."); one read from the profile names the file and its key.
    const std::string what = e.what();
    const std::size_t end = what.find_first_of(" :'", 2);
    const std::string key = what.rfind("--", 0) == 0 && end != std::string::npos ? what.substr(2, end - 2) : "";
    if (e.kind() != ErrorKind::kInput || profile.empty() || key.empty() || flags.count(key) || !vm.count(key) || vm[key].defaulted())
      throw;
    throw_input(profile + ": " + what.substr(2));
  }
}

}  // namespace tunetab::profile
