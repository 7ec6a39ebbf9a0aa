// Host-side twin of the `local` kernel family's local_touch
// (src/kernels/opencl/local.cl): the word it stores at index i of local
// memory, and the sum of all its work-items' sums. The probe's check
// (src/probes/local.cpp) and the sim family (src/backends/sim/family_local.cpp)
// both use it.
#pragma once

#include <cstdint>

namespace gpuscope::local_twin {

inline constexpr uint32_t kTouchMultiplier = 0x9e3779b1u;

// l[i] = i * kTouchMultiplier (mod 2^32).
constexpr uint32_t touch_word(uint32_t i) { return i * kTouchMultiplier; }

// Every word i < words is read once: the sum of all sums, mod 2^32.
constexpr uint32_t touch_total(uint32_t words) {
  const uint64_t w = words;
  return static_cast<uint32_t>(static_cast<uint32_t>(w * (w - 1) / 2) * kTouchMultiplier);
}

}  // namespace gpuscope::local_twin
