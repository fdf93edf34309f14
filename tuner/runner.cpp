#include "tuner/runner.h"

#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <thread>

#include "tuner/jit/compiler.h"
#include "tuner/progress.h"
#include "tuner/search.h"

namespace tunetab {

using db::Disposition;

db::DeviceRecord device_record(const DeviceFacts& f) {
  db::DeviceRecord d;
  d.name = f.name;
  d.arch = f.arch;
  d.cu_count = f.cu_count;
  d.clock_khz = f.clock_khz;
  d.mem_clock_khz = f.mem_clock_khz;
  d.l2_bytes = f.l2_bytes;
  d.driver_version = f.driver_version;
  d.runtime_version = f.runtime_version;
  d.compiler_version = jit::Compiler::version();
  return d;
}

static int default_jobs(int jobs) {
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int compile_and_report(const std::vector<KernelSource>& sources, const std::string& arch, const TuneOptions& opt,
                       db::Store* cache) {
  jit::Compiler compiler({arch, opt.jit_flags});
  const auto objects = jit::compile_all(compiler, sources, cache, default_jobs(opt.jobs), opt.progress);
  int failures = 0;
  double total_ms = 0;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    total_ms += objects[i].compile_ms;
    if (!objects[i].ok) {
      ++failures;
      std::fprintf(stderr, "compile failed: %s\n%s\n", sources[i].name_expression.c_str(), objects[i].log.c_str());
    }
  }
  std::printf("compile-checked %zu code objects for %s with %s: %d failed (%.1f s of compile time)\n", objects.size(),
              arch.c_str(), jit::Compiler::version().c_str(), failures, total_ms / 1000);
  return failures;
}

int compile_check_gemm(const std::vector<gemm::Problem>& problems, const std::string& arch, const TuneOptions& opt,
                       db::Store* cache) {
  const Target target = Target::from_arch(arch);
  std::vector<std::vector<GemmCandidate>> plans;
  for (const auto& p : problems) plans.push_back(plan_candidates(p, target));
  return compile_and_report(needed_kernels(plans), arch, opt, cache);
}

namespace {

/// Per-run cache of loaded modules (one per code object), so problems that share a kernel load it once.
class ModuleCache {
 public:
  const Module& get(const db::CodeObjectRecord& rec, int shared_bytes) {
    auto it = modules_.find(rec.key_hash);
    if (it == modules_.end()) {
      auto m = std::make_unique<Module>(rec.binary, rec.lowered_name);
      it = modules_.emplace(rec.key_hash, std::move(m)).first;
    }
    if (shared_bytes > 48 * 1024) it->second->allow_dynamic_shared(shared_bytes);
    return *it->second;
  }

 private:
  std::map<std::string, std::unique_ptr<Module>> modules_;
};

db::Disposition disposition_for(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::kCompile: return Disposition::kCompileFailed;
    case ErrorKind::kFault: return Disposition::kFaulted;
    case ErrorKind::kTimeout: return Disposition::kTimedOut;
    case ErrorKind::kIncorrect: return Disposition::kIncorrect;
    case ErrorKind::kOutOfBounds: return Disposition::kOutOfBounds;
    case ErrorKind::kDeviceLimit:
    case ErrorKind::kLaunch: return Disposition::kLaunchFailed;
    default: throw e;
  }
}

void fill_timing(db::ResultRecord& r, const TimingStats& st, const gemm::Problem& p, const char* phase) {
  r.median_us = st.median_us;
  r.min_us = st.min_us;
  r.spread = st.spread;
  r.iterations = st.iterations;
  r.timing_phase = phase;
  r.tflops = static_cast<double>(p.flops()) / (st.median_us * 1e6);
  r.bw_gbs = static_cast<double>(p.min_bytes()) / (st.median_us * 1e3);
}

}  // namespace

std::vector<ProblemSummary> tune_gemm(const std::vector<gemm::Problem>& problems, const TuneOptions& opt, db::Store& store) {
  const DeviceFacts facts = open_device(opt.device);
  Target target = Target::from_arch(facts.arch);
  target.cu_count = facts.cu_count;
  target.max_smem_per_block = facts.max_smem_per_block;
  std::printf("device %d: %s (%s, %d CUs, %d MHz, L2 %d MiB), %s\n", facts.ordinal, facts.name.c_str(),
              facts.arch.c_str(), facts.cu_count, facts.clock_khz / 1000, facts.l2_bytes >> 20,
              jit::Compiler::version().c_str());

  const std::string version = TUNETAB_VERSION;
  const std::int64_t device_id = store.upsert_device(device_record(facts));
  const std::int64_t run_id = store.begin_run(opt.command_line, version, device_id);

  // 1. Plan: constraints reject before anything compiles.
  std::vector<std::vector<GemmCandidate>> plans;
  for (const auto& p : problems) plans.push_back(plan_candidates(p, target));

  // 2. Compile every needed code object in parallel (cached in the store).
  const auto sources = needed_kernels(plans);
  jit::Compiler compiler({target.arch, opt.jit_flags});
  const auto objects = jit::compile_all(compiler, sources, &store, default_jobs(opt.jobs), opt.progress);
  std::map<std::string, const db::CodeObjectRecord*> by_name;
  for (std::size_t i = 0; i < sources.size(); ++i) by_name[sources[i].name_expression] = &objects[i];

  Stream stream;
  ModuleCache modules;
  std::vector<ProblemSummary> summaries;
  try {
    for (std::size_t pi = 0; pi < problems.size(); ++pi) {
      const gemm::Problem& p = problems[pi];
      const std::int64_t problem_id = store.upsert_problem(gemm::kFamily, p.key(), p.to_json().dump());
      ProblemSummary sum;
      sum.problem = p;

      std::size_t workspace = 0;
      for (const auto& c : plans[pi])
        if (!c.unsupported && c.config.split_k > 1)
          workspace = std::max<std::size_t>(workspace, static_cast<std::size_t>(c.config.split_k) * p.m * p.n * 4);
      const int sets = rotating_sets_for(p.min_bytes(), facts.l2_bytes);
      gemm::Workload work(p, opt.seed + pi, sets, workspace);

      Progress progress("tune " + p.key(), plans[pi].size(), opt.progress);
      std::vector<std::int64_t> screened_ids;
      std::vector<double> screened_us;
      std::vector<const GemmCandidate*> screened;
      std::map<std::int64_t, std::string> config_names;
      for (const GemmCandidate& cand : plans[pi]) {
        progress.tick();
        const std::int64_t config_id = store.upsert_config(gemm::kFamily, cand.config.name(), cand.config.to_json().dump());
        config_names[config_id] = cand.config.name();
        if (auto done = store.find_result(device_id, problem_id, config_id, version)) {  // resume
          if (done->disposition == Disposition::kPassed) {
            screened_ids.push_back(config_id);
            screened_us.push_back(*done->median_us);
            screened.push_back(&cand);
          }
          continue;
        }
        db::ResultRecord r;
        r.run_id = run_id;
        r.device_id = device_id;
        r.problem_id = problem_id;
        r.config_id = config_id;
        r.index_bits = cand.index_bits;
        if (cand.unsupported) {
          r.disposition = Disposition::kNotSupported;
          r.detail = *cand.unsupported;
          store.put_result(r, version);
          continue;
        }
        const auto ks = gemm::kernels(cand.config, cand.index_bits);
        const db::CodeObjectRecord* obj = by_name.at(ks[0].name_expression);
        r.code_key = obj->key_hash;
        try {
          if (!obj->ok) throw Error(ErrorKind::kCompile, "", nullptr, 0, obj->log.substr(0, 4000));
          const std::vector<const Module*> pipeline = {&modules.get(*obj, cand.config.shared_bytes())};
          // Validate: NaN-poisoned output, one launch with a bounded wait, compare with the reference.
          work.poison_output();
          work.launch(cand.config, pipeline, 0, stream);
          if (!stream.synchronize_for(opt.launch_timeout_ms))
            throw Error(ErrorKind::kTimeout, "", nullptr, 0, "no completion within " + std::to_string(opt.launch_timeout_ms) + " ms");
          if (auto oob = work.guard_violation()) throw Error(ErrorKind::kOutOfBounds, "", nullptr, 0, *oob);
          const gemm::Comparison cmp = gemm::compare(work.download_output(), work.reference(), gemm::Tolerance{});
          r.rel_l2 = cmp.rel_l2;
          r.max_abs = cmp.max_abs;
          r.err_ratio = cmp.err_ratio;
          if (!cmp.passed) throw Error(ErrorKind::kIncorrect, "", nullptr, 0, cmp.summary());
          // Screen timing.
          const TimingStats st = time_launches(
              [&](int i) { work.launch(cand.config, pipeline, i % work.sets(), stream); }, stream, opt.screen);
          fill_timing(r, st, p, "screen");
          r.disposition = Disposition::kPassed;
          store.put_result(r, version);
          screened_ids.push_back(config_id);
          screened_us.push_back(st.median_us);
          screened.push_back(&cand);
        } catch (const Error& e) {
          r.disposition = disposition_for(e);
          r.detail = e.what();
          store.put_result(r, version);
          if (r.disposition == Disposition::kFaulted || r.disposition == Disposition::kTimedOut) throw;
          continue;
        }
      }
      progress.done();

      // Final phase: re-time the fastest few carefully; the best of these is what export picks. A rerun
      // only completes a final phase a kill cut short: it never re-measures a finished one.
      std::size_t finals = 0;
      std::vector<double> pending_us = screened_us;
      for (std::size_t i = 0; i < screened.size(); ++i) {
        const auto r = store.find_result(device_id, problem_id, screened_ids[i], version);
        if (r && r->timing_phase == "final") {
          ++finals;
          pending_us[i] = std::numeric_limits<double>::infinity();
        }
      }
      const std::size_t want = std::min(opt.final_top, screened.size());
      for (std::size_t idx : fastest(pending_us, want > finals ? want - finals : 0)) {
        const GemmCandidate& cand = *screened[idx];
        auto r = store.find_result(device_id, problem_id, screened_ids[idx], version);
        const auto ks = gemm::kernels(cand.config, cand.index_bits);
        const std::vector<const Module*> pipeline = {&modules.get(*by_name.at(ks[0].name_expression), cand.config.shared_bytes())};
        const TimingStats st = time_launches(
            [&](int i) { work.launch(cand.config, pipeline, i % work.sets(), stream); }, stream, opt.final);
        fill_timing(*r, st, p, "final");
        r->run_id = run_id;
        store.put_result(*r, version);
      }
      const auto passed = store.passed_results(device_id, problem_id, version);  // fastest first
      const db::ResultRecord* best = nullptr;
      for (const auto& r : passed)
        if (r.timing_phase == "final" && (!best || *r.median_us < *best->median_us)) best = &r;
      if (!best && !passed.empty()) best = &passed.front();
      if (best) {
        sum.best_config = config_names.at(best->config_id);
        sum.median_us = *best->median_us;
        sum.min_us = *best->min_us;
        sum.spread = *best->spread;
        sum.tflops = *best->tflops;
        sum.gbs = *best->bw_gbs;
      }
      for (const auto& cand : plans[pi]) sum.unsupported += cand.unsupported ? 1 : 0;
      sum.passed = static_cast<int>(screened.size());
      sum.failed = static_cast<int>(plans[pi].size()) - sum.passed - sum.unsupported;
      summaries.push_back(sum);
    }
  } catch (...) {
    store.finish_run(run_id, "failed");
    throw;
  }
  store.finish_run(run_id, "finished");
  return summaries;
}

}  // namespace tunetab
