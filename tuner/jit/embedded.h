// Device headers embedded at build time (cmake/embed.cmake): they reach hipRTC in memory, never via -I.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tunetab {
extern const std::pair<const char*, std::string_view> k_embedded_templates[];
extern const std::size_t k_num_embedded_templates;

namespace jit {
struct EmbeddedHeader {
  std::string name;
  std::string_view text;
};
std::vector<EmbeddedHeader> embedded_headers();
/// The names of the headers `source` includes, directly or through each other (`#include "x"` or <x>,
/// wherever it stands: a conditional include counts), in `headers`' order.
std::vector<std::string> included_headers(const std::string& source, const std::vector<EmbeddedHeader>& headers);
/// Hash over the name and text of those headers: part of each cache key, so that a header edit re-keys only
/// the code objects that include it.
std::string headers_hash_for(const std::string& source, const std::vector<EmbeddedHeader>& headers);
}  // namespace jit
}  // namespace tunetab
