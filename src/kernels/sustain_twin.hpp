// Host-side twin of the `sustain` kernel family (src/kernels/opencl/sustain.cl):
// what fma_load writes for work-item `gid`. The probe's check
// (src/probes/sustain.cpp) and the sim family (src/backends/sim/family_sustain.cpp)
// both use it.
#pragma once

#include <cstdint>

#include "kernels/fma_forms.hpp"

namespace gpuscope::sustain_twin {

// Work-items repeat every kItemPeriod: gid & 63 picks the chains' start.
inline constexpr uint32_t kItemPeriod = 64;

// out[gid] after `rounds` trips: eight chains from (gid & 63) / 128 + i / 8,
// each 8 x rounds x fma(x, a, b) rounded as `form` says, summed pairwise as
// the kernel does.
inline float item_result(uint32_t gid, uint64_t rounds, float a, float b, FmaForm form = FmaForm::fused) {
  const float s = static_cast<float>(gid & (kItemPeriod - 1)) * 0.0078125f;
  float x[8];
  for (int i = 0; i < 8; ++i) x[i] = s + 0.125f * static_cast<float>(i);
  for (uint64_t r = 0; r < rounds * 8; ++r)
    for (float& v : x) v = fma_as(form, v, a, b);
  return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
}

}  // namespace gpuscope::sustain_twin
