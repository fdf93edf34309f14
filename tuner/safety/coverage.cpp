#include "tuner/safety/coverage.h"

#include <algorithm>

#include "tuner/error.h"

namespace tunetab::safety {

std::map<std::int64_t, std::vector<MRange>> served_ranges(const profile::LookupRule& rule,
                                                         const std::set<std::int64_t>& rows, std::int64_t m_max) {
  TUNETAB_ASSERT(m_max >= 1, "the M domain must reach at least M = 1");
  std::map<std::int64_t, std::vector<MRange>> out;
  for (std::int64_t m = 1; m <= m_max;) {
    const std::int64_t until = std::min(rule.constant_until(m, rows), m_max);
    TUNETAB_ASSERT(until >= m, "a lookup rule's constant range must hold its first M");
    if (const auto row = rule.lookup(m, rows)) {
      auto& v = out[*row];
      if (!v.empty() && v.back().last + 1 == m)
        v.back().last = until;
      else
        v.push_back({m, until});
    }
    m = until + 1;
  }
  return out;
}

std::int64_t largest_served(const std::vector<MRange>& ranges, std::int64_t row) {
  std::int64_t m = row;
  for (const auto& r : ranges) m = std::max(m, r.last);
  return m;
}

std::vector<std::int64_t> timing_sample(const std::vector<MRange>& ranges, std::int64_t row, int points) {
  std::set<std::int64_t> ms{row};
  const auto served = [&](std::int64_t m) {
    return std::any_of(ranges.begin(), ranges.end(), [&](const MRange& r) { return r.first <= m && m <= r.last; });
  };
  if (!ranges.empty() && ranges.front().first < row && points > 1) {
    const std::int64_t lo = ranges.front().first;
    for (int i = 0; i + 1 < points; ++i)
      if (const std::int64_t m = lo + (row - lo) * i / (points - 1); served(m)) ms.insert(m);
  }
  return {ms.begin(), ms.end()};
}

std::vector<std::int64_t> row_widths(const std::vector<BufferBound>& at_m1, const std::vector<BufferBound>& at_m2) {
  std::set<std::int64_t> widths;
  for (const auto& b2 : at_m2)
    for (const auto& b1 : at_m1)
      if (b1.buffer == b2.buffer && b2.max_offset > b1.max_offset) widths.insert(b2.max_offset - b1.max_offset);
  return {widths.begin(), widths.end()};
}

bool is_prime(std::int64_t n) {
  if (n < 2) return false;
  if (n % 2 == 0) return n == 2;
  for (std::int64_t d = 3; d * d <= n; d += 2)
    if (n % d == 0) return false;
  return true;
}

std::vector<std::int64_t> CoverageSet::all() const {
  std::vector<std::int64_t> out = every;
  out.insert(out.end(), sampled.begin(), sampled.end());
  std::sort(out.begin(), out.end());
  return out;
}

CoverageSet coverage_ms(const std::vector<MRange>& ranges, std::int64_t every_limit, const std::vector<std::int64_t>& widths) {
  CoverageSet out;
  std::set<std::int64_t> sampled;
  for (const MRange& r : ranges) {
    TUNETAB_ASSERT(r.first >= 1 && r.first <= r.last, "a served range is a non-empty range of positive M");
    for (std::int64_t m = r.first; m <= std::min(r.last, every_limit); ++m) out.every.push_back(m);
    if (r.last <= every_limit) continue;
    const MRange above{std::max(r.first, every_limit + 1), r.last};
    auto add = [&](std::int64_t m) {
      if (m >= above.first && m <= above.last) sampled.insert(m);
    };
    std::vector<std::int64_t> anchors = {above.first, above.last};
    for (std::int64_t p = 1; p <= above.last && p > 0; p *= 2)
      if (p >= above.first) anchors.push_back(p);
    for (std::int64_t w : widths)
      for (std::int64_t limit : {std::int64_t{1} << 31, std::int64_t{1} << 32}) {
        // The first M whose largest offset (M * w - 1) reaches `limit`, and its neighbours.
        const std::int64_t m0 = (limit + w) / w;
        for (std::int64_t m : {m0 - 2, m0 - 1, m0, m0 + 1}) add(m);
      }
    for (std::int64_t a : anchors) {
      add(a);
      for (std::int64_t t = 16; t <= 256; t *= 2) {
        const std::int64_t q = a / t * t;
        for (std::int64_t m : {q - 1, q, q + 1, q + t - 1, q + t, q + t + 1}) add(m);
      }
      // The first prime from each anchor upwards (a prime M is ragged for every tile).
      for (std::int64_t m = a; m <= above.last && m < a + 10000; ++m)
        if (is_prime(m)) {
          add(m);
          break;
        }
    }
    for (std::int64_t m = above.last; m >= above.first && m > above.last - 10000; --m)
      if (is_prime(m)) {
        add(m);
        break;
      }
  }
  out.sampled.assign(sampled.begin(), sampled.end());
  return out;
}

nlohmann::json ranges_json(const std::vector<MRange>& ranges) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : ranges) j.push_back({r.first, r.last});
  return j;
}

std::vector<MRange> ranges_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array()) throw_input(where + ": expected an array of [first, last] M ranges");
  std::vector<MRange> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& r = j[i];
    if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() || !r[1].is_number_integer() ||
        r[0].get<std::int64_t>() < 1 || r[0].get<std::int64_t>() > r[1].get<std::int64_t>())
      throw_input(where + "[" + std::to_string(i) + "]: expected [first, last] with 1 <= first <= last, got " + r.dump());
    out.push_back({r[0].get<std::int64_t>(), r[1].get<std::int64_t>()});
  }
  return out;
}

bool ranges_cover(const std::vector<MRange>& have, const std::vector<MRange>& want) {
  for (const auto& w : want) {
    std::int64_t next = w.first;  // the first M of w not yet covered
    bool progressed = true;
    while (next <= w.last && progressed) {
      progressed = false;
      for (const auto& h : have)
        if (h.first <= next && h.last >= next) {
          next = h.last + 1;
          progressed = true;
        }
    }
    if (next <= w.last) return false;
  }
  return true;
}

std::string domain_text(profile::RuleKind rule, std::int64_t every_limit, const std::vector<MRange>& ranges) {
  return "rule=" + profile::to_string(rule) + ";every=" + std::to_string(every_limit) + ";served=" + ranges_json(ranges).dump();
}

}  // namespace tunetab::safety
