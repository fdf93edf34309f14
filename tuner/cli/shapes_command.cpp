// `tunetab shapes`: a model's config.json plus its serving envelope -> every GEMM and fused-MoE key one
// rank hits, with the M buckets a consumer's lookup rule serves them from.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "tuner/cli/commands.h"
#include "tuner/error.h"
#include "tuner/profile/matrix.h"
#include "tuner/text_file.h"

namespace po = boost::program_options;

namespace tunetab::cli {

namespace {

profile::RuleKind rule_option(const po::variables_map& vm, const char* flag) {
  try {
    return profile::rule_from_string(vm[flag].as<std::string>());
  } catch (const Error& e) {
    throw_input(std::string("--") + flag + ": " + e.detail());
  }
}

}  // namespace

po::options_description deployment_options() {
  po::options_description d("deployment");
  d.add_options()("profile", po::value<std::string>(), "deployment profile: `key = value` lines named as the envelope flags");
  d.add(profile::envelope_options());
  return d;
}

profile::Envelope deployment_envelope(po::variables_map& vm, bool need_model) {
  return profile::envelope_from(vm, vm.count("profile") ? vm["profile"].as<std::string>() : "", need_model);
}

po::options_description matrix_options() {
  po::options_description d("support matrix");
  d.add_options()
      ("fmoe-rule", po::value<std::string>()->default_value("aiter-fmoe"), "fused-MoE lookup rule: aiter-fmoe, vllm-nearest or exact")
      ("gemm-rule", po::value<std::string>()->default_value("aiter-gemm"), "GEMM lookup rule: aiter-gemm, vllm-nearest or exact");
  d.add(deployment_options());
  return d;
}

profile::Matrix deployment_matrix(po::variables_map& vm) {
  const profile::Rules rules{rule_option(vm, "fmoe-rule"), rule_option(vm, "gemm-rule")};
  const auto env = deployment_envelope(vm);
  return profile::derive_matrix(profile::read_model(env.hf_config), env, rules);
}

int cmd_shapes(const Args& args) {
  po::options_description d("shapes options");
  d.add_options()
      ("format", po::value<std::string>()->default_value("json"),
       "json (every key with its M domain and buckets) or aiter-untuned (AITER's untuned CSVs, a row per bucket)")
      ("output,o", po::value<std::string>(), "json: a file; aiter-untuned: a folder for the CSVs (default: stdout)");
  d.add(matrix_options());
  po::variables_map vm;
  if (!parse(args, d, vm, "tunetab shapes (--hf-config F | --profile F) [--tp N --ep N --quant Q ...] [--format json|aiter-untuned] [-o PATH]"))
    return 0;
  const std::string format = vm["format"].as<std::string>();
  if (format != "json" && format != "aiter-untuned") throw_input("--format '" + format + "': expected json or aiter-untuned");
  const auto matrix = deployment_matrix(vm);
  const std::string output = vm.count("output") ? vm["output"].as<std::string>() : "";

  if (format == "json") {
    const std::string text = profile::to_json(matrix).dump(2) + "\n";
    if (output.empty()) {
      std::cout << text;
    } else {
      write_text_file(output, text);
      std::fprintf(stderr, "wrote %zu fused-MoE and %zu GEMM keys to %s\n", matrix.fmoe.size(), matrix.gemm.size(), output.c_str());
    }
    return 0;
  }
  const auto tables = profile::aiter_untuned_tables(matrix);
  if (output.empty()) {
    // NOTE: several tables on one stream; `-o DIR` writes each as the plain CSV AITER reads.
    for (std::size_t i = 0; i < tables.size(); ++i) std::cout << (i ? "\n" : "") << "# " << tables[i].first << "\n" << tables[i].second;
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(output, ec);
  if (ec) throw_input(output + ": cannot create the folder: " + ec.message());
  for (const auto& [name, text] : tables) {
    write_text_file((std::filesystem::path(output) / name).string(), text);
    std::fprintf(stderr, "wrote %s\n", (std::filesystem::path(output) / name).string().c_str());
  }
  return 0;
}

}  // namespace tunetab::cli
