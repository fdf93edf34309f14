// Lookup rules: how a consumer (AITER, vLLM) picks the table row that serves a run-time M. A rule maps
// an M domain to buckets: one table row each, with the first and last M routed to it.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tunetab::profile {

inline constexpr std::int64_t kNoUpperBound = std::numeric_limits<std::int64_t>::max();

/// The M values (tokens) a key is hit with, both ends included.
struct MDomain {
  std::int64_t first = 1;
  std::int64_t last = 1;
  bool operator==(const MDomain&) const = default;
};

/// A table row (its M, `m`) and the Ms it serves, `first`..`last` (kNoUpperBound: unbounded).
struct Bucket {
  std::int64_t m = 0;
  std::int64_t first = 0;
  std::int64_t last = 0;
  bool operator==(const Bucket&) const = default;
};

enum class RuleKind { kAiterFmoe, kAiterGemm, kVllmNearest, kExact };
std::string to_string(RuleKind kind);  // "aiter-fmoe", "aiter-gemm", "vllm-nearest", "exact"
/// Input error listing the names when `s` is none of them.
RuleKind rule_from_string(const std::string& s);

/// Smallest power of two >= m (1 for m <= 1), AITER's nextPow2.
std::int64_t next_pow2(std::int64_t m);
/// AITER fused-MoE get_padded_M: next power of two below 32768, then the tiers 32768 and 131072.
std::int64_t aiter_fmoe_padded_m(std::int64_t m);
/// AITER GEMM getPaddedM at granularity 0 (fine: next power of two below 16, then multiples of
/// 16/32/64/128 up to 256/1024/4096/beyond) or 1 (coarse: 8192 when m > 8192 and n > 4096, else next_pow2).
std::int64_t aiter_gemm_padded_m(std::int64_t m, std::int64_t n, int granularity);

/// "FIRST-LAST" (e.g. "257-512") as an M range; input error "OPTION 'V': expected FIRST-LAST, e.g. EXAMPLE" otherwise.
/// The order of the two is the caller's to check.
MDomain parse_m_range(const std::string& v, const std::string& option, const std::string& example);

/// Input error (naming `what`) unless `fine` is a range AITER GEMM rows can hold at the fine padding beside the
/// coarse (power-of-two) rows: first - 1 and last powers of two, 16 < first <= last <= 4096.
void validate_fine_rows(MDomain fine, const std::string& what);

/// vLLM's tuning batch sizes (benchmarks/kernels/benchmark_moe.py), doubled from 8192 until >= max_m.
std::vector<std::int64_t> vllm_default_keys(std::int64_t max_m);

/// One consumer's rule. `lookup` is the consumer's own search over any set of rows; `bucket_of` and
/// `buckets` describe the rows the rule asks a table to hold and which Ms each one serves.
class LookupRule {
 public:
  /// AITER fused MoE: the row at aiter_fmoe_padded_m(M); a missing 131072 row falls back to 32768.
  static LookupRule aiter_fmoe();
  /// AITER GEMM for a key with this N: exact M, then the fine, then the coarse padding (first hit wins).
  /// `fine` (first 0: none): the Ms whose rows a table holds at the fine padding, a row per fine step (16, 32,
  /// 64 rows) instead of one per power of two, so that e.g. M 321..352 gets a row of its own, not 257..512's;
  /// validate_fine_rows says which ranges line up with the coarse rows around them.
  static LookupRule aiter_gemm(std::int64_t n, MDomain fine = {0, 0});
  /// vLLM fused MoE: the key nearest to M (a tie goes to the smaller key); `keys` must not be empty.
  static LookupRule vllm_nearest(std::vector<std::int64_t> keys);
  /// Only a row for M itself.
  static LookupRule exact();
  /// The rule of `kind` for a key with this N, whose Ms reach up to max_m (vLLM's keys cover it); `gemm_fine`
  /// as aiter_gemm's `fine` (the other rules ignore it).
  static LookupRule make(RuleKind kind, std::int64_t n, std::int64_t max_m, MDomain gemm_fine = {0, 0});

  RuleKind kind() const { return kind_; }
  /// The row the consumer picks for m among `rows`, or nullopt when it finds none (its default config).
  std::optional<std::int64_t> lookup(std::int64_t m, const std::set<std::int64_t>& rows) const;
  /// The last M (kNoUpperBound: none) up to which lookup(., rows) picks what it picks for m, so a caller
  /// can walk a domain range by range instead of M by M.
  std::int64_t constant_until(std::int64_t m, const std::set<std::int64_t>& rows) const;
  /// The bucket holding m, unclipped, in a table that holds exactly the rows this rule asks for.
  Bucket bucket_of(std::int64_t m) const;
  /// The buckets covering `domain` in increasing M, their first and last clipped to it.
  std::vector<Bucket> buckets(MDomain domain) const;

 private:
  explicit LookupRule(RuleKind kind) : kind_(kind) {}
  RuleKind kind_;
  std::int64_t n_ = 0;               // aiter-gemm: the key's N (the coarse padding depends on it)
  MDomain fine_{0, 0};               // aiter-gemm: the Ms with rows at the fine padding (first 0: none)
  std::vector<std::int64_t> keys_;   // vllm-nearest: sorted, unique
};

}  // namespace tunetab::profile
