#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace gpuscope {

namespace {

[[noreturn]] void throw_io_error(const std::string& what, const std::string& path, int error = errno) {
  throw std::runtime_error(fmt::format("{} '{}': {}", what, path, std::strerror(error)));
}

void write_all(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_io_error("cannot write", path);
    done += static_cast<size_t>(n);
  }
}

// Makes the rename itself durable. Best effort: some file systems refuse
// fsync on a directory, and the file's content is already safe by then.
void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomic(const std::string& text, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error(fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));

  // Same directory as the target: rename is atomic only within a file system.
  std::string temp_path = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(temp_path.data());
  if (fd < 0) throw_io_error("cannot create a temporary file in", dir.string());
  try {
    write_all(fd, text, temp_path);
    // mkstemp creates the file 0600; results and reports are meant to be shared.
    if (::fchmod(fd, 0644) != 0) throw_io_error("cannot set permissions of", temp_path);
    if (::fsync(fd) != 0) throw_io_error("cannot flush", temp_path);
  } catch (...) {
    ::close(fd);
    ::unlink(temp_path.c_str());
    throw;
  }
  // close can report a delayed write error (NFS), so it is checked too.
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temp_path.c_str());
    throw_io_error("cannot write", temp_path, error);
  }
  if (::rename(temp_path.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_path.c_str());
    throw_io_error("cannot replace", path, error);
  }
  sync_directory(dir);
}

}  // namespace gpuscope
