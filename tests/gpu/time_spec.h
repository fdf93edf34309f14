// The timing tools' environment spec, "HEAD:config,config,...[;HEAD:...]": each GPU test family's TimeConfigs* test reads
// one (TUNETAB_TIME, TUNETAB_TIME_FP8, TUNETAB_TIME_MOE) and parses its HEAD itself.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tunetab {

struct TimeSpec {
  std::string head;                 ///< before the colon: "M,N,K", or "M[,routing]" for the fused MoE
  std::vector<std::string> configs; ///< config names, in the order given
};

/// Parses "HEAD:config,...[;HEAD:config,...]..." (one process times many shapes); nullopt when a part has no
/// colon or no config.
inline std::optional<std::vector<TimeSpec>> parse_time_specs(const std::string& text) {
  std::vector<TimeSpec> out;
  std::stringstream parts(text);
  for (std::string part; std::getline(parts, part, ';');) {
    if (part.empty()) continue;
    const auto colon = part.find(':');
    if (colon == std::string::npos) return std::nullopt;
    TimeSpec s{part.substr(0, colon), {}};
    std::stringstream names(part.substr(colon + 1));
    for (std::string name; std::getline(names, name, ',');)
      if (!name.empty()) s.configs.push_back(name);
    if (s.configs.empty()) return std::nullopt;
    out.push_back(std::move(s));
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace tunetab
