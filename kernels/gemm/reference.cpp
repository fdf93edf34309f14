// bf16 GEMM: random inputs, the Eigen reference, comparison, and the device workload (launch).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/gemm/gemm.h"
#include "tuner/error.h"

namespace tunetab::gemm {

float bf16_to_float(std::uint16_t h) {
  std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::uint16_t float_to_bf16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

std::uint16_t random_bf16_at(std::uint64_t seed, std::size_t i) {
  // SplitMix64 on a counter: element i's value depends on i alone.
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull + static_cast<std::uint64_t>(i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  return float_to_bf16(2.0f * u - 1.0f);
}

std::vector<std::uint16_t> random_bf16(std::size_t count, std::uint64_t seed) {
  std::vector<std::uint16_t> out(count);
  const auto n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = random_bf16_at(seed, static_cast<std::size_t>(i));
  return out;
}

std::vector<float> reference_gemm(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b,
                                  std::int64_t m, std::int64_t n, std::int64_t k) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  RowMajor ea(m, k), eb(n, k);
#pragma omp parallel for
  for (std::int64_t i = 0; i < m * k; ++i) ea.data()[i] = bf16_to_float(a[i]);
  for (std::int64_t i = 0; i < n * k; ++i) eb.data()[i] = bf16_to_float(b[i]);
  const RowMajor bt = eb.transpose();
  // NOTE: written in place, in row blocks across threads: outputs of 2^31 elements (the index-width checks)
  // would otherwise need a second copy and one single-threaded product.
  std::vector<float> out(static_cast<std::size_t>(m * n));
  Eigen::Map<RowMajor> c(out.data(), m, n);
  constexpr std::int64_t kRows = 1024;
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t r0 = 0; r0 < m; r0 += kRows) {
    const std::int64_t rows = std::min(kRows, m - r0);
    c.middleRows(r0, rows).noalias() = ea.middleRows(r0, rows) * bt;
  }
  return out;
}

std::string Comparison::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "rel_l2=%.3g max_abs=%.3g err_ratio=%.3g non_finite=%lld first_bad=%lld", rel_l2,
                max_abs, err_ratio, static_cast<long long>(non_finite), static_cast<long long>(first_bad));
  return buf;
}

Comparison compare(const std::vector<std::uint16_t>& out, const std::vector<float>& ref, const Tolerance& tol) {
  TUNETAB_ASSERT(out.size() == ref.size(), "output and reference sizes differ");
  return compare(out.data(), ref.data(), ref.size(), tol);
}

Comparison compare(const std::uint16_t* out, const float* ref, std::size_t count, const Tolerance& tol,
                   const float* mag) {
  const std::int64_t n = static_cast<std::int64_t>(count);
  double ref_sq = 0;
#pragma omp parallel for reduction(+ : ref_sq)
  for (std::int64_t i = 0; i < n; ++i) ref_sq += static_cast<double>(ref[i]) * ref[i];
  const double rms = n ? std::sqrt(ref_sq / n) : 0;
  const double atol = tol.atol_rms * rms;
  double diff_sq = 0, max_abs = 0;
  std::int64_t bad = 0, non_finite = 0, first_bad = std::numeric_limits<std::int64_t>::max();
#pragma omp parallel for reduction(+ : diff_sq, bad, non_finite) reduction(max : max_abs) reduction(min : first_bad)
  for (std::int64_t i = 0; i < n; ++i) {
    const float o = bf16_to_float(out[i]);
    if (!std::isfinite(o)) {
      ++non_finite;
      ++bad;
      first_bad = std::min(first_bad, i);
      continue;
    }
    const double d = std::fabs(static_cast<double>(o) - ref[i]);
    diff_sq += d * d;
    max_abs = std::max(max_abs, d);
    if (d > element_slack(atol, tol.rtol, ref[i], tol.mag_rel, mag ? mag[i] : 0.0)) {
      ++bad;
      first_bad = std::min(first_bad, i);
    }
  }
  Comparison c;
  c.rel_l2 = non_finite ? std::numeric_limits<double>::infinity() : (ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : std::sqrt(diff_sq));
  c.max_abs = non_finite ? std::numeric_limits<double>::infinity() : max_abs;
  c.err_ratio = n ? static_cast<double>(bad) / n : 0;
  c.non_finite = non_finite;
  c.first_bad = bad ? first_bad : -1;
  c.passed = bad == 0 && c.rel_l2 <= tol.max_rel_l2;
  return c;
}

// NOTE: mirrors tt::GemmArgs in templates/gemm_bf16.h field for field.
struct GemmArgs {
  const void* a;
  const void* b;
  void* c;
  float* workspace;
  unsigned* counters;
  int m, n, k;
  int splits;
  int k_per_split;
};

Workload::Workload(const Problem& p, std::uint64_t seed, int rotating_sets, std::size_t workspace_bytes)
    : p_(p), capacity_m_(p.m) {
  a_ = random_bf16(static_cast<std::size_t>(p.m * p.k), seed);
  b_ = random_bf16(static_cast<std::size_t>(p.n * p.k), seed ^ 0x5bd1e995ull);
  const std::size_t a_bytes = a_.size() * 2, b_bytes = b_.size() * 2, c_bytes = static_cast<std::size_t>(p.m * p.n) * 2;
  // Guard bands around every buffer validation touches (set 0, workspace, counters): 16 rows of the widest
  // operand, 64 KiB to 1 MiB a side. A store past an end corrupts the bytes next to it first; one that
  // jumps a whole band is left to compute-sanitizer.
  const std::size_t guard = std::clamp<std::size_t>(16 * static_cast<std::size_t>(std::max(p.n, p.k)) * 4, 64 << 10, 1 << 20);
  guard_ = guard;
  for (int s = 0; s < std::max(1, rotating_sets); ++s) {
    const std::size_t g = s == 0 ? guard : 0;
    // NOTE: outputs name their element size: past 2^31 elements their leading guard covers int32 wraps.
    Set set{DeviceBuffer(a_bytes, g), DeviceBuffer(b_bytes, g), DeviceBuffer(c_bytes, g, s == 0 ? 2 : 0)};
    set.a.upload(a_.data(), a_bytes);
    set.b.upload(b_.data(), b_bytes);
    sets_.push_back(std::move(set));
  }
  if (workspace_bytes) workspace_ = DeviceBuffer(workspace_bytes, guard, sizeof(float));
  // One counter per output tile: the smallest tiles are 16x64 (tiled kernels) and 1 x 8 (skinny, M <= 16).
  const std::size_t counters = static_cast<std::size_t>(std::max(((p.m + 15) / 16) * ((p.n + 63) / 64), (p.n + 7) / 8));
  counters_ = DeviceBuffer(counters * sizeof(unsigned), 64 << 10);
  counters_.fill_bytes(0);
  // NOTE: copies and memsets above run on the default stream; launches use a non-blocking stream.
  TUNETAB_HIP_CHECK(hipDeviceSynchronize());
}

void Workload::launch(const Config& c, const std::vector<const Module*>& pipeline, int set, const Stream& s) {
  TUNETAB_ASSERT(pipeline.size() == 1, "gemm_bf16 is a one-kernel pipeline");
  Set& st = sets_[static_cast<std::size_t>(set) % sets_.size()];
  TUNETAB_ASSERT(workspace_.bytes() >= static_cast<std::size_t>(workspace_floats(p_, c)) * sizeof(float),
                 "split-K / stream-K workspace too small");
  GemmArgs args{st.a.get(), st.b.get(), st.c.get(), static_cast<float*>(workspace_.get()),
                static_cast<unsigned*>(counters_.get()), static_cast<int>(p_.m), static_cast<int>(p_.n),
                static_cast<int>(p_.k), c.streamk_ctas > 0 ? c.streamk_ctas : c.split_k, static_cast<int>(k_per_split(p_, c))};
  void* params[] = {&args};
  // NOTE: mirrors tt::GemmTmaArgs: TMA descriptors for boxes of 64 (K) x tma_box_a/b() rows, per input set.
  struct TmaArgs {
    GemmArgs p;
    TensorMap a, b;
  } tma_args;
  if (c.math == Math::kTma) {
    tma_args.p = args;
    // Swapped: the kernel's rows come from B and its columns from A.
    const DeviceBuffer& row_op = c.swap_ab ? st.b : st.a;
    const DeviceBuffer& col_op = c.swap_ab ? st.a : st.b;
    tma_args.a = tensor_map_2d(row_op.get(), 2, p_.k, c.rows(p_.m, p_.n), p_.k * 2, 64, c.tma_box_a());
    tma_args.b = tensor_map_2d(col_op.get(), 2, p_.k, c.cols(p_.m, p_.n), p_.k * 2, 64, c.tma_box_b());
    params[0] = &tma_args;
  }
  LaunchDims d;
  const std::int64_t rows = c.rows(p_.m, p_.n), cols = c.cols(p_.m, p_.n);
  d.grid[0] = static_cast<unsigned>((cols + c.block_n - 1) / c.block_n);
  d.grid[1] = c.math == Math::kSkinny ? 1u : static_cast<unsigned>((rows + c.block_m - 1) / c.block_m);
  // NOTE: a cluster's CTAs must all exist: the grid is padded, and the extra CTAs only load and share.
  d.grid[0] = (d.grid[0] + c.cluster_n - 1) / c.cluster_n * c.cluster_n;
  d.grid[1] = (d.grid[1] + c.cluster_m - 1) / c.cluster_m * c.cluster_m;
  d.cluster[0] = static_cast<unsigned>(c.cluster_n);
  d.cluster[1] = static_cast<unsigned>(c.cluster_m);
  d.grid[2] = static_cast<unsigned>(c.split_k);
  if (c.streamk_ctas > 0) {  // persistent: one CTA per SM
    d.grid[0] = static_cast<unsigned>(c.streamk_ctas);
    d.grid[1] = d.grid[2] = 1;
  }
  d.block[0] = static_cast<unsigned>(c.threads());
  d.shared_bytes = static_cast<unsigned>(c.shared_bytes());
  tunetab::launch(*pipeline[0], d, s, params);
}

void Workload::set_m(std::int64_t m) {
  TUNETAB_ASSERT(m >= 1 && m <= capacity_m_, "set_m(" + std::to_string(m) + ") outside 1.." + std::to_string(capacity_m_));
  p_.m = m;
}

/// Bytes of C the current M writes, and the guard-sized window after them that must stay untouched.
static std::pair<std::size_t, std::size_t> c_window(const Problem& p, std::int64_t capacity_m, std::size_t guard) {
  const std::size_t used = static_cast<std::size_t>(p.m * p.n) * 2;
  const std::size_t cap = static_cast<std::size_t>(capacity_m * p.n) * 2;
  return {used, std::min(guard, cap - used)};
}

void Workload::poison_output() {
  sets_[0].c.fill_bytes(0xff);
  if (const auto [used, window] = c_window(p_, capacity_m_, guard_); window > 0)
    TUNETAB_HIP_CHECK(hipMemsetD8(reinterpret_cast<hipDeviceptr_t>(static_cast<char*>(sets_[0].c.get()) + used),
                                  DeviceBuffer::kCanary, window));
  for (DeviceBuffer* b : {&sets_[0].a, &sets_[0].b, &sets_[0].c, &workspace_, &counters_}) b->arm_guards();
  TUNETAB_HIP_CHECK(hipDeviceSynchronize());  // ordered before the launch on the non-blocking stream
}

std::optional<std::string> Workload::guard_violation() const {
  const std::pair<const char*, const DeviceBuffer*> buffers[] = {
      {"A", &sets_[0].a}, {"B", &sets_[0].b}, {"C", &sets_[0].c}, {"workspace", &workspace_}, {"counters", &counters_}};
  for (const auto& [name, buf] : buffers)
    if (auto v = guard_violation_of(name, *buf)) return v;
  if (const auto [used, window] = c_window(p_, capacity_m_, guard_); window > 0) {
    std::vector<unsigned char> band(window);
    sets_[0].c.download(band.data(), window, used);
    if (auto v = find_guard_violation({}, band, used, DeviceBuffer::kCanary))
      return "C: " + std::to_string(v->corrupted_bytes) + " byte(s) written after the M=" + std::to_string(p_.m) +
             " rows, nearest at byte offset " + std::to_string(v->offset) + " (M=" + std::to_string(p_.m) + " uses " +
             std::to_string(used) + " bytes of a " + std::to_string(capacity_m_) + "-row allocation)";
  }
  return std::nullopt;
}

std::vector<std::uint16_t> Workload::download_output() const {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(p_.m * p_.n));
  sets_[0].c.download(out.data(), out.size() * 2);
  return out;
}

const std::vector<float>& Workload::reference() {
  if (ref_.empty()) ref_ = reference_gemm(a_, b_, capacity_m_, p_.n, p_.k);
  return ref_;
}

}  // namespace tunetab::gemm
