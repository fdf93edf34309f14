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
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw_input(path + ": cannot open for writing");
    out << text;
    out.flush();
    if (!out) {
      out.close();
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw_input(path + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw_input(path + ": write failed (" + ec.message() + ")");
  }
}

}  // namespace tunetab
