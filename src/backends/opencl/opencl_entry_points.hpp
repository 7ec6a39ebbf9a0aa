// The OpenCL entry points gpuscope calls, as function pointers filled from a
// library opened at run time (opencl_library.hpp), so that the binary starts
// on a machine with no OpenCL at all and can use a vendor's library from
// wherever the vendor put it.
//
// Contract: the pointers are null until opencl_library().load() succeeds;
// every required one is then set, an optional one may stay null (an OpenCL
// 1.2 library has no SVM entry points) and callers check it first.
#pragma once

// cl.h declares the OpenCL 2.0 SVM entry points only when told to target
// 2.0; the C++ wrapper still targets 1.2 (CMake), and SVM is used only where
// the device reports it and the library exports it.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 200
#endif
// clCreateCommandQueue (1.0-1.2) serves every device; its 2.0 successor does not.
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>

// OpenCL 1.0-1.2: a library without any of these is not a usable OpenCL.
#define GPUSCOPE_OPENCL_REQUIRED(X) \
  X(clBuildProgram)                 \
  X(clCreateBuffer)                 \
  X(clCreateCommandQueue)           \
  X(clCreateContext)                \
  X(clCreateImage)                  \
  X(clCreateKernel)                 \
  X(clCreateProgramWithSource)      \
  X(clEnqueueFillBuffer)            \
  X(clEnqueueMapBuffer)             \
  X(clEnqueueNDRangeKernel)         \
  X(clEnqueueReadBuffer)            \
  X(clEnqueueUnmapMemObject)        \
  X(clEnqueueWriteBuffer)           \
  X(clEnqueueWriteImage)            \
  X(clFinish)                       \
  X(clFlush)                        \
  X(clGetDeviceIDs)                 \
  X(clGetDeviceInfo)                \
  X(clGetEventInfo)                 \
  X(clGetEventProfilingInfo)        \
  X(clGetKernelWorkGroupInfo)       \
  X(clGetPlatformIDs)               \
  X(clGetPlatformInfo)              \
  X(clGetProgramBuildInfo)          \
  X(clGetProgramInfo)               \
  X(clGetSupportedImageFormats)     \
  X(clReleaseCommandQueue)          \
  X(clReleaseContext)               \
  X(clReleaseDevice)                \
  X(clReleaseEvent)                 \
  X(clReleaseKernel)                \
  X(clReleaseMemObject)             \
  X(clReleaseProgram)               \
  X(clRetainCommandQueue)           \
  X(clRetainDevice)                 \
  X(clRetainKernel)                 \
  X(clRetainMemObject)              \
  X(clRetainProgram)                \
  X(clSetKernelArg)

// OpenCL 2.0 shared virtual memory: absent from 1.2 libraries.
#define GPUSCOPE_OPENCL_OPTIONAL(X) \
  X(clEnqueueSVMMap)                \
  X(clEnqueueSVMUnmap)              \
  X(clSVMAlloc)                     \
  X(clSVMFree)

#define GPUSCOPE_OPENCL_DECLARE_POINTER(name) extern decltype(&::name) gpuscope_opencl_##name;
GPUSCOPE_OPENCL_REQUIRED(GPUSCOPE_OPENCL_DECLARE_POINTER)
GPUSCOPE_OPENCL_OPTIONAL(GPUSCOPE_OPENCL_DECLARE_POINTER)
#undef GPUSCOPE_OPENCL_DECLARE_POINTER
