// Files a reader must never see half-written (results.json, report.html,
// report.md): the text goes to a temporary file beside the target, is
// flushed to disk and renamed over it.
#pragma once

#include <string>

namespace gpuscope {

// Writes `text` to `path` atomically, creating the directory if missing: a
// run killed half-way, or a write that fails (a full disk), leaves the
// previous complete file (or none) and no temporary file. The file is 0644.
// Only a regular file is replaced: a `path` that exists as anything else (a
// directory, a FIFO, a socket, a block or character device, /dev/null
// included: the rename would put a file in the device node's place) is
// refused before anything is written. A symbolic link to a regular file
// stays a link: its target is replaced. Throws OutputError (exit code 2)
// naming the file and the reason.
void write_file_atomic(const std::string& text, const std::string& path);

// Throws OutputError when `path` exists and is not a regular file (or a
// link to one): the check write_file_atomic makes first, for a caller that
// wants it before spending device time.
void check_output_file(const std::string& path);

}  // namespace gpuscope
