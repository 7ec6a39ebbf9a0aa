// Times the PTX that NVIDIA's OpenCL driver produced for compute.cl's tp_FMA
// (dumped by GPUSCOPE_COMPUTE_DUMP), loaded through the CUDA driver API:
// tells "the OpenCL runtime launches it slowly" from "the code itself is
// slow", and (given a cubin that ptxas built from the same PTX) "the driver's
// JIT compiles it differently" from "the PTX leads any ptxas there".
// Usage: cuda_ptx_time FILE.{ptx,cubin} CHAINS UNROLL [items_per_sm] [local]
// Same launch shape as the probe: items_per_sm x SMs work-items, 256 per
// group, 2 * CHAINS doubles of seed per work-item. No validation: the probe
// validates the same code; this only times it.
// Build: nvcc -O3 -arch=sm_90 bench/cuda_ptx_time.cu -lcuda -o cuda_ptx_time
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CK(x)                                                    \
  do {                                                           \
    CUresult r_ = (x);                                           \
    if (r_ != CUDA_SUCCESS) {                                    \
      const char* s_ = nullptr;                                  \
      cuGetErrorString(r_, &s_);                                 \
      std::fprintf(stderr, "%s: %s\n", #x, s_ ? s_ : "?");       \
      return 1;                                                  \
    }                                                            \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FILE CHAINS UNROLL [items_per_sm] [local]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const int chains = std::atoi(argv[2]), unroll = std::atoi(argv[3]);
  const int per_sm = argc > 4 ? std::atoi(argv[4]) : 2048, local = argc > 5 ? std::atoi(argv[5]) : 256;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string image = ss.str();
  image.push_back('\0');
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  int sms = 0;
  CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CUmodule mod;
  CK(cuModuleLoadData(&mod, image.data()));
  CUfunction fn;
  CK(cuModuleGetFunction(&fn, mod, "tp_FMA"));
  int regs = 0;
  CK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
  const size_t items = (size_t)sms * per_sm, n = items * 2 * chains;
  std::vector<double> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = 0.5 + 0.001 * (i % 97);
  const double p[2] = {0.75, 0.25};
  CUdeviceptr seed, out, param;
  CK(cuMemAlloc(&seed, n * 8));
  CK(cuMemAlloc(&out, n * 8));
  CK(cuMemAlloc(&param, 16));
  CK(cuMemcpyHtoD(seed, host.data(), n * 8));
  CK(cuMemcpyHtoD(param, p, 16));
  unsigned iters = 200;
  void* args[] = {&seed, &param, &out, &iters};
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  const unsigned grid = (unsigned)(items / local);
  for (int w = 0; w < 20; ++w) CK(cuLaunchKernel(fn, grid, 1, 1, local, 1, 1, 0, nullptr, args, nullptr));
  float best = 1e30f;
  for (int r = 0; r < 10; ++r) {
    CK(cuEventRecord(e0, nullptr));
    CK(cuLaunchKernel(fn, grid, 1, 1, local, 1, 1, 0, nullptr, args, nullptr));
    CK(cuEventRecord(e1, nullptr));
    CK(cuEventSynchronize(e1));
    float ms = 0;
    CK(cuEventElapsedTime(&ms, e0, e1));
    best = ms < best ? ms : best;
  }
  const double fmas = (double)items * iters * unroll * chains * 2;
  std::printf("%-40s regs %3d  %8.2f TFLOP/s  %.2f ms\n", path.c_str(), regs, 2 * fmas / (best * 1e-3) / 1e12,
              best);
  return 0;
}
