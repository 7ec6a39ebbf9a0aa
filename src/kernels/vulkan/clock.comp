// The running clock: the twin of opencl/clock.cl. One invocation runs a
// dependent chain x = x * x + c, rounds x 16 steps; the host checks x.
//
// COUNTERS=1 (the kernel parameter counters=true, asked only where
// DeviceFeatures::cycle_counter, i.e. HAS_SUBGROUP_CLOCK) reads the counters
// around the chain: out[0] = ticks of the subgroup clock (clockARB(): cycles
// of the compute unit on GPUs; NVIDIA's SM clock), out[1] = ticks of the
// device clock (clockRealtimeEXT(), constant rate: ns on NVIDIA) where the
// device has one (HAS_DEVICE_CLOCK), else 0. Without COUNTERS both are 0.
// out[2] = the final value.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

#define STEP x = x * x + c;
#define STEP4 STEP STEP STEP STEP
#define STEP16 STEP4 STEP4 STEP4 STEP4
#define STEP256 STEP16 STEP16 STEP16 STEP16 STEP16 STEP16 STEP16 STEP16 \
                STEP16 STEP16 STEP16 STEP16 STEP16 STEP16 STEP16 STEP16

#if defined(ENTRY_CHAIN)
// chain(out: u64[], rounds, seed)
layout(set = 0, binding = 0) restrict writeonly buffer Out { uint64_t out_v[]; };
layout(push_constant) uniform Args { uint rounds; uint seed; } args;

#if COUNTERS && !HAS_SUBGROUP_CLOCK
#error "clock: the device has no subgroup clock (VK_KHR_shader_clock shaderSubgroupClock)"
#endif
#define TIMER (COUNTERS && HAS_DEVICE_CLOCK)

void main() {
  uint x = args.seed;
  const uint c = args.seed | 1u;
#if TIMER
  const uint64_t t0 = clockRealtimeEXT();
#endif
#if COUNTERS
  const uint64_t c0 = clockARB();
#endif
  // 16 rounds per iteration while they last (README.md: lavapipe's loop limit).
  uint r = args.rounds;
  for (; r >= 16; r -= 16) {
    STEP256
  }
  for (; r > 0; --r) {
    STEP16
  }
#if COUNTERS
  // Ties the final reads to x, so they cannot move above the chain.
  const uint64_t c1 = clockARB() + uint64_t(x & 0u);
  out_v[0] = c1 - c0;
#if TIMER
  const uint64_t t1 = clockRealtimeEXT() + uint64_t(x & 0u);
  out_v[1] = t1 - t0;
#else
  out_v[1] = 0;
#endif
#else
  out_v[0] = 0;
  out_v[1] = 0;
#endif
  out_v[2] = uint64_t(x);
}
#endif
