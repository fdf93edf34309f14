// The tuner's view of a kernel family: everything tune, coverage, verify and export need, behind one
// interface over JSON problems and config names (they cross the worker pipe as they are). A family with the
// shape of kernels/gemm/gemm.h (Problem, Config, enumerate(), why_unsupported(), index_bounds(), kernels(),
// Workload, compare()) plugs in through FamilyAdapter<Traits>: one adapter file per family (see
// tuner/families/gemm_bf16.cpp) and one line in family_ops.cpp's registry.
#pragma once
#include <concepts>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "kernels/family.h"
#include "kernels/tolerance.h"
#include "kernels/validate/validate.h"
#include "tuner/hip/runtime.h"
#include "tuner/safety/device_compare.h"

namespace tunetab {

using Json = nlohmann::json;

/// One candidate of a problem: a config at the index width proven for the bucket's largest M.
struct Candidate {
  std::string config;       // Config::name()
  int index_bits = 32;
  std::int64_t proof_m = 0; // the largest M the row serves; the index width holds every offset up to it
  std::optional<std::string> unsupported;  // the constraint that rejects it, before anything compiles
};

/// The outcome of validation launches (one or many Ms): passed, or the first failure.
struct CheckOutcome {
  db::Disposition disposition = db::Disposition::kPassed;
  std::string detail;
  std::int64_t m = 0;        // the M that failed (or the last one checked)
  std::int64_t checked = 0;  // Ms validated
  std::optional<double> rel_l2, max_abs, err_ratio;  // the worst over the Ms checked (or the failing M's)
};

/// A problem's device buffers, sized for capacity_m() rows and reused for every smaller M.
class DeviceCase {
 public:
  virtual ~DeviceCase() = default;
  virtual std::int64_t capacity_m() const = 0;
  virtual int sets() const = 0;
  /// Launches `config` at M = m on input set `set` (timing).
  virtual void launch(const std::string& config, const std::vector<const Module*>& pipeline, std::int64_t m, int set,
                      const Stream& s) = 0;
  /// Poisons the output, re-arms the guards, launches once at M = m, waits at most `timeout_ms` (kTimeout
  /// after), then checks the guard bands (out_of_bounds) and compares with the reference (incorrect).
  virtual CheckOutcome validate(const std::string& config, const std::vector<const Module*>& pipeline, std::int64_t m,
                                const Stream& s, double timeout_ms) = 0;
};

class FamilyOps {
 public:
  virtual ~FamilyOps() = default;
  virtual const std::string& family() const = 0;
  /// Problem::key() of a problem given as Problem::to_json(); Input error naming the field when malformed.
  virtual std::string key(const Json& problem) const = 0;
  virtual std::int64_t m_of(const Json& problem) const = 0;
  virtual Json with_m(const Json& problem, std::int64_t m) const = 0;
  /// The key without its M: the rows of one table group, between which a lookup rule picks.
  std::string group_key(const Json& problem) const { return key(with_m(problem, 1)); }
  /// The N a consumer's lookup rule reads (AITER GEMM caps M at 8192 rows for N > 4096).
  virtual std::int64_t lookup_n(const Json& problem) const = 0;
  virtual double flops(const Json& problem) const = 0;
  virtual double min_bytes(const Json& problem) const = 0;
  virtual ToleranceSpec tolerance(const Json& problem) const = 0;
  /// How many Ms of a row's bucket its final candidates are timed at (safety::timing_sample): Traits::kTimingPoints
  /// where a family's time steps inside a bucket, else 3.
  virtual int timing_points() const = 0;
  /// How many of a row's screened candidates are re-timed over its sample, for `top` asked: twice as many where the
  /// sample has more than 3 Ms. There the row ranks on its bucket, and the screening at the row's M alone is a
  /// weaker filter (session 29, the 257..512 MoE row: m96w96_s4 screened 6th at M=512, 722.6 us, and was the fastest
  /// over nine Ms of the bucket, 495.8 us against 516.4 for the m64w64 finalist; docs/bench/2026-12-04-s29/call8).
  std::size_t finalists(std::size_t top) const { return timing_points() > 3 ? 2 * top : top; }

  /// Every config name of the space, in enumerate() order.
  virtual std::vector<std::string> configs() const = 0;
  /// Input error when `config` is no config of this family.
  virtual Json config_json(const std::string& config) const = 0;
  virtual int shared_bytes(const std::string& config) const = 0;
  /// Dynamic shared memory of each kernel of kernels(config, .), in launch order: what each module of the
  /// pipeline is opted in to when it is loaded.
  virtual std::vector<int> pipeline_shared_bytes(const std::string& config) const = 0;
  virtual std::optional<std::string> why_unsupported(const Json& problem, const std::string& config,
                                                     const Target& t) const = 0;
  virtual std::vector<BufferBound> index_bounds(const Json& problem, const std::string& config) const = 0;
  virtual std::vector<KernelSource> kernels(const std::string& config, int index_bits) const = 0;
  virtual std::size_t workspace_bytes(const Json& problem, const std::string& config) const = 0;
  /// Device buffers for `problem` with M = capacity_m (opens nothing: the device must be current).
  virtual std::unique_ptr<DeviceCase> make_case(const Json& problem, std::int64_t capacity_m, std::uint64_t seed,
                                                int sets, std::size_t workspace_bytes) const = 0;

  /// Every config for `problem` on `t`, the index width proven at M = proof_m (>= the problem's M): a 32-bit
  /// instance is only planned when every offset at proof_m fits; otherwise the 64-bit one is.
  std::vector<Candidate> plan(const Json& problem, const Target& t, std::int64_t proof_m) const;
  /// The index width a config needs for every M up to proof_m.
  int proven_index_bits(const Json& problem, const std::string& config, std::int64_t proof_m) const {
    return required_index_bits(index_bounds(with_m(problem, proof_m), config));
  }
};

/// The registered family named `name` ("gemm_bf16", "gemm_bf16_planted", "gemm_fp8_blockscale", "fused_moe"); Input error
/// listing them otherwise.
const FamilyOps& family_ops(const std::string& name);
std::vector<std::string> family_names();

// One factory per family adapter file.
std::unique_ptr<FamilyOps> make_gemm_bf16_ops();
std::unique_ptr<FamilyOps> make_gemm_bf16_planted_ops();
std::unique_ptr<FamilyOps> make_gemm_fp8_blockscale_ops();
std::unique_ptr<FamilyOps> make_fused_moe_ops();

/// Adapts a family with gemm.h's shape. Traits provides: Problem, Config, Workload, kFamily,
/// problem_from_json(json), config_from_name(name), enumerate(), why_unsupported(p, c, t), index_bounds(p, c),
/// kernels(c, bits), workspace_bytes(p, c), tolerance(p), lookup_n(p), make_workload(p, seed, sets, ws) and
/// compare(workload, tolerance) -> the family's Comparison (rel_l2, max_abs, err_ratio, passed, summary()); and
/// optionally kTimingPoints (FamilyOps::timing_points).
/// A Workload with set_m(m) serves every M from one allocation; one without is rebuilt per M.
template <class Traits>
class FamilyAdapter : public FamilyOps {
 public:
  using Problem = typename Traits::Problem;
  using Config = typename Traits::Config;
  using Workload = typename Traits::Workload;

  FamilyAdapter() : name_(Traits::kFamily) {
    for (const Config& c : Traits::enumerate()) {
      names_.push_back(c.name());
      by_name_.emplace(c.name(), c);
    }
  }
  const std::string& family() const override { return name_; }
  std::string key(const Json& p) const override { return Traits::problem_from_json(p).key(); }
  std::int64_t m_of(const Json& p) const override { return Traits::problem_from_json(p).m; }
  Json with_m(const Json& p, std::int64_t m) const override {
    Problem q = Traits::problem_from_json(p);
    q.m = m;
    return q.to_json();
  }
  std::int64_t lookup_n(const Json& p) const override { return Traits::lookup_n(Traits::problem_from_json(p)); }
  int timing_points() const override {
    if constexpr (requires { Traits::kTimingPoints; }) return Traits::kTimingPoints;
    return 3;
  }
  double flops(const Json& p) const override { return static_cast<double>(Traits::problem_from_json(p).flops()); }
  double min_bytes(const Json& p) const override { return static_cast<double>(Traits::problem_from_json(p).min_bytes()); }
  ToleranceSpec tolerance(const Json& p) const override { return Traits::tolerance(Traits::problem_from_json(p)); }
  std::vector<std::string> configs() const override { return names_; }
  Json config_json(const std::string& c) const override { return config(c).to_json(); }
  int shared_bytes(const std::string& c) const override { return config(c).shared_bytes(); }
  std::vector<int> pipeline_shared_bytes(const std::string& c) const override {
    const Config cfg = config(c);
    // NOTE: a family whose kernels differ in shared memory says so per kernel (Traits::dynamic_shared_bytes).
    if constexpr (requires(const Config& x) { Traits::dynamic_shared_bytes(x); })
      return Traits::dynamic_shared_bytes(cfg);
    else
      return std::vector<int>(Traits::kernels(cfg, 32).size(), cfg.shared_bytes());
  }
  std::optional<std::string> why_unsupported(const Json& p, const std::string& c, const Target& t) const override {
    return Traits::why_unsupported(Traits::problem_from_json(p), config(c), t);
  }
  std::vector<BufferBound> index_bounds(const Json& p, const std::string& c) const override {
    return Traits::index_bounds(Traits::problem_from_json(p), config(c));
  }
  std::vector<KernelSource> kernels(const std::string& c, int bits) const override { return Traits::kernels(config(c), bits); }
  std::size_t workspace_bytes(const Json& p, const std::string& c) const override {
    return Traits::workspace_bytes(Traits::problem_from_json(p), config(c));
  }
  std::unique_ptr<DeviceCase> make_case(const Json& p, std::int64_t capacity_m, std::uint64_t seed, int sets,
                                        std::size_t ws) const override {
    Problem q = Traits::problem_from_json(p);
    q.m = capacity_m;
    return std::make_unique<Case>(*this, q, seed, sets, ws);
  }

  /// The config named `name`: any name the family parses, not only enumerate()'s (a table's kernel may be
  /// a config the space no longer holds).
  Config config(const std::string& name) const {
    auto it = by_name_.find(name);
    return it != by_name_.end() ? it->second : Traits::config_from_name(name);
  }

 private:
  class Case : public DeviceCase {
   public:
    Case(const FamilyAdapter& ops, const Problem& p, std::uint64_t seed, int sets, std::size_t ws)
        : ops_(ops), p_(p), seed_(seed), sets_(sets), ws_(ws), work_(Traits::make_workload(p, seed, sets, ws)),
          tol_(Traits::tolerance(p)), current_m_(p.m) {}
    std::int64_t capacity_m() const override { return p_.m; }
    int sets() const override { return work_->sets(); }
    void launch(const std::string& c, const std::vector<const Module*>& pipeline, std::int64_t m, int set,
                const Stream& s) override {
      set_m(m);
      work_->launch(ops_.config(c), pipeline, set, s);
    }
    CheckOutcome validate(const std::string& c, const std::vector<const Module*>& pipeline, std::int64_t m,
                          const Stream& s, double timeout_ms) override {
      set_m(m);
      CheckOutcome out;
      out.m = m;
      work_->poison_output();
      work_->launch(ops_.config(c), pipeline, 0, s);
      if (!s.synchronize_for(timeout_ms))
        throw Error(ErrorKind::kTimeout, "", nullptr, 0,
                    "M=" + std::to_string(m) + ": no completion within " + std::to_string(timeout_ms) + " ms");
      if (auto oob = work_->guard_violation()) {
        out.disposition = db::Disposition::kOutOfBounds;
        out.detail = "M=" + std::to_string(m) + ": " + *oob;
        return out;
      }
      auto record = [&](const auto& cmp) {
        out.rel_l2 = cmp.rel_l2;
        out.max_abs = cmp.max_abs;
        out.err_ratio = cmp.err_ratio;
        if (!cmp.passed) {
          out.disposition = db::Disposition::kIncorrect;
          out.detail = "M=" + std::to_string(m) + ": " + cmp.summary();
        }
      };
      // A bf16 output with an fp32 reference is compared on the device (no download); the host compare
      // serves every other family, and any process without the validate kernel.
      if constexpr (requires(Workload& w) {
                      w.set_m(std::int64_t{1});  // one reference at the capacity, prefixes for smaller M
                      { w.device_output() } -> std::convertible_to<const void*>;
                      { w.reference() } -> std::convertible_to<const std::vector<float>&>;
                    }) {
        const safety::CompareKernel* k = host_compare_only_ ? nullptr : safety::device_compare_kernel();
        if (k && !compare_) {
          const std::vector<float>& ref = work_->reference();
          // A family whose tolerance scales with each element's terms (fp8 MMA sums) supplies them.
          const float* mag = nullptr;
          if constexpr (requires(Workload& w) { w.magnitude(); })
            if (tol_.mag_rel > 0) mag = work_->magnitude().data();
          try {
            compare_ = std::make_unique<validate::DeviceCompare>(*k->module, k->cu_count, ref.data(), ref.size(),
                                                                 ref.size() / static_cast<std::size_t>(p_.m), mag);
          } catch (const Error& e) {
            // NOTE: no room for the reference beside the case's buffers: the host compare serves this case.
            if (e.kind() != ErrorKind::kLaunch) throw;
            host_compare_only_ = true;
          }
        }
        if (k && compare_) {
          const std::size_t row = compare_->capacity() / static_cast<std::size_t>(p_.m);
          record(compare_->compare(work_->device_output(), row * static_cast<std::size_t>(m),
                                   gemm::tolerance_of(tol_), s));
          return out;
        }
      }
      record(Traits::compare(*work_, tol_));
      return out;
    }

   private:
    void set_m(std::int64_t m) {
      TUNETAB_ASSERT(m >= 1 && m <= p_.m, "M=" + std::to_string(m) + " exceeds the case's capacity " + std::to_string(p_.m));
      if constexpr (requires(Workload& w) { w.set_m(std::int64_t{1}); }) {
        work_->set_m(m);
      } else if (m != current_m_) {
        // NOTE: a family without set_m() gets fresh buffers per M: correct, only slower.
        Problem q = p_;
        q.m = m;
        work_ = Traits::make_workload(q, seed_, sets_, ws_);
      }
      current_m_ = m;
    }
    const FamilyAdapter& ops_;
    Problem p_;
    std::uint64_t seed_;
    int sets_;
    std::size_t ws_;
    std::unique_ptr<Workload> work_;
    ToleranceSpec tol_;
    std::int64_t current_m_;
    std::unique_ptr<validate::DeviceCompare> compare_;  // the reference on the device, made on first use
    bool host_compare_only_ = false;
  };

  std::string name_;
  std::vector<std::string> names_;
  std::map<std::string, Config> by_name_;
};

}  // namespace tunetab
