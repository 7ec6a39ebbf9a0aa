// What a device says about itself, as plain data (no API headers), so that
// analysis and reports can use it without a device.
#pragma once

#include "core/driver_facts.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope {

// One matrix multiply-accumulate a device's matrix engine runs, as its API
// lists it: D = A x B + C per subgroup, A m x k of type `a`, B k x n of type
// `b`, C of type `c` and D of type `result`, both m x n. Types are named
// "f16", "bf16", "f32", "f64", "i8", "u8", "i32", "u32", "f8e4m3", "f8e5m2".
struct MatrixShape {
  std::string a, b, c, result;
  uint32_t m = 0, n = 0, k = 0;
  bool saturating = false;  // integer accumulation saturates instead of wrapping

  bool operator==(const MatrixShape&) const = default;
};

// What a device can do, as its backend found out. Probes ask these, never
// API extension strings or vendor names.
struct DeviceFeatures {
  bool fp64 = false;                  // double-precision arithmetic in kernels
  bool fp16 = false;                  // half-precision arithmetic in kernels
  bool int64_atomics = false;         // 64-bit atomic add and compare-and-swap on global memory
  bool integer_dot_product = false;   // the API's own packed int8 dot product
  bool images = false;                // images read through the texture path in compute kernels
  bool host_mapping = false;          // device buffers mapped into the host's address space
  bool shared_virtual_memory = false; // one pointer valid on host and device (OpenCL SVM)
  std::vector<uint32_t> subgroup_sizes;  // wave widths the driver claims; empty: it claims none
  // Kernels can be built for one wave width of subgroup_sizes, named by the
  // kernel parameter `required_subgroup_size` (Vulkan's
  // VK_EXT_subgroup_size_control, compute stage).
  bool subgroup_size_control = false;
  // Vendor assembly kernels may embed ("nvidia-ptx"; "" for none) and the
  // version of its instruction set (NVIDIA: the compute capability, 9.0),
  // which decides what instructions exist.
  std::string inline_asm;
  double isa_version = 0;
  bool cycle_counter = false;      // kernels can read their core's cycle counter
  uint32_t instruction_bytes = 0;  // the machine code's fixed instruction size; 0: variable or unknown
  // The matrix multiply-accumulates kernels can run on the matrix engine
  // (Vulkan: VK_KHR_cooperative_matrix's list); empty: none.
  std::vector<MatrixShape> matrix_shapes;
  // Most loop iterations one kernel invocation may run, all its loops
  // together, before the device ends them (llvmpipe: 65535); 0: no limit.
  uint32_t max_loop_trips = 0;

  bool operator==(const DeviceFeatures&) const = default;
};

struct DeviceInfo {
  std::string id;  // "opencl:P:D" or "sim:NAME"
  std::string name;
  std::string vendor;
  std::string type;  // "gpu", "cpu", "accelerator", "sim", "other"
  std::string api;   // e.g. "OpenCL 3.0 CUDA 12.4"
  std::string driver_version;
  std::string platform;  // platform name (OpenCL) or backend name
  // What identifies the physical device across APIs, so that one GPU seen
  // through OpenCL and Vulkan is recognisable: the driver's device UUID as 32
  // lowercase hex digits in 8-4-4-4-12 groups, and the PCI address as
  // "dddd:bb:dd.f". Empty where the API does not say.
  std::string uuid;
  std::string pci_address;
  uint32_t compute_units = 0;
  uint32_t clock_mhz = 0;  // as reported; may be a max or a nominal clock
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  uint64_t local_mem_bytes = 0;
  bool local_mem_dedicated = false;  // CL_LOCAL vs CL_GLOBAL local memory type
  uint64_t global_cache_bytes = 0;   // what the driver claims; often not a real level
  uint32_t global_cache_line_bytes = 0;
  uint32_t address_bits = 64;
  uint64_t max_work_group_size = 0;
  bool profiling = true;
  std::vector<std::string> extensions;  // as the API lists them, for the record
  DeviceFeatures features;
  // Vendor-specific queries that answered (NVIDIA warp size, Arm core ids, ...).
  nlohmann::json vendor_info = nlohmann::json::object();
  // What the OS driver and vendor libraries said, at the run's start and end
  // (gpuscope run fills it; backends do not).
  std::vector<DriverSnapshot> driver;
};

}  // namespace gpuscope
