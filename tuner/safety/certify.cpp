#include "tuner/safety/certify.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "exporters/aiter_bf16_gemm.h"
#include "tuner/hash.h"
#include "tuner/jit/compiler.h"
#include "tuner/safety/coverage.h"
#include "tuner/safety/executor.h"
#include "tuner/text_file.h"

namespace tunetab::safety {

namespace {

/// Served ranges of every row, from the rows themselves: grouped by device and problem key without M.
std::vector<std::vector<MRange>> served_by_row(const FamilyOps& ops, const std::vector<std::string>& devices,
                                               const std::vector<Json>& problems, profile::RuleKind rule,
                                               std::int64_t m_max) {
  std::map<std::string, std::set<std::int64_t>> rows;
  std::map<std::string, std::int64_t> n_of;
  auto group = [&](std::size_t i) { return devices[i] + "|" + ops.group_key(problems[i]); };
  for (std::size_t i = 0; i < problems.size(); ++i) {
    rows[group(i)].insert(ops.m_of(problems[i]));
    n_of[group(i)] = ops.lookup_n(problems[i]);
  }
  std::map<std::string, std::map<std::int64_t, std::vector<MRange>>> served;
  for (const auto& [g, ms] : rows) served[g] = served_ranges(profile::LookupRule::make(rule, n_of.at(g), m_max), ms, m_max);
  std::vector<std::vector<MRange>> out;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const auto& s = served.at(group(i));
    const std::int64_t m = ops.m_of(problems[i]);
    const auto it = s.find(m);
    out.push_back(it == s.end() || it->second.empty() ? std::vector<MRange>{{m, m}} : it->second);
  }
  return out;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

exporters::Certificate certify(const FamilyOps& ops, const std::vector<db::BestRow>& rows, profile::RuleKind rule,
                               std::int64_t m_max, const std::string& table_name, const std::string& table_format,
                               const std::string& table_text) {
  exporters::Certificate cert;
  cert.table = base_name(table_name);
  cert.table_format = table_format;
  cert.table_hash = hash_hex(table_text);
  cert.tunetab_version = TUNETAB_VERSION;
  cert.lookup_rule = profile::to_string(rule);
  cert.m_max = m_max;
  if (!rows.empty())
    cert.device = {{"name", rows[0].device.name},
                   {"arch", rows[0].device.arch},
                   {"cu_count", rows[0].device.cu_count},
                   {"driver_version", rows[0].device.driver_version},
                   {"compiler_version", rows[0].device.compiler_version}};
  std::vector<std::string> devices;
  std::vector<Json> problems;
  for (const auto& r : rows) {
    devices.push_back(r.device.name + "/" + r.device.arch + "/" + std::to_string(r.device.cu_count));
    problems.push_back(Json::parse(r.problem_json));
  }
  const auto served = served_by_row(ops, devices, problems, rule, m_max);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const db::BestRow& b = rows[i];
    TUNETAB_ASSERT(b.coverage && b.coverage->disposition == db::Disposition::kPassed, "certifying a row without coverage");
    const db::CoverageRecord& c = *b.coverage;
    const auto covered = ranges_from_json(Json::parse(c.served), "coverage.served");
    if (!ranges_cover(covered, served[i]))
      throw_input("row " + std::to_string(i + 2) + " (" + ops.key(problems[i]) + ", " + b.config_name + ") serves M " +
                  ranges_json(served[i]).dump() + " under " + profile::to_string(rule) + " up to M=" +
                  std::to_string(m_max) + ", but its coverage validated " + c.served +
                  ": run `tunetab tune` again with the same --rule and --m-max");
    const int proven = ops.proven_index_bits(problems[i], b.config_name, largest_served(served[i], ops.m_of(problems[i])));
    if (proven > b.result.index_bits)
      throw_input("row " + std::to_string(i + 2) + " (" + ops.key(problems[i]) + "): the " + std::to_string(b.result.index_bits) +
                  "-bit instance cannot index every M it serves (needs " + std::to_string(proven) + " bits)");
    exporters::CertificateRow r;
    r.line = static_cast<int>(i) + 2;
    r.family = b.family;
    r.config = b.config_name;
    r.kernel_name = "tunetab_" + b.family + "_" + b.config_name;
    r.problem = problems[i];
    r.served = served[i];
    r.every_m_limit = c.every_m_limit;
    r.sampled = Json::parse(c.sampled).get<std::vector<std::int64_t>>();
    r.ms_checked = c.ms_checked;
    r.checks = exporters::certificate_checks();
    r.tolerance = Json::parse(c.tolerance);
    r.index_bits = c.index_bits;
    r.proof_m = c.proof_m;
    r.index_bounds = Json::parse(c.index_bounds);
    r.code_key = c.code_key;
    r.code_hash = c.code_hash;
    cert.rows.push_back(std::move(r));
  }
  return cert;
}

std::pair<std::string, std::string> family_and_config(const std::string& kernel_name) {
  std::string best;
  for (const auto& f : family_names()) {
    const std::string prefix = "tunetab_" + f + "_";
    if (kernel_name.rfind(prefix, 0) == 0 && f.size() > best.size()) best = f;
  }
  if (best.empty()) throw_input("kernelName '" + kernel_name + "' is not a tunetab kernel (tunetab_<family>_<config>)");
  return {best, kernel_name.substr(std::string("tunetab_").size() + best.size() + 1)};
}

int verify_table(const VerifyOptions& opt) {
  const std::string text = read_text_file(opt.table);
  std::istringstream in(text);
  const auto table = exporters::read_aiter_bf16_gemm(in, opt.table);
  profile::RuleKind rule = opt.rule;
  std::int64_t m_max = opt.m_max;
  std::int64_t every = opt.every_m_limit;
  int failures = 0;
  std::optional<exporters::Certificate> cert;
  auto fail = [&](const std::string& what) {
    ++failures;
    std::printf("FAIL %s\n", what.c_str());
  };
  if (!opt.cert.empty()) {
    cert = exporters::read_certificate(opt.cert);
    rule = profile::rule_from_string(cert->lookup_rule);
    m_max = cert->m_max;
    if (!cert->rows.empty()) every = cert->rows.front().every_m_limit;
    if (cert->table_hash != hash_hex(text)) fail(opt.table + ": the table changed since " + opt.cert + " certified it");
    if (cert->rows.size() != table.size())
      fail(opt.cert + ": certifies " + std::to_string(cert->rows.size()) + " rows, the table has " + std::to_string(table.size()));
  }

  // NOTE: the executor comes first, so with isolation this process never touches the GPU.
  Executor ex(opt.isolate, opt.device);
  const Json facts_reply = ex.facts();
  if (facts_reply.at("count").get<int>() == 0) {
    std::printf("no GPU available (%s): nothing can be verified here\n", facts_reply.value("why", std::string()).c_str());
    return 2;
  }
  const DeviceFacts facts = facts_from_json(facts_reply.at("facts"));
  std::printf("verifying %s (%zu rows) on %s (%s, %d CUs): rule %s, M 1..%lld, every M up to %lld\n", opt.table.c_str(),
              table.size(), facts.name.c_str(), facts.arch.c_str(), facts.cu_count, profile::to_string(rule).c_str(),
              static_cast<long long>(m_max), static_cast<long long>(every));
  Target unpruned = Target::from_arch(facts.arch);
  unpruned.max_smem_per_block = facts.max_smem_per_block;

  struct RowPlan {
    const FamilyOps* ops = nullptr;
    std::string config;
    Json problem;
    int bits = 32;
    std::string error;
  };
  std::vector<RowPlan> plans(table.size());
  std::vector<std::string> devices;
  std::map<std::string, std::vector<std::size_t>> by_family;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& row = table[i];
    devices.push_back(row.gfx + "/" + std::to_string(row.cu_num));
    try {
      const auto [family, config] = family_and_config(row.kernel_name);
      plans[i].ops = &family_ops(family);
      plans[i].config = config;
      plans[i].ops->config_json(config);  // parses the config name
      plans[i].problem = {{"m", row.m}, {"n", row.n}, {"k", row.k}, {"in", row.dtype}, {"out", row.outdtype}, {"bias", row.bias}};
      plans[i].problem = plans[i].ops->with_m(plans[i].problem, row.m);  // canonical form
      by_family[family].push_back(i);
    } catch (const Error& e) {
      plans[i].error = e.what();
    }
  }
  std::vector<std::vector<MRange>> served(table.size());
  for (const auto& [family, idx] : by_family) {
    std::vector<std::string> devs;
    std::vector<Json> probs;
    for (std::size_t i : idx) {
      devs.push_back(devices[i]);
      probs.push_back(plans[i].problem);
    }
    const auto s = served_by_row(family_ops(family), devs, probs, rule, m_max);
    for (std::size_t j = 0; j < idx.size(); ++j) served[idx[j]] = s[j];
  }

  jit::Compiler compiler({facts.arch, opt.jit_flags});
  std::unique_ptr<db::Store> cache;
  if (!opt.cache_db.empty()) cache = std::make_unique<db::Store>(opt.cache_db);
  int passed = 0;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& row = table[i];
    const std::string where = opt.table + ":" + std::to_string(row.line) + " M=" + std::to_string(row.m) + " N=" +
                              std::to_string(row.n) + " K=" + std::to_string(row.k);
    RowPlan& rp = plans[i];
    if (!rp.ops) {
      fail(where + ": " + rp.error);
      continue;
    }
    const FamilyOps& ops = *rp.ops;
    const std::int64_t proof_m = largest_served(served[i], row.m);
    rp.bits = ops.proven_index_bits(rp.problem, rp.config, proof_m);
    if (cert && i < cert->rows.size()) {
      const auto& cr = cert->rows[i];
      if (cr.kernel_name != row.kernel_name) {
        fail(where + ": the certificate's row " + std::to_string(cr.line) + " is " + cr.kernel_name + ", the table's " + row.kernel_name);
        continue;
      }
      if (!ranges_cover(cr.served, served[i])) {
        fail(where + ": serves M " + ranges_json(served[i]).dump() + ", the certificate covers " + ranges_json(cr.served).dump());
        continue;
      }
      if (cr.index_bits < rp.bits) {
        fail(where + ": certified for " + std::to_string(cr.index_bits) + "-bit offsets; M up to " +
             std::to_string(proof_m) + " needs " + std::to_string(rp.bits));
        continue;
      }
      rp.bits = cr.index_bits;
    }
    const auto widths = row_widths(ops.index_bounds(ops.with_m(rp.problem, 1), rp.config),
                                   ops.index_bounds(ops.with_m(rp.problem, 2), rp.config));
    const auto ms = coverage_ms(served[i], every, widths).all();
    std::optional<std::string> unsupported;
    for (std::int64_t m : ms)
      if (auto why = ops.why_unsupported(ops.with_m(rp.problem, m), rp.config, unpruned)) {
        unsupported = "M=" + std::to_string(m) + ": " + *why;
        break;
      }
    if (unsupported) {
      fail(where + ": " + rp.config + " cannot run every served M: " + *unsupported);
      continue;
    }
    const auto sources = ops.kernels(rp.config, rp.bits);
    const auto objects = jit::compile_all(compiler, sources, cache.get(), 1, false);
    std::vector<const db::CodeObjectRecord*> codes;
    std::string compile_error;
    for (const auto& o : objects) {
      if (!o.ok) compile_error = o.log.substr(0, 2000);
      codes.push_back(&o);
    }
    if (!compile_error.empty()) {
      fail(where + ": compile failed: " + compile_error);
      continue;
    }
    if (cert && i < cert->rows.size() && cert->rows[i].code_hash != code_hash(*codes.front()))
      std::printf("note %s: the code object differs from the certified one (another compiler or flags); re-validating it\n",
                  where.c_str());
    const std::int64_t capacity = *std::max_element(ms.begin(), ms.end());
    const Json req = check_request(ops, rp.problem, capacity, opt.seed + i, 1,
                                   ops.workspace_bytes(ops.with_m(rp.problem, capacity), rp.config), rp.config, codes, ms,
                                   opt.launch_timeout_ms, nullptr);
    const Json reply = ex.check(req, check_deadline_ms(ms.size(), opt.launch_timeout_ms, false));
    if (reply.at("disposition") != "passed") {
      fail(where + ": " + rp.config + " index" + std::to_string(rp.bits) + ": " + reply.at("disposition").get<std::string>() +
           ": " + reply.value("detail", std::string()));
      if (!ex.isolated() && reply.value("context_lost", false)) {
        std::printf("in-process: the device context is lost; stopping\n");
        break;
      }
      continue;
    }
    ++passed;
    std::printf("ok   %s: %s index%d on %lld Ms (served %s)\n", where.c_str(), rp.config.c_str(), rp.bits,
                static_cast<long long>(reply.value("checked", std::int64_t{0})), ranges_json(served[i]).dump().c_str());
  }
  std::printf("verify: %d of %zu rows passed, %d failure(s)\n", passed, table.size(), failures);
  return failures ? 1 : 0;
}

}  // namespace tunetab::safety
