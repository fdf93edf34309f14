// hipRTC compilation of one KernelSource into a code object, with its complete cache key.
#pragma once
#include <string>
#include <vector>

#include "db/store.h"
#include "kernels/family.h"

namespace tunetab::jit {

struct CompileOptions {
  std::string arch;                     // "sm_90a", "gfx90a", ...
  std::vector<std::string> extra_flags; // --jit-flag
};

class Compiler {
 public:
  explicit Compiler(CompileOptions options);
  /// "nvrtc 13.0" or "hiprtc 5.2": part of the cache key and of the device record.
  static std::string version();
  const std::string& arch() const { return options_.arch; }
  /// Every flag passed to hipRTC; built here and nowhere else.
  const std::vector<std::string>& flags() const { return flags_; }
  /// The whole cache key (family, source, the hash of the headers it includes, flags, compiler, arch,
  /// tunetab version).
  std::string key_text(const KernelSource& k) const;
  /// Compiles; never throws for a compile error (ok = false with the log), only for infrastructure failures.
  db::CodeObjectRecord compile(const KernelSource& k) const;

 private:
  std::string key_text(const KernelSource& k, const std::string& headers_hash) const;
  CompileOptions options_;
  std::vector<std::string> flags_;
};

/// Compiles every source not already in the store's cache, in parallel on `jobs` threads, and returns
/// one record per source, in order; `compiled` (if given) gets how many were compiled, not found in the cache.
/// Progress goes to stderr.
std::vector<db::CodeObjectRecord> compile_all(const Compiler& compiler, const std::vector<KernelSource>& sources,
                                              db::Store* cache, int jobs, bool show_progress,
                                              std::size_t* compiled = nullptr);

}  // namespace tunetab::jit
