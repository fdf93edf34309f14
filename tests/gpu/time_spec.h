// The timing tools' environment spec, "HEAD:config,config,...": each GPU test family's TimeConfigs* test reads
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

/// Parses "HEAD:config,..."; nullopt without a colon.
inline std::optional<TimeSpec> parse_time_spec(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  TimeSpec s{text.substr(0, colon), {}};
  std::stringstream names(text.substr(colon + 1));
  for (std::string name; std::getline(names, name, ',');)
    if (!name.empty()) s.configs.push_back(name);
  return s;
}

}  // namespace tunetab
