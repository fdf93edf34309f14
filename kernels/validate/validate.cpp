#include "kernels/validate/validate.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tuner/error.h"

namespace tunetab::validate {

namespace {
// NOTE: mirrors tt::ValidateArgs in templates/validate.h field for field.
struct Args {
  const void* out;
  const float* ref;
  const float* mag;
  double atol;
  double rtol;
  double mag_rel;
  std::int64_t count;
  std::int64_t blocks;
  Partial* partials;
};
static_assert(sizeof(Partial) == 40 && sizeof(Args) == 72, "layout must match templates/validate.h");
}  // namespace

KernelSource kernel() {
  KernelSource k;
  k.family = kFamily;
  k.source = "#include \"validate.h\"\n";
  k.name_expression = "tt::validate_bf16<" + std::to_string(kThreads) + ">";
  k.parameters = "tt::ValidateArgs";
  return k;
}

void accumulate(Partial& a, const Partial& b) {
  a.diff_sq += b.diff_sq;
  a.max_abs = std::max(a.max_abs, b.max_abs);
  a.bad += b.bad;
  a.non_finite += b.non_finite;
  if (b.first_bad >= 0 && (a.first_bad < 0 || b.first_bad < a.first_bad)) a.first_bad = b.first_bad;
}

Partial host_partial(const std::uint16_t* out, const float* ref, std::size_t count, double atol, double rtol,
                     const float* mag, double mag_rel) {
  Partial p;
  for (std::size_t i = 0; i < count; ++i) {
    const double r = ref[i];
    if ((out[i] & 0x7f80u) == 0x7f80u) {
      ++p.non_finite;
      ++p.bad;
      if (p.first_bad < 0) p.first_bad = static_cast<std::int64_t>(i);
      continue;
    }
    const double d = std::fabs(static_cast<double>(gemm::bf16_to_float(out[i])) - r);
    p.diff_sq += d * d;
    p.max_abs = std::max(p.max_abs, d);
    if (d > gemm::element_slack(atol, rtol, r, mag_rel, mag ? mag[i] : 0.0)) {
      ++p.bad;
      if (p.first_bad < 0) p.first_bad = static_cast<std::int64_t>(i);
    }
  }
  return p;
}

RefSquares::RefSquares(const float* ref, std::size_t count, std::size_t row) : ref_(ref), count_(count), row_(row) {
  TUNETAB_ASSERT(row >= 1, "a reference row holds at least one element");
  const std::int64_t rows = static_cast<std::int64_t>(count / row);
  std::vector<double> row_sq(static_cast<std::size_t>(rows));
#pragma omp parallel for
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0;
    const float* p = ref + r * row;
    for (std::size_t i = 0; i < row; ++i) s += static_cast<double>(p[i]) * p[i];
    row_sq[static_cast<std::size_t>(r)] = s;
  }
  prefix_.assign(row_sq.size() + 1, 0.0);
  for (std::size_t r = 0; r < row_sq.size(); ++r) prefix_[r + 1] = prefix_[r] + row_sq[r];
}

double RefSquares::sum(std::size_t count) const {
  TUNETAB_ASSERT(count <= count_, "prefix of " + std::to_string(count) + " elements past the reference's " + std::to_string(count_));
  const std::size_t full = count / row_;
  double s = prefix_[full];
  for (std::size_t i = full * row_; i < count; ++i) s += static_cast<double>(ref_[i]) * ref_[i];
  return s;
}

double atol_of(double ref_sq, std::size_t count, const gemm::Tolerance& tol) {
  return tol.atol_rms * (count ? std::sqrt(ref_sq / static_cast<double>(count)) : 0.0);
}

gemm::Comparison finish(const Partial& t, double ref_sq, std::size_t count, const gemm::Tolerance& tol) {
  gemm::Comparison c;
  const double inf = std::numeric_limits<double>::infinity();
  c.rel_l2 = t.non_finite ? inf : (ref_sq > 0 ? std::sqrt(t.diff_sq / ref_sq) : std::sqrt(t.diff_sq));
  c.max_abs = t.non_finite ? inf : t.max_abs;
  c.err_ratio = count ? static_cast<double>(t.bad) / static_cast<double>(count) : 0;
  c.non_finite = t.non_finite;
  c.first_bad = t.bad ? t.first_bad : -1;
  c.passed = t.bad == 0 && c.rel_l2 <= tol.max_rel_l2;
  return c;
}

DeviceCompare::DeviceCompare(const Module& kernel, int cu_count, const float* ref, std::size_t count, std::size_t row,
                             const float* mag)
    : kernel_(kernel), squares_(ref, count, row), blocks_(cu_count > 0 ? 4 * cu_count : 1024),
      ref_(count * sizeof(float)), mag_(mag ? DeviceBuffer(count * sizeof(float)) : DeviceBuffer()),
      partials_(static_cast<std::size_t>(blocks_) * sizeof(Partial)) {
  ref_.upload(ref, count * sizeof(float));
  if (mag) mag_.upload(mag, count * sizeof(float));
  // NOTE: the upload runs on the default stream; compares use the caller's non-blocking stream.
  TUNETAB_HIP_CHECK(hipDeviceSynchronize());
}

gemm::Comparison DeviceCompare::compare(const void* out, std::size_t count, const gemm::Tolerance& tol,
                                        const Stream& s) const {
  TUNETAB_ASSERT(count <= squares_.size(), "compare of " + std::to_string(count) + " elements past the uploaded reference's " +
                                               std::to_string(squares_.size()));
  const double ref_sq = squares_.sum(count);
  Args args{out,      static_cast<const float*>(ref_.get()),
            mag_.bytes() ? static_cast<const float*>(mag_.get()) : nullptr,
            atol_of(ref_sq, count, tol), tol.rtol, tol.mag_rel,
            static_cast<std::int64_t>(count), blocks_, static_cast<Partial*>(partials_.get())};
  void* params[] = {&args};
  LaunchDims d;
  d.grid[0] = static_cast<unsigned>(blocks_);
  d.block[0] = kThreads;
  launch(kernel_, d, s, params);
  s.synchronize();
  std::vector<Partial> parts(static_cast<std::size_t>(blocks_));
  partials_.download(parts.data(), parts.size() * sizeof(Partial));
  Partial total;
  for (const Partial& p : parts) accumulate(total, p);
  return finish(total, ref_sq, count, tol);
}

}  // namespace tunetab::validate
