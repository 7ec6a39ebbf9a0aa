// GLSL shaders to SPIR-V at run time, through glslang linked
// statically (so the binary needs only the Vulkan loader and a driver).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope {

// How a shader reads an image binding: the descriptor it takes.
enum class SampledKind {
  kTexelBuffer,  // (u|i)samplerBuffer: VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, an ImageKind::kBuffer1D image
  k2D,           // (u|i)sampler2D: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, an ImageKind::k2D image
};

struct SampledBinding {
  uint32_t binding = 0;
  SampledKind kind = SampledKind::kTexelBuffer;
};

struct GlslShader {
  std::vector<uint32_t> spirv;
  // The storage-buffer bindings (set 0) the shader uses, ascending: each
  // must be a Buffer argument at that position.
  std::vector<uint32_t> buffer_bindings;
  // The sampled-image bindings (set 0) the shader uses, ascending by
  // binding: each must be an Image argument of the matching kind there.
  std::vector<SampledBinding> sampled_bindings;
};

// The shader stages compile_glsl_stage() compiles.
enum class GlslStage { kCompute, kVertex, kFragment };

// Compiles one shader of `stage` for Vulkan 1.`vulkan_minor` to SPIR-V, with
// no reflection: for shaders whose bindings their caller declares itself
// (the graphics facet's, src/kernels/vulkan/README.md). Throws BuildError
// with glslang's log.
std::vector<uint32_t> compile_glsl_stage(const std::string& source, const std::string& name, int vulkan_minor,
                                         GlslStage stage);

// Compiles one compute shader for Vulkan 1.`vulkan_minor` (SPIR-V 1.3 for 1.1,
// 1.5 for 1.2, 1.6 for 1.3). `name` names it in messages. Throws BuildError
// whose log is glslang's info log (with the source's line numbers), and
// BuildError for an opaque uniform other than the two SampledKinds (storage
// images, separate samplers, other dimensions: no argument kind maps to them).
GlslShader compile_glsl_compute(const std::string& source, const std::string& name, int vulkan_minor);

}  // namespace gpuscope
