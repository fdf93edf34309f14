#include "tuner/safety/device_compare.h"

#include <memory>
#include <mutex>
#include <vector>

#include "kernels/validate/validate.h"
#include "tuner/jit/compiler.h"

namespace tunetab::safety {

namespace {
// NOTE: process-wide because a loaded module belongs to the process's device context; every DeviceCase of
// the process shares it. Guarded by the mutex.
struct State {
  std::mutex mu;
  bool enabled = false;
  bool tried = false;
  DeviceFacts device;
  db::Store* cache = nullptr;
  std::unique_ptr<Module> module;
  std::vector<std::unique_ptr<Module>> retired;  // NOTE: a case made before a switch may still hold one
  CompareKernel kernel;
  std::string why = "device compare not enabled in this process";
};
State& state() {
  // NOTE: never destroyed: unloading modules at exit would race the driver's own teardown.
  static State* s = new State;
  return *s;
}
}  // namespace

void enable_device_compare(const DeviceFacts& device, db::Store* cache) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.enabled && s.device.arch == device.arch && s.device.ordinal == device.ordinal) return;
  s.enabled = true;
  s.tried = false;
  s.device = device;
  s.cache = cache;
  if (s.module) s.retired.push_back(std::move(s.module));
  s.why.clear();
}

void disable_device_compare() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.enabled = false;
  if (s.module) s.retired.push_back(std::move(s.module));
  s.why = "device compare disabled";
}

const CompareKernel* device_compare_kernel() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.enabled) return nullptr;
  if (!s.tried) {
    s.tried = true;
    try {
      const jit::Compiler compiler({s.device.arch, {}});
      const auto recs = jit::compile_all(compiler, {validate::kernel()}, s.cache, 1, false);
      const db::CodeObjectRecord& rec = recs.at(0);
      if (!rec.ok) {
        s.why = "the validate kernel did not compile for " + s.device.arch + ": " + rec.log;
      } else {
        s.module = std::make_unique<Module>(std::vector<char>(rec.binary.begin(), rec.binary.end()), rec.lowered_name);
        s.kernel = {s.module.get(), s.device.cu_count};
      }
    } catch (const Error& e) {
      // NOTE: a fault or lost context is not a compile problem: it must reach the runner's handler.
      if (e.kind() == ErrorKind::kFault || e.kind() == ErrorKind::kTimeout) throw;
      s.why = std::string("the validate kernel could not be built: ") + e.what();
    }
  }
  return s.module ? &s.kernel : nullptr;
}

std::string why_no_device_compare() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.module ? "" : s.why;
}

}  // namespace tunetab::safety
