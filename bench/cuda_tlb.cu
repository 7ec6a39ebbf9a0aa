// Reference for the tlb probe on NVIDIA GPUs: where address translation
// starts to cost a dependent load, measured in CUDA with the SM clock, far
// past the probe's 2 GiB sweep.
//
// Two chases of n slots each, one thread, a random single cycle, timed in SM
// cycles (clock64) per hop:
// - strided: slot i at i * S + (i mod lines_per_block) * 128 B, so every hop
//   lands in another S-sized block (another page for S >= the page) and the
//   n slots sit on n different line offsets, spread over the caches' sets;
// - control: the same n slots on n consecutive 128 B lines (n * 128 B, a
//   few pages): what the caches alone do with n lines.
// strided - control is what translation adds to a load at footprint n * S.
// CUDA maps device memory in 2 MiB pages, so S = 2 MiB puts one slot on each
// page and a TLB of E entries runs out at E * 2 MiB; larger strides check
// that reading (a step at the same slot count for every stride is entries
// of 2 MiB; at the same footprint, larger pages).
//
// Build and run (the GPU test machine):
//   nvcc -O3 -arch=sm_90 bench/cuda_tlb.cu -o cuda_tlb && ./cuda_tlb [max_GiB [stride_MiB,...]]
// (default: 32 GiB, strides 2 and 32 MiB; slot counts 8 and up, four to an octave)
// Output: one line per (stride, n): stride bytes, slots, footprint bytes,
// strided and control cycles per hop (median of 5 timings), their
// difference, and the same difference in ns timed by %globaltimer.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "cuda_check.cuh"

namespace {

constexpr size_t kLine = 128;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGiB = size_t{1} << 30;

__device__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Walks `warm` hops, then times `hops` hops; cycles and globaltimer ns out.
__global__ void chase(void** start, long warm, long hops, long long* cycles, unsigned long long* ns,
                      void** out) {
  void** p = start;
  for (long i = 0; i < warm; ++i) p = (void**)*p;
  const unsigned long long g0 = globaltimer();
  const long long t0 = clock64();
  for (long i = 0; i < hops; ++i) p = (void**)*p;
  const long long t1 = clock64();
  const unsigned long long g1 = globaltimer();
  *cycles = t1 - t0;
  *ns = g1 - g0;
  *out = p;
}

// slot[k] = &slot[next[k]], slot addresses given as byte offsets from base.
__global__ void link(char* base, const size_t* offset, const unsigned* next, unsigned n) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) *(void**)(base + offset[k]) = base + offset[next[k]];
}

struct Timing {
  double cycles_per_hop = 0;
  double ns_per_hop = 0;
};

// Lays a random cycle over the n slots at `offsets` and times it.
Timing time_cycle(char* base, const std::vector<size_t>& offsets, std::mt19937_64& rng) {
  const unsigned n = static_cast<unsigned>(offsets.size());
  std::vector<unsigned> order(n), next(n);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  for (unsigned k = 0; k < n; ++k) next[order[k]] = order[(k + 1) % n];
  size_t* d_offset;
  unsigned* d_next;
  long long* d_cycles;
  unsigned long long* d_ns;
  void** d_out;
  CHECK(cudaMalloc(&d_offset, n * sizeof(size_t)));
  CHECK(cudaMalloc(&d_next, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&d_cycles, sizeof(long long)));
  CHECK(cudaMalloc(&d_ns, sizeof(unsigned long long)));
  CHECK(cudaMalloc(&d_out, sizeof(void*)));
  CHECK(cudaMemcpy(d_offset, offsets.data(), n * sizeof(size_t), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_next, next.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  link<<<(n + 255) / 256, 256>>>(base, d_offset, d_next, n);
  CHECK(cudaGetLastError());
  const long hops = 20000;
  std::vector<double> cycles, ns;
  for (int r = 0; r < 5; ++r) {
    // Two walks of the whole cycle first, so every level able to hold the
    // slots' lines and translations does.
    chase<<<1, 1>>>((void**)(base + offsets[0]), 2L * n, hops, d_cycles, d_ns, d_out);
    CHECK(cudaDeviceSynchronize());
    long long c = 0;
    unsigned long long t = 0;
    void* end = nullptr;
    CHECK(cudaMemcpy(&c, d_cycles, sizeof c, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&t, d_ns, sizeof t, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&end, d_out, sizeof end, cudaMemcpyDeviceToHost));
    // The walk must end where the host's cycle says: 2n + hops hops from slot 0.
    unsigned want = 0;
    for (long h = 0; h < (2L * n + hops) % n; ++h) want = next[want];
    if (end != base + offsets[want]) {
      std::fprintf(stderr, "cuda_tlb: the chase of %u slots ended off the cycle\n", n);
      std::exit(1);
    }
    cycles.push_back(static_cast<double>(c) / hops);
    ns.push_back(static_cast<double>(t) / hops);
  }
  std::sort(cycles.begin(), cycles.end());
  std::sort(ns.begin(), ns.end());
  CHECK(cudaFree(d_offset));
  CHECK(cudaFree(d_next));
  CHECK(cudaFree(d_cycles));
  CHECK(cudaFree(d_ns));
  CHECK(cudaFree(d_out));
  return {cycles[2], ns[2]};
}

}  // namespace

int main(int argc, char** argv) {
  const double max_gib = argc > 1 ? std::atof(argv[1]) : 32;
  std::vector<size_t> strides;
  for (const char* s = argc > 2 ? argv[2] : "2,32"; *s;) {
    char* end = nullptr;
    const long mib = std::strtol(s, &end, 10);
    if (end == s || mib <= 0) {
      std::fprintf(stderr, "cuda_tlb: strides are whole MiB, comma-separated: %s\n", argv[2]);
      return 2;
    }
    strides.push_back(static_cast<size_t>(mib) * kMiB);
    s = *end == ',' ? end + 1 : end;
  }
  size_t free_bytes = 0, total_bytes = 0;
  CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const size_t want = static_cast<size_t>(max_gib * static_cast<double>(kGiB));
  const size_t bytes = std::min(want, free_bytes / 10 * 9);
  if (max_gib <= 0 || bytes < 64 * kMiB) {
    std::fprintf(stderr, "usage: cuda_tlb [max_GiB > 0]; %zu MiB free\n", free_bytes / kMiB);
    return 2;
  }
  char* base;
  CHECK(cudaMalloc(&base, bytes));
  std::mt19937_64 rng(1);
  std::printf("# buffer %zu MiB of %zu MiB\n", bytes / kMiB, total_bytes / kMiB);
  std::printf("# stride slots footprint strided_cycles control_cycles translation_cycles translation_ns\n");
  for (const size_t stride : strides) {
    const size_t lines_per_block = stride / kLine;
    for (double dn = 8; dn * static_cast<double>(stride) <= static_cast<double>(bytes); dn *= 1.18920712) {
      const auto n = static_cast<size_t>(dn);
      std::vector<size_t> strided(n), control(n);
      for (size_t i = 0; i < n; ++i) {
        strided[i] = i * stride + (i % lines_per_block) * kLine;
        control[i] = i * kLine;
      }
      const Timing s = time_cycle(base, strided, rng);
      const Timing c = time_cycle(base, control, rng);
      std::printf("%zu %zu %zu %.1f %.1f %.1f %.2f\n", stride, n, n * stride, s.cycles_per_hop, c.cycles_per_hop,
                  s.cycles_per_hop - c.cycles_per_hop, s.ns_per_hop - c.ns_per_hop);
      std::fflush(stdout);
    }
  }
  CHECK(cudaFree(base));
  return 0;
}
