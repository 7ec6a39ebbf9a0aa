#include "backends/vulkan/vulkan_device.hpp"

#include "backends/kernel_defines.hpp"
#include "core/error.hpp"
#include "kernels/kernel_sources.hpp"
#include "kernels/vulkan/matrix_spirv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>
#include <thread>

// Vulkan structs are initialised by their sType alone ({VK_STRUCTURE_TYPE_...}),
// the rest zero: the API's own idiom, which this warning would flag on every one.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpuscope::vulkan {
namespace {

std::string_view glsl_type_name(Scalar s) {
  switch (s) {
    case Scalar::i8: return "int8_t";
    case Scalar::i16: return "int16_t";
    case Scalar::i32: return "int";
    case Scalar::i64: return "int64_t";
    case Scalar::u32: return "uint";
    case Scalar::u64: return "uint64_t";
    case Scalar::f16: return "float16_t";
    case Scalar::f32: return "float";
    case Scalar::f64: return "double";
  }
  return "?";
}

// Adds the host time from its construction to its destruction to `sum_s`,
// in seconds, however the scope is left.
class AddElapsed {
 public:
  explicit AddElapsed(double& sum_s) : sum_s_(sum_s) {}
  ~AddElapsed() { sum_s_ += ns_since(t0_) * 1e-9; }
  AddElapsed(const AddElapsed&) = delete;
  AddElapsed& operator=(const AddElapsed&) = delete;

 private:
  double& sum_s_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

}  // namespace

std::string VkDev::preamble() const {
  std::string s = "#version 450\n";
  s += "#extension GL_EXT_shader_explicit_arithmetic_types : enable\n";
  s += "#extension GL_EXT_control_flow_attributes : enable\n";
  s += "#extension GL_KHR_shader_subgroup_basic : enable\n";
  const bool bda = p_->bda();
  const bool sclock = p_->clock_ext() && p_->clock.shaderSubgroupClock;
  const bool dclock = p_->clock_ext() && p_->clock.shaderDeviceClock;
  if (bda) s += "#extension GL_EXT_buffer_reference : enable\n#extension GL_EXT_buffer_reference2 : enable\n";
  if (sclock) s += "#extension GL_ARB_shader_clock : enable\n";
  if (dclock) s += "#extension GL_EXT_shader_realtime_clock : enable\n";
  auto def = [&s](const char* name, bool v) { s += fmt::format("#define {} {}\n", name, v ? 1 : 0); };
  def("HAS_BUFFER_ADDRESS", bda);
  def("HAS_INT64", p_->f.features.shaderInt64);
  def("HAS_FLOAT64", p_->f.features.shaderFloat64);
  def("HAS_FLOAT16", p_->f12.shaderFloat16 && p_->f11.storageBuffer16BitAccess);
  def("HAS_INT8", p_->f12.shaderInt8 && p_->f12.storageBuffer8BitAccess);
  def("HAS_INT16", p_->f.features.shaderInt16 && p_->f11.storageBuffer16BitAccess);
  def("HAS_SUBGROUP_CLOCK", sclock);
  def("HAS_DEVICE_CLOCK", dclock);
  return s;
}

Kernel& VkDev::kernel(const KernelSpec& spec) {
  const std::string key = spec.key();
  {
    const std::lock_guard lock(kernels_mutex_);
    if (auto it = kernels_.find(key); it != kernels_.end()) return *it->second;
  }
  const AddElapsed timed(build_s_);
  auto k = make_kernel(spec, key);
  // A build ahead may have finished the same kernel meanwhile: the first in stays.
  const std::lock_guard lock(kernels_mutex_);
  return *kernels_.emplace(key, std::move(k)).first->second;
}

void VkDev::prebuild(std::span<const KernelSpec> specs, const LaunchShape& shape) {
  build_many(specs, shape, build_s_, 8);
}

void VkDev::build_ahead(std::span<const KernelSpec> specs, const LaunchShape& shape) {
  // Half the host's threads: the probe running meanwhile keeps the rest.
  build_many(specs, shape, ahead_s_, std::max(1u, std::thread::hardware_concurrency() / 2));
}

void VkDev::build_many(std::span<const KernelSpec> specs, const LaunchShape& shape, double& seconds,
                       size_t max_threads) {
  std::vector<std::pair<const KernelSpec*, std::string>> todo;
  {
    const std::lock_guard lock(kernels_mutex_);
    for (const KernelSpec& s : specs) {
      std::string key = s.key();
      if (kernels_.count(key) ||
          std::any_of(todo.begin(), todo.end(), [&](const auto& t) { return t.second == key; }))
        continue;
      todo.emplace_back(&s, std::move(key));
    }
  }
  if (todo.empty()) return;
  const AddElapsed timed(seconds);
  // Each worker builds whole kernels and their pipeline: glslang compiles
  // distinct shaders concurrently, and Vulkan's create calls need no
  // external synchronisation without a pipeline cache.
  std::vector<std::unique_ptr<VkKern>> built(todo.size());
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i; (i = next++) < todo.size();) {
      try {
        built[i] = make_kernel(*todo[i].first, todo[i].second);
        if (shape.local.total() == 0) continue;
        const auto cfg = config_of(*built[i], shape);
        built[i]->pipelines.emplace(cfg, create_pipeline(*built[i], cfg));
      } catch (const std::exception&) {
        // kernel() or the launch meets the failure again and reports it.
      }
    }
  };
  const size_t threads =
      std::min<size_t>({todo.size(), std::max(1u, std::thread::hardware_concurrency()), max_threads});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  const std::lock_guard lock(kernels_mutex_);
  for (size_t i = 0; i < todo.size(); ++i)
    if (built[i]) kernels_.emplace(todo[i].second, std::move(built[i]));
}

std::unique_ptr<VkKern> VkDev::make_kernel(const KernelSpec& spec, const std::string& key) const {
  if (spec.family == "matrix") return build(spec, key, matrix_shader(spec));
  const std::string path = "vulkan/" + spec.family + ".comp";
  const KernelSource* src = find_kernel_source(path);
  if (!src) throw Unsupported("the Vulkan backend has no shader for kernel family '" + spec.family + "'");
  std::string text = preamble();
  text += "#define ENTRY_" + macro_name(spec.entry) + " 1\n";
  for (const auto& [name, value] : kernel_defines(spec, glsl_type_name))
    text += "#define " + name + " " + value + "\n";
  text += "#line 1\n";
  text += src->text;
  const int minor = static_cast<int>(VK_API_VERSION_MINOR(p_->api));
  return build(spec, key, compile_glsl_compute(text, key, minor));
}

GlslShader VkDev::matrix_shader(const KernelSpec& spec) const {
  if (spec.entry != "chain") throw Unsupported("the matrix family has no entry '" + spec.entry + "'");
  if (!p_->coop_khr() && !p_->coop_nv_only())
    throw Unsupported("the device has no cooperative matrices (VK_KHR_cooperative_matrix, VK_NV_cooperative_matrix)");
  std::string why;
  const auto word = [&](const char* name) { return spec.word(name).value_or(""); };
  const auto shape = matrix_chain_shape(word("a"), word("b"), word("c"), word("result"),
                                        static_cast<uint32_t>(spec.integer("m", 0)),
                                        static_cast<uint32_t>(spec.integer("n", 0)),
                                        static_cast<uint32_t>(spec.integer("k", 0)), &why);
  if (!shape) throw Unsupported("matrix: " + why);
  GlslShader g;
  g.spirv = vulkan::matrix_chain_spirv(*shape, static_cast<uint32_t>(spec.integer("chains", 1)),
                                       p_->coop_khr() ? vulkan::CoopMatrixFlavour::khr : vulkan::CoopMatrixFlavour::nv,
                                       spec.flag("saturating"));
  g.buffer_bindings = {0, 1, 2, 3, 4};
  return g;
}

std::unique_ptr<VkKern> VkDev::build(const KernelSpec& spec, const std::string& key, GlslShader shader) const {
  for (uint32_t b : shader.buffer_bindings)
    if (b >= kMaxBindings) throw BuildError(fmt::format("{}: binding {} over {}", key, b, kMaxBindings - 1), "");
  for (const SampledBinding& s : shader.sampled_bindings)
    if (s.binding >= kMaxBindings)
      throw BuildError(fmt::format("{}: binding {} over {}", key, s.binding, kMaxBindings - 1), "");

  // required_subgroup_size: the pipeline is created for that wave width
  // (VkPipelineShaderStageRequiredSubgroupSizeCreateInfo), one the device
  // lists; its work-groups hold at most maxComputeWorkgroupSubgroups waves.
  const int64_t required = spec.integer("required_subgroup_size", 0);
  size_t max_wg = info_.max_work_group_size;
  if (required != 0) {
    const auto& sizes = info_.features.subgroup_sizes;
    if (!info_.features.subgroup_size_control ||
        std::find(sizes.begin(), sizes.end(), static_cast<uint32_t>(required)) == sizes.end())
      throw Unsupported(fmt::format("{}: the device cannot run compute shaders at subgroup size {}", key, required));
    max_wg = std::min<size_t>(max_wg, size_t{p_->p13.maxComputeWorkgroupSubgroups} * static_cast<size_t>(required));
  }
  auto k = std::make_unique<VkKern>(spec.entry, std::move(shader), max_wg);
  k->required_subgroup_size = static_cast<uint32_t>(required);
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = k->shader.spirv.size() * sizeof(uint32_t);
  mi.pCode = k->shader.spirv.data();
  check(vkCreateShaderModule(dev_, &mi, nullptr, &k->module), "vkCreateShaderModule");
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (uint32_t b : k->shader.buffer_bindings)
    bindings.push_back({b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  for (const SampledBinding& s : k->shader.sampled_bindings)
    bindings.push_back({s.binding, descriptor_type(s.kind), 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = static_cast<uint32_t>(bindings.size());
  li.pBindings = bindings.data();
  check(vkCreateDescriptorSetLayout(dev_, &li, nullptr, &k->set_layout), "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &k->set_layout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  check(vkCreatePipelineLayout(dev_, &pli, nullptr, &k->layout), "vkCreatePipelineLayout");
  return k;
}

VkPipeline VkDev::pipeline(VkKern& k, std::array<uint32_t, 4> cfg) {
  if (auto it = k.pipelines.find(cfg); it != k.pipelines.end()) return it->second;
  const AddElapsed timed(build_s_);
  VkPipeline pipe = create_pipeline(k, cfg);
  k.pipelines.emplace(cfg, pipe);
  return pipe;
}

VkPipeline VkDev::create_pipeline(const VkKern& k, std::array<uint32_t, 4> cfg) const {
  const VkSpecializationMapEntry entries[4] = {
      {0, 0, 4}, {1, 4, 4}, {2, 8, 4}, {3, 12, 4}};
  VkSpecializationInfo spec{4, entries, sizeof(cfg), cfg.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT;  // launches of many groups are split (dispatch())
  if (p_->exe_ext() && p_->exe.pipelineExecutableInfo) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = k.module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = &spec;
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rs{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  if (k.required_subgroup_size != 0) {
    rs.requiredSubgroupSize = k.required_subgroup_size;
    ci.stage.pNext = &rs;
  }
  ci.layout = k.layout;
  VkPipeline pipe = VK_NULL_HANDLE;
  const VkResult r = vkCreateComputePipelines(dev_, VK_NULL_HANDLE, 1, &ci, nullptr, &pipe);
  if (r != VK_SUCCESS)
    fail(r, fmt::format("creating the pipeline of {} for groups of {}x{}x{} with {} local words", k.name(), cfg[0],
                        cfg[1], cfg[2], cfg[3]));
  return pipe;
}

KernelResources VkDev::kernel_resources(Kernel& kernel) {
  auto& k = static_cast<VkKern&>(kernel);
  KernelResources r;
  r.max_work_group_size = k.max_work_group_size();
  r.preferred_work_group_multiple = p_->p11.subgroupSize;
  r.code_bytes = k.shader.spirv.size() * sizeof(uint32_t);
  r.code_format = "spirv";
  if (!(p_->exe_ext() && p_->exe.pipelineExecutableInfo)) return r;
  std::array<uint32_t, 4> cfg = k.last_config;
  if (cfg[0] == 0) cfg = {std::min<uint32_t>(64, static_cast<uint32_t>(k.max_work_group_size())), 1, 1, 1};
  VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pi.pipeline = pipeline(k, cfg);
  uint32_t n = 0;
  if (vkGetPipelineExecutablePropertiesKHR(dev_, &pi, &n, nullptr) != VK_SUCCESS || n == 0) return r;
  VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
  ei.pipeline = pi.pipeline;
  ei.executableIndex = 0;
  uint32_t m = 0;
  if (vkGetPipelineExecutableStatisticsKHR(dev_, &ei, &m, nullptr) != VK_SUCCESS) return r;
  std::vector<VkPipelineExecutableStatisticKHR> stats(m, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
  if (vkGetPipelineExecutableStatisticsKHR(dev_, &ei, &m, stats.data()) != VK_SUCCESS) return r;
  // NVIDIA names it "Register Count", RADV "VGPRs", ANV "GRF registers":
  // the per-lane register file use, where the driver gives one.
  for (const auto& s : stats) {
    std::string name = s.name;
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool regs = lower == "vgprs" || lower.find("register") != std::string::npos;
    if (!regs || r.registers) continue;
    uint64_t v = 0;
    if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR) v = s.value.u64;
    else if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR) v = static_cast<uint64_t>(s.value.i64);
    else continue;
    r.registers = static_cast<uint32_t>(v);
    r.registers_source = "VK_KHR_pipeline_executable_properties statistic '" + name + "'";
  }
  return r;
}

}  // namespace gpuscope::vulkan
