// tunetab::Error: the one exception type. A kind says how far it reaches: the runner turns per-candidate
// kinds into stored dispositions; Input and Infra end a run.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace tunetab {

enum class ErrorKind { kCompile, kLaunch, kDeviceLimit, kIncorrect, kOutOfBounds, kFault, kTimeout, kInput, kInfra };

std::string_view to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string statement, const char* file, int line, std::string detail);
  ErrorKind kind() const { return kind_; }
  const std::string& statement() const { return statement_; }
  const std::string& detail() const { return detail_; }

 private:
  ErrorKind kind_;
  std::string statement_;
  std::string detail_;
};

/// Throws an Input error: `what` names the file, line or field and what was expected.
[[noreturn]] void throw_input(std::string what);

}  // namespace tunetab

#define TUNETAB_THROW(kind, detail) \
  throw ::tunetab::Error(::tunetab::ErrorKind::kind, "", __FILE__, __LINE__, (detail))

/// Asserts stay on in release builds (STYLE.md); a failed one is a tunetab bug, so it is Infra.
#define TUNETAB_ASSERT(cond, detail)                                                        \
  do {                                                                                      \
    if (!(cond))                                                                            \
      throw ::tunetab::Error(::tunetab::ErrorKind::kInfra, #cond, __FILE__, __LINE__, (detail)); \
  } while (0)
