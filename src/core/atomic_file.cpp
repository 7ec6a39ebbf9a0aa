#include "core/atomic_file.hpp"

#include "core/error.hpp"

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
  throw OutputError(fmt::format("{} '{}': {}", what, path, std::strerror(error)));
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The file a write to `path` replaces: `path` itself, or the regular file a
// symbolic link at `path` leads to; empty when nothing is there yet.
std::filesystem::path replaced_file(const std::string& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno == ENOENT) return {};
    throw_io_error("cannot write", path);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    // ELOOP: a link that loops; ENOENT: one that leads nowhere.
    const int error = errno;
    throw OutputError(fmt::format("cannot write '{}': it is a symbolic link that {}", path,
                                  error == ENOENT ? "leads to no file"
                                  : error == ELOOP ? "loops"
                                                   : std::string("cannot be followed: ") + std::strerror(error)));
  }
  if (!S_ISREG(st.st_mode))
    throw OutputError(fmt::format("cannot write '{}': it is {}, and only a regular file is replaced", path,
                                  file_kind(st.st_mode)));
  std::error_code ec;
  if (S_ISLNK(link.st_mode)) {
    auto target = std::filesystem::canonical(path, ec);
    if (ec) throw OutputError(fmt::format("cannot write '{}': {}", path, ec.message()));
    return target;
  }
  return path;
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

void check_output_file(const std::string& path) { (void)replaced_file(path); }

void write_file_atomic(const std::string& text, const std::string& given) {
  namespace fs = std::filesystem;
  const fs::path existing = replaced_file(given);
  const fs::path target = existing.empty() ? fs::path(given) : existing;
  const std::string path = target.string();
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw OutputError(fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));

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
