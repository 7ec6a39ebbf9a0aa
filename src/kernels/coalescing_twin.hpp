// Host-side twin of the `coalescing` kernel family (src/kernels/opencl/coalescing.cl):
// the value `fill` writes to element i of the source, which `copy` carries
// to the destination. The probe's check (src/probes/coalescing.cpp) and the
// sim family (src/backends/sim/family_coalescing.cpp) both use it;
// tests/test_kernel_twins.cpp checks that coalescing.cl computes the same.
#pragma once

#include <cstdint>

namespace gpuscope::coalescing_twin {

// Multiplier and mixing constants of coalescing_hash() in coalescing.cl.
inline constexpr uint32_t kHashMultiplier = 0x9E3779B1u;
inline constexpr uint32_t kHashMix = 0x85EBCA77u;

// coalescing_hash(i, seed): A[i] after `fill`.
constexpr uint32_t value(uint32_t i, uint32_t seed) {
  uint32_t x = (i ^ seed) * kHashMultiplier;
  x ^= x >> 15;
  x *= kHashMix;
  x ^= x >> 13;
  return x;
}

}  // namespace gpuscope::coalescing_twin
