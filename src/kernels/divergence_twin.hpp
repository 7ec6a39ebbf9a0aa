// Host-side twin of the `divergence` kernel family (src/kernels/opencl/divergence.cl):
// what a work-item on one side of the branch writes. The probe's check
// (src/probes/divergence.cpp) and the sim family
// (src/backends/sim/family_divergence.cpp) both use it.
#pragma once

#include <cstdint>

#include "kernels/fma_forms.hpp"

namespace gpuscope::divergence_twin {

// CHAINS chains from s + c, `iters` x fma(x, m, k) each, summed in chain
// order (the kernel's own order), each fma rounded as `form` says. Stops a
// chain early at its fixed point, where every further step is the same.
inline float side_sum(float s, int chains, uint32_t iters, float m, float k, FmaForm form = FmaForm::fused) {
  float sum = 0.0f;
  for (int c = 0; c < chains; ++c) {
    float x = s + static_cast<float>(c);
    for (uint32_t i = 0; i < iters; ++i) {
      const float next = fma_as(form, x, m, k);
      if (next == x) break;
      x = next;
    }
    sum += x;
  }
  return sum;
}

}  // namespace gpuscope::divergence_twin
