#include "backends/kernel_spec.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

namespace gpuscope {

std::string_view scalar_tag(Scalar s) {
  switch (s) {
    case Scalar::i8: return "i8";
    case Scalar::i16: return "i16";
    case Scalar::i32: return "i32";
    case Scalar::i64: return "i64";
    case Scalar::u32: return "u32";
    case Scalar::u64: return "u64";
    case Scalar::f16: return "f16";
    case Scalar::f32: return "f32";
    case Scalar::f64: return "f64";
  }
  return "?";
}

size_t scalar_bytes(Scalar s) {
  switch (s) {
    case Scalar::i8: return 1;
    case Scalar::i16:
    case Scalar::f16: return 2;
    case Scalar::i32:
    case Scalar::u32:
    case Scalar::f32: return 4;
    case Scalar::i64:
    case Scalar::u64:
    case Scalar::f64: return 8;
  }
  return 0;
}

bool scalar_is_float(Scalar s) { return s == Scalar::f16 || s == Scalar::f32 || s == Scalar::f64; }

std::string KernelParam::text() const {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, Scalar>) return std::string(scalar_tag(v));
        else if constexpr (std::is_same_v<T, std::string>) return v;
        else return std::to_string(v);
      },
      value_);
}

namespace {

template <class T>
const T* typed(const KernelSpec& spec, std::string_view name, const char* what) {
  const auto it = spec.params.find(std::string(name));
  if (it == spec.params.end()) return nullptr;
  if (const T* v = std::get_if<T>(&it->second.value())) return v;
  throw DeviceError(fmt::format("kernel {}: parameter '{}' = {} is not {}", spec.key(), name,
                                it->second.text(), what));
}

}  // namespace

int64_t KernelSpec::integer(std::string_view name, int64_t fallback) const {
  const int64_t* v = typed<int64_t>(*this, name, "an integer");
  return v ? *v : fallback;
}

bool KernelSpec::flag(std::string_view name) const {
  const bool* v = typed<bool>(*this, name, "a switch");
  return v && *v;
}

std::optional<Scalar> KernelSpec::scalar(std::string_view name) const {
  const Scalar* v = typed<Scalar>(*this, name, "an element type");
  return v ? std::optional<Scalar>(*v) : std::nullopt;
}

std::optional<std::string> KernelSpec::word(std::string_view name) const {
  const std::string* v = typed<std::string>(*this, name, "a word");
  return v ? std::optional<std::string>(*v) : std::nullopt;
}

std::string KernelSpec::key() const {
  std::string k = family + "/" + entry + "{";
  bool first = true;
  for (const auto& [name, value] : params) {
    k += (first ? "" : ",") + name + "=" + value.text();
    first = false;
  }
  return k + "}";
}

}  // namespace gpuscope
