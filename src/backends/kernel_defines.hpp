// The preprocessor defines a KernelSpec's parameters become, shared by every
// backend that compiles source text (OpenCL C and GLSL): one define per
// parameter, its name upper-cased. Only the spelling of element types
// differs between languages, so the caller passes it.
//   integer   unroll=32      UNROLL = 32
//   switch    has_ptx=true   HAS_PTX = 1       (false: 0; test with #if)
//   scalar    scalar=f64     SCALAR = double, SCALAR_IS_F64 = 1
//   word      ops=FMA        OPS_FMA = 1       (test with #ifdef / defined())
#pragma once

#include "backends/kernel_spec.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscope {

using TypeNamer = std::string_view (*)(Scalar);

// (name, value) pairs in parameter-name order.
std::vector<std::pair<std::string, std::string>> kernel_defines(const KernelSpec& spec, TypeNamer type_name);

// "chase" -> "CHASE": entry names and parameter names as macros.
std::string macro_name(std::string_view s);

}  // namespace gpuscope
