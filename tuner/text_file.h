// Whole-file text I/O with the project's input errors: every table, certificate and JSON file goes through these.
#pragma once
#include <string>

namespace tunetab {

/// The whole of `path` as bytes; input error "PATH: cannot open for reading" (or "read failed").
std::string read_text_file(const std::string& path);

/// Replaces `path` with `text`: written beside it and renamed over it, so that a kill mid-write leaves the old file
/// or the new one, never a part. Input error "PATH: cannot open for writing" (or "write failed").
void write_text_file(const std::string& path, const std::string& text);

}  // namespace tunetab
