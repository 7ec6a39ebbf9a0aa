// The compiled half of {fmt}, built once into gpuscope. Debian's libfmt-dev
// ships it only as a shared library, and gpuscope links everything but the
// GPU API and C/C++ runtime libraries statically; FMT_HEADER_ONLY instead
// compiles and instantiates the formatting core in every translation unit
// (src/report/format.cpp: 5.3 s with it, 1.4 s without, GCC -O3).
//
// format-inl.h defines fmt's non-template functions; the two templates below
// are the ones format.h declares `extern template` for char.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl<char>(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
