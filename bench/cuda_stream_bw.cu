// The ceiling the OpenCL bandwidth probe is judged against: the same
// read / write / copy streams in CUDA on the same GPU, with the knobs OpenCL
// cannot reach (streaming-store hints) and the driver's own memset/memcpy.
// Not part of gpuscope: a one-off cross-check, built with
//   nvcc -O3 -arch=sm_90 -o cuda_stream_bw bench/cuda_stream_bw.cu
// and run on the GPU machine (bench/gpu_runs.sh --cuda bench/cuda_stream_bw.cu). 4 GiB per array, as the
// probe's largest footprint. Prints GB/s (median and best of 10 launches).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <vector>

#define CK(x)                                                               \
  do {                                                                      \
    cudaError_t e = (x);                                                    \
    if (e != cudaSuccess) {                                                 \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
      return 1;                                                             \
    }                                                                       \
  } while (0)

__device__ __forceinline__ uint4 splat(uint32_t x) {
  return make_uint4(x, x ^ 0x9e3779b9u, x ^ 0x7f4a7c15u, x ^ 0x85ebca6bu);
}

template <int U>
__global__ void rd(const uint4* __restrict__ a, size_t n, uint32_t* out) {
  const size_t g = (size_t)gridDim.x * blockDim.x, step = U * g;
  uint32_t acc = 0;
  for (size_t b = blockIdx.x * blockDim.x + threadIdx.x; b < n; b += step) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = a[b + k * g];
#pragma unroll
    for (int k = 0; k < U; ++k) acc += v[k].x + v[k].y + v[k].z + v[k].w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// mode 0: hashed values, plain stores; 1: hashed, st.global.cs (streaming);
// 2: a constant (compressible), plain stores.
template <int U, int MODE>
__global__ void wr(uint4* __restrict__ a, size_t n, uint32_t seed) {
  const size_t g = (size_t)gridDim.x * blockDim.x, step = U * g;
  for (size_t b = blockIdx.x * blockDim.x + threadIdx.x; b < n; b += step) {
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const size_t i = b + k * g;
      const uint4 v = MODE == 2 ? make_uint4(seed, seed, seed, seed) : splat((uint32_t)i * 0x9e3779b1u ^ seed);
      if (MODE == 1)
        __stcs(a + i, v);
      else
        a[i] = v;
    }
  }
}

template <int U>
__global__ void cp(const uint4* __restrict__ a, uint4* __restrict__ c, size_t n) {
  const size_t g = (size_t)gridDim.x * blockDim.x, step = U * g;
  for (size_t b = blockIdx.x * blockDim.x + threadIdx.x; b < n; b += step) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) v[k] = a[b + k * g];
#pragma unroll
    for (int k = 0; k < U; ++k) c[b + k * g] = v[k];
  }
}

template <class F>
void timeit(const char* name, double bytes, F f) {
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> gbps;
  for (int i = 0; i < 10; ++i) {
    cudaEventRecord(s);
    f();
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms = 0;
    cudaEventElapsedTime(&ms, s, e);
    gbps.push_back(bytes / (ms * 1e6));
  }
  std::sort(gbps.begin(), gbps.end());
  printf("%-40s %8.0f GB/s median %8.0f best  (%s)\n", name, gbps[5], gbps[9],
         cudaGetErrorString(cudaGetLastError()));
}

int main() {
  const size_t bytes = size_t{4} << 30, n = bytes / 16;
  uint4 *a, *c;
  uint32_t* out;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&c, bytes));
  CK(cudaMalloc(&out, 64 << 20));
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  wr<1, 0><<<sms * 8, 256>>>(a, n, 12345);  // random-ish source for the reads and copies
  CK(cudaDeviceSynchronize());
  const double B = (double)bytes;
  // Persistent grid (8 blocks of 256 per SM, as the probe) and one thread per
  // vector (the classic STREAM grid: the block scheduler orders the stream).
  const int pers = sms * 8;
  const int full = (int)(n / 256);
  uint32_t seed = 1;
  timeit("read  persistent u1", B, [&] { rd<1><<<pers, 256>>>(a, n, out); });
  timeit("read  persistent u4", B, [&] { rd<4><<<pers, 256>>>(a, n, out); });
  timeit("read  full grid  u1", B, [&] { rd<1><<<full / 64, 256>>>(a, n, out); });
  timeit("write persistent u1 hash", B, [&] { wr<1, 0><<<pers, 256>>>(c, n, seed++); });
  timeit("write persistent u4 hash", B, [&] { wr<4, 0><<<pers, 256>>>(c, n, seed++); });
  timeit("write persistent u4 hash .cs", B, [&] { wr<4, 1><<<pers, 256>>>(c, n, seed++); });
  timeit("write persistent u4 const", B, [&] { wr<4, 2><<<pers, 256>>>(c, n, seed++); });
  timeit("write persistent(4/SM) u4 hash", B, [&] { wr<4, 0><<<sms * 4, 256>>>(c, n, seed++); });
  timeit("write persistent(16/SM of 128) u4 hash", B, [&] { wr<4, 0><<<sms * 16, 128>>>(c, n, seed++); });
  timeit("write full grid u1 hash", B, [&] { wr<1, 0><<<full, 256>>>(c, n, seed++); });
  timeit("write full grid u1 hash .cs", B, [&] { wr<1, 1><<<full, 256>>>(c, n, seed++); });
  timeit("write full grid u1 const", B, [&] { wr<1, 2><<<full, 256>>>(c, n, seed++); });
  timeit("cudaMemset", B, [&] { cudaMemsetAsync(c, seed++ & 0xff, bytes); });
  timeit("copy  persistent u1", 2 * B, [&] { cp<1><<<pers, 256>>>(a, c, n); });
  timeit("copy  persistent u4", 2 * B, [&] { cp<4><<<pers, 256>>>(a, c, n); });
  timeit("copy  full grid u1", 2 * B, [&] { cp<1><<<full, 256>>>(a, c, n); });
  timeit("cudaMemcpy D2D", 2 * B, [&] { cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice); });
  return 0;
}
