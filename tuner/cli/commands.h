// tunetab subcommands; each parses its own options (Boost.Program_options) and returns an exit code.
#pragma once
#include <string>
#include <vector>

namespace tunetab::cli {

using Args = std::vector<std::string>;

int cmd_tune(const Args& args, const std::string& command_line);
int cmd_export(const Args& args);
int cmd_compile(const Args& args);
int cmd_configs(const Args& args);
int cmd_devices(const Args& args);
int cmd_db(const Args& args);

}  // namespace tunetab::cli
