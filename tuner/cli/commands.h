// tunetab subcommands; each parses its own options (Boost.Program_options) and returns an exit code.
#pragma once
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "tuner/profile/envelope.h"
#include "tuner/profile/matrix.h"

namespace tunetab::cli {

using Args = std::vector<std::string>;

/// Parses `args` against `desc` (adding --help); prints help and returns false for --help.
bool parse(const Args& args, boost::program_options::options_description& desc,
           boost::program_options::variables_map& vm, const char* usage_line);

int cmd_tune(const Args& args, const std::string& command_line);
int cmd_export(const Args& args);
int cmd_verify(const Args& args);
int cmd_compile(const Args& args);
int cmd_configs(const Args& args);
int cmd_devices(const Args& args);
int cmd_db(const Args& args);
int cmd_shapes(const Args& args);
int cmd_gaps(const Args& args);

/// Input error for any option of `group` given on the command line (not at its default): `group` holds the options
/// that only a --profile / --hf-config run reads, so they must not pass silently without one.
void reject_unless_profile(const boost::program_options::variables_map& vm, const boost::program_options::options_description& group);
/// `path` when it is a file: the commands that read a database (export, db) never create one. Input error naming it
/// otherwise.
std::string existing_db(const std::string& path);
/// --profile and the serving-envelope flags, as `tunetab shapes` and `tunetab gaps` take them.
boost::program_options::options_description deployment_options();
/// The envelope --profile and the flags describe; `need_model` as profile::envelope_from takes it.
profile::Envelope deployment_envelope(boost::program_options::variables_map& vm, bool need_model = true);
/// --fmoe-rule, --gemm-rule and deployment_options(), as `tunetab shapes` and `tunetab tune --profile` take them.
boost::program_options::options_description matrix_options();
/// The support matrix matrix_options() describe (the model read, the envelope validated).
profile::Matrix deployment_matrix(boost::program_options::variables_map& vm);

}  // namespace tunetab::cli
