// The device side of tuning and verification, behind one request/reply interface: in a worker process
// (crash isolation: a GPU fault, abort or hang costs the worker, which is replaced) or, with --no-isolation,
// in this process. An isolated executor's worker is a fresh process image of this program (see
// tuner/worker.h) that opens the device itself; the parent never touches the GPU.
//
//   {"op": "facts", "device": N}  ->  {"count", "why", "facts": {...}}
//   {"op": "check", "family", "problem", "capacity_m", "seed", "sets", "workspace", "config",
//    "codes": [{"key", "lowered", "binary", "shared_bytes"}, ...] (the pipeline), "validate": [M, ...], "timeout_ms",
//    "time": null | {"m", "warmup_ms", "repeats", "batch_ms", "max_batch"}}
//    ->  {"disposition", "detail", "m", "checked", "rel_l2", "max_abs", "err_ratio", "timing", "restart", "context_lost"}
#pragma once
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "tuner/family_ops.h"
#include "tuner/hip/runtime.h"
#include "tuner/timing.h"
#include "tuner/worker.h"

namespace tunetab::safety {

using Json = nlohmann::json;

class DeviceSide;

class Executor {
 public:
  Executor(bool isolate, int device);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// {"count", "why", "facts"} from whichever side owns the device.
  Json facts(double timeout_ms = 120000);
  /// Runs a "check" request. A worker that crashes becomes {"disposition": "faulted"}, one that misses
  /// `timeout_ms` {"disposition": "timed_out"}; either way the worker is replaced before the next call.
  /// In-process, a lost context (fault, hang) is stored by the caller and then ends the run.
  Json check(const Json& request, double timeout_ms);
  bool isolated() const { return worker_ != nullptr; }
  int restarts() const { return worker_ ? worker_->restarts() : 0; }

 private:
  std::shared_ptr<DeviceSide> side_;
  std::unique_ptr<Worker> worker_;
  int device_;
};

/// Call first in main() of every program that may run an Executor: in a process started as its device
/// worker (or device probe) this serves requests and never returns; elsewhere it returns at once.
void serve_worker_if_requested();

/// Device count without initialising the GPU in this process when `isolate` (a short-lived worker asks).
int probe_devices(bool isolate, std::string* why);

DeviceFacts facts_from_json(const Json& j);
Json to_json(const DeviceFacts& f);
Json timing_request(const TimingPlan& plan, std::int64_t m);

/// A "check" request: `config` of `ops` on `problem` with buffers for capacity_m rows, validated at each M
/// of `validate` (in order, stopping at the first failure), then timed when `time` is not null.
Json check_request(const FamilyOps& ops, const Json& problem, std::int64_t capacity_m, std::uint64_t seed, int sets,
                   std::size_t workspace, const std::string& config, const std::vector<const db::CodeObjectRecord*>& codes,
                   const std::vector<std::int64_t>& validate, double timeout_ms, const Json& time);
/// How long the parent waits for a reply before it declares the worker hung (a backstop: the worker
/// reports a hung launch itself after timeout_ms).
double check_deadline_ms(std::size_t validations, double launch_timeout_ms, bool timed);
/// hash_hex of a code object's bytes.
std::string code_hash(const db::CodeObjectRecord& obj);

}  // namespace tunetab::safety
