#include "tuner/safety/executor.h"

#include <map>

#include "tuner/hash.h"
#include "tuner/safety/device_compare.h"

namespace tunetab::safety {

Json to_json(const DeviceFacts& f) {
  return {{"ordinal", f.ordinal},       {"name", f.name},           {"arch", f.arch},
          {"cu_count", f.cu_count},     {"clock_khz", f.clock_khz}, {"mem_clock_khz", f.mem_clock_khz},
          {"mem_bus_bits", f.mem_bus_bits}, {"l2_bytes", f.l2_bytes}, {"max_smem_per_block", f.max_smem_per_block},
          {"driver_version", f.driver_version}, {"runtime_version", f.runtime_version}};
}

DeviceFacts facts_from_json(const Json& j) {
  DeviceFacts f;
  f.ordinal = j.at("ordinal");
  f.name = j.at("name");
  f.arch = j.at("arch");
  f.cu_count = j.at("cu_count");
  f.clock_khz = j.at("clock_khz");
  f.mem_clock_khz = j.at("mem_clock_khz");
  f.mem_bus_bits = j.at("mem_bus_bits");
  f.l2_bytes = j.at("l2_bytes");
  f.max_smem_per_block = j.at("max_smem_per_block");
  f.driver_version = j.at("driver_version");
  f.runtime_version = j.at("runtime_version");
  return f;
}

Json timing_request(const TimingPlan& plan, std::int64_t m) {
  return {{"m", m}, {"warmup_ms", plan.warmup_ms}, {"repeats", plan.repeats}, {"batch_ms", plan.batch_ms},
          {"max_batch", plan.max_batch}};
}

Json check_request(const FamilyOps& ops, const Json& problem, std::int64_t capacity_m, std::uint64_t seed, int sets,
                   std::size_t workspace, const std::string& config, const std::vector<const db::CodeObjectRecord*>& codes,
                   const std::vector<std::int64_t>& validate, double timeout_ms, const Json& time) {
  Json cj = Json::array();
  // NOTE: each module of a pipeline is opted in to its own kernel's dynamic shared memory.
  const std::vector<int> shared = ops.pipeline_shared_bytes(config);
  TUNETAB_ASSERT(shared.size() == codes.size(), config + ": the pipeline has " + std::to_string(codes.size()) +
                                                    " code objects but " + std::to_string(shared.size()) + " shared sizes");
  for (std::size_t i = 0; i < codes.size(); ++i)
    cj.push_back({{"key", codes[i]->key_hash},
                  {"lowered", codes[i]->lowered_name},
                  {"binary", Json::binary(std::vector<std::uint8_t>(codes[i]->binary.begin(), codes[i]->binary.end()))},
                  {"shared_bytes", shared[i]}});
  return {{"family", ops.family()},
          {"problem", problem},
          {"capacity_m", capacity_m},
          {"seed", seed},
          {"sets", sets},
          {"workspace", workspace},
          {"config", config},
          {"codes", cj},
          {"validate", validate},
          {"timeout_ms", timeout_ms},
          {"time", time}};
}

double check_deadline_ms(std::size_t validations, double launch_timeout_ms, bool timed) {
  return 180000 + static_cast<double>(validations) * (launch_timeout_ms + 5000) + (timed ? 120000 : 0);
}

std::string code_hash(const db::CodeObjectRecord& obj) {
  return hash_hex(std::string_view(obj.binary.data(), obj.binary.size()));
}

/// The state of the side that owns the device: its stream, loaded modules and the current problem's buffers.
class DeviceSide {
 public:
  Json handle(const Json& req) {
    const std::string op = req.at("op");
    if (op == "facts") return facts(req.at("device"));
    if (op == "check") return check(req);
    TUNETAB_THROW(kInfra, "unknown executor request '" + op + "'");
  }

 private:
  Json facts(int device) {
    std::string why;
    const int n = device_count(&why);
    Json out = {{"count", n}, {"why", why}};
    if (n > 0) {
      open(device);
      out["facts"] = to_json(facts_);
    }
    return out;
  }

  void open(int device) {
    if (opened_) return;
    facts_ = open_device(device);
    stream_ = std::make_unique<Stream>();
    enable_device_compare(facts_);
    opened_ = true;
  }

  const Module& module(const Json& code) {
    const std::string key = code.at("key");
    auto it = modules_.find(key);
    if (it == modules_.end()) {
      const auto& bin = code.at("binary").get_binary();
      const std::vector<char> image(bin.begin(), bin.end());
      it = modules_.emplace(key, std::make_unique<Module>(image, code.at("lowered").get<std::string>())).first;
      const int shared = code.at("shared_bytes");
      if (shared > 48 * 1024) it->second->allow_dynamic_shared(shared);
    }
    return *it->second;
  }

  Json check(const Json& req) {
    open(req.value("device", 0));
    const FamilyOps& ops = family_ops(req.at("family"));
    const Json& problem = req.at("problem");
    const std::int64_t capacity = req.at("capacity_m");
    const std::uint64_t seed = req.at("seed");
    const int sets = req.at("sets");
    const std::size_t workspace = req.at("workspace");
    const std::string config = req.at("config");
    const double timeout_ms = req.at("timeout_ms");
    Json reply = {{"disposition", "passed"}, {"detail", ""}, {"m", 0}, {"checked", 0}, {"restart", false},
                  {"context_lost", false}};
    try {
      const std::string case_id = ops.family() + "|" + ops.key(problem) + "|" + std::to_string(capacity) + "|" +
                                  std::to_string(seed) + "|" + std::to_string(sets);
      if (case_id != case_id_ || case_workspace_ < workspace) {
        case_.reset();  // NOTE: free the old buffers before allocating the new ones
        case_ = ops.make_case(problem, capacity, seed, sets, workspace);
        case_id_ = case_id;
        case_workspace_ = workspace;
      }
      std::vector<const Module*> pipeline;
      for (const Json& code : req.at("codes")) pipeline.push_back(&module(code));
      double worst_l2 = -1, worst_abs = 0, worst_ratio = 0;
      for (const auto& mj : req.at("validate")) {
        const std::int64_t m = mj;
        const CheckOutcome out = case_->validate(config, pipeline, m, *stream_, timeout_ms);
        reply["m"] = m;
        reply["checked"] = reply["checked"].get<std::int64_t>() + 1;
        if (out.disposition != db::Disposition::kPassed) {
          reply["disposition"] = db::to_string(out.disposition);
          reply["detail"] = out.detail;
          if (out.rel_l2) reply["rel_l2"] = *out.rel_l2;
          if (out.max_abs) reply["max_abs"] = *out.max_abs;
          if (out.err_ratio) reply["err_ratio"] = *out.err_ratio;
          return reply;
        }
        if (out.rel_l2 && *out.rel_l2 > worst_l2) {
          worst_l2 = *out.rel_l2;
          worst_abs = out.max_abs.value_or(0);
          worst_ratio = out.err_ratio.value_or(0);
        }
      }
      if (worst_l2 >= 0) {
        reply["rel_l2"] = worst_l2;
        reply["max_abs"] = worst_abs;
        reply["err_ratio"] = worst_ratio;
      }
      if (const Json& t = req.at("time"); !t.is_null()) {
        const std::int64_t m = t.at("m");
        const TimingPlan plan{t.at("warmup_ms"), t.at("repeats"), t.at("batch_ms"), t.at("max_batch")};
        DeviceCase& c = *case_;
        const TimingStats st = time_launches(
            [&](int i) { c.launch(config, pipeline, m, i % c.sets(), *stream_); }, *stream_, plan);
        reply["timing"] = {{"median_us", st.median_us}, {"min_us", st.min_us}, {"max_us", st.max_us},
                           {"spread", st.spread}, {"iterations", st.iterations}};
      }
    } catch (const Error& e) {
      db::Disposition d;
      switch (e.kind()) {
        case ErrorKind::kFault: d = db::Disposition::kFaulted; break;
        case ErrorKind::kTimeout: d = db::Disposition::kTimedOut; break;
        case ErrorKind::kLaunch:
        case ErrorKind::kDeviceLimit: d = db::Disposition::kLaunchFailed; break;
        default: throw;
      }
      reply["disposition"] = db::to_string(d);
      reply["detail"] = e.what();
      // NOTE: after any device error the context may be unusable; a worker is replaced either way.
      reply["restart"] = true;
      reply["context_lost"] = d != db::Disposition::kLaunchFailed;
      // NOTE: after a timeout the kernel may still run, and freeing device memory waits for it: a hung
      // kernel would keep this reply from ever leaving. The buffers are abandoned instead; the worker is
      // replaced after this reply, and its exit tears the context down.
      if (d == db::Disposition::kLaunchFailed) case_.reset();
      else (void)case_.release();
      case_id_.clear();
    } catch (const std::bad_alloc&) {
      // NOTE: a case too large for host memory (reference, download) fails this candidate, not the run.
      reply["disposition"] = db::to_string(db::Disposition::kLaunchFailed);
      reply["detail"] = "out of host memory for M=" + std::to_string(capacity) + " (" + ops.key(problem) + ")";
      case_.reset();
      case_id_.clear();
    }
    return reply;
  }

  bool opened_ = false;
  DeviceFacts facts_;
  std::unique_ptr<Stream> stream_;
  std::map<std::string, std::unique_ptr<Module>> modules_;
  std::unique_ptr<DeviceCase> case_;
  std::string case_id_;
  std::size_t case_workspace_ = 0;
};

Executor::Executor(bool isolate, int device) : side_(std::make_shared<DeviceSide>()), device_(device) {
  if (isolate) worker_ = std::make_unique<Worker>(Worker::Exec{"device"});
}

Executor::~Executor() = default;

Json Executor::facts(double timeout_ms) {
  const Json req = {{"op", "facts"}, {"device", device_}};
  if (!worker_) return side_->handle(req);
  const WorkerReply r = worker_->call(req, timeout_ms);
  if (r.status != WorkerReply::Status::kOk) TUNETAB_THROW(kInfra, "the device worker failed to start: " + r.detail);
  if (r.body.contains("error")) TUNETAB_THROW(kInfra, "device worker: " + r.body.at("error").get<std::string>());
  return r.body;
}

Json Executor::check(const Json& request, double timeout_ms) {
  Json req = request;
  req["op"] = "check";
  req["device"] = device_;
  if (!worker_) {
    Json reply = side_->handle(req);
    return reply;
  }
  const WorkerReply r = worker_->call(req, timeout_ms);
  if (r.status == WorkerReply::Status::kOk) {
    if (r.body.contains("error")) {
      worker_->reset();
      TUNETAB_THROW(kInfra, "device worker: " + r.body.at("error").get<std::string>());
    }
    if (r.body.value("restart", false)) worker_->reset();
    return r.body;
  }
  const bool hung = r.status == WorkerReply::Status::kTimedOut;
  return {{"disposition", hung ? "timed_out" : "faulted"},
          {"detail", (hung ? "worker gave no reply in time: " : "worker died: ") + r.detail},
          {"m", 0},
          {"checked", 0},
          {"restart", true},
          {"context_lost", true}};
}

void serve_worker_if_requested() {
  Worker::serve_if_requested([](const std::string& role) -> Worker::Handler {
    if (role == "device") {
      auto side = std::make_shared<DeviceSide>();
      return [side](const Json& req) { return side->handle(req); };
    }
    if (role == "probe")
      return [](const Json&) -> Json {
        std::string reason;
        const int n = device_count(&reason);
        return {{"count", n}, {"why", reason}};
      };
    return nullptr;
  });
}

int probe_devices(bool isolate, std::string* why) {
  if (!isolate) return device_count(why);
  Worker w(Worker::Exec{"probe"});
  const WorkerReply r = w.call({{"op", "count"}}, 120000);
  if (r.status != WorkerReply::Status::kOk) {
    if (why) *why = "device probe failed: " + r.detail;
    return 0;
  }
  if (why) *why = r.body.value("why", "");
  return r.body.value("count", 0);
}

}  // namespace tunetab::safety
