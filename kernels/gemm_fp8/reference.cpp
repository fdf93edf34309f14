// FP8 block-scaled GEMM: fp8 codes, random quantized operands, the Eigen reference, and the device workload.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/gemm_fp8/gemm_fp8.h"
#include "tuner/error.h"

namespace tunetab::gemm_fp8 {

namespace {
int bias_of(Fp8 f) { return f == Fp8::kE4m3fnuz ? 8 : 7; }
std::uint8_t nan_code(Fp8 f) { return f == Fp8::kE4m3fnuz ? 0x80 : 0x7f; }
std::uint8_t max_code(Fp8 f) { return f == Fp8::kE4m3fnuz ? 0x7f : 0x7e; }
}  // namespace

float fp8_to_float(std::uint8_t code, Fp8 f) {
  if (f == Fp8::kE4m3fnuz ? code == 0x80 : (code & 0x7f) == 0x7f) return std::numeric_limits<float>::quiet_NaN();
  const int e = (code >> 3) & 15, m = code & 7;
  // Subnormal: m/8 * 2^(1 - bias); normal: (1 + m/8) * 2^(e - bias).
  const float mag = e == 0 ? std::ldexp(static_cast<float>(m), 1 - bias_of(f) - 3)
                           : std::ldexp(static_cast<float>(8 + m), e - bias_of(f) - 3);
  return (code & 0x80) ? -mag : mag;
}

std::uint8_t float_to_fp8(float v, Fp8 f) {
  if (std::isnan(v)) return nan_code(f);
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(static_cast<double>(v));
  std::uint8_t code;
  if (a == 0) {
    code = 0;
  } else if (a >= fp8_max(f)) {
    code = max_code(f);  // saturate, as the quantizers do after clamping to +-max
  } else {
    const int emin = 1 - bias_of(f);  // exponent of the smallest normal
    int e2 = 0;
    std::frexp(a, &e2);  // a = fr * 2^e2, fr in [0.5, 1)
    const int e = std::max(e2 - 1, emin);
    // Steps of 2^(e-3) at exponent e: r in 0..16, ties to even (the default rounding mode); r = 16 carries
    // into the next exponent, and below emin the same formula gives the subnormal codes.
    const int r = static_cast<int>(std::nearbyint(a / std::ldexp(1.0, e - 3)));
    code = static_cast<std::uint8_t>(std::min<int>(((e + bias_of(f) - 1) << 3) + r, max_code(f)));
  }
  if (code == 0 && f == Fp8::kE4m3fnuz) return 0;  // fnuz has no negative zero (0x80 is its NaN)
  return code | sign;
}

Operands random_operands(const Problem& p, std::uint64_t seed) {
  const std::int64_t sk = p.scale_k(), sn = p.scale_n();
  const float qmax = static_cast<float>(fp8_max(p.in));
  Operands o;
  o.a.resize(static_cast<std::size_t>(p.m * p.k));
  o.b.resize(static_cast<std::size_t>(p.n * p.k));
  o.a_scale.resize(static_cast<std::size_t>(p.m * sk));
  o.b_scale.resize(static_cast<std::size_t>(sn * sk));
  // Uniform [-1, 1) values, then magnitudes 2^-3..2^3 by row (A) and 2^-4..2^4 by 128 x 128 block (B), so a
  // scale applied to the wrong row or block shows.
  const auto xa = gemm::random_bf16(o.a.size(), seed);
  const auto xb = gemm::random_bf16(o.b.size(), seed ^ 0x5bd1e995ull);
  auto row_gain = [&](std::int64_t r) { return std::ldexp(1.0f, static_cast<int>((r * 7919 + seed) % 7) - 3); };
  auto block_gain = [&](std::int64_t nb, std::int64_t kb) {
    return std::ldexp(1.0f, static_cast<int>((nb * 31 + kb * 17 + seed) % 9) - 4);
  };
  // Quantizes the elements `at(i)` of one group with scale amax / max; never a zero code (the smallest
  // subnormal of the value's sign instead).
  auto quantize = [&](auto&& for_each, std::uint8_t* out_codes, float* out_scale) {
    float amax = 0;
    for_each([&](std::size_t, float x) { amax = std::max(amax, std::fabs(x)); });
    const float scale = amax > 0 ? amax / qmax : 1.0f;
    *out_scale = scale;
    for_each([&](std::size_t i, float x) {
      std::uint8_t q = float_to_fp8(x / scale, p.in);
      if ((q & 0x7f) == 0) q = std::signbit(x) ? 0x81 : 0x01;
      out_codes[i] = q;
    });
  };
  // NOTE: each group in parallel (its codes and scale are its own): one thread took 0.35 s for the operands of
  // 336 x 6144 x 2048, and the ragged-shape GPU test draws ~90 sets a shape (by that rate up to ~130 s of its 227).
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t r = 0; r < p.m; ++r)
    for (std::int64_t kb = 0; kb < sk; ++kb) {
      const std::int64_t k0 = kb * kScaleBlock, k1 = std::min(p.k, k0 + kScaleBlock);
      quantize(
          [&](auto&& fn) {
            for (std::int64_t k = k0; k < k1; ++k) {
              const std::size_t i = static_cast<std::size_t>(r * p.k + k);
              fn(i, gemm::bf16_to_float(xa[i]) * row_gain(r));
            }
          },
          o.a.data(), &o.a_scale[static_cast<std::size_t>(r * sk + kb)]);
    }
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t nb = 0; nb < sn; ++nb)
    for (std::int64_t kb = 0; kb < sk; ++kb) {
      const std::int64_t n0 = nb * kScaleBlock, n1 = std::min(p.n, n0 + kScaleBlock);
      const std::int64_t k0 = kb * kScaleBlock, k1 = std::min(p.k, k0 + kScaleBlock);
      quantize(
          [&](auto&& fn) {
            for (std::int64_t n = n0; n < n1; ++n)
              for (std::int64_t k = k0; k < k1; ++k) {
                const std::size_t i = static_cast<std::size_t>(n * p.k + k);
                fn(i, gemm::bf16_to_float(xb[i]) * block_gain(nb, kb));
              }
          },
          o.b.data(), &o.b_scale[static_cast<std::size_t>(nb * sk + kb)]);
    }
  return o;
}

namespace {
/// dequant(A) dequant(B)^T, or with `magnitudes` |dequant(A)| |dequant(B)|^T: each element's sum |a_k b_k|.
std::vector<float> product(const Problem& p, const Operands& o, bool magnitudes) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const std::int64_t sk = p.scale_k();
  float lut[256];
  for (int c = 0; c < 256; ++c) lut[c] = magnitudes ? std::fabs(fp8_to_float(static_cast<std::uint8_t>(c), p.in))
                                                     : fp8_to_float(static_cast<std::uint8_t>(c), p.in);
  RowMajor ea(p.m, p.k), eb(p.n, p.k);
#pragma omp parallel for
  for (std::int64_t r = 0; r < p.m; ++r)
    for (std::int64_t k = 0; k < p.k; ++k) ea(r, k) = lut[o.a[r * p.k + k]] * o.a_scale[r * sk + k / kScaleBlock];
#pragma omp parallel for
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t k = 0; k < p.k; ++k)
      eb(n, k) = lut[o.b[n * p.k + k]] * o.b_scale[(n / kScaleBlock) * sk + k / kScaleBlock];
  RowMajor c = ea * eb.transpose();
  return std::vector<float>(c.data(), c.data() + p.m * p.n);
}
}  // namespace

std::vector<float> reference_gemm(const Problem& p, const Operands& o) { return product(p, o, false); }
std::vector<float> magnitude_gemm(const Problem& p, const Operands& o) { return product(p, o, true); }

namespace {
// NOTE: mirrors tt::GemmArgs / tt::Fp8GemmArgs in templates/gemm_bf16.h and gemm_fp8_blockscale.h.
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
struct Fp8GemmArgs {
  GemmArgs g;
  const float* a_scale;
  const float* b_scale;
  int scale_k;
  int fnuz;
};
}  // namespace

Workload::Workload(const Problem& p, std::uint64_t seed, int rotating_sets, std::size_t workspace_bytes)
    : p_(p), ops_(random_operands(p, seed)), capacity_m_(p.m) {
  const std::size_t c_bytes = static_cast<std::size_t>(p.m * p.n) * 2;
  const std::size_t as_bytes = ops_.a_scale.size() * 4, bs_bytes = ops_.b_scale.size() * 4;
  // Guard bands around every buffer validation touches, as for the bf16 family: 16 rows of the widest
  // operand, 64 KiB to 1 MiB a side.
  const std::size_t guard = std::clamp<std::size_t>(16 * static_cast<std::size_t>(std::max(p.n, p.k)) * 4, 64 << 10, 1 << 20);
  guard_ = guard;
  for (int s = 0; s < std::max(1, rotating_sets); ++s) {
    const std::size_t g = s == 0 ? guard : 0;
    Set set{DeviceBuffer(ops_.a.size(), g), DeviceBuffer(ops_.b.size(), g), DeviceBuffer(as_bytes, g),
            DeviceBuffer(bs_bytes, g), DeviceBuffer(c_bytes, g, s == 0 ? 2 : 0)};
    set.a.upload(ops_.a.data(), ops_.a.size());
    set.b.upload(ops_.b.data(), ops_.b.size());
    set.a_scale.upload(ops_.a_scale.data(), as_bytes);
    set.b_scale.upload(ops_.b_scale.data(), bs_bytes);
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
  TUNETAB_ASSERT(pipeline.size() == 1, "gemm_fp8_blockscale is a one-kernel pipeline");
  Set& st = sets_[static_cast<std::size_t>(set) % sets_.size()];
  TUNETAB_ASSERT(workspace_.bytes() >= workspace_bytes(p_, c), "split-K workspace too small");
  Fp8GemmArgs args{{st.a.get(), st.b.get(), share_output_ ? sets_[0].c.get() : st.c.get(), static_cast<float*>(workspace_.get()),
                    static_cast<unsigned*>(counters_.get()), static_cast<int>(p_.m), static_cast<int>(p_.n),
                    static_cast<int>(p_.k), c.split_k, static_cast<int>(k_per_split(p_, c))},
                   static_cast<const float*>(st.a_scale.get()), static_cast<const float*>(st.b_scale.get()),
                   static_cast<int>(p_.scale_k()), p_.in == Fp8::kE4m3fnuz ? 1 : 0};
  void* params[] = {&args};
  // NOTE: mirrors tt::Fp8GemmTmaArgs (and tt::Fp8GemmTma4Args, with a64): TMA descriptors for boxes of 128 bytes of K
  // x the tile's rows.
  struct TmaArgs {
    Fp8GemmArgs p;
    TensorMap a, b, a64;
  } tma_args;
  if (c.tma()) {
    tma_args.p = args;
    // A cluster's CTAs each copy a slice of the tiles they share: boxes of the slice's rows.
    tma_args.a = tensor_map_2d(st.a.get(), 1, p_.k, p_.m, p_.k, 128, c.block_m / c.cluster_n);
    tma_args.b = tensor_map_2d(st.b.get(), 1, p_.k, p_.n, p_.k, 128, c.block_n / c.cluster_m);
    // tma4 copies A in 64-row boxes where a tile's last 64-row half lies past M; the other kernels read no a64.
    if (c.math == Math::kTma4) tma_args.a64 = tensor_map_2d(st.a.get(), 1, p_.k, p_.m, p_.k, 128, 64);
    params[0] = &tma_args;
  }
  LaunchDims d;
  d.grid[0] = static_cast<unsigned>((p_.n + c.block_n - 1) / c.block_n);
  d.grid[1] = c.math == Math::kSkinny ? 1u : static_cast<unsigned>((p_.m + c.block_m - 1) / c.block_m);
  d.grid[2] = static_cast<unsigned>(c.split_k);
  if (c.persistent > 0) {  // one row of at most c.persistent CTAs: the kernel walks every tile, striding by it
    TUNETAB_ASSERT(c.split_k == 1, "a persistent grid has split-K 1");
    d.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(c.persistent, std::int64_t{d.grid[0]} * d.grid[1]));
    d.grid[1] = 1;
  }
  // NOTE: a cluster's CTAs must all exist: the grid is padded, and the extra CTAs only load and share.
  d.grid[0] = (d.grid[0] + c.cluster_n - 1) / c.cluster_n * c.cluster_n;
  d.grid[1] = (d.grid[1] + c.cluster_m - 1) / c.cluster_m * c.cluster_m;
  d.cluster[0] = static_cast<unsigned>(c.cluster_n);
  d.cluster[1] = static_cast<unsigned>(c.cluster_m);
  d.block[0] = static_cast<unsigned>(c.threads());
  d.shared_bytes = static_cast<unsigned>(c.shared_bytes());
  tunetab::launch(*pipeline[0], d, s, params);
}

void Workload::set_m(std::int64_t m) {
  TUNETAB_ASSERT(m >= 1 && m <= capacity_m_, "set_m(" + std::to_string(m) + ") outside 1.." + std::to_string(capacity_m_));
  p_.m = m;
}

std::pair<std::size_t, std::size_t> Workload::c_window() const {
  const std::size_t used = static_cast<std::size_t>(p_.m * p_.n) * 2;
  const std::size_t cap = static_cast<std::size_t>(capacity_m_ * p_.n) * 2;
  return {used, std::min(guard_, cap - used)};
}

void Workload::poison_output() {
  sets_[0].c.fill_bytes(0xff);
  // Below the capacity, the rows after M are a guard band of their own: a kernel that ignores M shows there.
  if (const auto [used, window] = c_window(); window > 0)
    TUNETAB_HIP_CHECK(hipMemsetD8(reinterpret_cast<hipDeviceptr_t>(static_cast<char*>(sets_[0].c.get()) + used),
                                  DeviceBuffer::kCanary, window));
  for (DeviceBuffer* b : {&sets_[0].a, &sets_[0].b, &sets_[0].a_scale, &sets_[0].b_scale, &sets_[0].c, &workspace_, &counters_})
    b->arm_guards();
  TUNETAB_HIP_CHECK(hipDeviceSynchronize());  // ordered before the launch on the non-blocking stream
}

std::optional<std::string> Workload::guard_violation() const {
  const std::pair<const char*, const DeviceBuffer*> buffers[] = {
      {"A", &sets_[0].a},       {"B", &sets_[0].b},         {"a_scale", &sets_[0].a_scale}, {"b_scale", &sets_[0].b_scale},
      {"C", &sets_[0].c},       {"workspace", &workspace_}, {"counters", &counters_}};
  for (const auto& [name, buf] : buffers)
    if (auto v = guard_violation_of(name, *buf)) return v;
  if (const auto [used, window] = c_window(); window > 0) {
    std::vector<unsigned char> band(window);
    sets_[0].c.download(band.data(), window, used);
    if (auto v = find_guard_violation({}, band, used, DeviceBuffer::kCanary))
      return "C: " + std::to_string(v->corrupted_bytes) + " byte(s) written after the M=" + std::to_string(p_.m) +
             " rows, nearest at byte offset " + std::to_string(v->offset);
  }
  return std::nullopt;
}

std::vector<std::uint16_t> Workload::download_output() const {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(p_.m * p_.n));
  sets_[0].c.download(out.data(), out.size() * 2);
  return out;
}

const std::vector<float>& Workload::reference() {
  if (ref_.empty()) {
    Problem cap = p_;
    cap.m = capacity_m_;
    ref_ = reference_gemm(cap, ops_);
  }
  return ref_;
}

Comparison Workload::compare_output(const std::vector<std::uint16_t>& out, const Tolerance& tol) {
  return gemm::compare(out.data(), reference().data(), out.size(), tol, magnitude().data());
}

const std::vector<float>& Workload::magnitude() {
  if (mag_.empty()) {
    Problem cap = p_;
    cap.m = capacity_m_;
    mag_ = magnitude_gemm(cap, ops_);
  }
  return mag_;
}

}  // namespace tunetab::gemm_fp8
