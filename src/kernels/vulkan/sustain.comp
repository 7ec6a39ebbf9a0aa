// A sustained arithmetic load: the twin of opencl/sustain.cl. Every
// invocation runs 8 independent FP32 fma chains for `rounds` x 8 steps, then
// stores the sum of its chains for the host to check.
//
// Parameters: COUNTERS=1 (asked only where the device has a subgroup clock,
// HAS_SUBGROUP_CLOCK): invocation 0 records clock[0] = subgroup-clock ticks
// (clockARB(): the compute unit's cycles; NVIDIA's SM clock) across its
// chains and clock[1] = device-clock ticks (clockRealtimeEXT(), ns on
// NVIDIA) where the device has one (HAS_DEVICE_CLOCK), else 0. Without
// COUNTERS both are 0.
//
// Arguments: out, clock; rounds, a, b. Ops per launch: global size x
// rounds x 64 fmas (2 flops each).

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

#if COUNTERS && !HAS_SUBGROUP_CLOCK
#error "sustain: the device has no subgroup clock (VK_KHR_shader_clock shaderSubgroupClock)"
#endif
#define TIMER (COUNTERS && HAS_DEVICE_CLOCK)

layout(set = 0, binding = 0) writeonly buffer Out { float out_[]; };
layout(set = 0, binding = 1) writeonly buffer Clock { uint64_t clock_[]; };
layout(push_constant) uniform Args {
  uint rounds;
  float a;
  float b;
} args;

#define STEP(x) x = fma(x, a, b);
#define ROUND STEP(x0) STEP(x1) STEP(x2) STEP(x3) STEP(x4) STEP(x5) STEP(x6) STEP(x7)

void main() {
  const uint gid = gl_GlobalInvocationID.x;
  const float a = args.a, b = args.b;
  const float s = float(gid & 63u) * 0.0078125;
  precise float x0 = s, x1 = s + 0.125, x2 = s + 0.25, x3 = s + 0.375;
  precise float x4 = s + 0.5, x5 = s + 0.625, x6 = s + 0.75, x7 = s + 0.875;
#if TIMER
  const uint64_t t0 = gid == 0u ? clockRealtimeEXT() : 0ul;
#endif
#if COUNTERS
  const uint64_t c0 = gid == 0u ? clockARB() : 0ul;
#endif
  for (uint r = 0; r < args.rounds; ++r) {
    ROUND ROUND ROUND ROUND ROUND ROUND ROUND ROUND
  }
  precise float sum = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
  out_[gid] = sum;
  if (gid == 0u) {
#if COUNTERS
    // Ties the final reads to the chains' sum, so they cannot move above them.
    clock_[0] = clockARB() + uint64_t(floatBitsToUint(sum) & 0u) - c0;
#else
    clock_[0] = 0;
#endif
#if TIMER
    clock_[1] = clockRealtimeEXT() + uint64_t(floatBitsToUint(sum) & 0u) - t0;
#else
    clock_[1] = 0;
#endif
  }
}
