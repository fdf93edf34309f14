#include "tuner/table_export.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "exporters/aiter_a8w8_blockscale.h"
#include "exporters/aiter_bf16_gemm.h"
#include "exporters/aiter_fmoe.h"
#include "exporters/aiter_tuned.h"
#include "exporters/certificate.h"
#include "exporters/vllm_moe_export.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm_fp8/gemm_fp8.h"
#include "kernels/moe/moe.h"
#include "tuner/error.h"
#include "tuner/family_ops.h"
#include "tuner/runner.h"
#include "tuner/safety/certify.h"
#include "tuner/safety/coverage.h"
#include "tuner/text_file.h"

namespace tunetab {

namespace {

using exporters::TableFormat;

/// A key of the plan with its rows that passed coverage, in table order.
struct Part {
  const PlanKey* key = nullptr;
  std::vector<db::BestRow> rows;
};

/// "sm_90a" and "sm_90" alike; AMD's "gfx942:sramecc+:xnack-" as gfx942.
std::string base_arch(std::string a) {
  a = a.substr(0, a.find(':'));
  if (a.rfind("sm_", 0) == 0 && !a.empty() && a.back() == 'a') a.pop_back();
  return a;
}

/// The certificate of a table holding `parts` in order: each key certified under its own rule and domain,
/// the rows numbered as the table has them.
exporters::Certificate certify_parts(const FamilyOps& ops, const std::vector<Part>& parts, const std::string& path,
                                     const std::string& format, const std::string& text, const nlohmann::json& device) {
  exporters::Certificate cert;
  bool first = true;
  int line = 2;
  for (const Part& part : parts) {
    auto c = safety::certify(ops, part.rows, part.key->rule, part.key->domain.last, path, format, text);
    if (first) {
      cert = c;
      cert.rows.clear();
      first = false;
    }
    TUNETAB_ASSERT(c.lookup_rule == cert.lookup_rule, "one table, one lookup rule");
    if (!cert.device.is_object() || cert.device.empty()) cert.device = c.device;
    cert.m_max = std::max(cert.m_max, c.m_max);
    for (auto& r : c.rows) {
      r.line = line++;
      cert.rows.push_back(std::move(r));
    }
  }
  if (first) cert = safety::certify(ops, {}, profile::RuleKind::kExact, 1, path, format, text);
  nlohmann::json dev = cert.device.is_object() ? cert.device : nlohmann::json::object();
  dev.update(device);
  cert.device = dev;
  return cert;
}

/// Writes the certificate with `notes`, and reads it back.
std::string write_cert(const std::string& table_path, const exporters::Certificate& cert, const std::vector<std::string>& notes) {
  const std::string path = exporters::certificate_path_for(table_path);
  nlohmann::json j = exporters::to_json(cert);
  j["notes"] = notes;
  write_text_file(path, j.dump(1) + "\n");
  const auto back = exporters::read_certificate(path);
  TUNETAB_ASSERT(back.rows.size() == cert.rows.size(), path + ": certificate does not read back");
  return path;
}

std::vector<db::BestRow> concat(const std::vector<Part>& parts) {
  std::vector<db::BestRow> out;
  for (const auto& p : parts) out.insert(out.end(), p.rows.begin(), p.rows.end());
  return out;
}

}  // namespace

ExportResult export_plan(db::Store& store, const TunePlan& plan, const profile::Matrix& matrix, const ExportOptions& opt) {
  std::error_code ec;
  std::filesystem::create_directories(opt.dir, ec);
  if (ec) throw_input(opt.dir + ": cannot create the folder: " + ec.message());
  const profile::Envelope& env = matrix.envelope;
  ExportResult out;

  // Each key's covered rows, by family, in plan order.
  std::map<std::string, std::vector<db::BestRow>> covered;
  std::map<std::string, std::map<std::string, std::string>> stale_by_key;  // family -> problem key -> why left out
  std::map<std::string, std::vector<Part>> parts;
  std::optional<db::DeviceRecord> device;
  for (const PlanKey& key : plan.keys) {
    const FamilyOps& ops = family_ops(key.family);
    if (!covered.count(key.family)) {
      std::vector<StaleRow> stale;
      covered[key.family] = rows_on_current_code(ops, store.covered_results(key.family), opt.jit_flags, &stale);
      for (const auto& s : stale)
        if (opt.device.empty() || s.row.device.name == opt.device)
          stale_by_key[key.family][ops.key(nlohmann::json::parse(s.row.problem_json))] = s.text();
    }
    std::map<std::string, const db::BestRow*> by_key;
    std::map<std::string, std::string> elsewhere;  // problem key -> a device its row is covered on, not opt.device
    for (const auto& b : covered[key.family]) {
      const std::string k = ops.key(nlohmann::json::parse(b.problem_json));
      if (opt.device.empty() || b.device.name == opt.device) by_key.emplace(k, &b);
      else elsewhere.emplace(k, b.device.name);
    }
    Part part{&key, {}};
    for (std::size_t i = 0; i < key.problems.size(); ++i) {
      const std::string k = ops.key(key.problems[i]);
      const auto it = by_key.find(k);
      if (it == by_key.end()) {
        const auto& stale = stale_by_key[key.family];
        const auto why = stale.find(k);
        const auto other = elsewhere.find(k);
        out.missing.push_back(key.label + " M=" + std::to_string(key.buckets[i].m) + ": " +
                              (why != stale.end()      ? "its row was left out: " + why->second
                               : other != elsewhere.end() ? "its row is covered only on '" + other->second + "', not on '" + opt.device + "'"
                                                          : "no row passed coverage"));
        continue;
      }
      part.rows.push_back(*it->second);
    }
    // A row serves the Ms the consumer's rule routes to it among the rows exported: with a row missing (not covered,
    // or judged on other code), a neighbour serves its Ms too, and may not have been validated on them. Such a row
    // is left out as well, until every row's served Ms lie within its coverage.
    for (bool dropped = !part.rows.empty(); dropped;) {
      dropped = false;
      std::set<std::int64_t> ms;
      for (const auto& b : part.rows) ms.insert(ops.m_of(nlohmann::json::parse(b.problem_json)));
      const auto served = safety::served_ranges(profile::LookupRule::make(key.rule, ops.lookup_n(key.problems.front()), key.domain.last),
                                                ms, key.domain.last);
      std::erase_if(part.rows, [&](const db::BestRow& b) {
        const std::int64_t m = ops.m_of(nlohmann::json::parse(b.problem_json));
        const auto it = served.find(m);
        const std::vector<safety::MRange> want = it == served.end() || it->second.empty() ? std::vector<safety::MRange>{{m, m}} : it->second;
        if (safety::ranges_cover(safety::ranges_from_json(nlohmann::json::parse(b.coverage->served), "coverage.served"), want)) return false;
        out.missing.push_back(key.label + " M=" + std::to_string(m) + ": its row (" + b.config_name + ") would serve M " +
                              safety::ranges_json(want).dump() + " without the rows left out, beyond the Ms its coverage validated (" +
                              b.coverage->served + "): tune the rows left out");
        dropped = true;
        return true;
      });
    }
    if (!device && !part.rows.empty()) device = part.rows.front().device;
    parts[key.family].push_back(std::move(part));
  }

  // What every certificate says about the device: the table's keys are the consumer's, the rows were
  // validated on the tuning device; a different device is a proxy.
  nlohmann::json dev = {{"table_gfx", env.gfx}, {"table_cu_num", env.cu_num}};
  std::vector<std::string> notes;
  if (device) {
    const bool proxy = base_arch(device->arch) != base_arch(env.gfx) || device->cu_count != env.cu_num;
    dev["proxy"] = proxy;
    notes.push_back("table keys gfx=" + env.gfx + " cu_num=" + std::to_string(env.cu_num) + " are the profile's (the consumer's GPU); every row was validated and timed on " +
                    device->name + " (" + device->arch + ", " + std::to_string(device->cu_count) + " CUs)");
    if (proxy)
      notes.push_back("PROXY: the validating device is not the consumer's GPU; the rows are correct for their served Ms on " +
                      device->name + ", their timings and choices are that device's, not " + env.gfx + "'s");
  }
  out.notes = notes;

  auto export_gemm = [&](const std::string& family, TableFormat format, const std::string& name) {
    if (!parts.count(family)) return;
    const std::string path = (std::filesystem::path(opt.dir) / name).string();
    const auto best = concat(parts[family]);
    std::ostringstream text;
    std::size_t n = 0;
    // The rows stamped with the target's gfx and CU count, written, and read back.
    const auto write_rows = [&](auto rows, auto write, auto read) {
      for (auto& r : rows) {
        r.gfx = env.gfx;
        r.cu_num = env.cu_num;
      }
      write(text, rows);
      std::istringstream back(text.str());
      TUNETAB_ASSERT(read(back, path).size() == rows.size(), path + ": does not read back");
      n = rows.size();
    };
    if (format == TableFormat::kAiterBf16Gemm)
      write_rows(exporters::aiter_bf16_gemm_rows(best), exporters::write_aiter_bf16_gemm,
                 [](std::istream& in, const std::string& p) { return exporters::read_aiter_bf16_gemm(in, p); });
    else
      write_rows(exporters::aiter_a8w8_blockscale_rows(best), exporters::write_aiter_a8w8_blockscale,
                 [](std::istream& in, const std::string& p) { return exporters::read_aiter_a8w8_blockscale(in, p); });
    const auto cert = certify_parts(family_ops(family), parts[family], path, exporters::to_string(format), text.str(), dev);
    write_text_file(path, text.str());
    out.tables.push_back({format, path, write_cert(path, cert, notes), n});
  };
  export_gemm(gemm::kFamily, TableFormat::kAiterBf16Gemm, "bf16_tuned_gemm.csv");
  export_gemm(gemm_fp8::kFamily, TableFormat::kAiterA8w8BlockscaleGemm, "a8w8_blockscale_tuned_gemm.csv");

  if (parts.count(moe::kFamily)) {
    const FamilyOps& ops = family_ops(moe::kFamily);
    // AITER's tuned_fmoe.csv: one row per bucket.
    std::vector<exporters::FmoeChoice> choices;
    for (const Part& part : parts[moe::kFamily])
      for (const auto& b : part.rows) {
        const auto p = nlohmann::json::parse(b.problem_json);
        const auto c = nlohmann::json::parse(b.config_json);
        exporters::FmoeChoice ch;
        ch.cu_num = env.cu_num;
        ch.token = p.at("m").get<std::int64_t>();
        ch.key = matrix.fmoe.at(part.key->index).key;
        ch.block_m = c.at("block_m").get<std::int64_t>();
        const std::int64_t split = c.at("split_k").get<std::int64_t>();
        ch.ksplit = split > 1 ? split : 0;
        ch.run_1stage = moe::Config::from_name(b.config_name).math == moe::Math::kFused;
        // NOTE: one pipeline runs both stages and is timed as a whole: us1 and us2 repeat its time.
        ch.kernel_name1 = ch.kernel_name2 = "tunetab_" + b.family + "_" + b.config_name;
        ch.us = ch.us1 = ch.us2 = *b.result.median_us;
        const double err = b.coverage && b.coverage->err_ratio ? *b.coverage->err_ratio : b.result.err_ratio.value_or(0);
        ch.err1 = ch.err2 = err;
        choices.push_back(std::move(ch));
      }
    const std::string path = (std::filesystem::path(opt.dir) / "tuned_fmoe.csv").string();
    std::ostringstream text;
    exporters::write_aiter_fmoe(text, choices);
    std::istringstream back(text.str());
    TUNETAB_ASSERT(exporters::read_aiter_fmoe(back, path).size() == choices.size(), path + ": does not read back");
    std::vector<std::string> fmoe_notes = notes;
    fmoe_notes.push_back("us1 and us2 repeat the pipeline's time (align, quant, stage 1, stage 2 and reduce are timed as one "
                         "launch sequence); kernelName1 and kernelName2 name that one pipeline");
    const auto cert = certify_parts(ops, parts[moe::kFamily], path, "aiter-fmoe", text.str(), dev);
    write_text_file(path, text.str());
    out.tables.push_back({TableFormat::kAiterFmoe, path, write_cert(path, cert, fmoe_notes), choices.size()});

    // vLLM: one file per key, every M of the domain a key (vLLM takes the nearest key: with every M present
    // it serves each M from the row validated there), its config the one of M's bucket.
    std::string name = opt.vllm_device_name;
    if (name.empty()) name = device ? device->name : "unknown";
    for (const Part& part : parts[moe::kFamily]) {
      const auto& fk = matrix.fmoe.at(part.key->index).key;
      const auto selector = exporters::vllm_moe_selector(fk.expert, fk.inter_dim, name, fk.q_type == "QuantType.per_1x128");
      std::map<std::int64_t, const db::BestRow*> by_row;
      for (const auto& b : part.rows) by_row[nlohmann::json::parse(b.problem_json).at("m").get<std::int64_t>()] = &b;
      std::vector<exporters::VllmMoeChoice> rows;
      for (const auto& bucket : part.key->buckets) {
        const auto it = by_row.find(bucket.m);
        if (it == by_row.end()) continue;
        const moe::Config c = moe::Config::from_name(it->second->config_name);
        for (std::int64_t m = bucket.first; m <= bucket.last; ++m) {
          exporters::VllmMoeChoice v;
          v.m = m;
          // NOTE: vLLM's Triton kernel takes power-of-two blocks (tl.arange): a 96-row tile is written as 128,
          // which pads no less than 96 does (the gap audit's index model reads this value).
          v.block_size_m = static_cast<int>(std::bit_ceil(static_cast<unsigned>(c.block_m)));
          v.block_size_n = c.block_n1;
          v.block_size_k = c.block_k;
          // NOTE: vLLM's Triton kernel takes a power of two (4 or 8 in practice); the wgmma stages run 8 to 20.
          v.num_warps = std::min(8, static_cast<int>(std::bit_floor(static_cast<unsigned>(c.threads(1) / 32))));
          v.num_stages = c.stages;
          v.config_name = it->second->config_name;
          v.us = *it->second->result.median_us;
          rows.push_back(v);
        }
      }
      const std::string vpath = exporters::write_vllm_moe_json(opt.dir, selector, rows);
      TUNETAB_ASSERT(exporters::read_vllm_moe_json(vpath).configs.size() == rows.size(), vpath + ": does not read back");
      std::vector<std::string> vnotes = notes;
      vnotes.push_back("every M of " + std::to_string(part.key->domain.first) + ".." + std::to_string(part.key->domain.last) +
                       " is a key; an M's config is that of the row (rows[].served, rule " + profile::to_string(part.key->rule) +
                       ") whose coverage validated it at that M; its time was measured at the row's M");
      const auto cert = certify_parts(ops, {part}, vpath, "vllm-moe-json", read_text_file(vpath), dev);
      out.tables.push_back({TableFormat::kVllmMoeJson, vpath, write_cert(vpath, cert, vnotes), rows.size()});
    }
  }
  return out;
}

std::string export_device(db::Store& store, const TunePlan& plan, const std::string& requested, const std::string& store_name) {
  std::set<std::string> devices, families;
  for (const PlanKey& key : plan.keys)
    if (families.insert(key.family).second)
      for (const auto& b : store.covered_results(key.family)) devices.insert(b.device.name);
  std::string names;
  for (const auto& n : devices) names += (names.empty() ? "'" : ", '") + n + "'";
  if (!requested.empty()) {
    if (!devices.empty() && !devices.count(requested))
      throw_input("--device-name '" + requested + "': " + store_name + " holds covered rows of " + names + " only");
    return requested;
  }
  if (devices.size() > 1) throw_input(store_name + " holds covered rows of several devices (" + names + "): pick one with --device-name");
  return devices.empty() ? "" : *devices.begin();
}

std::vector<TableGaps> check_gaps(const std::vector<ExportedTable>& tables, const profile::Matrix& matrix) {
  std::map<TableFormat, std::vector<std::string>> by_format;
  for (const auto& t : tables) by_format[t.format].push_back(t.path);
  std::vector<TableGaps> out;
  for (const auto& [format, paths] : by_format) {
    auto options = exporters::GapOptions::from(matrix.envelope);
    const auto rows = exporters::read_rows(format, paths, options);
    const auto keys = exporters::matrix_keys(format, matrix, options);
    out.push_back({format, paths, exporters::find_gaps(format, keys, rows, options)});
  }
  return out;
}

}  // namespace tunetab
