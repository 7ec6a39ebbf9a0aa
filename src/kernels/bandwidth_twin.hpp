// Host-side twin of the `bandwidth` kernel family (src/kernels/opencl/bandwidth.cl):
// what its hashed stores (write, write_stream, write_grid) leave in vector i
// of the destination, SPLAT((i * kIndexHash) ^ seed) in the uint words of
// one VEC-wide vector. The probe's check (src/probes/bandwidth/) and the
// sim family (src/backends/sim/family_bandwidth.cpp) both use it;
// tests/test_kernel_twins.cpp checks that bandwidth.cl's SPLAT macros hold
// these constants.
#pragma once

#include <cstdint>

namespace gpuscope::bandwidth_twin {

// The index hash: vector i's seed word is (i * kIndexHash) ^ seed.
inline constexpr uint32_t kIndexHash = 0x9e3779b1u;
// SPLAT4(x): the four words x ^ kSplat4[k].
inline constexpr uint32_t kSplat4[4] = {0, 0x9e3779b9u, 0x7f4a7c15u, 0x85ebca6bu};
// SPLAT of 8 and 16 words: quad q is SPLAT4(x ^ kSplat16[q]).
inline constexpr uint32_t kSplat16[4] = {0, 0xc2b2ae35u, 0x27d4eb2fu, 0x165667b1u};

// The seed word of vector `index` (the kernel's uint index, wrapping).
constexpr uint32_t vector_word(uint32_t index, uint32_t seed) { return (index * kIndexHash) ^ seed; }

// The `Vec` words SPLAT(x) writes (Vec 1, 2, 4, 8 or 16).
template <int Vec>
constexpr void splat(uint32_t x, uint32_t* out) {
  if constexpr (Vec == 1) {
    out[0] = x;
  } else if constexpr (Vec == 2) {
    out[0] = x, out[1] = x ^ kSplat4[1];
  } else {
    for (int q = 0; q < Vec / 4; ++q)
      for (int k = 0; k < 4; ++k) out[q * 4 + k] = (x ^ kSplat16[q]) ^ kSplat4[k];
  }
}

// The same for a width known at run time.
inline void splat(uint32_t x, int vec, uint32_t* out) {
  switch (vec) {
    case 1: return splat<1>(x, out);
    case 2: return splat<2>(x, out);
    case 4: return splat<4>(x, out);
    case 8: return splat<8>(x, out);
    default: return splat<16>(x, out);
  }
}

}  // namespace gpuscope::bandwidth_twin
