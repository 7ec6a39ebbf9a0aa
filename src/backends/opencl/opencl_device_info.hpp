// What an OpenCL device says about itself, as a DeviceInfo: the standard
// queries, the vendor queries that answer (NVIDIA, AMD, Arm, Qualcomm,
// Intel), the physical identity (uuid, PCI address) and the features kernels
// may use.
#pragma once

#include "backends/opencl/opencl_cpp.hpp"
#include "core/device_info.hpp"

#include <cstddef>
#include <string>

namespace gpuscope::opencl_detail {

// clGetDeviceInfo for a fixed-size value; false (and `out` untouched) when
// the device does not answer `param`.
template <class T>
bool query(const cl::Device& d, cl_device_info param, T& out) {
  return clGetDeviceInfo(d(), param, sizeof(T), &out, nullptr) == CL_SUCCESS;
}

// Whether `info.extensions` (sorted, as describe_device leaves them) lists `ext`.
bool has_ext(const DeviceInfo& info, const std::string& ext);

// Device `device_index` of platform `platform_index` (the ICD loader's
// order), with the ID "opencl:P:D". Driver strings are made printable.
// Throws cl::Error when a standard query fails.
DeviceInfo describe_device(const cl::Platform& p, const cl::Device& d, size_t platform_index,
                           size_t device_index);

}  // namespace gpuscope::opencl_detail
