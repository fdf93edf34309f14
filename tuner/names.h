// Enum <-> name through one table of {value, "name"} pairs, so to_string and from_string cannot drift.
#pragma once
#include <cstddef>
#include <string>
#include <utility>

#include "tuner/error.h"

namespace tunetab {

template <typename E, std::size_t N>
std::string name_of(const std::pair<E, const char*> (&table)[N], E value) {
  for (const auto& [k, name] : table)
    if (k == value) return name;
  return "?";
}

/// The value named `s`; otherwise an Input error "<what> 's': expected one of a, b, c".
template <typename E, std::size_t N>
E value_named(const std::pair<E, const char*> (&table)[N], const std::string& s, const std::string& what) {
  std::string names;
  for (const auto& [k, name] : table) {
    if (s == name) return k;
    names += std::string(names.empty() ? "" : ", ") + name;
  }
  throw_input(what + " '" + s + "': expected one of " + names);
}

}  // namespace tunetab
