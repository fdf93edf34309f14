#include "tuner/profile/lookup.h"

#include <algorithm>
#include <iterator>
#include <regex>

#include "tuner/error.h"
#include "tuner/names.h"

namespace tunetab::profile {

namespace {

// clang-format off
const std::pair<RuleKind, const char*> kRuleNames[] = {
  {RuleKind::kAiterFmoe,   "aiter-fmoe"},
  {RuleKind::kAiterGemm,   "aiter-gemm"},
  {RuleKind::kVllmNearest, "vllm-nearest"},
  {RuleKind::kExact,       "exact"},
};
// clang-format on

// AITER fused MoE pads M below 32768 to a power of two; at and above it, M falls into tiers.
constexpr std::int64_t kFmoeTier1 = 32768;
constexpr std::int64_t kFmoeTier2 = 131072;
// AITER GEMM's coarse padding sends every M above kGemmCap to the kGemmCap row when N > kGemmWideN.
constexpr std::int64_t kGemmCap = 8192;
constexpr std::int64_t kGemmWideN = 4096;

/// The bucket of a power-of-two row p: the Ms whose next power of two is p.
Bucket pow2_bucket(std::int64_t p) { return {p, p == 1 ? 1 : p / 2 + 1, p}; }

std::int64_t round_up(std::int64_t m, std::int64_t step) { return (m + step - 1) / step * step; }

/// AITER GEMM's fine padding step for m >= 16: 16 rows up to 256, 32 up to 1024, 64 up to 4096, then 128.
std::int64_t aiter_gemm_fine_step(std::int64_t m) { return m <= 256 ? 16 : m <= 1024 ? 32 : m <= 4096 ? 64 : 128; }

/// The key nearest to m among sorted keys, given `hi`, the first key >= m; a tie goes to the smaller
/// key, as Python's min() over vLLM's ascending keys does.
template <typename It>
It nearest(It begin, It hi, It end, std::int64_t m) {
  if (hi == begin) return hi;
  It lo = std::prev(hi);
  if (hi == end) return lo;
  return m - *lo <= *hi - m ? lo : hi;
}

}  // namespace

std::string to_string(RuleKind kind) { return name_of(kRuleNames, kind); }

RuleKind rule_from_string(const std::string& s) { return value_named(kRuleNames, s, "lookup rule"); }

std::int64_t next_pow2(std::int64_t m) {
  std::int64_t p = 1;
  while (p < m) p *= 2;
  return p;
}

std::int64_t aiter_fmoe_padded_m(std::int64_t m) {
  if (m < kFmoeTier1) return next_pow2(m);
  return m < kFmoeTier2 ? kFmoeTier1 : kFmoeTier2;
}

std::int64_t aiter_gemm_padded_m(std::int64_t m, std::int64_t n, int granularity) {
  if (granularity == 0) {
    // NOTE: AITER's getPaddedM; below one 16-row step the next power of two is the finer row (recent AITER).
    return m < 16 ? next_pow2(m) : round_up(m, aiter_gemm_fine_step(m));
  }
  TUNETAB_ASSERT(granularity == 1, "AITER GEMM padding granularity is 0 or 1");
  return m > kGemmCap && n > kGemmWideN ? kGemmCap : next_pow2(m);
}

std::vector<std::int64_t> vllm_default_keys(std::int64_t max_m) {
  std::vector<std::int64_t> keys = {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096};
  while (keys.back() < max_m) keys.push_back(keys.back() * 2);
  return keys;
}

LookupRule LookupRule::aiter_fmoe() { return LookupRule(RuleKind::kAiterFmoe); }

MDomain parse_m_range(const std::string& v, const std::string& option, const std::string& example) {
  static const std::regex range(R"((\d{1,9})-(\d{1,9}))");
  std::smatch mt;
  if (!std::regex_match(v, mt, range)) throw_input(option + " '" + v + "': expected FIRST-LAST, e.g. " + example);
  return {std::stoll(mt[1]), std::stoll(mt[2])};
}

void validate_fine_rows(MDomain fine, const std::string& what) {
  const auto pow2 = [](std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  if (fine.first <= 16 || fine.last > 4096 || fine.first > fine.last || !pow2(fine.first - 1) || !pow2(fine.last))
    throw_input(what + " " + std::to_string(fine.first) + "-" + std::to_string(fine.last) +
                ": expected FIRST-LAST with FIRST - 1 and LAST powers of two, 16 < FIRST <= LAST <= 4096 (e.g. 257-512: "
                "the fine rows then replace the coarse rows of those Ms whole)");
}

LookupRule LookupRule::aiter_gemm(std::int64_t n, MDomain fine) {
  LookupRule r(RuleKind::kAiterGemm);
  r.n_ = n;
  if (fine.first != 0) validate_fine_rows(fine, "AITER GEMM fine rows");
  r.fine_ = fine;
  return r;
}

LookupRule LookupRule::vllm_nearest(std::vector<std::int64_t> keys) {
  TUNETAB_ASSERT(!keys.empty(), "vLLM's nearest-key rule needs at least one key");
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  LookupRule r(RuleKind::kVllmNearest);
  r.keys_ = std::move(keys);
  return r;
}

LookupRule LookupRule::exact() { return LookupRule(RuleKind::kExact); }

LookupRule LookupRule::make(RuleKind kind, std::int64_t n, std::int64_t max_m, MDomain gemm_fine) {
  switch (kind) {
    case RuleKind::kAiterFmoe: return aiter_fmoe();
    case RuleKind::kAiterGemm: return aiter_gemm(n, gemm_fine);
    case RuleKind::kVllmNearest: return vllm_nearest(vllm_default_keys(max_m));
    case RuleKind::kExact: return exact();
  }
  TUNETAB_THROW(kInfra, "unknown lookup rule");
}

std::optional<std::int64_t> LookupRule::lookup(std::int64_t m, const std::set<std::int64_t>& rows) const {
  auto row = [&](std::int64_t want) -> std::optional<std::int64_t> {
    if (rows.count(want)) return want;
    return std::nullopt;
  };
  switch (kind_) {
    case RuleKind::kExact: return row(m);
    case RuleKind::kAiterFmoe: {
      const std::int64_t padded = aiter_fmoe_padded_m(m);
      // NOTE: AITER's _lookup_cfg falls back from a missing top tier to the smaller tier.
      if (auto r = row(padded)) return r;
      return padded == kFmoeTier2 ? row(kFmoeTier1) : std::nullopt;
    }
    case RuleKind::kAiterGemm: {
      // AITER's `for gl in [None, 0, 1]`: the first padded M with a row wins.
      for (std::int64_t want : {m, aiter_gemm_padded_m(m, n_, 0), aiter_gemm_padded_m(m, n_, 1)})
        if (auto r = row(want)) return r;
      return std::nullopt;
    }
    case RuleKind::kVllmNearest:
      if (rows.empty()) return std::nullopt;
      return *nearest(rows.begin(), rows.lower_bound(m), rows.end(), m);
  }
  return std::nullopt;
}

std::int64_t LookupRule::constant_until(std::int64_t m, const std::set<std::int64_t>& rows) const {
  TUNETAB_ASSERT(m >= 1, "M must be positive");
  const auto next_row = rows.upper_bound(m);
  // Past m, a rule that tries M itself first can change its answer at the next row, and not before.
  const std::int64_t before_next_row = next_row == rows.end() ? kNoUpperBound : *next_row - 1;
  switch (kind_) {
    case RuleKind::kExact: return rows.count(m) ? m : before_next_row;
    case RuleKind::kAiterFmoe: return bucket_of(m).last;  // the padded M is one value over a bucket
    case RuleKind::kAiterGemm: {
      if (rows.count(m)) return m;
      // Each padding rounds up to the M it pads to, so it holds its value up to that M.
      const std::int64_t coarse = m > kGemmCap && n_ > kGemmWideN ? kNoUpperBound : next_pow2(m);
      return std::min({before_next_row, aiter_gemm_padded_m(m, n_, 0), coarse});
    }
    case RuleKind::kVllmNearest: {
      if (rows.empty()) return kNoUpperBound;
      const auto it = nearest(rows.begin(), rows.lower_bound(m), rows.end(), m);
      const auto next = std::next(it);
      return next == rows.end() ? kNoUpperBound : (*it + *next) / 2;  // a tie goes to *it
    }
  }
  TUNETAB_THROW(kInfra, "unknown lookup rule");
}

Bucket LookupRule::bucket_of(std::int64_t m) const {
  TUNETAB_ASSERT(m >= 1, "M must be positive");
  switch (kind_) {
    case RuleKind::kExact: return {m, m, m};
    case RuleKind::kAiterFmoe:
      // M in 16385..32767 pads to 32768, and so does the whole 32768..131071 tier: one row.
      if (m >= kFmoeTier2) return {kFmoeTier2, kFmoeTier2, kNoUpperBound};
      if (m > kFmoeTier1 / 2) return {kFmoeTier1, kFmoeTier1 / 2 + 1, kFmoeTier2 - 1};
      return pow2_bucket(next_pow2(m));
    case RuleKind::kAiterGemm:
      // Within `fine_`, a row at each fine padding: its fine step of Ms, which no exact or coarse lookup of
      // another M reaches (fine_ spans whole coarse buckets, so the rows below and above stay coarse).
      if (fine_.first != 0 && m >= fine_.first && m <= fine_.last) {
        const std::int64_t step = aiter_gemm_fine_step(m), p = round_up(m, step);  // aiter_gemm_padded_m(m, n_, 0)
        return {p, p - step + 1, p};
      }
      // Otherwise the rows asked for are the coarse ones: powers of two, capped at 8192 when N > 4096. With
      // only those rows, the exact and fine tiers hit a row only when it is M's next power of two anyway.
      if (n_ > kGemmWideN && m > kGemmCap / 2) return {kGemmCap, kGemmCap / 2 + 1, kNoUpperBound};
      return pow2_bucket(next_pow2(m));
    case RuleKind::kVllmNearest: {
      const auto it = nearest(keys_.begin(), std::lower_bound(keys_.begin(), keys_.end(), m), keys_.end(), m);
      const std::int64_t first = it == keys_.begin() ? 1 : (*std::prev(it) + *it) / 2 + 1;
      const std::int64_t last = std::next(it) == keys_.end() ? kNoUpperBound : (*it + *std::next(it)) / 2;
      return {*it, first, last};
    }
  }
  TUNETAB_THROW(kInfra, "unknown lookup rule");
}

std::vector<Bucket> LookupRule::buckets(MDomain domain) const {
  TUNETAB_ASSERT(domain.first >= 1 && domain.first <= domain.last, "an M domain is a non-empty range of positive M");
  std::vector<Bucket> out;
  for (std::int64_t m = domain.first;;) {
    const Bucket b = bucket_of(m);
    out.push_back({b.m, m, std::min(b.last, domain.last)});
    if (b.last >= domain.last) break;
    m = b.last + 1;
  }
  return out;
}

}  // namespace tunetab::profile
