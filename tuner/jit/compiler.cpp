#include "tuner/jit/compiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "tuner/hash.h"
#include "tuner/hip/runtime.h"
#include "tuner/jit/embedded.h"
#include "tuner/progress.h"

namespace tunetab::jit {

std::vector<EmbeddedHeader> embedded_headers() {
  std::vector<EmbeddedHeader> out;
  for (std::size_t i = 0; i < k_num_embedded_templates; ++i)
    out.push_back({k_embedded_templates[i].first, k_embedded_templates[i].second});
  return out;
}

std::vector<std::string> included_headers(const std::string& source, const std::vector<EmbeddedHeader>& headers) {
  static const std::regex include_line(R"(#\s*include\s*[<"]([^">]+)[">])");
  std::set<std::string> found;
  std::vector<std::string_view> todo = {source};
  while (!todo.empty()) {
    const std::string text(todo.back());
    todo.pop_back();
    for (std::sregex_iterator it(text.begin(), text.end(), include_line), end; it != end; ++it)
      for (const auto& h : headers)
        if (h.name == (*it)[1].str() && found.insert(h.name).second) todo.push_back(h.text);
  }
  std::vector<std::string> out;
  for (const auto& h : headers)
    if (found.count(h.name)) out.push_back(h.name);
  return out;
}

std::string headers_hash_for(const std::string& source, const std::vector<EmbeddedHeader>& headers) {
  const auto names = included_headers(source, headers);
  std::string all;
  for (const auto& h : headers)
    if (std::find(names.begin(), names.end(), h.name) != names.end()) all += h.name + '\0' + std::string(h.text) + '\0';
  return hash_hex(all);
}

Compiler::Compiler(CompileOptions options) : options_(std::move(options)) {
  flags_.push_back("-std=c++17");
#if defined(TUNETAB_PLATFORM_NVIDIA)
  if (options_.arch.rfind("sm_", 0) != 0)
    throw_input("--target " + options_.arch + ": this tunetab is built for HIP's NVIDIA platform; use sm_90a (or build with TUNETAB_PLATFORM=amd)");
  flags_.push_back("--gpu-architecture=" + options_.arch);
  flags_.push_back("-lineinfo");
  // NOTE: ptxas's notes (registers, spills, a serialized wgmma pipeline: C7514/C7517) reach the log only
  // with -v on some machines; the compile check reads them there.
  flags_.push_back("--ptxas-options=-v");
  // NOTE: NVRTC serves a repeated compile from the CUDA compute cache and then returns no ptxas report (on the
  // H200 machine a second compile of the same source took 0.0 s and came back with an empty log), which blinds
  // the compile check. tunetab caches its code objects itself, so that cache is switched off (NVIDIA/cuda-python
  // issue 1124: CUDA_CACHE_DISABLE=1 makes NVRTC print the report every time).
  static std::once_flag no_cache;
  std::call_once(no_cache, [] { ::setenv("CUDA_CACHE_DISABLE", "1", 1); });
#else
  if (options_.arch.rfind("gfx", 0) != 0)
    throw_input("--target " + options_.arch + ": this tunetab is built for HIP's AMD platform; use a gfx arch");
  flags_.push_back("--offload-arch=" + options_.arch);
  flags_.push_back("-O3");
#endif
  for (const auto& f : options_.extra_flags) flags_.push_back(f);
}

std::string Compiler::version() {
  int major = 0, minor = 0;
  TUNETAB_HIPRTC_CHECK(hiprtcVersion(&major, &minor));
#if defined(TUNETAB_PLATFORM_NVIDIA)
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
#else
  return "hiprtc " + std::to_string(major) + "." + std::to_string(minor);
#endif
}

std::string Compiler::key_text(const KernelSource& k, const std::string& headers_hash) const {
  std::string key = "family=" + k.family + "\nname=" + k.name_expression + "\nsource_hash=" + hash_hex(k.source) +
                    "\nheaders_hash=" + headers_hash + "\ncompiler=" + version() + "\narch=" + options_.arch +
                    "\ntunetab=" TUNETAB_VERSION "\nflags=";
  for (const auto& f : flags_) key += f + " ";
  return key;
}

std::string Compiler::key_text(const KernelSource& k) const {
  // NOTE: sources are a few distinct include lines; each closure is hashed once (compile threads share it).
  static std::mutex mu;
  static std::map<std::string, std::string> by_source;
  std::lock_guard<std::mutex> lock(mu);
  auto it = by_source.find(k.source);
  if (it == by_source.end()) it = by_source.emplace(k.source, headers_hash_for(k.source, embedded_headers())).first;
  return key_text(k, it->second);
}

db::CodeObjectRecord Compiler::compile(const KernelSource& k) const {
  db::CodeObjectRecord rec;
  rec.key_text = key_text(k);
  rec.key_hash = hash_hex(rec.key_text);
  rec.family = k.family;
  rec.name_expression = k.name_expression;
  rec.arch = options_.arch;
  rec.compiler_version = version();
  rec.tunetab_version = TUNETAB_VERSION;

  const auto headers = embedded_headers();
  std::vector<std::string> header_text;
  std::vector<const char*> header_ptrs, header_names;
  for (const auto& h : headers) header_text.emplace_back(h.text);
  for (std::size_t i = 0; i < headers.size(); ++i) {
    header_ptrs.push_back(header_text[i].c_str());
    header_names.push_back(headers[i].name.c_str());
  }
#if !defined(TUNETAB_PLATFORM_NVIDIA)
  // NOTE: ROCm 5.2's hipRTC (comgr) is not safe to call from several threads: a clean-clone CI run hung
  // in it with two compile threads. Compile one program at a time there; NVRTC is thread-safe.
  static std::mutex hiprtc_mutex;
  std::lock_guard<std::mutex> hiprtc_lock(hiprtc_mutex);
#endif
  const auto t0 = std::chrono::steady_clock::now();
  hiprtcProgram prog;
  TUNETAB_HIPRTC_CHECK(hiprtcCreateProgram(&prog, k.source.c_str(), (k.family + ".cu").c_str(),
                                           static_cast<int>(headers.size()), header_ptrs.data(), header_names.data()));
  struct Guard {
    hiprtcProgram* p;
    ~Guard() { hiprtcDestroyProgram(p); }
  } guard{&prog};
  TUNETAB_HIPRTC_CHECK(hiprtcAddNameExpression(prog, k.name_expression.c_str()));
  std::vector<const char*> opts;
  for (const auto& f : flags_) opts.push_back(f.c_str());
  const hiprtcResult rc = hiprtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  std::size_t log_size = 0;
  TUNETAB_HIPRTC_CHECK(hiprtcGetProgramLogSize(prog, &log_size));
  std::string log(log_size, '\0');
  if (log_size > 1) TUNETAB_HIPRTC_CHECK(hiprtcGetProgramLog(prog, log.data()));
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  rec.log = log;
  if (rc == HIPRTC_SUCCESS) {
    const char* lowered = nullptr;
    // NOTE: a name expression the compiler cannot resolve fails this kernel, not the whole run.
    const hiprtcResult named = hiprtcGetLoweredName(prog, k.name_expression.c_str(), &lowered);
    if (named != HIPRTC_SUCCESS) {
      rec.ok = false;
      rec.log = std::string(hiprtcGetErrorString(named)) + " for the name expression `" + k.name_expression + "`\n" + rec.log;
      rec.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return rec;
    }
    rec.lowered_name = lowered ? lowered : "";
    std::size_t size = 0;
    TUNETAB_HIPRTC_CHECK(hiprtcGetCodeSize(prog, &size));
    rec.binary.resize(size);
    TUNETAB_HIPRTC_CHECK(hiprtcGetCode(prog, rec.binary.data()));
    rec.ok = size > 0 && !rec.lowered_name.empty();
    if (!rec.ok) rec.log += "\n(tunetab: empty code object or no lowered name)";
  } else {
    rec.ok = false;
    rec.log = std::string(hiprtcGetErrorString(rc)) + "\n" + rec.log;
  }
  rec.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

std::vector<db::CodeObjectRecord> compile_all(const Compiler& compiler, const std::vector<KernelSource>& sources,
                                              db::Store* cache, int jobs, bool show_progress, std::size_t* compiled) {
  std::vector<db::CodeObjectRecord> out(sources.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (cache) {
      const std::string key = compiler.key_text(sources[i]);
      if (auto hit = cache->find_code_object(hash_hex(key)); hit && hit->key_text == key) {
        out[i] = std::move(*hit);
        continue;
      }
    }
    todo.push_back(i);
  }
  if (compiled) *compiled = todo.size();
  if (todo.empty()) return out;
  Progress progress("compile " + compiler.arch(), todo.size(), show_progress);
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::exception_ptr failure;
  auto worker = [&] {
    for (;;) {
      const std::size_t t = next.fetch_add(1);
      if (t >= todo.size()) return;
      try {
        db::CodeObjectRecord rec = compiler.compile(sources[todo[t]]);
        std::lock_guard<std::mutex> lock(mu);
        if (cache) cache->put_code_object(rec);
        out[todo[t]] = std::move(rec);
        progress.tick();
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
        next = todo.size();
      }
    }
  };
  const int n = std::max(1, std::min<int>(jobs, static_cast<int>(todo.size())));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  progress.done();
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace tunetab::jit
