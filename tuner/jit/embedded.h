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
/// Hash over every embedded header's name and text: part of each cache key.
const std::string& embedded_headers_hash();
}  // namespace jit
}  // namespace tunetab
