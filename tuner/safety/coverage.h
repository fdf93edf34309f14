// Coverage: which Ms each table row serves under a consumer's lookup rule, and which of them a row's kernel
// is validated on before it may be exported (every M up to a limit, then a sample that hits the edges where
// kernels break: range ends, powers of two, primes, tile edges, and the Ms where an offset reaches 2^31 or
// 2^32 elements).
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/family.h"
#include "tuner/profile/lookup.h"

namespace tunetab::safety {

using MRange = profile::MDomain;

/// For each row M in `rows`, the ranges of 1..m_max that `rule` routes to it, ascending and merged. A row
/// that serves nothing in 1..m_max (it lies above m_max) gets no entry.
std::map<std::int64_t, std::vector<MRange>> served_ranges(const profile::LookupRule& rule,
                                                         const std::set<std::int64_t>& rows, std::int64_t m_max);

/// The largest M of `ranges`, or `row` when that is larger (the M the index width must be proven for).
std::int64_t largest_served(const std::vector<MRange>& ranges, std::int64_t row);

/// The Ms a row's final candidates are timed at, so that it takes the config fastest over the Ms it serves, not
/// only at its own (a bucket row 512 serves 257..512): `points` Ms evenly spaced from the smallest served M to the
/// row (3: that M, the midpoint and the row); ascending, each served (or the row) and none above the row (the tuning
/// case holds M <= row).
std::vector<std::int64_t> timing_sample(const std::vector<MRange>& ranges, std::int64_t row, int points = 3);

/// Per-M growth of each buffer's largest offset (elements per row of M), from a family's index bounds at
/// M = 1 and M = 2: the widths whose multiples reach 2^31.
std::vector<std::int64_t> row_widths(const std::vector<BufferBound>& at_m1, const std::vector<BufferBound>& at_m2);

struct CoverageSet {
  std::vector<std::int64_t> every;    // every M of the ranges up to the limit
  std::vector<std::int64_t> sampled;  // the sample above the limit
  std::vector<std::int64_t> all() const;  // every then sampled, ascending
};

/// The Ms a row serving `ranges` is validated on: every M <= every_limit; above it each range's ends, the
/// powers of two, the first and last prime of the range and the first prime after each power of two, the
/// tile edges t*q-1, t*q, t*q+1 (t in 16..256) around those, and the Ms straddling 2^31/w and 2^32/w for
/// each row width w.
CoverageSet coverage_ms(const std::vector<MRange>& ranges, std::int64_t every_limit, const std::vector<std::int64_t>& widths);

bool is_prime(std::int64_t n);

/// JSON [[first, last], ...].
nlohmann::json ranges_json(const std::vector<MRange>& ranges);
std::vector<MRange> ranges_from_json(const nlohmann::json& j, const std::string& where);
/// True when every M of `want` lies in some range of `have`.
bool ranges_cover(const std::vector<MRange>& have, const std::vector<MRange>& want);

/// The canonical coverage domain of a row: rule, every-M limit and served ranges (a new one re-validates).
std::string domain_text(profile::RuleKind rule, std::int64_t every_limit, const std::vector<MRange>& ranges);

}  // namespace tunetab::safety
