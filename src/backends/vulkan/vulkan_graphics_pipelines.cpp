// The graphics facet's shaders and pipelines: modules compiled per
// (file, defines), a program (set layout, pipeline layout, set) per shading
// and per frame.comp entry, pipelines per (pass, shading, blend, filter,
// may_discard).
#include "backends/vulkan/vulkan_graphics.hpp"

#include "backends/vulkan/vulkan_device.hpp"
#include "core/error.hpp"
#include "kernels/kernel_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope::vulkan {

// --- shaders, layouts, pipelines --------------------------------------------------

VkShaderModule VkGraphics::module(const std::string& file, const std::string& defines, int stage) {
  const std::string key = file + "\n" + defines;
  if (auto it = modules_.find(key); it != modules_.end()) return it->second;
  const std::string path = "vulkan/graphics/" + file;
  const KernelSource* src = find_kernel_source(path);
  if (!src) throw DeviceError("the Vulkan backend has no shader " + path);
  const std::string text = "#version 450\n" + defines + "#line 1\n" + std::string(src->text);
  const auto words = compile_glsl_stage(text, path, static_cast<int>(VK_API_VERSION_MINOR(d_.p_->api)),
                                        static_cast<GlslStage>(stage));
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = words.size() * sizeof(uint32_t);
  mi.pCode = words.data();
  VkShaderModule m = VK_NULL_HANDLE;
  check(vkCreateShaderModule(dev_, &mi, nullptr, &m), "vkCreateShaderModule (graphics)");
  modules_.emplace(key, m);
  return m;
}

namespace {

// A set layout of `bindings` (type each, at binding 0, 1, ...) for `stages`,
// a pipeline layout of it and a 128-byte push-constant range, and the set.
Program make_program(VkDevice dev, VkDescriptorPool pool, const std::vector<VkDescriptorType>& bindings,
                     VkShaderStageFlags stages) {
  Program p;
  std::vector<VkDescriptorSetLayoutBinding> b;
  for (uint32_t i = 0; i < bindings.size(); ++i) b.push_back({i, bindings[i], 1, stages, nullptr});
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = static_cast<uint32_t>(b.size());
  li.pBindings = b.data();
  check(vkCreateDescriptorSetLayout(dev, &li, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout (graphics)");
  const VkPushConstantRange range{stages, 0, kPushBytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p.set_layout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  check(vkCreatePipelineLayout(dev, &pli, nullptr, &p.layout), "vkCreatePipelineLayout (graphics)");
  if (!bindings.empty()) {
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &p.set_layout;
    check(vkAllocateDescriptorSets(dev, &ai, &p.set), "vkAllocateDescriptorSets (graphics)");
  }
  return p;
}

}  // namespace

Program& VkGraphics::program(FragKind kind) {
  if (auto it = programs_.find(kind); it != programs_.end()) return it->second;
  std::vector<VkDescriptorType> b;
  if (kind == FragKind::kTrace) b = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
  if (kind == FragKind::kTextured) b = {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER};
  return programs_.emplace(kind, make_program(dev_, pool_, b, kGraphicsStages)).first->second;
}

Program& VkGraphics::compute_program(bool store) {
  Program& p = compute_programs_[store ? 1 : 0];
  if (p.layout) return p;
  const std::vector<VkDescriptorType> b =
      store ? std::vector{VK_DESCRIPTOR_TYPE_STORAGE_IMAGE}
            : std::vector{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
  p = make_program(dev_, pool_, b, VK_SHADER_STAGE_COMPUTE_BIT);
  return p;
}

namespace {

// A graphics pipeline of full-screen rectangles: no vertex input, viewport
// and scissor dynamic, depth test ALWAYS with writes where the pass has
// depth, additive blending (ONE, ONE) on every colour attachment with `blend`.
VkPipeline make_pipeline(VkDevice dev, VkShaderModule vert, VkShaderModule frag, VkPipelineLayout layout,
                         VkRenderPass rp, size_t colours, bool depth, uint32_t samples, bool blend) {
  VkPipelineShaderStageCreateInfo stages[2] = {{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
                                               {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = vert;
  stages[0].pName = "main";
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = frag;
  stages[1].pName = "main";
  VkPipelineVertexInputStateCreateInfo vi{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  VkPipelineInputAssemblyStateCreateInfo ia{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  ia.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo vp{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  vp.viewportCount = 1;
  vp.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo rs{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  rs.polygonMode = VK_POLYGON_MODE_FILL;
  rs.cullMode = VK_CULL_MODE_NONE;
  rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  rs.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo ms{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  ms.rasterizationSamples = static_cast<VkSampleCountFlagBits>(samples);
  VkPipelineDepthStencilStateCreateInfo ds{VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};
  ds.depthTestEnable = depth;  // writes happen only with the test on; ALWAYS passes every fragment
  ds.depthWriteEnable = depth;
  ds.depthCompareOp = VK_COMPARE_OP_ALWAYS;
  ds.maxDepthBounds = 1.0f;
  std::vector<VkPipelineColorBlendAttachmentState> att(colours);
  for (auto& a : att) {
    a.blendEnable = blend;
    a.srcColorBlendFactor = VK_BLEND_FACTOR_ONE;
    a.dstColorBlendFactor = VK_BLEND_FACTOR_ONE;
    a.colorBlendOp = VK_BLEND_OP_ADD;
    a.srcAlphaBlendFactor = VK_BLEND_FACTOR_ONE;
    a.dstAlphaBlendFactor = VK_BLEND_FACTOR_ONE;
    a.alphaBlendOp = VK_BLEND_OP_ADD;
    a.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT |
                       VK_COLOR_COMPONENT_A_BIT;
  }
  VkPipelineColorBlendStateCreateInfo cb{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  cb.attachmentCount = static_cast<uint32_t>(att.size());
  cb.pAttachments = att.data();
  const VkDynamicState dyn[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dy{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dy.dynamicStateCount = 2;
  dy.pDynamicStates = dyn;
  VkGraphicsPipelineCreateInfo ci{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
  ci.stageCount = 2;
  ci.pStages = stages;
  ci.pVertexInputState = &vi;
  ci.pInputAssemblyState = &ia;
  ci.pViewportState = &vp;
  ci.pRasterizationState = &rs;
  ci.pMultisampleState = &ms;
  ci.pDepthStencilState = &ds;
  ci.pColorBlendState = &cb;
  ci.pDynamicState = &dy;
  ci.layout = layout;
  ci.renderPass = rp;
  VkPipeline pipe = VK_NULL_HANDLE;
  check(vkCreateGraphicsPipelines(dev, VK_NULL_HANDLE, 1, &ci, nullptr, &pipe), "vkCreateGraphicsPipelines");
  return pipe;
}

const char* shading_define(FragKind kind) {
  switch (kind) {
    case FragKind::kFlat: return "SHADING_FLAT";
    case FragKind::kTrace: return "SHADING_TRACE";
    case FragKind::kTextured: return "SHADING_TEXTURED";
    case FragKind::kFrame: return "SHADING_FRAME";
  }
  return "SHADING_FLAT";
}

}  // namespace

VkPipeline VkGraphics::pipeline(const PassKey& key, FragKind kind, bool blend, int tex_mode, bool may_discard) {
  const auto cache_key = std::make_tuple(key, kind, blend, tex_mode, may_discard);
  if (auto it = pipelines_.find(cache_key); it != pipelines_.end()) return it->second;
  const VkShaderModule vert = module("rect.vert", "", static_cast<int>(GlslStage::kVertex));
  const VkShaderModule frag =
      module("rect.frag",
             fmt::format("#define N_COLOUR {}\n#define {} 1\n#define TEX_MODE {}\n{}", key.colour.size(),
                         shading_define(kind), tex_mode, may_discard ? "#define MAY_DISCARD 1\n" : ""),
             static_cast<int>(GlslStage::kFragment));
  const VkPipeline p = make_pipeline(dev_, vert, frag, program(kind).layout, render_pass(key), key.colour.size(),
                                     key.depth, key.samples, blend);
  pipelines_.emplace(cache_key, p);
  return p;
}

VkPipeline VkGraphics::frame_pipeline() {
  if (frame_pipeline_) return frame_pipeline_;
  const VkShaderModule vert = module("rect.vert", "", static_cast<int>(GlslStage::kVertex));
  const VkShaderModule frag =
      module("rect.frag", "#define N_COLOUR 1\n#define SHADING_FRAME 1\n", static_cast<int>(GlslStage::kFragment));
  frame_pipeline_ = make_pipeline(dev_, vert, frag, program(FragKind::kFrame).layout, frame_pass(), 1, false, 1, false);
  return frame_pipeline_;
}

VkPipeline VkGraphics::compute_pipeline(bool store) {
  VkPipeline& p = compute_pipelines_[store ? 1 : 0];
  if (p) return p;
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module("frame.comp", store ? "#define ENTRY_STORE 1\n" : "#define ENTRY_READ 1\n",
                           static_cast<int>(GlslStage::kCompute));
  ci.stage.pName = "main";
  ci.layout = compute_program(store).layout;
  check(vkCreateComputePipelines(dev_, VK_NULL_HANDLE, 1, &ci, nullptr, &p), "vkCreateComputePipelines (frame)");
  return p;
}

}  // namespace gpuscope::vulkan
