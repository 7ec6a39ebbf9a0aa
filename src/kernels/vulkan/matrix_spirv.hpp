// The `matrix` family's Vulkan shader, written as SPIR-V words by C++
// rather than compiled from GLSL: Debian 12's glslang (12.0) knows only
// GL_NV_cooperative_matrix, not GL_KHR_cooperative_matrix, and no GLSL
// compiler here emits SPV_KHR_cooperative_matrix. The kernel is the one
// core/matrix_chain.hpp states (entry "chain"), laid out as
// src/kernels/vulkan/README.md says for every shader:
//   bindings 0..4: A, B, B2, C, out (storage buffers, set 0, std430 arrays
//   of the element types); push constants: { uint pairs; }; the work-group
//   size from specialization constants 0, 1, 2 (the WorkgroupSize built-in).
// A subgroup's index in the dispatch is WorkgroupId.x x NumSubgroups +
// SubgroupId, so launches are one-dimensional, their work-groups whole
// subgroups.
//
// Two flavours of the same module: SPV_KHR_cooperative_matrix (capability
// CooperativeMatrixKHR; the matrices' use, A, B or accumulator, in their
// types; signedness of integer components in the multiply-add's operands)
// for VK_KHR_cooperative_matrix, and SPV_NV_cooperative_matrix (signedness
// in the component types) for drivers with only VK_NV_cooperative_matrix.
// Instruction numbers and operands are from the SPIR-V registry (the
// unified spirv.core.grammar.json); the extension-only ones are listed in
// matrix_spirv.cpp with their names.
#pragma once

#include "core/matrix_chain.hpp"

#include <cstdint>
#include <vector>

namespace gpuscope::vulkan {

enum class CoopMatrixFlavour { khr, nv };

// The SPIR-V 1.5 module of the matrix chain for `shape` with `chains`
// accumulators per subgroup. Throws Unsupported where the module cannot
// express the shape: bf16 and f8 components (they need SPV_KHR_bfloat16 /
// SPV_EXT_float8, which this emitter does not write), a C type other than
// the result type (the chain feeds D back as C), and saturation in the NV
// flavour (which has none).
std::vector<uint32_t> matrix_chain_spirv(const MatrixChainShape& shape, uint32_t chains, CoopMatrixFlavour flavour,
                                         bool saturating = false);

}  // namespace gpuscope::vulkan
