// GLSL compute shaders to SPIR-V at run time, through glslang linked
// statically (so the binary needs only the Vulkan loader and a driver).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope {

struct GlslShader {
  std::vector<uint32_t> spirv;
  // The storage-buffer bindings (set 0) the shader uses, ascending: each
  // must be a Buffer argument at that position.
  std::vector<uint32_t> buffer_bindings;
};

// Compiles one compute shader for Vulkan 1.`vulkan_minor` (SPIR-V 1.3 for 1.1,
// 1.5 for 1.2, 1.6 for 1.3). `name` names it in messages. Throws BuildError
// whose log is glslang's info log (with the source's line numbers).
GlslShader compile_glsl_compute(const std::string& source, const std::string& name, int vulkan_minor);

}  // namespace gpuscope
