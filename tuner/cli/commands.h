// tunetab subcommands; each parses its own options (Boost.Program_options) and returns an exit code.
#pragma once
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace tunetab::cli {

using Args = std::vector<std::string>;

/// Parses `args` against `desc` (adding --help); prints help and returns false for --help.
bool parse(const Args& args, boost::program_options::options_description& desc,
           boost::program_options::variables_map& vm, const char* usage_line);

int cmd_tune(const Args& args, const std::string& command_line);
int cmd_export(const Args& args);
int cmd_compile(const Args& args);
int cmd_configs(const Args& args);
int cmd_devices(const Args& args);
int cmd_db(const Args& args);
int cmd_shapes(const Args& args);

}  // namespace tunetab::cli
