// The sim's occupancy family (and the probe's check) computes a group's walk
// from sums over the cycle's order (occupancy_twin::CycleIndex) instead of
// hop by hop: its outputs must be the twin's
// (occupancy_twin::group_outputs, the walk itself) for every shape of the
// sums: more registers than the cycle has slots, registers sharing a factor
// with the cycle's length, fewer steps than one trip round the cycle, many
// trips; and for a `next` that is not one cycle (two cycles: the walk).
#include "backends/sim/sim_device.hpp"
#include "core/random_cycle.hpp"
#include "kernels/occupancy_twin.hpp"

#include <gtest/gtest.h>

#include <numeric>

using namespace gpuscope;
using namespace gpuscope::sim;

namespace {

void expect_twin_outputs(SimDevice& dev, const std::vector<uint32_t>& next, int regs, uint32_t steps,
                         uint32_t spacing) {
  SCOPED_TRACE(::testing::Message() << "length " << next.size() << " regs " << regs << " steps " << steps);
  constexpr size_t kGroups = 5, kWg = 8;
  auto next_buf = dev.create_buffer(next.size() * 4);
  dev.write_values<uint32_t>(*next_buf, next);
  auto out = dev.create_buffer(kGroups * kWg * 4);
  Kernel& k = dev.kernel({"occupancy", "occupancy", {{"regs", regs}, {"scratch", false}}});
  const auto length = static_cast<uint32_t>(next.size());
  const KernelArg args[] = {next_buf.get(), out.get(), spacing, length, steps};
  dev.launch(k, Range::d1(kGroups * kWg), Range::d1(kWg), args);
  const auto got = dev.read_values<uint32_t>(*out, kGroups * kWg);
  for (size_t g = 0; g < kGroups; ++g) {
    const auto start = static_cast<uint32_t>((g * spacing) % length);
    const auto want = occupancy_twin::group_outputs([&](uint32_t p) { return next[p]; }, start, regs, steps, kWg);
    for (size_t lid = 0; lid < kWg; ++lid) ASSERT_EQ(got[g * kWg + lid], want[lid]) << "group " << g << " lid " << lid;
  }
}

}  // namespace

TEST(SimOccupancyFamily, SummedWalkMatchesTheHopByHopTwin) {
  SimDevice dev(load_sim_preset("mali-g52"), "sim:mali-g52");
  for (uint32_t length : {1u, 3u, 12u, 64u, 1000u}) {
    const Cycle cycle = random_cycle(length, 77 + length);
    for (int regs : {1, 4, 6, 16, 64})
      for (uint32_t steps : {0u, 1u, 5u, 37u, 4096u}) expect_twin_outputs(dev, cycle.next, regs, steps, 7);
  }
}

TEST(SimOccupancyFamily, NotOneCycleStillWalks) {
  SimDevice dev(load_sim_preset("mali-g52"), "sim:mali-g52");
  // Two cycles: 0 -> 1 -> 2 -> 0 and 3 -> 4 -> 5 -> 6 -> 3.
  const std::vector<uint32_t> next = {1, 2, 0, 4, 5, 6, 3};
  for (int regs : {1, 4, 8}) expect_twin_outputs(dev, next, regs, 100, 3);
}
