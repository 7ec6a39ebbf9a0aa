// The two results an fma chain may have on a device. OpenCL's fma() is
// fused (one rounding); GLSL's may be evaluated as a multiply and an add,
// each rounded (the SPIR-V environment leaves it to the driver, and lavapipe
// does so). The probes' host references of fma chains compute the fused
// result, and the unfused one where the device's differs from it: either
// shows that every step ran.
#pragma once

#include <cmath>

namespace gpuscope {

enum class FmaForm { fused, unfused };

// x * a + b as `form` rounds it. The unfused product goes through double
// (exact for two floats) and one rounding to float, so no compiler can
// contract it with the add into an fma.
inline float fma_as(FmaForm form, float x, float a, float b) {
  if (form == FmaForm::fused) return std::fma(x, a, b);
  const auto product = static_cast<float>(static_cast<double>(x) * static_cast<double>(a));
  return product + b;
}

}  // namespace gpuscope
