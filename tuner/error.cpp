#include "tuner/error.h"

namespace tunetab {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kCompile: return "compile";
    case ErrorKind::kLaunch: return "launch";
    case ErrorKind::kDeviceLimit: return "device_limit";
    case ErrorKind::kIncorrect: return "incorrect";
    case ErrorKind::kOutOfBounds: return "out_of_bounds";
    case ErrorKind::kFault: return "fault";
    case ErrorKind::kTimeout: return "timeout";
    case ErrorKind::kInput: return "input";
    case ErrorKind::kInfra: return "infra";
  }
  return "unknown";
}

static std::string format(ErrorKind kind, const std::string& statement, const char* file, int line,
                          const std::string& detail) {
  std::string msg;
  if (kind == ErrorKind::kInput) return detail;  // user-facing: the detail names the file/field already
  msg += std::string(to_string(kind)) + " error";
  if (!statement.empty()) msg += " in `" + statement + "`";
  if (file) msg += " at " + std::string(file) + ":" + std::to_string(line);
  if (!detail.empty()) msg += ": " + detail;
  return msg;
}

Error::Error(ErrorKind kind, std::string statement, const char* file, int line, std::string detail)
    : std::runtime_error(format(kind, statement, file, line, detail)),
      kind_(kind), statement_(std::move(statement)), detail_(std::move(detail)) {}

void throw_input(std::string what) {
  throw Error(ErrorKind::kInput, "", nullptr, 0, std::move(what));
}

}  // namespace tunetab
