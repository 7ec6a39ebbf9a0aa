// Host-side twin of the `clock` kernel family (src/kernels/opencl/clock.cl,
// src/kernels/vulkan/clock.comp): the value chain(out, rounds, seed) leaves
// in out[2]. The clock probe, the cycle-counter check and the sim family
// use it.
#pragma once

#include <cstdint>

namespace gpuscope::clock_twin {

// Dependent steps x = x * x + c per round.
inline constexpr uint32_t kStepsPerRound = 16;

// x after `steps` steps from x = seed with c = seed | 1, in uint32.
inline uint32_t chain_value(uint32_t seed, uint64_t steps) {
  uint32_t x = seed;
  const uint32_t c = seed | 1u;
  for (uint64_t i = 0; i < steps; ++i) x = x * x + c;
  return x;
}

}  // namespace gpuscope::clock_twin
