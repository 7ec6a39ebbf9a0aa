// How the OpenCL backend turns a KernelSpec into OpenCL C: which embedded
// file, and which build options.
#pragma once

#include "backends/kernel_spec.hpp"

#include <string>

namespace gpuscope {

// "opencl/<family>.cl", a path below src/kernels (kernels/kernel_sources.hpp).
std::string opencl_source_path(const KernelSpec& spec);

// One -D define per parameter, its name upper-cased:
//   integer   unroll=32      -DUNROLL=32
//   switch    has_ptx=true   -DHAS_PTX=1      (false: -DHAS_PTX=0; test with #if)
//   scalar    scalar=f64     -DSCALAR=double -DSCALAR_IS_F64=1
//   word      ops=FMA        -DOPS_FMA=1      (test with #ifdef / defined())
// Kernels derive what else they need (a vector type from SCALAR and VEC).
std::string opencl_build_options(const KernelSpec& spec);

// The OpenCL C spelling of an element type: "float", "half", "uchar" ...
std::string_view opencl_type_name(Scalar s);

}  // namespace gpuscope
