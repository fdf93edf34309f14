#include "tuner/jit/offline_clang.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

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
                                   const std::string& clang) {
  OfflineCheck r;
  char tmpl[] = "/tmp/tunetab-offline-XXXXXX";
  if (!mkdtemp(tmpl)) TUNETAB_THROW(kInfra, "mkdtemp failed");
  const fs::path dir(tmpl);
  for (const auto& h : embedded_headers()) std::ofstream(dir / h.name) << h.text;
  {
    std::ofstream tu(dir / "instances.hip");
    std::set<std::string> seen;
    for (const auto& s : sources)
      if (seen.insert(s.source).second) tu << s.source << "\n";
    for (const auto& s : sources) {
      tu << "template __global__ void " << s.name_expression << "(" << s.parameters << ");\n";
      ++r.instances;
    }
  }
  r.command = clang + " -x hip --cuda-device-only -nogpulib -nogpuinc -std=c++17 -O3 -DTT_OFFLINE_HIP -S --offload-arch=" +
              arch + " -I" + dir.string() + " " + (dir / "instances.hip").string() + " -o " + (dir / "out.s").string() +
              " > " + (dir / "log.txt").string() + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  const int status = std::system(r.command.c_str());
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream log(dir / "log.txt");
  r.log.assign(std::istreambuf_iterator<char>(log), {});
  std::error_code ec;
  const bool has_code = fs::exists(dir / "out.s", ec) && fs::file_size(dir / "out.s", ec) > 0;
  r.ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && has_code;
  fs::remove_all(dir, ec);
  return r;
}

}  // namespace tunetab::jit
