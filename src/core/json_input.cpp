#include "core/json_input.hpp"

#include "core/error.hpp"
#include "core/printable.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gpuscope {

namespace {

using nlohmann::json;

// Closes a file descriptor on every way out.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

struct TextPosition {
  size_t line = 1, column = 1;
};

// Line and column (1-based, columns in bytes) of byte `offset` of `text`.
TextPosition position_of(std::string_view text, size_t offset) {
  TextPosition p;
  for (size_t i = 0; i < std::min(offset, text.size()); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

// Builds the document from nlohmann's SAX events, knowing at each event the
// JSON path it belongs to and refusing nesting past the limit before it is
// built (nlohmann's own writer and copy recurse once per level).
class BoundedBuilder : public nlohmann::json_sax<json> {
 public:
  BoundedBuilder(std::string_view text, size_t max_depth) : text_(text), max_depth_(max_depth) {}

  json take() { return std::move(root_); }

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t&) override { return put(v); }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t& v) override { return put(json::binary(std::move(v))); }

  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    stack_.back().key = k;
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) override {
    // nlohmann counts the byte that failed as read.
    const size_t offset = position == 0 ? 0 : position - 1;
    const TextPosition at = position_of(text_, offset);
    const std::string where = path().empty() ? "" : fmt::format(", in {}", path());
    if (e.id == 406)  // a number past the range of a double
      throw UsageError(fmt::format("{}: the number {} is too large (line {}, column {})",
                                   path().empty() ? "top level" : path(), printable(last_token), at.line,
                                   at.column));
    // Reading past the last byte counts one more: the text ended early.
    if (position > text_.size())
      throw UsageError(
          fmt::format("it ends early at line {}, column {}{} (truncated?)", at.line, at.column, where));
    std::string what = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 1, column 2: ".
    if (const auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    throw UsageError(
        fmt::format("syntax error at line {}, column {}{}: {}", at.line, at.column, where, printable(what)));
  }

 private:
  struct Level {
    json* container;
    std::string key;  // the key whose value comes next (objects)
  };

  // Where the next value goes: the root, the end of an array, or an
  // object's current key (a repeated key keeps its last value).
  json& slot() {
    if (stack_.empty()) return root_;
    json& parent = *stack_.back().container;
    if (parent.is_array()) {
      parent.push_back(nullptr);
      return parent.back();
    }
    return parent[stack_.back().key];
  }

  bool put(json v) {
    slot() = std::move(v);
    return true;
  }

  bool open(json empty) {
    if (stack_.size() >= max_depth_)
      throw UsageError(
          fmt::format("{}: nested deeper than {} levels", path().empty() ? "top level" : path(), max_depth_));
    json& s = slot();
    s = std::move(empty);
    // The container stays where it is until it closes: only its own
    // children are added meanwhile.
    stack_.push_back({&s, {}});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  // The JSON path of the innermost value being read, e.g. "series[3].points".
  std::string path() const {
    std::string p;
    for (size_t i = 0; i < stack_.size(); ++i) {
      const json& c = *stack_[i].container;
      if (c.is_array()) {
        if (!c.empty()) p += fmt::format("[{}]", c.size() - 1);
      } else if (c.is_object() && !(stack_[i].key.empty() && c.empty())) {
        p = json_key_path(p, stack_[i].key);
      }
    }
    return p;
  }

  std::string_view text_;
  size_t max_depth_;
  json root_;
  std::vector<Level> stack_;
};

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO that has no writer must not wait for one.
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0)
    throw UsageError(fmt::format("cannot open {} '{}': {}", what, path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw UsageError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw UsageError(
        fmt::format("{} '{}' is {}; it must be a regular file", what, path, file_kind(st.st_mode)));
  const auto too_large = [&] {
    return UsageError(fmt::format("{} '{}' is larger than the {} MiB limit", what, path, max_bytes >> 20));
  };
  if (static_cast<uint64_t>(st.st_size) > max_bytes) throw too_large();
  // The file may grow while it is read: at most max_bytes + 1 are taken.
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (true) {
    if (done == text.size()) {
      if (text.size() > max_bytes) throw too_large();
      text.resize(std::min(max_bytes + 1, std::max<size_t>(4096, 2 * text.size())));
    }
    const ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw UsageError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

nlohmann::json parse_json_input(std::string_view text, size_t max_depth) {
  // RFC 8259 JSON is UTF-8; checking first names the bad byte's place
  // rather than the string nlohmann happened to be reading.
  if (const size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    const TextPosition at = position_of(text, bad);
    throw UsageError(fmt::format("byte 0x{:02x} at line {}, column {} is not UTF-8",
                                 static_cast<unsigned char>(text[bad]), at.line, at.column));
  }
  // nlohmann's reader takes a NUL byte for the end of the text and would
  // call the rest missing; JSON holds none, raw or in a string.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const TextPosition at = position_of(text, nul);
    throw UsageError(fmt::format("a NUL byte at offset {} (line {}, column {}); JSON text holds none", nul, at.line,
                                 at.column));
  }
  BoundedBuilder builder(text, max_depth);
  json::sax_parse(text, &builder);
  return builder.take();
}

std::string json_key_path(const std::string& parent, std::string_view key) {
  const bool plain = !key.empty() && key.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-") == std::string_view::npos;
  if (plain) return parent.empty() ? std::string(key) : parent + "." + std::string(key);
  return parent + "[" + json(printable(key)).dump() + "]";
}

}  // namespace gpuscope
