// GPU tests (label gpu) of the device compare (kernels/validate, templates/validate.h): the same verdict and
// numbers as the host compare (gemm::compare, the oracle) on planted errors and prefix Ms, and through a
// family's DeviceCase.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>

#include "kernels/gemm/gemm.h"
#include "kernels/validate/validate.h"
#include "tuner/family_ops.h"
#include "tuner/hip/runtime.h"
#include "tuner/jit/compiler.h"
#include "tuner/safety/device_compare.h"

using namespace tunetab;

namespace {

class ValidateGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (device_count(&why) == 0) GTEST_SKIP() << "no GPU: " << why;
    facts_ = open_device(0);
    const jit::Compiler compiler({facts_.arch, {}});
    const auto rec = compiler.compile(validate::kernel());
    ASSERT_TRUE(rec.ok) << rec.log;
    kernel_ = std::make_unique<Module>(rec.binary, rec.lowered_name);
  }
  DeviceFacts facts_;
  std::unique_ptr<Module> kernel_;
};

std::vector<float> random_ref(std::size_t count, std::uint64_t seed) {
  const auto bits = gemm::random_bf16(count * 2, seed);
  std::vector<float> ref(count);
  for (std::size_t i = 0; i < count; ++i)
    ref[i] = 3.0f * gemm::bf16_to_float(bits[2 * i]) + 0.01f * gemm::bf16_to_float(bits[2 * i + 1]);
  return ref;
}

std::uint16_t at_tolerance(float r, double atol, double rtol, bool outside) {
  std::uint16_t h = gemm::float_to_bf16(r), inside = h;
  const double limit = atol + rtol * std::fabs(static_cast<double>(r));
  for (;;) {
    const std::uint16_t next = static_cast<std::uint16_t>(h + 1);
    if (std::fabs(static_cast<double>(gemm::bf16_to_float(next)) - r) > limit) return outside ? next : inside;
    inside = h = next;
  }
}

void expect_same(const gemm::Comparison& a, const gemm::Comparison& b, const std::string& what) {
  EXPECT_EQ(a.passed, b.passed) << what << "\n device " << a.summary() << "\n host   " << b.summary();
  EXPECT_EQ(a.first_bad, b.first_bad) << what;
  EXPECT_EQ(a.non_finite, b.non_finite) << what;
  EXPECT_DOUBLE_EQ(a.err_ratio, b.err_ratio) << what;
  if (std::isfinite(b.rel_l2)) {
    EXPECT_NEAR(a.rel_l2, b.rel_l2, 1e-9 * b.rel_l2 + 1e-300) << what;
  } else {
    EXPECT_EQ(a.rel_l2, b.rel_l2) << what;
  }
  EXPECT_EQ(a.max_abs, b.max_abs) << what;
}

}  // namespace

TEST_F(ValidateGpu, DeviceCompareEqualsHostCompareOnPlantedErrors) {
  const std::size_t rows = 301, row = 1000;  // ragged for every block size
  const auto ref = random_ref(rows * row, 3);
  std::vector<std::uint16_t> good(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) good[i] = gemm::float_to_bf16(ref[i]);
  const gemm::Tolerance tol;
  const double atol = validate::atol_of(validate::RefSquares(ref.data(), ref.size(), row).sum(ref.size()), ref.size(), tol);
  const std::size_t far = 250 * row + 999, near = 7 * row + 3;

  std::map<std::string, std::vector<std::uint16_t>> cases;
  cases["all correct"] = good;
  cases["nan"] = good;
  cases["nan"][far] = 0x7fc0;
  cases["inf"] = good;
  cases["inf"][near] = 0x7f80;
  cases["just outside"] = good;
  cases["just outside"][far] = at_tolerance(ref[far], atol, tol.rtol, true);
  cases["just inside"] = good;
  cases["just inside"][far] = at_tolerance(ref[far], atol, tol.rtol, false);
  cases["several"] = cases["just outside"];
  cases["several"][near] = 0xffff;
  cases["several"][100 * row] = gemm::float_to_bf16(ref[100 * row] + 1.0f);

  validate::DeviceCompare dc(*kernel_, facts_.cu_count, ref.data(), ref.size(), row);
  Stream s;
  DeviceBuffer out(ref.size() * 2);
  for (const auto& [name, host_out] : cases) {
    out.upload(host_out.data(), host_out.size() * 2);
    TUNETAB_HIP_CHECK(hipDeviceSynchronize());
    for (std::size_t m : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{100}, std::size_t{101},
                          std::size_t{250}, std::size_t{251}, rows})
      expect_same(dc.compare(out.get(), m * row, tol, s), gemm::compare(host_out.data(), ref.data(), m * row, tol),
                  name + " at M=" + std::to_string(m));
    // A count that is no multiple of the row (another family's layout).
    expect_same(dc.compare(out.get(), 250 * row + 500, tol, s),
                gemm::compare(host_out.data(), ref.data(), 250 * row + 500, tol), name + " at a ragged count");
  }
  EXPECT_TRUE(gemm::compare(cases["just inside"], ref, tol).passed);
  EXPECT_FALSE(gemm::compare(cases["just outside"], ref, tol).passed);
}

TEST_F(ValidateGpu, DeviceCompareTakesAboutAMillisecondPerM) {
  // A coverage row's largest every-M check: M = 16384, N = 6144 (100 M elements).
  const std::size_t rows = 16384, row = 6144;
  const auto ref = random_ref(rows * row, 4);
  std::vector<std::uint16_t> host_out(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) host_out[i] = gemm::float_to_bf16(ref[i]);
  host_out[rows * row - 1] = 0x7fc0;
  validate::DeviceCompare dc(*kernel_, facts_.cu_count, ref.data(), ref.size(), row);
  DeviceBuffer out(ref.size() * 2);
  out.upload(host_out.data(), host_out.size() * 2);
  TUNETAB_HIP_CHECK(hipDeviceSynchronize());
  Stream s;
  const gemm::Tolerance tol;
  dc.compare(out.get(), ref.size(), tol, s);  // warm-up
  const int reps = 20;
  const auto t0 = std::chrono::steady_clock::now();
  gemm::Comparison c;
  for (int i = 0; i < reps; ++i) c = dc.compare(out.get(), ref.size(), tol, s);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
  std::printf("device compare of M=%zu x N=%zu: %.3f ms per M\n", rows, row, ms);
  expect_same(c, gemm::compare(host_out.data(), ref.data(), ref.size(), tol), "M=16384");
  EXPECT_EQ(c.first_bad, static_cast<std::int64_t>(rows * row - 1));
  EXPECT_LT(ms, 20.0);
}

TEST_F(ValidateGpu, FamilyCaseGivesTheSameOutcomeOnDeviceAndHost) {
  // A passing and a failing (planted wrong-result) config through the adapter's DeviceCase at several Ms, with
  // the device compare enabled and disabled.
  const FamilyOps& ops = family_ops("gemm_bf16_planted");
  const Json problem = gemm::Problem{300, 512, 256}.to_json();
  const jit::Compiler compiler({facts_.arch, {}});
  Stream s;
  std::map<std::string, std::vector<CheckOutcome>> results;
  for (const std::string config : {"m64n64k32_w32x32_s2_simt_v8_sk1", "planted_wrong", "planted_skip_tile"}) {
    std::vector<std::unique_ptr<Module>> modules;
    std::vector<const Module*> pipeline;
    for (const KernelSource& k : ops.kernels(config, 32)) {
      const auto rec = compiler.compile(k);
      ASSERT_TRUE(rec.ok) << rec.log;
      modules.push_back(std::make_unique<Module>(rec.binary, rec.lowered_name));
      pipeline.push_back(modules.back().get());
    }
    for (bool on_device : {true, false}) {
      if (on_device) {
        safety::enable_device_compare(facts_);
        ASSERT_NE(safety::device_compare_kernel(), nullptr) << safety::why_no_device_compare();
      } else {
        safety::disable_device_compare();
      }
      auto c = ops.make_case(problem, 300, 7, 1, 0);
      for (std::int64_t m : {300, 1, 17, 64, 65, 299}) {
        const CheckOutcome o = c->validate(config, pipeline, m, s, 10000);
        SCOPED_TRACE(config + (on_device ? " device" : " host") + " M=" + std::to_string(m));
        if (config[0] != 'p') {
          EXPECT_EQ(o.disposition, db::Disposition::kPassed) << o.detail;
        }
        results[config + "|" + std::to_string(m)].push_back(o);
      }
    }
  }
  safety::disable_device_compare();
  for (const auto& [key, v] : results) {
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].disposition, v[1].disposition) << key << ": " << v[0].detail << " | " << v[1].detail;
    if (v[0].rel_l2 && v[1].rel_l2 && std::isfinite(*v[1].rel_l2)) {
      EXPECT_NEAR(*v[0].rel_l2, *v[1].rel_l2, 1e-9 * *v[1].rel_l2) << key;
    }
    EXPECT_EQ(v[0].max_abs, v[1].max_abs) << key;
    EXPECT_EQ(v[0].err_ratio, v[1].err_ratio) << key;
  }
}
