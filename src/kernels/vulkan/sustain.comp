// A sustained arithmetic load: the twin of opencl/sustain.cl. Every
// invocation runs 8 independent FP32 fma chains for `rounds` x 8 steps, then
// stores the sum of its chains for the host to check.
//
// Parameters: NV_PTX, NVIDIA's inline PTX counters; there is no inline
// assembly in GLSL, so a build asking for it fails (the probe then builds
// the plain form and says why). Without it clock[0] and clock[1] are 0.
//
// Arguments: out, clock; rounds, a, b. Ops per launch: global size x
// rounds x 64 fmas (2 flops each).

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

#if NV_PTX
#error "sustain: NVIDIA inline PTX is not reachable from GLSL"
#endif

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
  for (uint r = 0; r < args.rounds; ++r) {
    ROUND ROUND ROUND ROUND ROUND ROUND ROUND ROUND
  }
  precise float sum = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
  out_[gid] = sum;
  if (gid == 0) {
    clock_[0] = 0;
    clock_[1] = 0;
  }
}
