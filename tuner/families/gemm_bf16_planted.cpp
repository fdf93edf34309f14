// TEST ONLY family: a few good bf16 GEMM configs plus one kernel per planted fault (templates/testing_faults.h).
// It exists so tests and `tunetab tune --plant-faults` can show the safety engine catching each fault while
// the run carries on; the gemm_bf16 family's enumerate() never yields a planted kernel.
#include <regex>

#include "tuner/families/gemm_traits.h"
#include "tuner/family_ops.h"
#include "tuner/safety/planted.h"

namespace tunetab {

namespace {

// clang-format off
const std::pair<PlantedFault, const char*> kFaultNames[] = {
  {PlantedFault::kNone,      "none"},
  {PlantedFault::kTailStore, "tail_store"},
  {PlantedFault::kWrap32,    "wrap32"},
  {PlantedFault::kHang,      "hang"},
  {PlantedFault::kSkipTile,  "skip_tile"},
  {PlantedFault::kWrong,     "wrong"},
};
/// The good configs beside the planted ones: portable, mma.sync and (sm_90a) wgmma.
const char* kGoodConfigs[] = {"m64n64k32_w32x32_s2_simt_v8_sk1", "m128n128k32_w64x64_s4_mma_v8_sk1",
                              "m128n128k64_w64x128_s4_wgmma_v8_sk1"};
// clang-format on
const char* kPlantedGeometry = "m64n64k32_w32x32_s2_simt_v8_sk1";  // 64x64 tiles, 128 threads

struct PlantedConfig {
  gemm::Config base;
  std::optional<PlantedFault> fault;  // nullopt: a good gemm config

  std::string name() const { return fault ? "planted_" + planted_fault_name(*fault) : base.name(); }
  int shared_bytes() const { return fault ? 0 : base.shared_bytes(); }
  int threads() const { return base.threads(); }
  Json to_json() const {
    Json j = base.to_json();
    if (fault) j["planted_fault"] = planted_fault_name(*fault);
    return j;
  }
  static PlantedConfig from_name(const std::string& name) {
    if (name.rfind("planted_", 0) == 0)
      return {gemm::Config::from_name(kPlantedGeometry), planted_fault_from_name(name.substr(8))};
    return {gemm::Config::from_name(name), std::nullopt};
  }
};

/// gemm's workload, launching a planted config with its launch geometry.
class PlantedWorkload : public gemm::Workload {
 public:
  using gemm::Workload::Workload;
  void launch(const PlantedConfig& c, const std::vector<const Module*>& pipeline, int set, const Stream& s) {
    gemm::Workload::launch(c.base, pipeline, set, s);
  }
};

struct PlantedTraits {
  using Problem = gemm::Problem;
  using Config = PlantedConfig;
  using Workload = PlantedWorkload;
  static constexpr const char* kFamily = "gemm_bf16_planted";

  static Problem problem_from_json(const Json& j) { return gemm_problem_from_json(j); }
  static Config config_from_name(const std::string& name) { return PlantedConfig::from_name(name); }
  static std::vector<Config> enumerate() {
    std::vector<Config> out;
    for (const char* c : kGoodConfigs) out.push_back(PlantedConfig::from_name(c));
    for (const auto& [f, name] : kFaultNames) out.push_back({gemm::Config::from_name(kPlantedGeometry), f});
    return out;
  }
  static std::optional<std::string> why_unsupported(const Problem& p, const Config& c, const Target& t) {
    return gemm::why_unsupported(p, c.base, t);
  }
  static std::vector<BufferBound> index_bounds(const Problem& p, const Config& c) { return gemm::index_bounds(p, c.base); }
  static std::vector<KernelSource> kernels(const Config& c, int bits) {
    if (!c.fault) return gemm::kernels(c.base, bits);
    KernelSource k;
    k.family = kFamily;
    k.source = "#include \"testing_faults.h\"\n";
    k.parameters = "tt::GemmArgs";
    k.name_expression = "tt::planted_gemm<" + std::to_string(static_cast<int>(*c.fault)) + ", " +
                        (bits == 64 ? "long long" : "int") + ">";
    return {k};
  }
  static std::size_t workspace_bytes(const Problem& p, const Config& c) { return GemmBf16Traits::workspace_bytes(p, c.base); }
  static ToleranceSpec tolerance(const Problem&) { return kToleranceBf16; }
  static std::int64_t lookup_n(const Problem& p) { return p.n; }
  static std::unique_ptr<Workload> make_workload(const Problem& p, std::uint64_t seed, int sets, std::size_t ws) {
    return std::make_unique<Workload>(p, seed, sets, ws);
  }
  static gemm::Comparison compare(Workload& w, const ToleranceSpec& t) { return GemmBf16Traits::compare(w, t); }
};

}  // namespace

std::string planted_fault_name(PlantedFault f) { return name_of(kFaultNames, f); }
PlantedFault planted_fault_from_name(const std::string& s) { return value_named(kFaultNames, s, "planted fault"); }

std::string expected_disposition(PlantedFault f) {
  switch (f) {
    case PlantedFault::kNone: return "passed";
    case PlantedFault::kTailStore: return "out_of_bounds";
    case PlantedFault::kWrap32: return "out_of_bounds|faulted";
    case PlantedFault::kHang: return "timed_out";
    case PlantedFault::kSkipTile: return "incorrect";
    case PlantedFault::kWrong: return "incorrect";
  }
  return "?";
}

std::vector<PlantedFault> planted_faults() {
  std::vector<PlantedFault> out;
  for (const auto& [f, name] : kFaultNames)
    if (f != PlantedFault::kNone) out.push_back(f);
  return out;
}

std::unique_ptr<FamilyOps> make_gemm_bf16_planted_ops() { return std::make_unique<FamilyAdapter<PlantedTraits>>(); }

}  // namespace tunetab
