#include "tuner/jit/offline_clang.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "tuner/error.h"
#include "tuner/jit/embedded.h"

namespace tunetab::jit {

namespace fs = std::filesystem;

static bool on_path(const std::string& exe) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string p(path);
  std::size_t start = 0;
  while (start <= p.size()) {
    const std::size_t end = p.find(':', start);
    const fs::path cand = fs::path(p.substr(start, end == std::string::npos ? std::string::npos : end - start)) / exe;
    std::error_code ec;
    if (fs::exists(cand, ec) && access(cand.c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

std::string find_clang_for(const std::string& arch) {
  // NOTE: gfx950 entered upstream clang after 19; clang-22 covers every arch we check.
  const std::vector<std::string> candidates =
      arch == "gfx950" ? std::vector<std::string>{"clang++-22", "clang++-21", "clang++-20"}
                       : std::vector<std::string>{"clang++-19", "clang++-22", "clang++-21", "clang++-20"};
  for (const auto& c : candidates)
    if (on_path(c)) return c;
  return "";
}

OfflineCheck offline_compile_check(const std::vector<KernelSource>& sources, const std::string& arch,
                                   const std::string& clang, int jobs) {
  OfflineCheck r;
  char tmpl[] = "/tmp/tunetab-offline-XXXXXX";
  if (!mkdtemp(tmpl)) TUNETAB_THROW(kInfra, "mkdtemp failed");
  const fs::path dir(tmpl);
  for (const auto& h : embedded_headers()) std::ofstream(dir / h.name) << h.text;
  // One translation unit of explicit instantiations per job, compiled side by side.
  const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(std::max(jobs, 1)), sources.size()));
  std::vector<std::string> commands(parts);
  for (std::size_t part = 0; part < parts; ++part) {
    const std::string stem = (dir / ("part" + std::to_string(part))).string();
    std::ofstream tu(stem + ".hip");
    std::set<std::string> seen;
    for (const auto& s : sources)
      if (seen.insert(s.source).second) tu << s.source << "\n";
    for (std::size_t i = part; i < sources.size(); i += parts) {
      tu << "template __global__ void " << sources[i].name_expression << "(" << sources[i].parameters << ");\n";
      ++r.instances;
    }
    commands[part] = clang + " -x hip --cuda-device-only -nogpulib -nogpuinc -std=c++17 -O3 -DTT_OFFLINE_HIP -S --offload-arch=" +
                     arch + " -I" + dir.string() + " " + stem + ".hip -o " + stem + ".s > " + stem + ".log 2>&1";
  }
  r.command = commands[0];
  std::vector<int> status(parts, -1);
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> threads;
    for (std::size_t part = 0; part < parts; ++part)
      threads.emplace_back([&, part] { status[part] = std::system(commands[part].c_str()); });
    for (auto& t : threads) t.join();
  }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.ok = true;
  for (std::size_t part = 0; part < parts; ++part) {
    const std::string stem = (dir / ("part" + std::to_string(part))).string();
    std::ifstream log(stem + ".log");
    r.log.append(std::istreambuf_iterator<char>(log), {});
    std::error_code ec;
    const bool has_code = fs::exists(stem + ".s", ec) && fs::file_size(stem + ".s", ec) > 0;
    const bool ok = status[part] != -1 && WIFEXITED(status[part]) && WEXITSTATUS(status[part]) == 0 && has_code;
    if (!ok) r.command = commands[part];  // the failing one, for the report
    r.ok = r.ok && ok;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

}  // namespace tunetab::jit
