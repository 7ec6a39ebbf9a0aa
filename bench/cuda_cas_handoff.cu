// Reference for the atomics probe's global ping-pong: what one "hand-off"
// of gpuscope's CAS ping-pong is, measured in CUDA with the SM clock.
//
// Three numbers, all in SM cycles (clock64) and ns (at the clock the run
// reads from %globaltimer against clock64):
// - cas_round_trip: one thread, one address, each atomicCAS's compare value
//   the previous one's result: the SM -> L2 atomic unit -> SM round trip of a
//   compare-and-swap nobody else touches.
// - l2_load: a dependent chase of ld.global.cg loads (L1 bypassed) over
//   4 MiB: the L2 hit latency of a load, for comparison.
// - handoff: gpuscope's ping-pong exactly (atomics.cl): two blocks of one
//   thread, on different SMs (checked through %smid), take turns advancing
//   one counter by CAS; time per move = the round's time / 2.
// A player issues its next CAS only when the last one has returned, so its
// CASes reach L2 one round trip R apart; after the other player's move lands
// the spinner's next arrival succeeds. In steady state the two players'
// successes alternate R apart in all, so a move costs R / 2: gpuscope's
// hand-off is half a CAS round trip, and may read below a load's L2 latency.
// Build and run: nvcc -O3 -arch=sm_90 bench/cuda_cas_handoff.cu -o cas && ./cas
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.cuh"

__device__ unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// out[0] cycles, out[1] ns, out[2] final value (keeps the chain live).
__global__ void cas_chain(unsigned* word, unsigned n, unsigned long long* out) {
  unsigned v = 0;
  const long long c0 = clock64();
  const unsigned long long t0 = globaltimer();
  for (unsigned i = 0; i < n; ++i) v = atomicCAS(word, v, v + 1) + 1;  // succeeds every time: v is current
  out[0] = clock64() - c0;
  out[1] = globaltimer() - t0;
  out[2] = v;
}

__global__ void l2_chase(unsigned* slots, unsigned hops, unsigned long long* out) {
  unsigned p = 0;
  for (unsigned i = 0; i < 4096; ++i) p = __ldcg(slots + p);  // warm
  const long long c0 = clock64();
  const unsigned long long t0 = globaltimer();
  for (unsigned i = 0; i < hops; ++i) p = __ldcg(slots + p);
  out[0] = clock64() - c0;
  out[1] = globaltimer() - t0;
  out[2] = p;
}

// gpuscope's ping_pong_global: player p moves when the counter is 2i + p.
// out[4 * player + ...]: cycles, ns, moves, sm.
__global__ void ping_pong(unsigned* counter, unsigned rounds, unsigned long long* out) {
  const unsigned player = blockIdx.x;
  unsigned moves = 0;
  const long long c0 = clock64();
  const unsigned long long t0 = globaltimer();
  for (unsigned i = 0; i < rounds; ++i) {
    const unsigned want = 2 * i + player;
    while (atomicCAS(counter, want, want + 1) != want) {
    }
    ++moves;
  }
  out[4 * player + 0] = clock64() - c0;
  out[4 * player + 1] = globaltimer() - t0;
  out[4 * player + 2] = moves;
  out[4 * player + 3] = smid();
}

int main() {
  unsigned* word;
  unsigned long long* out;
  CHECK(cudaMalloc(&word, 4));
  CHECK(cudaMalloc(&out, 8 * sizeof(unsigned long long)));
  unsigned long long h[8];

  std::printf("quantity cycles ns note\n");
  for (int rep = 0; rep < 3; ++rep) {
    const unsigned n = 1u << 18;
    CHECK(cudaMemset(word, 0, 4));
    cas_chain<<<1, 1>>>(word, n, out);
    CHECK(cudaMemcpy(h, out, 3 * 8, cudaMemcpyDeviceToHost));
    if (h[2] != n) {
      std::fprintf(stderr, "cas_chain ended at %llu, not %u\n", h[2], n);
      return 1;
    }
    std::printf("cas_round_trip %.1f %.1f one thread, dependent CAS on one word\n", (double)h[0] / n,
                (double)h[1] / n);
  }

  // 4 MiB of 128-byte slots in one random cycle: L2-resident, far past L1.
  const unsigned stride = 32, count = (4u << 20) / 128;
  std::vector<unsigned> order(count), slots(count * stride, 0);
  for (unsigned i = 0; i < count; ++i) order[i] = i;
  srand(7);
  for (unsigned i = count - 1; i > 0; --i) std::swap(order[i], order[rand() % (i + 1)]);
  for (unsigned k = 0; k < count; ++k) slots[order[k] * stride] = order[(k + 1) % count] * stride;
  unsigned* dslots;
  CHECK(cudaMalloc(&dslots, slots.size() * 4));
  CHECK(cudaMemcpy(dslots, slots.data(), slots.size() * 4, cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {
    const unsigned hops = 1u << 18;
    l2_chase<<<1, 1>>>(dslots, hops, out);
    CHECK(cudaMemcpy(h, out, 3 * 8, cudaMemcpyDeviceToHost));
    std::printf("l2_load %.1f %.1f ld.global.cg chase over 4 MiB\n", (double)h[0] / hops, (double)h[1] / hops);
  }

  for (int rep = 0; rep < 3; ++rep) {
    const unsigned rounds = 1u << 17;
    CHECK(cudaMemset(word, 0, 4));
    ping_pong<<<2, 1>>>(word, rounds, out);
    CHECK(cudaMemcpy(h, out, 8 * 8, cudaMemcpyDeviceToHost));
    if (h[2] != rounds || h[6] != rounds) {
      std::fprintf(stderr, "ping-pong made %llu and %llu moves of %u\n", h[2], h[6], rounds);
      return 1;
    }
    std::printf("handoff %.1f %.1f per move, players on SMs %llu and %llu\n", (double)h[0] / (2.0 * rounds),
                (double)h[1] / (2.0 * rounds), h[3], h[7]);
  }
  CHECK(cudaGetLastError());
  return 0;
}
