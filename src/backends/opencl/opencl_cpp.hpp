// Khronos' C++ wrapper (CL/opencl.hpp) calling through the run-time loaded
// entry points of opencl_entry_points.hpp instead of link-time symbols.
// Include this, never <CL/opencl.hpp>, in the OpenCL backend.
//
// The wrapper calls the C API by its global names, and also takes their
// addresses (getInfo(&::clGetDeviceInfo, ...)). Each name below is therefore
// redirected to a function of the same signature (a trampoline) that calls
// through the loaded pointer. An entry point the wrapper or the backend calls
// that is missing here is a link error (no OpenCL library is linked), and one
// redirected but not declared a compile error, so the lists cannot drift
// apart unnoticed.
#pragma once

#include "backends/opencl/opencl_entry_points.hpp"

namespace gpuscope::opencl_detail {

template <class Function>
struct Trampoline;
template <class R, class... Args>
struct Trampoline<R(CL_API_CALL*)(Args...)> {
  template <R(CL_API_CALL** Pointer)(Args...)>
  static R CL_API_CALL call(Args... args) {
    return (*Pointer)(args...);
  }
};

}  // namespace gpuscope::opencl_detail

#define GPUSCOPE_OPENCL_TRAMPOLINE(name)        \
  inline constexpr auto& gpuscope_call_##name = \
      gpuscope::opencl_detail::Trampoline<decltype(&::name)>::call<&gpuscope_opencl_##name>;
GPUSCOPE_OPENCL_REQUIRED(GPUSCOPE_OPENCL_TRAMPOLINE)
GPUSCOPE_OPENCL_OPTIONAL(GPUSCOPE_OPENCL_TRAMPOLINE)
#undef GPUSCOPE_OPENCL_TRAMPOLINE

#define clBuildProgram gpuscope_call_clBuildProgram
#define clCreateBuffer gpuscope_call_clCreateBuffer
#define clCreateCommandQueue gpuscope_call_clCreateCommandQueue
#define clCreateContext gpuscope_call_clCreateContext
#define clCreateImage gpuscope_call_clCreateImage
#define clCreateKernel gpuscope_call_clCreateKernel
#define clCreateProgramWithSource gpuscope_call_clCreateProgramWithSource
#define clEnqueueFillBuffer gpuscope_call_clEnqueueFillBuffer
#define clEnqueueMapBuffer gpuscope_call_clEnqueueMapBuffer
#define clEnqueueNDRangeKernel gpuscope_call_clEnqueueNDRangeKernel
#define clEnqueueReadBuffer gpuscope_call_clEnqueueReadBuffer
#define clEnqueueUnmapMemObject gpuscope_call_clEnqueueUnmapMemObject
#define clEnqueueWriteBuffer gpuscope_call_clEnqueueWriteBuffer
#define clEnqueueWriteImage gpuscope_call_clEnqueueWriteImage
#define clFinish gpuscope_call_clFinish
#define clFlush gpuscope_call_clFlush
#define clGetDeviceIDs gpuscope_call_clGetDeviceIDs
#define clGetDeviceInfo gpuscope_call_clGetDeviceInfo
#define clGetEventInfo gpuscope_call_clGetEventInfo
#define clGetEventProfilingInfo gpuscope_call_clGetEventProfilingInfo
#define clGetKernelWorkGroupInfo gpuscope_call_clGetKernelWorkGroupInfo
#define clGetPlatformIDs gpuscope_call_clGetPlatformIDs
#define clGetPlatformInfo gpuscope_call_clGetPlatformInfo
#define clGetProgramBuildInfo gpuscope_call_clGetProgramBuildInfo
#define clGetProgramInfo gpuscope_call_clGetProgramInfo
#define clGetSupportedImageFormats gpuscope_call_clGetSupportedImageFormats
#define clReleaseCommandQueue gpuscope_call_clReleaseCommandQueue
#define clReleaseContext gpuscope_call_clReleaseContext
#define clReleaseDevice gpuscope_call_clReleaseDevice
#define clReleaseEvent gpuscope_call_clReleaseEvent
#define clReleaseKernel gpuscope_call_clReleaseKernel
#define clReleaseMemObject gpuscope_call_clReleaseMemObject
#define clReleaseProgram gpuscope_call_clReleaseProgram
#define clRetainCommandQueue gpuscope_call_clRetainCommandQueue
#define clRetainDevice gpuscope_call_clRetainDevice
#define clRetainKernel gpuscope_call_clRetainKernel
#define clRetainMemObject gpuscope_call_clRetainMemObject
#define clRetainProgram gpuscope_call_clRetainProgram
#define clSetKernelArg gpuscope_call_clSetKernelArg
#define clEnqueueSVMMap gpuscope_call_clEnqueueSVMMap
#define clEnqueueSVMUnmap gpuscope_call_clEnqueueSVMUnmap
#define clSVMAlloc gpuscope_call_clSVMAlloc
#define clSVMFree gpuscope_call_clSVMFree

#include <CL/opencl.hpp>
