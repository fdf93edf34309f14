#include "tuner/runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <optional>
#include <set>
#include <thread>

#include "tuner/hash.h"
#include "tuner/jit/compiler.h"
#include "tuner/progress.h"
#include "tuner/safety/coverage.h"
#include "tuner/safety/executor.h"
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

std::vector<Json> to_json(const std::vector<gemm::Problem>& problems) {
  std::vector<Json> out;
  for (const auto& p : problems) out.push_back(p.to_json());
  return out;
}

static int default_jobs(int jobs) {
  return jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

/// ptxas's notes that it made a kernel's asynchronous MMAs wait (accumulators touched between MMA groups:
/// C7514 and kin, C7517): a template bug to catch at compile-check time, not by timing. Empty if none.
std::string wgmma_serialization_note(const std::string& log) {
  for (const char* marker : {"wgmma.mma_async instructions are serialized", "warpgroup.wait is injected"})
    if (const auto at = log.find(marker); at != std::string::npos) {
      const auto begin = log.rfind('\n', at), end = log.find('\n', at);
      return log.substr(begin == std::string::npos ? 0 : begin + 1, end == std::string::npos ? std::string::npos : end - begin - 1);
    }
  return {};
}

bool has_ptxas_report(const std::string& log) { return log.find("registers") != std::string::npos; }

std::string code_key_of(const jit::Compiler& compiler, const FamilyOps& ops, const std::string& config, int bits) {
  std::string keys;
  for (const auto& k : ops.kernels(config, bits)) keys += (keys.empty() ? "" : "+") + hash_hex(compiler.key_text(k));
  return keys;
}

std::vector<db::BestRow> rows_on_current_code(const FamilyOps& ops, std::vector<db::BestRow> rows,
                                              const std::vector<std::string>& jit_flags, std::vector<StaleRow>* stale) {
  // One compiler per device arch, for its keys only (nothing is compiled); nullopt where this build has none.
  std::map<std::string, std::optional<jit::Compiler>> compilers;
  std::map<std::string, std::string> why_none;
  std::vector<db::BestRow> out;
  for (db::BestRow& r : rows) {
    auto [it, fresh] = compilers.try_emplace(r.device.arch);
    if (fresh) try {
        it->second.emplace(jit::CompileOptions{r.device.arch, jit_flags});
      } catch (const Error& e) {
        why_none[r.device.arch] = e.what();
      }
    std::string why;
    if (!r.coverage) {
      why = "no coverage record";
    } else if (!it->second) {
      why = "this tunetab cannot build its code for " + r.device.arch + " (" + why_none[r.device.arch] + ")";
    } else {
      if (code_key_of(*it->second, ops, r.config_name, r.coverage->index_bits) != r.coverage->code_key)
        why = "validated on other code than this tunetab's (a template, header, flag or compiler changed since)";
    }
    if (why.empty()) {
      out.push_back(std::move(r));
    } else if (stale) {
      stale->push_back({std::move(r), why});
    }
  }
  return out;
}

int compile_and_report(const std::vector<KernelSource>& sources, const std::string& arch, const TuneOptions& opt,
                       db::Store* cache) {
  jit::Compiler compiler({arch, opt.jit_flags});
  const auto objects = jit::compile_all(compiler, sources, cache, default_jobs(opt.jobs), opt.progress);
  int failures = 0, unreported = 0;
  double total_ms = 0;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    total_ms += objects[i].compile_ms;
    if (objects[i].ok && arch.rfind("sm_", 0) == 0 && !has_ptxas_report(objects[i].log)) ++unreported;
    if (!objects[i].ok) {
      ++failures;
      std::fprintf(stderr, "compile failed: %s\n%s\n", sources[i].name_expression.c_str(), objects[i].log.c_str());
    } else if (const std::string note = wgmma_serialization_note(objects[i].log); !note.empty()) {
      // NOTE: ptxas says so only in the log; the kernel still runs, up to 1.6x slower.
      ++failures;
      std::fprintf(stderr, "ptxas serialized the wgmma pipeline of %s:\n%s\n", sources[i].name_expression.c_str(), note.c_str());
    }
  }
  std::printf("compile-checked %zu code objects for %s with %s: %d failed (%.1f s of compile time)\n", objects.size(),
              arch.c_str(), jit::Compiler::version().c_str(), failures, total_ms / 1000);
  // NOTE: seen on the H200 machine (NVRTC 13.0.88) on compiles served by the CUDA compute cache, which
  // jit::Compiler now switches off; a warning if any other NVRTC still returns none.
  if (unreported > 0)
    std::fprintf(stderr, "warning: %d code object(s) came back without ptxas's report: serialized wgmma pipelines "
                 "cannot be detected with this NVRTC\n", unreported);
  return failures;
}

namespace {

/// Rows of each table group (the problem key without M) and the Ms each row serves under the rule.
struct Domain {
  std::map<std::string, std::map<std::int64_t, std::vector<safety::MRange>>> served;  // group -> row M -> ranges

  Domain(const FamilyOps& ops, const std::vector<Json>& problems, const TuneOptions& opt) {
    std::map<std::string, std::set<std::int64_t>> rows;
    std::map<std::string, std::int64_t> n_of;
    for (const auto& p : problems) {
      rows[ops.group_key(p)].insert(ops.m_of(p));
      n_of[ops.group_key(p)] = ops.lookup_n(p);
    }
    for (const auto& [group, ms] : rows) {
      const auto rule = profile::LookupRule::make(opt.rule, n_of.at(group), opt.m_max);
      served[group] = safety::served_ranges(rule, ms, opt.m_max);
    }
  }
  /// The Ms the problem's row serves; a row above the domain serves only itself.
  std::vector<safety::MRange> ranges(const FamilyOps& ops, const Json& p) const {
    const auto& g = served.at(ops.group_key(p));
    const auto it = g.find(ops.m_of(p));
    if (it == g.end() || it->second.empty()) return {{ops.m_of(p), ops.m_of(p)}};
    return it->second;
  }
};

/// Distinct code objects the supported candidates need, in a stable order.
std::vector<KernelSource> needed(const FamilyOps& ops, const std::vector<std::vector<Candidate>>& plans) {
  std::vector<KernelSource> out;
  std::set<std::string> seen;
  for (const auto& plan : plans)
    for (const auto& cand : plan) {
      if (cand.unsupported) continue;
      for (auto& k : ops.kernels(cand.config, cand.index_bits))
        if (seen.insert(k.name_expression).second) out.push_back(std::move(k));
    }
  return out;
}

void fill_timing(db::ResultRecord& r, const Json& t, double flops, double bytes, const char* phase) {
  r.median_us = t.at("median_us").get<double>();
  r.min_us = t.at("min_us").get<double>();
  r.spread = t.at("spread").get<double>();
  r.iterations = t.at("iterations").get<std::int64_t>();
  r.timing_phase = phase;
  if (r.timing_phase == "screen") r.screen_us = r.median_us;  // a final keeps its screening median
  r.tflops = flops / (*r.median_us * 1e6);
  r.bw_gbs = bytes / (*r.median_us * 1e3);
}

std::optional<double> opt_number(const Json& j, const char* key) {
  if (j.contains(key) && j.at(key).is_number()) return j.at(key).get<double>();
  return std::nullopt;
}

/// Ends an in-process run after a lost context (the result is stored first): nothing more can run on it.
void end_if_context_lost(const safety::Executor& ex, const Json& reply) {
  if (!ex.isolated() && reply.value("context_lost", false))
    throw Error(reply.at("disposition") == "timed_out" ? ErrorKind::kTimeout : ErrorKind::kFault, "", nullptr, 0,
                reply.at("detail").get<std::string>() + " (in-process: the device context is lost; rerun to continue)");
}

struct Compiled {
  const jit::Compiler* compiler = nullptr;
  db::Store* store = nullptr;
  std::map<std::string, const db::CodeObjectRecord*> by_name;
  std::vector<db::CodeObjectRecord> objects;
  std::deque<db::CodeObjectRecord> extra;  // compiled on demand (a stored result this run did not plan)
  /// The pipeline's code objects, and the first one that failed to compile (in `failed`).
  std::vector<const db::CodeObjectRecord*> codes(const FamilyOps& ops, const std::string& config, int bits,
                                                 const db::CodeObjectRecord** failed) {
    std::vector<const db::CodeObjectRecord*> out;
    for (const auto& k : ops.kernels(config, bits)) {
      auto it = by_name.find(k.name_expression);
      if (it == by_name.end()) {
        extra.push_back(jit::compile_all(*compiler, {k}, store, 1, false).at(0));
        it = by_name.emplace(k.name_expression, &extra.back()).first;
      }
      const db::CodeObjectRecord* obj = it->second;
      if (!obj->ok && !*failed) *failed = obj;
      out.push_back(obj);
    }
    return out;
  }
};

/// The code objects' keys as stored with a result and its coverage (a pipeline's in order, joined by '+').
std::string code_keys(const std::vector<const db::CodeObjectRecord*>& codes) {
  std::string out;
  for (const auto* c : codes) out += (out.empty() ? "" : "+") + c->key_hash;
  return out;
}

/// The hash of the code a result or coverage record judged: the code object's, or (a pipeline, the fused MoE) one
/// over all of its code objects in order.
std::string code_hash_of(const std::vector<const db::CodeObjectRecord*>& codes) {
  if (codes.size() == 1) return safety::code_hash(*codes.front());
  std::string hashes;
  for (const auto* c : codes) hashes += safety::code_hash(*c);
  return hash_hex(hashes);
}

/// A coverage record's verdict from a worker's check reply: disposition, detail, Ms checked, the failing M and the
/// error figures.
void set_check_verdict(db::CoverageRecord& cr, const Json& reply) {
  cr.disposition = db::disposition_from_string(reply.at("disposition"));
  cr.detail = reply.value("detail", std::string());
  cr.ms_checked = reply.value("checked", std::int64_t{0});
  if (cr.disposition != Disposition::kPassed && reply.value("m", std::int64_t{0}) > 0) cr.failed_m = reply.at("m").get<std::int64_t>();
  cr.rel_l2 = opt_number(reply, "rel_l2");
  cr.max_abs = opt_number(reply, "max_abs");
  cr.err_ratio = opt_number(reply, "err_ratio");
}

/// The keys of the code a planned candidate runs now ("" when it is unsupported): a stored verdict stands
/// only for the code it judged, so a result or coverage record with other keys (a template, an embedded
/// header, a flag or the compiler changed since) is judged again.
std::map<std::string, std::string> current_code_keys(const FamilyOps& ops, const std::vector<Candidate>& plan,
                                                     Compiled& compiled) {
  std::map<std::string, std::string> out;
  for (const Candidate& c : plan) {
    const db::CodeObjectRecord* failed = nullptr;
    out[c.config] = c.unsupported ? "" : code_keys(compiled.codes(ops, c.config, c.index_bits, &failed));
  }
  return out;
}

/// The stored passing results of a row that judged the code its candidates run now, best first (db::rank_row).
std::vector<db::ResultRecord> current_passed(db::Store& store, std::int64_t device_id, std::int64_t problem_id,
                                             const std::string& version, const std::map<std::string, std::string>& keys) {
  std::vector<db::ResultRecord> out;
  for (auto& r : store.passed_results(device_id, problem_id, version)) {
    const auto it = keys.find(store.config_name(r.config_id));
    if (it != keys.end() && it->second == r.code_key) out.push_back(std::move(r));
  }
  db::rank_row(out);
  return out;
}

}  // namespace

std::vector<KernelSource> needed_sources(const FamilyOps& ops, const std::vector<Json>& problems, const std::string& arch,
                                         const TuneOptions& opt) {
  const Target target = Target::from_arch(arch);
  const Domain domain(ops, problems, opt);
  std::vector<std::vector<Candidate>> plans;
  for (const auto& p : problems)
    plans.push_back(ops.plan(p, target, safety::largest_served(domain.ranges(ops, p), ops.m_of(p))));
  return needed(ops, plans);
}

int compile_check(const FamilyOps& ops, const std::vector<Json>& problems, const std::string& arch,
                  const TuneOptions& opt, db::Store* cache) {
  return compile_and_report(needed_sources(ops, problems, arch, opt), arch, opt, cache);
}

int compile_check_gemm(const std::vector<gemm::Problem>& problems, const std::string& arch, const TuneOptions& opt,
                       db::Store* cache) {
  return compile_check(family_ops(gemm::kFamily), to_json(problems), arch, opt, cache);
}

std::vector<ProblemSummary> tune_gemm(const std::vector<gemm::Problem>& problems, const TuneOptions& opt, db::Store& store) {
  return tune(family_ops(gemm::kFamily), to_json(problems), opt, store);
}

std::vector<SpotResult> spot_check(const FamilyOps& ops, const std::vector<SpotCheck>& checks, const TuneOptions& opt,
                                   db::Store& store) {
  safety::Executor ex(opt.isolate, opt.device);
  const Json facts_reply = ex.facts();
  if (facts_reply.at("count").get<int>() == 0)
    throw_input("no GPU available (" + facts_reply.value("why", std::string()) + ")");
  const DeviceFacts facts = safety::facts_from_json(facts_reply.at("facts"));
  Target unpruned = Target::from_arch(facts.arch);
  unpruned.max_smem_per_block = facts.max_smem_per_block;
  jit::Compiler compiler({unpruned.arch, opt.jit_flags});
  Compiled compiled;
  compiled.compiler = &compiler;
  compiled.store = &store;
  const std::string version = TUNETAB_VERSION;
  const std::int64_t device_id = store.upsert_device(device_record(facts));
  std::int64_t run_id = 0;  // begun with the first check that runs
  std::vector<SpotResult> out;
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const SpotCheck& c = checks[i];
    TUNETAB_ASSERT(!c.ms.empty(), "a spot check needs at least one M");
    const std::int64_t capacity = *std::max_element(c.ms.begin(), c.ms.end());
    const Json p = ops.with_m(c.problem, capacity);
    SpotResult r;
    const db::CodeObjectRecord* failed = nullptr;
    const int bits = ops.proven_index_bits(c.problem, c.config, capacity);
    const auto codes = compiled.codes(ops, c.config, bits, &failed);
    // NOTE: a check's verdict is stored as a coverage record of its problem (a routing no row is tuned on, so no
    // export reads it) under the domain "spot:" + its Ms: a resumed run re-checks only what the last one did not
    // finish, or what ran on other code.
    const std::int64_t problem_id = store.upsert_problem(ops.family(), ops.key(p), p.dump());
    const std::int64_t config_id = store.upsert_config(ops.family(), c.config, ops.config_json(c.config).dump());
    const std::string domain = "spot:" + Json(c.ms).dump();
    const std::string key = failed ? std::string() : code_keys(codes);
    if (auto done = store.find_coverage(device_id, problem_id, config_id, version, domain);
        done && !failed && done->code_key == key &&
        verdict_holds(done->tolerance, ops.tolerance(p), db::to_string(done->disposition))) {
      r.disposition = db::to_string(done->disposition);
      r.detail = done->detail;
      r.checked = done->ms_checked;
      r.stored = true;
      out.push_back(std::move(r));
      continue;
    }
    if (auto why = ops.why_unsupported(p, c.config, unpruned)) {
      r.disposition = db::to_string(Disposition::kNotSupported);
      r.detail = *why;
    } else if (failed) {
      r.disposition = db::to_string(Disposition::kCompileFailed);
      r.detail = failed->log.substr(0, 2000);
    } else {
      const Json req = safety::check_request(ops, c.problem, capacity, opt.seed + 104729 * (i + 1), 1,
                                             ops.workspace_bytes(p, c.config), c.config, codes, c.ms,
                                             opt.launch_timeout_ms, nullptr);
      const Json reply = ex.check(req, safety::check_deadline_ms(c.ms.size(), opt.launch_timeout_ms, false));
      if (run_id == 0) run_id = store.begin_run(opt.command_line + "  # spot checks", version, device_id);
      db::CoverageRecord cr;
      cr.run_id = run_id;
      cr.device_id = device_id;
      cr.problem_id = problem_id;
      cr.config_id = config_id;
      cr.domain = domain;
      set_check_verdict(cr, reply);
      r.disposition = db::to_string(cr.disposition);
      r.detail = cr.detail;
      r.checked = cr.ms_checked;
      cr.served = Json(c.ms).dump();
      cr.sampled = "[]";
      cr.index_bits = bits;
      cr.proof_m = capacity;
      cr.index_bounds = "[]";
      cr.tolerance = ops.tolerance(p).to_json().dump();
      cr.code_key = key;
      cr.code_hash = code_hash_of(codes);
      store.put_coverage(cr, version);
      end_if_context_lost(ex, reply);
    }
    out.push_back(std::move(r));
  }
  if (run_id != 0) store.finish_run(run_id, "finished");
  return out;
}

std::vector<ProblemSummary> tune(const FamilyOps& ops, const std::vector<Json>& problems, const TuneOptions& opt,
                                 db::Store& store) {
  // NOTE: an isolated executor's worker (a fresh process) opens the device; this process never does.
  safety::Executor ex(opt.isolate, opt.device);
  const Json facts_reply = ex.facts();
  if (facts_reply.at("count").get<int>() == 0)
    throw_input("no GPU available (" + facts_reply.value("why", std::string()) + ")");
  const DeviceFacts facts = safety::facts_from_json(facts_reply.at("facts"));
  Target target = Target::from_arch(facts.arch);
  target.cu_count = facts.cu_count;
  target.max_smem_per_block = facts.max_smem_per_block;
  std::printf("device %d: %s (%s, %d CUs, %d MHz, L2 %d MiB), %s; %s\n", facts.ordinal, facts.name.c_str(),
              facts.arch.c_str(), facts.cu_count, facts.clock_khz / 1000, facts.l2_bytes >> 20,
              jit::Compiler::version().c_str(),
              opt.isolate ? "candidates run in a worker process" : "candidates run in this process (--no-isolation)");

  const std::string version = TUNETAB_VERSION;
  const std::int64_t device_id = store.upsert_device(device_record(facts));
  const std::int64_t run_id = store.begin_run(opt.command_line, version, device_id);

  // 1. Plan: constraints reject before anything compiles; the index width is proven for the largest M
  //    each row serves under the consumer's rule.
  const Domain domain(ops, problems, opt);
  std::vector<std::vector<Candidate>> plans;
  for (const auto& p : problems)
    plans.push_back(ops.plan(p, target, safety::largest_served(domain.ranges(ops, p), ops.m_of(p))));

  // 2. Compile every needed code object in parallel (cached in the store).
  const auto sources = needed(ops, plans);
  jit::Compiler compiler({target.arch, opt.jit_flags});
  Compiled compiled;
  compiled.compiler = &compiler;
  compiled.store = &store;
  const auto compile_start = std::chrono::steady_clock::now();
  std::size_t fresh = 0;
  compiled.objects = jit::compile_all(compiler, sources, &store, default_jobs(opt.jobs), opt.progress, &fresh);
  for (std::size_t i = 0; i < sources.size(); ++i) compiled.by_name[sources[i].name_expression] = &compiled.objects[i];
  // What the key's code cost: a resume whose database kept its compile cache compiles nothing.
  std::printf("code objects: %zu needed, %zu from the database's compile cache, %zu compiled (%.0f s)\n", sources.size(),
              sources.size() - fresh, fresh,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count());

  // Tiered search: anchor rows first, so every other row can start from their results.
  const bool tiered = !opt.anchor_ms.empty();
  std::vector<std::size_t> order;
  for (int anchors_pass = 1; anchors_pass >= 0; --anchors_pass)
    for (std::size_t pi = 0; pi < problems.size(); ++pi)
      if ((!tiered || opt.anchor_ms.count(ops.m_of(problems[pi]))) == (anchors_pass == 1)) order.push_back(pi);

  // 3. Coverage, run for each row once it is timed: the row's fastest passing candidate (final timings first)
  //    on every M it serves; the next-best when it fails. Failures are stored and never retried for the same
  //    domain.
  Target unpruned = target;
  unpruned.cu_count = 0;  // NOTE: split-K's occupancy pruning is about speed, not correctness
  auto cover = [&](std::size_t pi, ProblemSummary& sum, const std::map<std::string, std::string>& keys) {
    const Json& p = problems[pi];
    sum.covered_config.clear();
    sum.covered_ms = 0;
    sum.coverage_failures.clear();
    const std::int64_t problem_id = store.upsert_problem(ops.family(), ops.key(p), p.dump());
    const auto ranges = domain.ranges(ops, p);
    const std::int64_t proof_m = safety::largest_served(ranges, ops.m_of(p));
    const std::string dom = safety::domain_text(opt.rule, opt.every_m_limit, ranges);
    const auto passed = current_passed(store, device_id, problem_id, version, keys);
    for (const auto& r : passed) {
      const std::string config = store.config_name(r.config_id);
      auto done = store.find_coverage(device_id, problem_id, r.config_id, version, dom);
      if (done && !verdict_holds(done->tolerance, ops.tolerance(p), db::to_string(done->disposition))) done.reset();
      if (done && done->code_key != r.code_key) done.reset();  // judged on other code
      if (done) {
        if (done->disposition == Disposition::kPassed) {
          // NOTE: stored again, so that it is the row's latest passing coverage, which the export takes
          // (Store::covered_results): a rerun whose ranking moved to an earlier-covered config exports that one.
          store.put_coverage(*done, version);
          sum.covered_config = config;
          sum.covered_ms = done->ms_checked;
          break;
        }
        sum.coverage_failures.push_back(config + ": " + db::to_string(done->disposition) + ": " + done->detail);
        continue;
      }
      db::CoverageRecord cr;
      cr.run_id = run_id;
      cr.device_id = device_id;
      cr.problem_id = problem_id;
      cr.config_id = r.config_id;
      cr.domain = dom;
      cr.served = safety::ranges_json(ranges).dump();
      cr.every_m_limit = opt.every_m_limit;
      cr.index_bits = r.index_bits;
      cr.proof_m = proof_m;
      Json bounds = Json::array();
      for (const auto& b : ops.index_bounds(ops.with_m(p, proof_m), config))
        bounds.push_back({{"buffer", b.buffer}, {"max_offset", b.max_offset}});
      cr.index_bounds = bounds.dump();
      cr.tolerance = ops.tolerance(p).to_json().dump();
      const auto widths = safety::row_widths(ops.index_bounds(ops.with_m(p, 1), config),
                                             ops.index_bounds(ops.with_m(p, 2), config));
      const safety::CoverageSet set = safety::coverage_ms(ranges, opt.every_m_limit, widths);
      cr.sampled = Json(set.sampled).dump();
      const std::vector<std::int64_t> ms = set.all();
      const db::CodeObjectRecord* failed = nullptr;
      const auto codes = compiled.codes(ops, config, r.index_bits, &failed);
      cr.code_key = code_keys(codes);
      cr.code_hash = code_hash_of(codes);
      const int proven = ops.proven_index_bits(p, config, proof_m);
      std::optional<std::string> unsupported_at;
      for (std::int64_t mm : ms)
        if (auto why = ops.why_unsupported(ops.with_m(p, mm), config, unpruned)) {
          unsupported_at = "M=" + std::to_string(mm) + ": " + *why;
          cr.failed_m = mm;
          break;
        }
      if (proven > r.index_bits) {
        cr.disposition = Disposition::kNotSupported;
        cr.detail = "index proof: offsets reach 2^31 at M=" + std::to_string(proof_m) + " but the " +
                    std::to_string(r.index_bits) + "-bit instance ran";
      } else if (unsupported_at) {
        cr.disposition = Disposition::kNotSupported;
        cr.detail = *unsupported_at;
      } else if (failed) {
        cr.disposition = Disposition::kCompileFailed;
        cr.detail = failed->log.substr(0, 4000);
      } else {
        const std::int64_t capacity = *std::max_element(ms.begin(), ms.end());
        const int sets = 1;
        const Json req = safety::check_request(ops, p, capacity, opt.seed + 7919 * (pi + 1), sets,
                                               ops.workspace_bytes(ops.with_m(p, capacity), config), config, codes,
                                               ms, opt.launch_timeout_ms, nullptr);
        if (opt.progress)
          std::fprintf(stderr, "coverage %s: %s on %zu Ms (%lld..%lld)\n", ops.key(p).c_str(), config.c_str(), ms.size(),
                       static_cast<long long>(ms.front()), static_cast<long long>(capacity));
        const Json reply = ex.check(req, safety::check_deadline_ms(ms.size(), opt.launch_timeout_ms, false));
        set_check_verdict(cr, reply);
        store.put_coverage(cr, version);
        end_if_context_lost(ex, reply);
        if (cr.disposition == Disposition::kPassed) {
          sum.covered_config = config;
          sum.covered_ms = cr.ms_checked;
          break;
        }
        sum.coverage_failures.push_back(config + ": " + db::to_string(cr.disposition) + ": " + cr.detail);
        continue;
      }
      store.put_coverage(cr, version);
      sum.coverage_failures.push_back(config + ": " + db::to_string(cr.disposition) + ": " + cr.detail);
    }
  };

  std::vector<ProblemSummary> summaries(problems.size());
  // A code object that hung once is not launched again in this run (it costs a whole timeout each time, and
  // split-K variants and other rows share it); its other candidates are left unstored, so a rerun retries them.
  std::map<std::string, std::string> hung_code;  // code keys -> the row where they hung
  try {
    for (std::size_t pi : order) {
      const Json& p = problems[pi];
      const std::string tolerance = ops.tolerance(p).to_json().dump();
      const std::int64_t problem_id = store.upsert_problem(ops.family(), ops.key(p), p.dump());
      const std::int64_t m = ops.m_of(p);
      ProblemSummary sum;
      sum.problem = p;
      sum.key = ops.key(p);
      sum.device = facts.name;
      const int sets = rotating_sets_for(static_cast<std::int64_t>(ops.min_bytes(p)), facts.l2_bytes);
      const std::uint64_t seed = opt.seed + pi;
      const auto keys = current_code_keys(ops, plans[pi], compiled);
      // One case per problem in the worker, sized for the largest workspace of any candidate.
      std::size_t ws_max = 0;
      for (const auto& c : plans[pi])
        if (!c.unsupported) ws_max = std::max(ws_max, ops.workspace_bytes(p, c.config));

      std::vector<std::int64_t> screened_ids;
      std::vector<double> screened_us;
      std::vector<const Candidate*> screened;
      // Counts a candidate's verdict in this row's summary.
      auto count_verdict = [&](const std::string& config, Disposition d, const std::string& detail) {
        ++sum.dispositions[db::to_string(d)];
        sum.config_dispositions[config] = db::to_string(d) + ": " + detail;
      };
      // Runs (or finds stored) one candidate; one that passes screening joins the screened (stored: one that passed it).
      auto run_candidate = [&](const Candidate& cand) {
        const std::int64_t config_id = store.upsert_config(ops.family(), cand.config, ops.config_json(cand.config).dump());
        auto done = store.find_result(device_id, problem_id, config_id, version);
        if (done && !verdict_holds(done->tolerance, ops.tolerance(p), db::to_string(done->disposition))) done.reset();
        if (done && done->code_key != keys.at(cand.config)) done.reset();  // judged on other code
        if (done) {  // resume; quarantine
          count_verdict(cand.config, done->disposition, done->detail);
          if (const auto t = screening_time(*done)) {  // NOTE: a finalist quarantined since is one still (never re-timed)
            screened_ids.push_back(config_id);
            screened_us.push_back(*t);
            screened.push_back(&cand);
          }
          return;
        }
        db::ResultRecord r;
        r.run_id = run_id;
        r.device_id = device_id;
        r.problem_id = problem_id;
        r.config_id = config_id;
        r.index_bits = cand.index_bits;
        r.proof_m = cand.proof_m;
        r.tolerance = tolerance;
        if (cand.unsupported) {
          r.disposition = Disposition::kNotSupported;
          r.detail = *cand.unsupported;
        } else {
          const db::CodeObjectRecord* failed = nullptr;
          const auto codes = compiled.codes(ops, cand.config, cand.index_bits, &failed);
          // NOTE: a pipeline (fused MoE) is known by all of its code objects: they share the routing kernel.
          r.code_key = code_keys(codes);
          if (failed) {
            r.disposition = Disposition::kCompileFailed;
            r.detail = "compile error in `" + failed->name_expression + "`: " + failed->log.substr(0, 4000);
          } else if (auto h = hung_code.find(r.code_key); h != hung_code.end()) {
            ++sum.dispositions["skipped"];
            sum.config_dispositions[cand.config] = "skipped: its code object hung on " + h->second + " in this run";
            return;
          } else {
            const Json req = safety::check_request(ops, p, m, seed, sets, ws_max, cand.config, codes, {m},
                                                   opt.launch_timeout_ms, safety::timing_request(opt.screen, m));
            const Json reply = ex.check(req, safety::check_deadline_ms(1, opt.launch_timeout_ms, true));
            r.disposition = db::disposition_from_string(reply.at("disposition"));
            r.detail = reply.value("detail", std::string());
            r.rel_l2 = opt_number(reply, "rel_l2");
            r.max_abs = opt_number(reply, "max_abs");
            r.err_ratio = opt_number(reply, "err_ratio");
            if (r.disposition == Disposition::kPassed) fill_timing(r, reply.at("timing"), ops.flops(p), ops.min_bytes(p), "screen");
            store.put_result(r, version);
            count_verdict(cand.config, r.disposition, r.detail);
            if (r.disposition == Disposition::kTimedOut) hung_code.emplace(r.code_key, sum.key);
            end_if_context_lost(ex, reply);
            if (r.disposition == Disposition::kPassed) {
              screened_ids.push_back(config_id);
              screened_us.push_back(*r.median_us);
              screened.push_back(&cand);
            }
            return;
          }
        }
        store.put_result(r, version);
        count_verdict(cand.config, r.disposition, r.detail);
      };

      // Which candidates this row tries: all of them, or (tiered, not an anchor) the nearest anchors' best
      // and what they could not run; unsupported ones are stored either way (it costs nothing).
      std::vector<const Candidate*> first, rest;
      sum.search = "full";
      if (!tiered || opt.anchor_ms.count(m)) {
        for (const Candidate& c : plans[pi]) first.push_back(&c);
      } else {
        const std::string group = ops.group_key(p);
        std::optional<std::size_t> below, above;
        for (std::size_t aj = 0; aj < problems.size(); ++aj) {
          const std::int64_t am = ops.m_of(problems[aj]);
          if (!opt.anchor_ms.count(am) || ops.group_key(problems[aj]) != group) continue;
          if (am < m && (!below || am > ops.m_of(problems[*below]))) below = aj;
          if (am > m && (!above || am < ops.m_of(problems[*above]))) above = aj;
        }
        std::vector<std::vector<std::string>> ranked;
        std::vector<std::set<std::string>> supported;
        std::string anchors_text;
        for (const auto& aj : {below, above}) {
          if (!aj) continue;
          const std::int64_t pid = store.upsert_problem(ops.family(), ops.key(problems[*aj]), problems[*aj].dump());
          std::vector<std::string> names;
          for (const std::int64_t id :
               anchor_ranking(current_passed(store, device_id, pid, version, current_code_keys(ops, plans[*aj], compiled))))
            names.push_back(store.config_name(id));
          ranked.push_back(std::move(names));
          std::set<std::string> sup;
          for (const Candidate& c : plans[*aj])
            if (!c.unsupported) sup.insert(c.config);
          supported.push_back(std::move(sup));
          if (!anchors_text.empty()) anchors_text += ",";
          anchors_text += std::to_string(ops.m_of(problems[*aj]));
        }
        std::vector<std::string> here;
        for (const Candidate& c : plans[pi])
          if (!c.unsupported) here.push_back(c.config);
        const auto chosen = tiered_configs(ranked, supported, here, opt.tier_keep);
        const std::set<std::string> chosen_set(chosen.begin(), chosen.end());
        for (const Candidate& c : plans[pi]) (c.unsupported || chosen_set.count(c.config) ? first : rest).push_back(&c);
        sum.search = "tiered: " + std::to_string(chosen.size()) + " of " + std::to_string(here.size()) +
                     " supported configs (the best " + std::to_string(opt.tier_keep) + " of anchor rows M=" + anchors_text +
                     ", and those the anchors could not run)";
      }
      Progress progress("tune " + sum.key, first.size(), opt.progress);
      for (const Candidate* cand : first) {
        progress.tick();
        run_candidate(*cand);
      }
      progress.done();
      // NOTE: none of the anchors' best passes here (or passes coverage): this row gets the rest of the space.
      auto sweep_rest = [&](const std::string& why) {
        sum.search += "; " + why + ", so the remaining " + std::to_string(rest.size()) + " were swept";
        Progress more("tune " + sum.key + " (rest)", rest.size(), opt.progress);
        for (const Candidate* cand : rest) {
          more.tick();
          run_candidate(*cand);
        }
        more.done();
        rest.clear();
      };
      if (screened.empty() && !rest.empty()) sweep_rest("none passed");

      // Final phase: re-time the fastest few carefully. Each is timed at the row's M and at a sample of the other Ms
      // the row serves (safety::timing_sample): the row takes the fastest over that sample, not only at its M.
      const std::vector<std::int64_t> sample = safety::timing_sample(domain.ranges(ops, p), m, ops.timing_points());
      // NOTE: finals timed over another sample (stored before served timings, or for a row that served other Ms) are
      // screening results again: with one of them in a row, rank_row fell back to the medians at the row's M, and the
      // 257..512 MoE row took a config 1.2% slower over its Ms (session 28). Those among the fastest few are re-timed.
      {
        const std::string served = Json(sample).dump();
        int moved = 0;  // of the results on current code: the rest never rank
        for (const auto& r : current_passed(store, device_id, problem_id, version, keys))
          moved += r.timing_phase == "final" && r.served_ms != served ? 1 : 0;
        store.demote_other_finals(device_id, problem_id, version, served);
        if (moved > 0) sum.search += "; " + std::to_string(moved) + " final(s) timed over other Ms back to screening";
      }
      for (bool again = true; again;) {
        // A rerun never re-measures a finished one: it times those of the fastest few (by their screening medians, which
        // a final re-time keeps: a resumed tune picks the same few) still without a final time over this sample, which a
        // kill cut short or a grown config space added.
        for (std::size_t idx : fastest(screened_us, std::min(ops.finalists(opt.final_top), screened.size()))) {
          auto r = store.find_result(device_id, problem_id, screened_ids[idx], version);
          // NOTE: a second pass (after a coverage sweep) skips what the first timed or quarantined.
          if (!r || r->disposition != Disposition::kPassed || r->timing_phase == "final") continue;
          const Candidate& cand = *screened[idx];
          const db::CodeObjectRecord* failed = nullptr;
          const auto codes = compiled.codes(ops, cand.config, cand.index_bits, &failed);
          r->run_id = run_id;
          if (!r->screen_us) r->screen_us = r->median_us;  // a final from before schema 4: what it was picked by, kept
          r->served_ms = Json(sample).dump();
          r->served_us.reset();
          double sum_us = 0;
          bool runs_all = true;
          for (std::int64_t mm : sample) {
            if (mm != m && (!runs_all || ops.why_unsupported(ops.with_m(p, mm), cand.config, unpruned))) {
              runs_all = false;  // coverage will not pass it either; its mean is not needed
              continue;
            }
            // NOTE: validated at another M before it is timed there: a kernel wrong at that M could write out of
            // bounds in the timing loop, where no guard is checked.
            const std::vector<std::int64_t> validate = mm == m ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{mm};
            const Json req = safety::check_request(ops, p, m, seed, sets, ws_max, cand.config, codes, validate,
                                                   opt.launch_timeout_ms, safety::timing_request(opt.final, mm));
            const Json reply = ex.check(req, safety::check_deadline_ms(validate.size(), opt.launch_timeout_ms, true));
            if (reply.at("disposition") != "passed") {
              // A candidate that fails while being validated or timed at a served M is quarantined like any other
              // failure (and counted so in this row's summary).
              r->disposition = db::disposition_from_string(reply.at("disposition"));
              r->detail = (validate.empty() ? "while timing at M=" : "while validating or timing at M=") + std::to_string(mm) +
                          ": " + reply.value("detail", std::string());
              if (reply.contains("rel_l2")) {  // the failing validation's figures, else the screening's stand
                r->rel_l2 = opt_number(reply, "rel_l2");
                r->max_abs = opt_number(reply, "max_abs");
                r->err_ratio = opt_number(reply, "err_ratio");
              }
              store.put_result(*r, version);
              if (--sum.dispositions["passed"] == 0) sum.dispositions.erase("passed");  // counted at screening
              count_verdict(cand.config, r->disposition, r->detail);
              if (r->disposition == Disposition::kTimedOut) hung_code.emplace(r->code_key, sum.key);
              end_if_context_lost(ex, reply);
              break;
            }
            const Json& t = reply.at("timing");
            if (mm == m) fill_timing(*r, t, ops.flops(p), ops.min_bytes(p), "final");
            sum_us += t.at("median_us").get<double>();
          }
          if (r->disposition != Disposition::kPassed) continue;
          if (runs_all) r->served_us = sum_us / static_cast<double>(sample.size());
          store.put_result(*r, version);
        }
        const auto passed = current_passed(store, device_id, problem_id, version, keys);
        const db::ResultRecord* best = passed.empty() ? nullptr : &passed.front();
        if (best) {
          sum.best_config = store.config_name(best->config_id);
          sum.median_us = *best->median_us;
          sum.served_us = best->served_us.value_or(0);
          sum.served_ms = best->served_ms;
          sum.min_us = *best->min_us;
          sum.spread = *best->spread;
          sum.tflops = *best->tflops;
          sum.gbs = *best->bw_gbs;
        }
        sum.passed = static_cast<int>(passed.size());
        again = false;
        if (opt.coverage) {
          cover(pi, sum, keys);
          // A tiered row whose tried candidates all fail coverage tries the configs it skipped, once.
          if (sum.covered_config.empty() && !rest.empty()) {
            sweep_rest("none passed coverage");
            again = true;
          }
        }
      }
      // Skipped: the configs this row has no current result for (a rerun may hold an earlier run's sweep).
      for (const Candidate* c : rest) {
        const auto r = store.find_result(device_id, problem_id,
                                         store.upsert_config(ops.family(), c->config, ops.config_json(c->config).dump()), version);
        if (!r || r->code_key != keys.at(c->config)) ++sum.skipped;
      }
      for (const auto& cand : plans[pi]) sum.unsupported += cand.unsupported ? 1 : 0;
      sum.failed = static_cast<int>(plans[pi].size()) - sum.passed - sum.unsupported - sum.skipped;
      summaries[pi] = std::move(sum);
    }
  } catch (...) {
    store.finish_run(run_id, "failed");
    throw;
  }
  if (ex.restarts() > 0) std::printf("worker replaced %d time(s) after faults or hangs\n", ex.restarts());
  store.finish_run(run_id, "finished");
  return summaries;
}

}  // namespace tunetab
