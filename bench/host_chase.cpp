// Reference for the latency probe on a CPU device (PoCL): the same dependent
// pointer chase written as plain host code, so the curve PoCL's kernels give
// can be set beside one nothing but the CPU shapes. Each footprint is walked
// twice, over the same random single cycle of 64-byte lines:
// - "4k":  the buffer madvise()d MADV_NOHUGEPAGE, so every page is 4 KiB and
//          a footprint past the data TLBs' reach adds page walks to its hops;
// - "2m":  the buffer 2 MiB-aligned and madvise()d MADV_HUGEPAGE (the kernel
//          backs it with 2 MiB pages where transparent huge pages allow), so
//          translation stays in the TLB up to hundreds of MiB.
// A step both columns show is a cache; a step only "4k" shows is translation.
// Each footprint is timed in `rounds` rounds of about 20 ms (first a warm
// walk of the whole cycle), each round's ns per hop printed, then the median:
// a shared last-level cache (a cloud VM's neighbours) shows up as rounds that
// disagree.
//
// Build and run: g++ -O2 -o /tmp/host_chase bench/host_chase.cpp && /tmp/host_chase [rounds]
// Output: one line per footprint and page size: bytes, page, median ns/hop,
// then every round's ns/hop.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

namespace {

constexpr std::size_t kLine = 64;
constexpr std::size_t kHuge = std::size_t{2} << 20;

// An anonymous mapping of at least `bytes`, its usable part 2 MiB-aligned
// (so huge pages can back every byte) and advised as asked.
struct Mapping {
  void* raw = nullptr;     // what mmap returned, for munmap
  std::size_t length = 0;  // what was mapped
  void* base = nullptr;    // the aligned start the chase uses
};

Mapping map_buffer(std::size_t bytes, bool huge) {
  const std::size_t len = (bytes + kHuge - 1) / kHuge * kHuge;
  Mapping m;
  m.length = len + kHuge;
  m.raw = mmap(nullptr, m.length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m.raw == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  const auto aligned = (reinterpret_cast<std::uintptr_t>(m.raw) + kHuge - 1) / kHuge * kHuge;
  m.base = reinterpret_cast<void*>(aligned);
  if (madvise(m.base, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) std::perror("madvise");
  return m;
}

// Links the footprint's lines into one random cycle; returns its first line.
void** link_cycle(void* base, std::size_t bytes, std::uint32_t seed) {
  const std::size_t n = bytes / kLine;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  auto* bytes_base = static_cast<char*>(base);
  for (std::size_t k = 0; k < n; ++k) {
    void** slot = reinterpret_cast<void**>(bytes_base + order[k] * kLine);
    *slot = bytes_base + order[(k + 1) % n] * kLine;
  }
  return reinterpret_cast<void**>(bytes_base + order[0] * kLine);
}

// Walks `hops` hops from `p`; returns where it ended (kept live by the caller).
__attribute__((noinline)) void** walk(void** p, std::size_t hops) {
  for (std::size_t i = 0; i < hops; ++i) p = static_cast<void**>(*p);
  return p;
}

double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 9;
  if (rounds < 1) {
    std::fprintf(stderr, "usage: host_chase [rounds >= 1]\n");
    return 2;
  }
  std::vector<std::size_t> footprints;
  for (std::size_t kib = 16; kib <= 256 * 1024; kib *= 2) {
    footprints.push_back(kib << 10);
    footprints.push_back((kib << 10) * 3 / 2);  // half octaves
  }
  std::printf("# bytes page median_ns_per_hop rounds_ns_per_hop...\n");
  void* sink = nullptr;
  for (const std::size_t bytes : footprints) {
    for (const bool huge : {false, true}) {
      const Mapping m = map_buffer(bytes, huge);
      void** p = link_cycle(m.base, bytes, static_cast<std::uint32_t>(bytes));
      // Warm: every line and page touched once. The walk of the whole cycle
      // must come back to its start, or the lines are not one cycle.
      void** const start = p;
      p = walk(p, bytes / kLine);
      if (p != start) {
        std::fprintf(stderr, "host_chase: the %zu B chase is not one cycle\n", bytes);
        return 1;
      }
      // Size a round to about 20 ms from a short trial.
      const double t0 = now_ns();
      p = walk(p, 100000);
      const double trial_ns = (now_ns() - t0) / 100000;
      const auto hops = static_cast<std::size_t>(20e6 / std::max(trial_ns, 0.3));
      std::vector<double> per_hop;
      for (int r = 0; r < rounds; ++r) {
        const double s = now_ns();
        p = walk(p, hops);
        per_hop.push_back((now_ns() - s) / static_cast<double>(hops));
      }
      sink = p;
      std::vector<double> sorted = per_hop;
      std::sort(sorted.begin(), sorted.end());
      std::printf("%zu %s %.2f", bytes, huge ? "2m" : "4k", sorted[sorted.size() / 2]);
      for (const double v : per_hop) std::printf(" %.2f", v);
      std::printf("\n");
      std::fflush(stdout);
      munmap(m.raw, m.length);
    }
  }
  return sink == nullptr ? 1 : 0;
}
