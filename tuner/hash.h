// Stable content hashes for cache keys and code-object identities.
#pragma once
#include <string>
#include <string_view>

namespace tunetab {

/// 128-bit FNV-1a (two independent 64-bit lanes) as 32 hex digits; stable across builds and hosts.
std::string hash_hex(std::string_view data);

}  // namespace tunetab
