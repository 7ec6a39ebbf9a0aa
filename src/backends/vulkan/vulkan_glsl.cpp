#include "backends/vulkan/vulkan_glsl.hpp"

#include "core/error.hpp"

#include <glslang/Include/Types.h>
#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace gpuscope {

namespace {

// glslang's process state: initialised once, never finalised (shaders are
// compiled until exit, from whichever thread runs the probes).
void init_glslang() {
  static std::once_flag once;
  std::call_once(once, [] { glslang::InitializeProcess(); });
}

EShLanguage language(GlslStage stage) {
  switch (stage) {
    case GlslStage::kCompute: return EShLangCompute;
    case GlslStage::kVertex: return EShLangVertex;
    case GlslStage::kFragment: return EShLangFragment;
  }
  return EShLangCompute;
}

// Parses `source` into `shader` (made for its stage), links it alone into
// `program` and returns the SPIR-V for Vulkan 1.`vulkan_minor`; `program`
// then holds what reflection reads. Throws BuildError with glslang's log.
std::vector<uint32_t> to_spirv(const std::string& source, const std::string& name, int vulkan_minor,
                               glslang::TShader& shader, glslang::TProgram& program) {
  init_glslang();
  const EShLanguage lang = shader.getStage();
  const auto client = vulkan_minor >= 3   ? glslang::EShTargetVulkan_1_3
                      : vulkan_minor == 2 ? glslang::EShTargetVulkan_1_2
                                          : glslang::EShTargetVulkan_1_1;
  const auto spirv = vulkan_minor >= 3   ? glslang::EShTargetSpv_1_6
                     : vulkan_minor == 2 ? glslang::EShTargetSpv_1_5
                                         : glslang::EShTargetSpv_1_3;
  const char* text = source.c_str();
  const char* names[] = {name.c_str()};
  shader.setStringsWithLengthsAndNames(&text, nullptr, names, 1);
  shader.setEnvInput(glslang::EShSourceGlsl, lang, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, client);
  shader.setEnvTarget(glslang::EShTargetSpv, spirv);
  const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
  if (!shader.parse(GetDefaultResources(), 450, false, messages))
    throw BuildError(fmt::format("compiling {} (GLSL) failed", name),
                     std::string(shader.getInfoLog()) + shader.getInfoDebugLog());
  program.addShader(&shader);
  if (!program.link(messages))
    throw BuildError(fmt::format("linking {} (GLSL) failed", name),
                     std::string(program.getInfoLog()) + program.getInfoDebugLog());
  std::vector<uint32_t> words;
  spv::SpvBuildLogger logger;
  glslang::SpvOptions options;
  options.disableOptimizer = true;  // the driver optimises; glslang's optimizer needs SPIRV-Tools-opt at run time
  glslang::GlslangToSpv(*program.getIntermediate(lang), words, &logger, &options);
  if (words.empty()) throw BuildError(fmt::format("generating SPIR-V for {} failed", name), logger.getAllMessages());
  return words;
}

}  // namespace

std::vector<uint32_t> compile_glsl_stage(const std::string& source, const std::string& name, int vulkan_minor,
                                         GlslStage stage) {
  glslang::TShader shader(language(stage));
  glslang::TProgram program;
  return to_spirv(source, name, vulkan_minor, shader, program);
}

GlslShader compile_glsl_compute(const std::string& source, const std::string& name, int vulkan_minor) {
  glslang::TShader shader(EShLangCompute);
  glslang::TProgram program;
  GlslShader out;
  out.spirv = to_spirv(source, name, vulkan_minor, shader, program);
  if (program.buildReflection(EShReflectionSeparateBuffers)) {
    for (int i = 0; i < program.getNumBufferBlocks(); ++i) {
      const auto& block = program.getBufferBlock(i);
      if (block.getBinding() >= 0) out.buffer_bindings.push_back(static_cast<uint32_t>(block.getBinding()));
    }
    for (int i = 0; i < program.getNumUniformVariables(); ++i) {
      const glslang::TObjectReflection& u = program.getUniform(i);
      const glslang::TType* type = u.getType();
      if (!type || type->getBasicType() != glslang::EbtSampler || u.getBinding() < 0) continue;
      const glslang::TSampler& s = type->getSampler();
      const auto binding = static_cast<uint32_t>(u.getBinding());
      const bool plain = s.combined && !s.image && !s.arrayed && !s.ms && !s.shadow;  // texelFetch-able, one layer
      if (plain && s.dim == glslang::EsdBuffer)
        out.sampled_bindings.push_back({binding, SampledKind::kTexelBuffer});
      else if (plain && s.dim == glslang::Esd2D)
        out.sampled_bindings.push_back({binding, SampledKind::k2D});
      else
        throw BuildError(fmt::format("{}: uniform '{}' at binding {} is an image kind the Vulkan backend does not bind "
                                     "(it binds samplerBuffer and sampler2D)",
                                     name, u.name, binding),
                         "");
    }
  }
  std::sort(out.sampled_bindings.begin(), out.sampled_bindings.end(),
            [](const SampledBinding& a, const SampledBinding& b) { return a.binding < b.binding; });
  std::sort(out.buffer_bindings.begin(), out.buffer_bindings.end());
  out.buffer_bindings.erase(std::unique(out.buffer_bindings.begin(), out.buffer_bindings.end()),
                            out.buffer_bindings.end());
  return out;
}

}  // namespace gpuscope
