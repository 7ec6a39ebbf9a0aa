// Reference for the OpenCL chase: the same dependent pointer chase written in
// CUDA and timed in SM cycles with clock64(), the way published Hopper L1
// latencies (~32 cycles) were measured. Used once on the GPU machine to check
// that gpuscope's chase adds nothing to the load-to-use latency.
// Build: nvcc -O3 -arch=sm_90 bench/cuda_chase.cu -o cuda_chase
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

__global__ void chase(void** start, long hops, long long* cycles, void** out) {
  void** p = start;
  for (int i = 0; i < 1024; ++i) p = (void**)*p;  // warm
  const long long t0 = clock64();
  for (long i = 0; i < hops; ++i) p = (void**)*p;
  const long long t1 = clock64();
  *cycles = t1 - t0;
  *out = p;
}

__global__ void link(void** slots, const unsigned* next, unsigned stride_words, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) slots[(size_t)i * stride_words] = (void*)(slots + (size_t)next[i] * stride_words);
}

int main() {
  const size_t stride = 128;
  printf("footprint_bytes cycles_per_hop\n");
  for (size_t kb : {4, 16, 64, 128, 192, 256, 512, 4096, 16384, 32768, 65536, 262144}) {
    const unsigned n = kb * 1024 / stride;
    std::vector<unsigned> order(n), next(n);
    for (unsigned i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(n));
    for (unsigned k = 0; k < n; ++k) next[order[k]] = order[(k + 1) % n];
    void** slots;
    unsigned* dnext;
    long long* dcycles;
    void** dout;
    cudaMalloc(&slots, (size_t)n * stride);
    cudaMalloc(&dnext, n * 4);
    cudaMalloc(&dcycles, 8);
    cudaMalloc(&dout, 8);
    cudaMemcpy(dnext, next.data(), n * 4, cudaMemcpyHostToDevice);
    link<<<(n + 255) / 256, 256>>>(slots, dnext, stride / 8, n);
    const long hops = 200000;
    chase<<<1, 1>>>(slots, std::min<long>(n, 1 << 22), dcycles, dout);  // full warm pass
    chase<<<1, 1>>>(slots, hops, dcycles, dout);
    long long cycles = 0;
    cudaMemcpy(&cycles, dcycles, 8, cudaMemcpyDeviceToHost);
    if (cudaGetLastError() != cudaSuccess) {
      printf("cuda error\n");
      return 1;
    }
    printf("%zu %.1f\n", kb * 1024, (double)cycles / hops);
    cudaFree(slots);
    cudaFree(dnext);
    cudaFree(dcycles);
    cudaFree(dout);
  }
  return 0;
}
