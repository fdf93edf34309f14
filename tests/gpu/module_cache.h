// The GPU tests' code objects: each kernel compiled once per test fixture and loaded once, and the many a test
// loops over compiled ahead of it in parallel on every core (prepare): one NVRTC compile after another was most of
// GemmFp8Gpu's four minutes on the H200 (session 15: the ragged-shape test 133 s, the M=1 one 99 s).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tuner/hip/runtime.h"
#include "tuner/jit/compiler.h"

namespace tunetab {

class ModuleCache {
 public:
  /// A kernel source and the dynamic shared memory its launch asks for (> 48 KiB needs an opt-in on NVIDIA).
  struct Entry {
    KernelSource source;
    std::size_t dynamic_smem = 0;
  };

  explicit ModuleCache(const std::string& arch) : compiler_(jit::CompileOptions{arch, {}}) {}

  const jit::Compiler& compiler() const { return compiler_; }

  /// Compiles every entry not loaded yet, in parallel, and loads it. A compile error fails the test.
  void prepare(const std::vector<Entry>& entries) {
    std::vector<Entry> todo;
    for (const Entry& e : entries)
      if (!modules_.count(key(e)) &&
          std::none_of(todo.begin(), todo.end(), [&](const Entry& t) { return key(t) == key(e); }))
        todo.push_back(e);
    if (todo.empty()) return;
    std::vector<KernelSource> sources;
    for (const Entry& e : todo) sources.push_back(e.source);
    const int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto recs = jit::compile_all(compiler_, sources, nullptr, jobs, false);
    // A failed compile is reported here and not loaded: get() compiles it again (and fails that config) when the
    // test reaches it, so the configs before it still run.
    for (std::size_t i = 0; i < todo.size(); ++i) {
      EXPECT_TRUE(recs[i].ok) << todo[i].source.name_expression << "\n" << recs[i].log;
      if (recs[i].ok) load(todo[i], recs[i]);
    }
  }

  /// The loaded module of `e`, compiled now if no prepare() did.
  const Module& get(const Entry& e) {
    auto it = modules_.find(key(e));
    if (it == modules_.end()) it = load(e, compiler_.compile(e.source));
    return *it->second;
  }

 private:
  static std::string key(const Entry& e) { return e.source.name_expression + "#" + std::to_string(e.dynamic_smem); }

  std::map<std::string, std::unique_ptr<Module>>::iterator load(const Entry& e, const db::CodeObjectRecord& rec) {
    EXPECT_TRUE(rec.ok) << e.source.name_expression << "\n" << rec.log;
    auto m = std::make_unique<Module>(rec.binary, rec.lowered_name);
    if (e.dynamic_smem > 48 * 1024) m->allow_dynamic_shared(static_cast<int>(e.dynamic_smem));
    return modules_.emplace(key(e), std::move(m)).first;
  }

  jit::Compiler compiler_;
  std::map<std::string, std::unique_ptr<Module>> modules_;
};

}  // namespace tunetab
