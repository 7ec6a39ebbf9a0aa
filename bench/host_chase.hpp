// The latency probe's dependent pointer chase written as plain host code:
// a random single cycle of 64-byte lines, each line holding the address of
// the next, walked by one thread with nothing but the load on the critical
// path. It is the reference a CPU device's chase (PoCL, lavapipe) is set
// beside: bench/host_chase.cpp prints its curve on 4 KiB and 2 MiB pages,
// and the lavapipe chase test reads its curve, over the footprints the probe
// swept, with the same analysis as the probe's.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuscope::host_chase {

inline constexpr std::size_t kLine = 64;
inline constexpr std::size_t kHuge = std::size_t{2} << 20;

// How the buffer's pages are chosen.
enum class Pages {
  kAsAllocated,  // no advice: what a driver's own allocation gets under the system's policy
  kSmall,        // MADV_NOHUGEPAGE: every page 4 KiB
  kHuge,         // MADV_HUGEPAGE: 2 MiB pages where transparent huge pages allow
};

// An anonymous mapping of at least `bytes`, its usable part starting on a
// 2 MiB boundary (so huge pages can back every byte); unmapped on
// destruction. Throws std::runtime_error where mmap fails.
class Mapping {
 public:
  Mapping(std::size_t bytes, Pages pages) {
    const std::size_t len = (bytes + kHuge - 1) / kHuge * kHuge;
    length_ = len + kHuge;
    raw_ = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw_ == MAP_FAILED)
      throw std::runtime_error("host_chase: mmap of " + std::to_string(length_) + " B: " + std::strerror(errno));
    const auto aligned = (reinterpret_cast<std::uintptr_t>(raw_) + kHuge - 1) / kHuge * kHuge;
    base_ = reinterpret_cast<char*>(aligned);
    // Advice is a request: where the kernel refuses it the pages stay as
    // allocated, which the 4k/2m comparison then shows.
    if (pages != Pages::kAsAllocated) madvise(base_, len, pages == Pages::kHuge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { munmap(raw_, length_); }

  char* base() const { return base_; }

 private:
  void* raw_ = nullptr;     // what mmap returned, for munmap
  std::size_t length_ = 0;  // what was mapped
  char* base_ = nullptr;    // the aligned start the chase uses
};

// Links the first `bytes` of `base` into one random cycle of lines; returns
// its first line.
inline void** link_cycle(char* base, std::size_t bytes, std::uint64_t seed) {
  const std::size_t n = bytes / kLine;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  for (std::size_t k = 0; k < n; ++k)
    *reinterpret_cast<void**>(base + order[k] * kLine) = base + order[(k + 1) % n] * kLine;
  return reinterpret_cast<void**>(base + order[0] * kLine);
}

// Walks `hops` hops from `p`; returns where it ended (the caller keeps it
// live, so the walk cannot be dropped).
[[gnu::noinline]] inline void** walk(void** p, std::size_t hops) {
  for (std::size_t i = 0; i < hops; ++i) p = static_cast<void**>(*p);
  return p;
}

inline double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One footprint's chase: the cycle walked once whole (every line and page
// touched, and checked to be one cycle), then `rounds` rounds of about
// `round_ns` each. Returns each round's ns per hop. Throws
// std::runtime_error where the walk does not come back to its start.
inline std::vector<double> time_footprint(std::size_t bytes, Pages pages, int rounds, double round_ns) {
  if (bytes < kLine) throw std::runtime_error("host_chase: a footprint under one line");
  const Mapping m(bytes, pages);
  void** p = link_cycle(m.base(), bytes, bytes);
  void** const start = p;
  p = walk(p, bytes / kLine);
  if (p != start) throw std::runtime_error("host_chase: the " + std::to_string(bytes) + " B chase is not one cycle");
  // Size a round from a short trial; 0.3 ns a hop bounds it from above.
  const double t0 = now_ns();
  p = walk(p, 100000);
  const double trial_ns = (now_ns() - t0) / 100000;
  const auto hops = static_cast<std::size_t>(round_ns / std::max(trial_ns, 0.3)) + 1;
  std::vector<double> per_hop;
  for (int r = 0; r < rounds; ++r) {
    const double s = now_ns();
    p = walk(p, hops);
    per_hop.push_back((now_ns() - s) / static_cast<double>(hops));
  }
  if (p == nullptr) throw std::runtime_error("host_chase: the chase reached a null line");
  return per_hop;
}

}  // namespace gpuscope::host_chase
