// Branch divergence: the twin of opencl/divergence.cl (which says why the
// kernels look as they do): how many consecutive invocations must agree on
// a branch before the device stops paying for both sides (the wave width),
// and which waves of a work-group share a scheduler.
//
// Parameters:
//   CHAINS                  independent FMA chains per invocation
//   REQUIRED_SUBGROUP_SIZE  (optional) the subgroup size the pipeline is
//                           created with (VK_EXT_subgroup_size_control); the
//                           shader itself does not read it: the backend does
//
// Arguments: diverge(seed, out; block_shift, iters_a, iters_b, a, b),
// partition(seed, out; wave_width, stride, active_waves, iters, a, b).
// The chains are `precise` so that no driver merges or reorders them; a
// precise fma() is one fused operation, as OpenCL's fma() is.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

layout(set = 0, binding = 0) readonly buffer Seed { float seed[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float out_[]; };

#if defined(ENTRY_DIVERGE)
layout(push_constant) uniform Args {
  uint block_shift;
  uint iters_a;
  uint iters_b;
  float a;
  float b;
} args;

void main() {
  const uint gid = gl_GlobalInvocationID.x;
  const uint lid = gl_LocalInvocationID.x;
  precise float x[CHAINS];
  const float s = seed[gid];
  [[unroll]] for (int c = 0; c < CHAINS; ++c) x[c] = s + float(c);
  // `opaque` is 0 (the seed buffer holds zeros) but only the data says so:
  // the branch and the trip counts stay run-time values even where a driver
  // compiles a variant per push-constant value (lavapipe inlines the
  // uniforms that steer branches and loops), so both sides stay two loops.
  const uint opaque = uint(s);
  const uint iters_a = args.iters_a + opaque, iters_b = args.iters_b + opaque;
  if ((((lid >> args.block_shift) + opaque) & 1u) == 0u) {
    for (uint i = 0u; i < iters_a; ++i) {
      [[unroll]] for (int c = 0; c < CHAINS; ++c) x[c] = fma(x[c], args.a, args.b);
    }
  } else {
    for (uint i = 0u; i < iters_b; ++i) {
      [[unroll]] for (int c = 0; c < CHAINS; ++c) x[c] = fma(x[c], args.b, args.a);
    }
  }
  precise float sum = 0.0;
  [[unroll]] for (int c = 0; c < CHAINS; ++c) sum += x[c];
  out_[gid] = sum;
}
#endif

#if defined(ENTRY_PARTITION)
layout(push_constant) uniform Args {
  uint wave_width;
  uint stride;
  uint active_waves;
  uint iters;
  float a;
  float b;
} args;

// Only waves whose index is a multiple of `stride` and below
// active_waves * stride work; the others return at once and write nothing.
void main() {
  const uint gid = gl_GlobalInvocationID.x;
  const uint wave = gl_LocalInvocationID.x / args.wave_width;
  if (wave % args.stride != 0u || wave / args.stride >= args.active_waves) return;
  precise float x[CHAINS];
  const float s = seed[gid];
  [[unroll]] for (int c = 0; c < CHAINS; ++c) x[c] = s + float(c);
  for (uint i = 0; i < args.iters; ++i) {
    [[unroll]] for (int c = 0; c < CHAINS; ++c) x[c] = fma(x[c], args.a, args.b);
  }
  precise float sum = 0.0;
  [[unroll]] for (int c = 0; c < CHAINS; ++c) sum += x[c];
  out_[gid] = sum;
}
#endif
