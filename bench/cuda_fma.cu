// Reference for the compute probe's FMA rates: the same chain shape as
// src/kernels/opencl/compute.cl's tp_FMA (x = fma(y, a, b); y = fma(x, a, b), CHAINS
// interleaved chains per thread, 2048 threads per SM) written in CUDA, plus a
// single-variable form (x = fma(x, a, b)), timed by CUDA events. Used on the
// GPU machine to tell a hardware ceiling from an OpenCL compilation artifact.
// Build: nvcc -O3 -arch=sm_90 bench/cuda_fma.cu -o cuda_fma
// Run: cuda_fma [sweep | sustained]; the SASS: cuobjdump -sass cuda_fma
#include <cstdio>
#include <string>

// a and b by value (kernel arguments: the constant bank, so ptxas keeps `a`
// in a uniform register); otherwise as fma_chains' single-variable form.
template <class T, int CHAINS, int UNROLL>
__global__ void fma_byval(const T* seed, T a, T b, T* out, unsigned iters) {
  const size_t base = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 2 * CHAINS;
  T x[CHAINS], y[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) x[c] = seed[base + 2 * c], y[c] = seed[base + 2 * c + 1];
  for (unsigned i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int c = 0; c < CHAINS; ++c) {
        x[c] = fma(x[c], a, b);
        y[c] = fma(y[c], a, b);
      }
    }
  }
#pragma unroll
  for (int c = 0; c < CHAINS; ++c) out[base + 2 * c] = x[c], out[base + 2 * c + 1] = y[c];
}

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

// Timed launches per variant: best of 5 by default; `sustained` mode takes the
// mean of 400 back-to-back launches (~0.7 s) to expose clock throttling.
static int g_reps = 5;
static bool g_mean = false;

template <class T, int CHAINS, int UNROLL>
void run_byval(const char* name, int sms) {
  const size_t threads = (size_t)sms * 2048, n = threads * 2 * CHAINS;
  T *seed, *out;
  cudaMalloc(&seed, n * sizeof(T));
  cudaMalloc(&out, n * sizeof(T));
  cudaMemset(seed, 0, n * sizeof(T));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const unsigned iters = 200;
  for (int w = 0; w < 20; ++w) fma_byval<T, CHAINS, UNROLL><<<threads / 256, 256>>>(seed, T(0.75), T(0.25), out, iters);
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    fma_byval<T, CHAINS, UNROLL><<<threads / 256, 256>>>(seed, T(0.75), T(0.25), out, iters);
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
  if (g_mean) {
    cudaEventRecord(e0);
    for (int r = 0; r < g_reps; ++r)
      fma_chains<T, CHAINS, UNROLL, PAIR><<<threads / 256, 256>>>(seed, param, out, iters);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&best, e0, e1);
    best /= g_reps;
  }
  for (int r = 0; !g_mean && r < g_reps; ++r) {
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

int main(int argc, char** argv) {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  if (argc > 1 && std::string(argv[1]) == "sustained") {
    g_reps = 400, g_mean = true;
    run<double, 8, 32, false>("fp64 single, sustained mean", sms);
    run<double, 8, 32, true>("fp64 pair, sustained mean", sms);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    run<double, 2, 128, false>("fp64 single-variable", sms);
    run<double, 4, 64, false>("fp64 single-variable", sms);
    run<double, 6, 40, false>("fp64 single-variable", sms);
    run<double, 8, 16, false>("fp64 single-variable", sms);
    run<double, 8, 64, false>("fp64 single-variable", sms);
    run<double, 10, 24, false>("fp64 single-variable", sms);
    run<double, 12, 20, false>("fp64 single-variable", sms);
    run_byval<double, 4, 64>("fp64 single, a b by value", sms);
    run_byval<double, 8, 32>("fp64 single, a b by value", sms);
    run_byval<double, 16, 16>("fp64 single, a b by value", sms);
    return 0;
  }
  run<float, 8, 32, true>("fp32 pair (as compute.cl)", sms);
  run<double, 8, 32, true>("fp64 pair (as compute.cl)", sms);
  run<double, 8, 32, false>("fp64 single-variable", sms);
  run<double, 4, 64, true>("fp64 pair", sms);
  run<double, 16, 16, false>("fp64 single-variable", sms);
  return 0;
}
