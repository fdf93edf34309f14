#include "exporters/vllm_moe_json.h"

#include <filesystem>
#include <regex>

#include "tuner/error.h"
#include "tuner/text_file.h"

namespace tunetab::exporters {

namespace {

const char* const kNameForm = "E={E},N={N},device_name={name}[,dtype={dtype}][,block_shape=[{n},{k}]].json";

/// A positive integer written as decimal digits only, as a batch-size key must be.
bool positive_integer(const std::string& s, std::int64_t& out) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoll(s);
  return out > 0;
}

std::int64_t block_size(const nlohmann::json& config, const char* name, const std::string& where) {
  const auto it = config.find(name);
  if (it == config.end() || !it->is_number_integer() || it->get<std::int64_t>() <= 0)
    throw_input(where + ": " + name + ": expected a positive integer");
  return it->get<std::int64_t>();
}

}  // namespace

VllmMoeSelector parse_vllm_moe_file_name(const std::string& path) {
  static const std::regex form(
      R"(E=([0-9]+),N=([0-9]+),device_name=([^,]+?)(?:,dtype=([^,]+?))?(?:,block_shape=(\[[0-9]+,[0-9]+\]))?\.json)");
  const std::string name = std::filesystem::path(path).filename().string();
  std::smatch m;
  if (!std::regex_match(name, m, form)) throw_input(path + ": the file name must read " + kNameForm);
  VllmMoeSelector s;
  s.e = std::stoll(m[1]);
  s.n = std::stoll(m[2]);
  s.device_name = m[3];
  s.dtype = m[4];
  s.block_shape = m[5];
  if (s.e <= 0 || s.n <= 0) throw_input(path + ": E and N in the file name must be positive");
  return s;
}

std::string vllm_moe_file_name(const VllmMoeSelector& s) {
  return "E=" + std::to_string(s.e) + ",N=" + std::to_string(s.n) + ",device_name=" + s.device_name +
         (s.dtype.empty() ? "" : ",dtype=" + s.dtype) + (s.block_shape.empty() ? "" : ",block_shape=" + s.block_shape) + ".json";
}

VllmMoeFile parse_vllm_moe_json(const std::string& text, const std::string& path) {
  VllmMoeFile file{path, parse_vllm_moe_file_name(path), {}};
  // NOTE: a JSON object keeps the last of repeated keys; the callback records every top-level key in order.
  std::vector<std::string> keys;
  const auto record = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key) keys.push_back(parsed.get<std::string>());
    return true;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, record);
  } catch (const nlohmann::json::parse_error& e) {
    throw_input(path + ": malformed JSON: " + e.what());
  }
  if (!doc.is_object()) throw_input(path + ": expected a JSON object that maps batch sizes to kernel configs");
  for (const auto& key : keys) {
    if (key == "triton_version") continue;  // vLLM pops it before reading the batch sizes
    const std::string where = path + ": key \"" + key + "\"";
    VllmMoeConfig c;
    if (!positive_integer(key, c.m)) throw_input(where + ": expected a batch size (a positive integer)");
    c.config = doc.at(key);
    if (!c.config.is_object()) throw_input(where + ": expected a kernel config object (BLOCK_SIZE_M, BLOCK_SIZE_N, ...)");
    c.block_size_m = block_size(c.config, "BLOCK_SIZE_M", where);
    block_size(c.config, "BLOCK_SIZE_N", where);
    block_size(c.config, "BLOCK_SIZE_K", where);
    file.configs.push_back(std::move(c));
  }
  return file;
}

VllmMoeFile read_vllm_moe_json(const std::string& path) {
  return parse_vllm_moe_json(read_text_file(path), path);
}

}  // namespace tunetab::exporters
