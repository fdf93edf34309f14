#include "tuner/hash.h"

#include <cstdint>
#include <cstdio>

namespace tunetab {

std::string hash_hex(std::string_view data) {
  std::uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  for (unsigned char c : data) {
    h1 = (h1 ^ c) * 0x100000001b3ull;
    h2 = (h2 ^ (c + 0x9e)) * 0x100000001b3ull;
    h2 ^= h2 >> 29;
  }
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(h1),
                static_cast<unsigned long long>(h2));
  return buf;
}

}  // namespace tunetab
