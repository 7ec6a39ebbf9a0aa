// Reference for the compute probe's FMA rates: the same chain shape as
// src/kernels/compute.cl's tp_FMA (x = fma(y, a, b); y = fma(x, a, b), CHAINS
// interleaved chains per thread, 2048 threads per SM) written in CUDA, plus a
// single-variable form (x = fma(x, a, b)), timed by CUDA events. Used on the
// GPU machine to tell a hardware ceiling from an OpenCL compilation artifact.
// Build: nvcc -O3 -arch=sm_90 bench/cuda_fma.cu -o cuda_fma
#include <cstdio>

template <class T, int CHAINS, int UNROLL, bool PAIR>
__global__ void fma_chains(const T* seed, const T* param, T* out, unsigned iters) {
  const size_t base = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 2 * CHAINS;
  const T a = param[0], b = param[1];
  T x[CHAINS], y[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) x[c] = seed[base + 2 * c], y[c] = seed[base + 2 * c + 1];
  for (unsigned i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int c = 0; c < CHAINS; ++c) {
        if (PAIR) {
          x[c] = fma(y[c], a, b);
          y[c] = fma(x[c], a, b);
        } else {
          x[c] = fma(x[c], a, b);
          y[c] = fma(y[c], a, b);
        }
      }
    }
  }
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) out[base + 2 * c] = x[c], out[base + 2 * c + 1] = y[c];
}

template <class T, int CHAINS, int UNROLL, bool PAIR>
void run(const char* name, int sms) {
  const size_t threads = (size_t)sms * 2048, n = threads * 2 * CHAINS;
  T *seed, *param, *out;
  cudaMalloc(&seed, n * sizeof(T));
  cudaMalloc(&out, n * sizeof(T));
  cudaMalloc(&param, 2 * sizeof(T));
  cudaMemset(seed, 0, n * sizeof(T));
  const T p[2] = {T(0.75), T(0.25)};
  cudaMemcpy(param, p, sizeof(p), cudaMemcpyHostToDevice);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const unsigned iters = sizeof(T) == 8 ? 200 : 400;
  for (int w = 0; w < 20; ++w) fma_chains<T, CHAINS, UNROLL, PAIR><<<threads / 256, 256>>>(seed, param, out, iters);
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    fma_chains<T, CHAINS, UNROLL, PAIR><<<threads / 256, 256>>>(seed, param, out, iters);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    best = ms < best ? ms : best;
  }
  const double fmas = (double)threads * iters * UNROLL * CHAINS * 2;
  printf("%-28s chains %2d unroll %2d  %8.2f TFLOP/s (FMA = 2)  %.1f ms\n", name, CHAINS, UNROLL,
         2 * fmas / (best * 1e-3) / 1e12, best);
  cudaFree(seed);
  cudaFree(out);
  cudaFree(param);
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  run<float, 8, 32, true>("fp32 pair (as compute.cl)", sms);
  run<double, 8, 32, true>("fp64 pair (as compute.cl)", sms);
  run<double, 8, 32, false>("fp64 single-variable", sms);
  run<double, 4, 64, true>("fp64 pair", sms);
  run<double, 16, 16, false>("fp64 single-variable", sms);
  return 0;
}
