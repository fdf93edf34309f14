// `tunetab gaps`: shipped tuning tables audited against the keys a deployment hits (exporters/gaps.h).
// Exit 1 when some M is a miss, extrapolated or an index overflow, 0 when none, 2 on bad input.
#include <cstdio>
#include <iostream>
#include <optional>

#include "exporters/gaps.h"
#include "tuner/cli/commands.h"
#include "tuner/error.h"
#include "tuner/profile/matrix.h"
#include "tuner/text_file.h"

namespace po = boost::program_options;

namespace tunetab::cli {

int cmd_gaps(const Args& args) {
  po::options_description d("gaps options");
  d.add_options()
      ("format", po::value<std::string>(), "table kind: aiter-fmoe, aiter-bf16-gemm, aiter-a8w8-blockscale-gemm or vllm-moe-json")
      ("table", po::value<std::vector<std::string>>()->composing(),
       "a table the consumer reads; repeat for every file it combines, in its order (AITER: <name>.csv, then each "
       "model_configs/*<name>*.csv)")
      ("shapes", po::value<std::string>(),
       "the keys as a CSV with the table kind's key columns (AITER: its untuned CSV; vLLM: E,N), instead of a model")
      ("m-max", po::value<std::int64_t>(),
       "audit every key up to this M (default: the key's domain, max-num-batched-tokens or for lm_head max-num-seqs; "
       "with --shapes, the key's largest M)")
      ("max-err-ratio", po::value<double>()->default_value(0.05, "0.05"),
       "a row's error ratio above this is a defect (AITER's tuners' default)")
      ("device-name", po::value<std::string>(), "vLLM: the device name in the file names (default: the tables' one device)")
      ("json", po::bool_switch(), "print the report as JSON")
      ("emit-untuned", po::value<std::string>(),
       "write the buckets of every miss to this file as AITER's untuned CSV, to tune them");
  d.add(deployment_options());
  po::variables_map vm;
  if (!parse(args, d, vm,
             "tunetab gaps --format F --table FILE... (--profile F | --hf-config F [--tp N ...] | --shapes FILE) "
             "[--m-max N] [--json] [--emit-untuned FILE]"))
    return 0;
  if (!vm.count("format")) throw_input("--format: required, the kind of the tables (see --help)");
  const auto format = exporters::table_format_from_string(vm["format"].as<std::string>());
  if (!vm.count("table")) throw_input("--table: name at least one table to audit");
  std::optional<std::int64_t> m_max;
  if (vm.count("m-max")) {
    m_max = vm["m-max"].as<std::int64_t>();
    if (*m_max < 1) throw_input("--m-max " + std::to_string(*m_max) + ": expected a positive M");
  }
  const bool from_shapes = vm.count("shapes") > 0;
  if (!from_shapes && !vm.count("profile") && !vm.count("hf-config"))
    throw_input("give the deployment: --profile F, --hf-config F (with the envelope flags) or --shapes FILE");
  // NOTE: with --shapes the envelope only gives the device keys (and vLLM's dtype); no model is read.
  const auto env = deployment_envelope(vm, !from_shapes);
  auto options = exporters::GapOptions::from(env);
  options.max_err_ratio = vm["max-err-ratio"].as<double>();
  if (!(options.max_err_ratio >= 0)) throw_input("--max-err-ratio: expected a ratio of at least 0");
  if (vm.count("device-name")) options.device_name = vm["device-name"].as<std::string>();

  const auto rows = exporters::read_rows(format, vm["table"].as<std::vector<std::string>>(), options);
  std::vector<exporters::AuditKey> keys;
  if (from_shapes)
    keys = exporters::csv_keys(format, vm["shapes"].as<std::string>(), options, m_max.value_or(env.max_num_batched_tokens));
  else
    keys = exporters::matrix_keys(format, profile::derive_matrix(profile::read_model(env.hf_config), env), options);
  if (m_max)
    for (auto& k : keys) k.domain.last = *m_max;
  if (keys.empty())
    std::fprintf(stderr, "note: the deployment hits no key that %s tables serve\n", exporters::to_string(format).c_str());
  const auto report = exporters::find_gaps(format, keys, rows, options);

  if (vm.count("emit-untuned")) {
    const std::string path = vm["emit-untuned"].as<std::string>();
    write_text_file(path, exporters::aiter_untuned_csv(format, report));
    std::fprintf(stderr, "wrote the buckets of %zu miss ranges to %s\n", report.count(exporters::GapKind::kMiss), path.c_str());
  }
  if (vm["json"].as<bool>())
    std::cout << exporters::to_json(report).dump(2) << "\n";
  else
    std::cout << exporters::to_text(report);
  return report.has_serving_gaps() ? 1 : 0;
}

}  // namespace tunetab::cli
