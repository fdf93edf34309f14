// tunetab: offline kernel autotuner and tuning-table generator. `tunetab --help` lists the subcommands.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "tuner/cli/commands.h"
#include "tuner/error.h"
#include "tuner/safety/executor.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const tunetab::cli::Args&, const std::string&);
};

int tune(const tunetab::cli::Args& a, const std::string& cl) { return tunetab::cli::cmd_tune(a, cl); }
int exp(const tunetab::cli::Args& a, const std::string&) { return tunetab::cli::cmd_export(a); }
int ver(const tunetab::cli::Args& a, const std::string&) { return tunetab::cli::cmd_verify(a); }
int comp(const tunetab::cli::Args& a, const std::string&) { return tunetab::cli::cmd_compile(a); }
int confs(const tunetab::cli::Args& a, const std::string&) { return tunetab::cli::cmd_configs(a); }
int devs(const tunetab::cli::Args& a, const std::string&) { return tunetab::cli::cmd_devices(a); }
int dbc(const tunetab::cli::Args& a, const std::string&) { return tunetab::cli::cmd_db(a); }
int shp(const tunetab::cli::Args& a, const std::string&) { return tunetab::cli::cmd_shapes(a); }
int gap(const tunetab::cli::Args& a, const std::string&) { return tunetab::cli::cmd_gaps(a); }

// clang-format off
const Command kCommands[] = {
  {"tune",    "compile, validate, time and store every candidate for a shape list", tune},
  {"export",  "write the rows that passed coverage as serving-stack tables with certificates (aiter-bf16-gemm; --profile: a deployment's tables, no GPU)", exp},
  {"verify",  "re-run a table's validation (every served M, guards, poison, reference, index proof) on this GPU", ver},
  {"compile", "compile-check a family's whole config space for a target (no GPU needed)", comp},
  {"configs", "list the config space, and for a shape which configs are supported and why not", confs},
  {"devices", "list the GPUs tunetab sees, with the facts it records", devs},
  {"db",      "summarize a tunetab database: runs, results, coverage, cache, and per family the rows export would write", dbc},
  {"shapes",  "derive a model's GEMM and fused-MoE keys and M buckets from config.json and a serving envelope", shp},
  {"gaps",    "audit shipped AITER/vLLM tuning tables against a deployment's keys: misses, extrapolation, overflow", gap},
};
// clang-format on

void usage(std::FILE* out) {
  std::fprintf(out, "tunetab %s: offline kernel autotuner and tuning-table generator (HIP/hipRTC)\n\n", TUNETAB_VERSION);
  std::fprintf(out, "usage: tunetab <command> [options]   (tunetab <command> --help for its options)\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-8s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  tunetab::safety::serve_worker_if_requested();  // a device worker this program started: never returns
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("tunetab %s\n", TUNETAB_VERSION);
    return 0;
  }
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    tunetab::cli::Args args(argv + 2, argv + argc);
    try {
      return c.run(args, command_line);
    } catch (const tunetab::Error& e) {
      std::fprintf(stderr, "tunetab %s: error: %s\n", c.name, e.what());
      return e.kind() == tunetab::ErrorKind::kInput ? 2 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tunetab %s: error: %s\n", c.name, e.what());
      return 2;
    }
  }
  std::fprintf(stderr, "tunetab: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
