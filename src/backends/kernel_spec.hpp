// A kernel named by what it is, never by one API's source: its family (the
// kernels of one experiment: "latency", "compute"), its entry point, and
// typed build parameters (element type, vector width, unroll, register
// count, body size ...).
//
// Each backend maps a spec onto its own sources and specialisation
// mechanism: the OpenCL backend compiles src/kernels/opencl/<family>.cl
// with one -D define per parameter (opencl_kernel_source.hpp states the
// spelling); the sim looks up the C++ model of <family>/<entry> and reads
// the parameters as values. Nothing parses flag strings.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace gpuscope {

// Element types kernels are specialised for.
enum class Scalar : uint8_t { i8, i16, i32, i64, u32, u64, f16, f32, f64 };

std::string_view scalar_tag(Scalar s);  // "i8" ... "f64": names in params, messages and JSON
size_t scalar_bytes(Scalar s);
bool scalar_is_float(Scalar s);

// One build parameter's value: a count (unroll, vector width, registers,
// body size, address bits), a switch, an element type, or a word from the
// family's own small vocabulary (compute's op set, "FMA" or "FAST").
class KernelParam {
 public:
  using Value = std::variant<int64_t, bool, Scalar, std::string>;

  template <std::integral T>
    requires(!std::same_as<T, bool>)
  KernelParam(T v) : value_(static_cast<int64_t>(v)) {}
  KernelParam(bool b) : value_(b) {}
  KernelParam(Scalar s) : value_(s) {}
  KernelParam(std::string word) : value_(std::move(word)) {}
  KernelParam(const char* word) : value_(std::string(word)) {}

  const Value& value() const { return value_; }
  std::string text() const;  // "32", "true", "f32", "FMA"
  bool operator==(const KernelParam&) const = default;

 private:
  Value value_;
};

struct KernelSpec {
  std::string family;                         // "latency"
  std::string entry;                          // "chase"
  std::map<std::string, KernelParam> params;  // by lower_snake name: "unroll", "scalar"

  // Typed reads. Absent parameters give the fallback (false for flags,
  // nullopt otherwise); a parameter of another type throws DeviceError
  // naming the kernel, since a probe and a backend disagree on its meaning.
  int64_t integer(std::string_view name, int64_t fallback) const;
  bool flag(std::string_view name) const;
  std::optional<Scalar> scalar(std::string_view name) const;
  std::optional<std::string> word(std::string_view name) const;

  // "compute/tp_FMA{scalar=f32,unroll=32,...}": a stable key for caches and
  // the name in messages.
  std::string key() const;
};

}  // namespace gpuscope
