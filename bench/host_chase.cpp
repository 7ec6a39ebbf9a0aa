// Reference for the latency probe on a CPU device (PoCL, lavapipe): the same
// dependent pointer chase written as plain host code (host_chase.hpp), so
// the curve a driver's kernels give can be set beside one nothing but the
// CPU shapes. Each footprint is walked twice, over the same random single
// cycle of 64-byte lines:
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
#include "host_chase.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

int main(int argc, char** argv) {
  namespace hc = gpuscope::host_chase;
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
  try {
    for (const std::size_t bytes : footprints) {
      for (const bool huge : {false, true}) {
        const std::vector<double> per_hop =
            hc::time_footprint(bytes, huge ? hc::Pages::kHuge : hc::Pages::kSmall, rounds, 20e6);
        std::vector<double> sorted = per_hop;
        std::sort(sorted.begin(), sorted.end());
        std::printf("%zu %s %.2f", bytes, huge ? "2m" : "4k", sorted[sorted.size() / 2]);
        for (const double v : per_hop) std::printf(" %.2f", v);
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
