// Files a reader must never see half-written (results.json, report.html,
// report.md): the text goes to a temporary file beside the target, is
// flushed to disk and renamed over it.
#pragma once

#include <string>

namespace gpuscope {

// Writes `text` to `path` atomically, creating the directory if missing: a
// run killed half-way, or a write that fails (a full disk), leaves the
// previous complete file (or none) and no temporary file. The file is 0644.
// Throws std::runtime_error naming the file and the system's reason.
void write_file_atomic(const std::string& text, const std::string& path);

}  // namespace gpuscope
