#include "tuner/text_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "tuner/error.h"

namespace tunetab {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input(path + ": cannot open for reading");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw_input(path + ": read failed");
  return s.str();
}

void write_text_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) throw_input(path + ": cannot open for writing");
  const bool written = static_cast<bool>(out << text << std::flush);
  out.close();
  std::error_code ec;
  if (written) std::filesystem::rename(tmp, path, ec);
  if (!written || ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw_input(path + ": write failed" + (ec ? " (" + ec.message() + ")" : std::string()));
  }
}

}  // namespace tunetab
