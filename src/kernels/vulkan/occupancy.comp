// Occupancy: the twin of opencl/occupancy.cl (which says why the kernel
// looks as it does): a latency-bound chase whose throughput is proportional
// to the waves resident on a compute unit, with REGS live values per
// invocation and, with SCRATCH, the work-group's local memory.
//
// Parameters:
//   REGS     values each invocation keeps live across the whole loop
//   SCRATCH  1: the local memory the host gives the launch (LaunchShape's
//            local_bytes, LOCAL_WORDS words) is declared and used, one slot
//            per invocation; 0: the kernel has no shared memory at all
//
// Arguments: next, out; start_spacing, cycle_length, steps.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

layout(set = 0, binding = 0) readonly buffer Next { uint next[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Args {
  uint start_spacing;
  uint cycle_length;
  uint steps;
} args;

#if SCRATCH
shared uint scratch[LOCAL_WORDS];
#endif

void main() {
  const uint lid = gl_LocalInvocationID.x;
  uint p = uint((uint64_t(gl_WorkGroupID.x) * args.start_spacing) % args.cycle_length);
  uint r[REGS];
  [[unroll]] for (int k = 0; k < REGS; ++k) r[k] = lid * (2u * uint(k) + 1u) + uint(k);
#if SCRATCH
  scratch[lid] = lid ^ p;
#else
  const uint kept = lid ^ p;
#endif
  for (uint s = 0; s < args.steps; ++s) {
    [[unroll]] for (int k = 0; k < REGS; ++k) {
      p = next[p];
      r[k] += p;
    }
  }
#if SCRATCH
  uint h = p ^ scratch[lid];
#else
  uint h = p ^ kept;
#endif
  [[unroll]] for (int k = 0; k < REGS; ++k) h = (h ^ r[k]) * 0x9E3779B1u;
  out_[gl_GlobalInvocationID.x] = h;
}
