// Comparison of a bf16 output with its fp32 reference on the device (templates/validate.h), for coverage
// validation: the same verdict and numbers as gemm::compare without downloading the output. The reference is
// uploaded once at the capacity; per-row prefix sums of ref^2 on the host make atol and rel_l2's denominator
// O(1) for any prefix of it (a smaller M). Any family with a bf16 output and an fp32 reference in the same
// element order can use it (it takes pointers and counts, not a workload).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/family.h"
#include "kernels/gemm/gemm.h"
#include "tuner/hip/runtime.h"

namespace tunetab::validate {

inline constexpr const char* kFamily = "validate";
inline constexpr int kThreads = 256;

/// The one compare kernel instance (family "validate"), for hipRTC or an offline compile check.
KernelSource kernel();

/// One block's share of the comparison. NOTE: mirrors tt::ValidatePartial field for field.
struct Partial {
  double diff_sq = 0;
  double max_abs = 0;
  std::int64_t bad = 0;
  std::int64_t non_finite = 0;
  std::int64_t first_bad = -1;
};
/// Adds `b` into `a` (first_bad: the smaller of the two that exist).
void accumulate(Partial& a, const Partial& b);

/// The kernel's per-element rule on the host (the tests' model of a block covering everything).
Partial host_partial(const std::uint16_t* out, const float* ref, std::size_t count, double atol, double rtol,
                     const float* mag = nullptr, double mag_rel = 0);

/// Sums of ref^2 over any prefix of a reference, from per-row prefix sums. Keeps `ref` (not a copy): it must
/// outlive this object.
class RefSquares {
 public:
  /// `row` elements per row (the prefix sums' granularity); count need not be a multiple of it.
  RefSquares(const float* ref, std::size_t count, std::size_t row);
  std::size_t size() const { return count_; }
  /// Sum of ref[i]^2 over i < count: one prefix lookup plus at most one partial row.
  double sum(std::size_t count) const;

 private:
  const float* ref_;
  std::size_t count_, row_;
  std::vector<double> prefix_;  // prefix_[r]: sum over the first r rows
};

/// atol_rms * RMS(ref) over `count` elements whose squares sum to `ref_sq`, as gemm::compare computes it.
double atol_of(double ref_sq, std::size_t count, const gemm::Tolerance& tol);
/// gemm::compare's Comparison from the reduced partials of `count` elements.
gemm::Comparison finish(const Partial& total, double ref_sq, std::size_t count, const gemm::Tolerance& tol);

/// The device comparison against one reference, for any prefix of it.
class DeviceCompare {
 public:
  /// Uploads `ref` (count elements; kept by pointer for the prefix sums, so it must outlive this object) and,
  /// when given, each element's magnitude sum `mag` (gemm::compare's). `kernel` is the loaded kernel()
  /// instance; `cu_count` sizes the grid (4 blocks per CU).
  DeviceCompare(const Module& kernel, int cu_count, const float* ref, std::size_t count, std::size_t row,
                const float* mag = nullptr);
  std::size_t capacity() const { return squares_.size(); }
  /// Compares device bf16 output `out` [count] with the reference's first `count` elements; waits on `s`.
  gemm::Comparison compare(const void* out, std::size_t count, const gemm::Tolerance& tol, const Stream& s) const;

 private:
  const Module& kernel_;
  RefSquares squares_;
  int blocks_;
  DeviceBuffer ref_, mag_, partials_;
};

}  // namespace tunetab::validate
