#include "backends/opencl/opencl_device.hpp"

#include "backends/opencl/opencl_build_report.hpp"
#include "backends/opencl/opencl_device_info.hpp"
#include "backends/opencl/opencl_kernel_source.hpp"
#include "core/error.hpp"
#include "kernels/kernel_sources.hpp"

#include <chrono>

namespace gpuscope::opencl_detail {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ClDevice::ProgramKey ClDevice::program_key(const KernelSpec& spec) const {
  // One build per (family, parameters): a family's file that holds many
  // entry points (one per op, say) is compiled once, not once per entry.
  ProgramKey k{opencl_source_path(spec), opencl_build_options(spec)};
  // NVIDIA's compiler then reports each kernel's registers in the build
  // log (kernel_resources reads them).
  if (has_ext(info_, "cl_nv_compiler_options")) k.options += " -cl-nv-verbose";
  return k;
}

cl::Program ClDevice::build_program(const KernelSpec& spec, const ProgramKey& pk) const {
  const KernelSource* src = find_kernel_source(pk.path);
  if (!src) throw Unsupported("the OpenCL backend has no source for kernel family '" + spec.family + "'");
  cl::Program built(context_, std::string(src->text));
  try {
    built.build(device_, pk.options.c_str());
  } catch (const cl::Error& e) {
    std::string log;
    try {
      log = built.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
    } catch (const cl::Error&) {
      log = "(the driver gave no build log)";
    }
    throw BuildError(fmt::format("building {} with '{}' failed (OpenCL error {})", pk.path, pk.options, e.err()),
                     log);
  }
  return built;
}

Kernel& ClDevice::kernel(const KernelSpec& spec) {
  const std::string key = spec.key();
  if (auto it = cache_.find(key); it != cache_.end()) return *it->second;

  const ProgramKey pk = program_key(spec);
  auto pit = programs_.find(pk.key());
  if (pit == programs_.end()) {
    const auto t0 = std::chrono::steady_clock::now();
    cl::Program built;
    try {
      built = build_program(spec, pk);
    } catch (...) {
      build_s_ += seconds_since(t0);  // a failed build took its time too
      throw;
    }
    build_s_ += seconds_since(t0);
    pit = programs_.emplace(pk.key(), built).first;
  }
  const std::string& path = pk.path;
  const std::string& options = pk.options;
  cl::Program program = pit->second;
  try {
    cl::Kernel k(program, spec.entry.c_str());
    const size_t max_wg = k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device_);
    auto owned = std::make_unique<ClKernel>(program, k, spec.entry, max_wg, path, options);
    auto& ref = *owned;
    cache_.emplace(key, std::move(owned));
    return ref;
  } catch (const cl::Error& e) {
    rethrow(e, fmt::format("creating kernel {} from {}", spec.entry, path));
  }
}

KernelResources ClDevice::kernel_resources(Kernel& k) {
  auto& ck = static_cast<ClKernel&>(k);
  KernelResources r;
  try {
    r.max_work_group_size = ck.kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device_);
    r.preferred_work_group_multiple =
        ck.kernel.getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(device_);
    r.private_mem_bytes = ck.kernel.getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(device_);
    r.local_mem_bytes = ck.kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(device_);
  } catch (const cl::Error& e) {
    rethrow(e, "querying the resources of " + k.name());
  }
  if (has_ext(info_, "cl_nv_compiler_options")) {
    if (!ck.registers) {
      ck.registers = ptxas_registers(build_log(ck.program), ck.name());
      if (!*ck.registers) ck.registers = ptxas_registers(build_log(uncached_build(ck)), ck.name());
    }
    r.registers = *ck.registers;
    if (r.registers) r.registers_source = "ptxas' report in the build log (-cl-nv-verbose)";
  }
  if (auto bin = program_binary(ck.program)) {
    r.code_bytes = bin->size();
    r.code_format = program_binary_format(*bin);
  }
  return r;
}

std::string ClDevice::build_log(const cl::Program& program) const {
  try {
    return program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
  } catch (const cl::Error&) {
    return "";
  }
}

// The program binary the driver holds (CL_PROGRAM_BINARIES; one device per
// program here, so one binary); nullopt when the driver gives none.
std::optional<std::vector<std::byte>> ClDevice::program_binary(const cl::Program& program) const {
  try {
    const auto sizes = program.getInfo<CL_PROGRAM_BINARY_SIZES>();
    if (sizes.empty() || sizes[0] == 0) return std::nullopt;
    std::vector<std::byte> bytes(sizes[0]);
    auto* ptr = reinterpret_cast<unsigned char*>(bytes.data());
    if (clGetProgramInfo(program(), CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS)
      return std::nullopt;
    return bytes;
  } catch (const cl::Error&) {
    return std::nullopt;
  }
}

// A fresh build of `k`'s program that no compiled-code cache can serve:
// NVIDIA's driver keeps what ptxas made across processes, keyed by the
// PTX, and a build served from there logs no register count. An empty
// kernel with a name unique to this build changes the PTX and nothing
// else. Used for its log only; `k` keeps its own program.
cl::Program ClDevice::uncached_build(const ClKernel& k) {
  static const uint64_t process_nonce =
      static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  const KernelSource* src = find_kernel_source(k.source_path);
  if (!src) return k.program;
  const std::string text = fmt::format("__kernel void gpuscope_uncached_{}_{}(void) {{}}\n", process_nonce,
                                       ++uncached_builds_) +
                           std::string(src->text);
  cl::Program program(context_, text);
  try {
    program.build(device_, k.options.c_str());
  } catch (const cl::Error&) {
    return k.program;  // the original built; a failure here only loses the count
  }
  return program;
}

}  // namespace gpuscope::opencl_detail
