// Host-side twin of the `occupancy` kernel family (src/kernels/opencl/occupancy.cl):
// what one work-group writes. Its work-items chase one cycle together from
// `start`, REGS live sums each, then hash them. The probe's check
// (src/probes/occupancy.cpp) and the sim family
// (src/backends/sim/family_occupancy.cpp) both use it.
#pragma once

#include <cstdint>
#include <vector>

namespace gpuscope::occupancy_twin {

// The hash's multiplier: h = (h ^ r[k]) * kHashMultiplier.
inline constexpr uint32_t kHashMultiplier = 0x9E3779B1u;

// The `wg` outputs of a group starting at `start` whose walk ended on `p`
// with the REGS sums `sums` (sums[k]: every (k+1)-th, (k+1+REGS)-th, ...
// index the walk reached, mod 2^32).
inline std::vector<uint32_t> hash_outputs(uint32_t p, uint32_t start, const std::vector<uint32_t>& sums,
                                          uint32_t wg) {
  const auto regs = static_cast<int>(sums.size());
  std::vector<uint32_t> out(wg);
  for (uint32_t lid = 0; lid < wg; ++lid) {
    uint32_t h = p ^ (lid ^ start);  // the kernel keeps lid ^ start (in scratch or a register)
    for (int k = 0; k < regs; ++k) {
      const auto ku = static_cast<uint32_t>(k);
      h = (h ^ (lid * (2u * ku + 1u) + ku + sums[static_cast<size_t>(k)])) * kHashMultiplier;
    }
    out[lid] = h;
  }
  return out;
}

// The `wg` outputs of a group starting at `start` after `steps` x `regs`
// chase steps; `next(p)` is the cycle's successor of p (it may throw on a
// bad index).
template <class Next>
std::vector<uint32_t> group_outputs(Next&& next, uint32_t start, int regs, uint32_t steps, uint32_t wg) {
  uint32_t p = start;
  std::vector<uint32_t> sums(static_cast<size_t>(regs), 0);
  for (uint32_t s = 0; s < steps; ++s)
    for (int k = 0; k < regs; ++k) {
      p = next(p);
      sums[static_cast<size_t>(k)] += p;
    }
  return hash_outputs(p, start, sums, wg);
}

}  // namespace gpuscope::occupancy_twin
