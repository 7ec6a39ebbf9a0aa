// Occupancy: a latency-bound kernel whose throughput is proportional to the
// number of waves resident on a compute unit, with a controlled number of
// live registers per work-item (and, through an argument, of local memory
// per work-group).
//
// Build options:
//   -DREGS=N     values each work-item keeps live across the whole loop
//   -DSCRATCH=1  a trailing `__local uint* scratch` argument, for the local
//                memory sweep; without it the kernel has no local memory at
//                all (Mali runs one work-group per core as soon as a kernel
//                has any, which would hide how many waves fit otherwise)
//
// Shape, and why:
// - All work-items of a work-group chase one random cycle together: every
//   load's address is the previous load's value, and all lanes of a wave
//   load the same address (one memory transaction per wave). A wave thus has
//   one load in flight at a time and spends nearly all its time waiting on
//   it; the compute unit's throughput is (waves resident) / (load latency),
//   so a drop in resident waves shows as a drop in throughput.
// - The cycle spans more than a first-level cache (the host sizes it), so
//   the latency per step is the same for every register count.
// - The inner loop is unrolled REGS times and step k adds the loaded value
//   into r[k]: all REGS accumulators are live from the first step to the
//   last, and each step costs the same one load and one add whatever REGS
//   is. The accumulators start from the local id (lanes differ, so they
//   cannot be kept as one wave-uniform value), and the final mix is
//   order-dependent and non-linear (xor then multiply), so the compiler can
//   neither merge the accumulators nor drop them: it must hold REGS values
//   in registers or spill them (CL_KERNEL_PRIVATE_MEM_SIZE then says so).
// - `scratch` (SCRATCH builds) is the local memory the host reserves per
//   work-group (at least 4 bytes per work-item) through the argument's size:
//   the driver reserves all of it at launch, used or not, and that
//   reservation limits how many work-groups fit on a unit. Each work-item
//   writes and reads back only its own slot, so no barrier is needed (a
//   barrier makes PoCL keep every accumulator of every work-item in memory
//   across it, and its compile times grow to tens of seconds). Without it
//   the value it would hold (lid ^ the starting index) is kept in a register:
//   the outputs are the same either way.

#if SCRATCH
#define SCRATCH_PARAM , __local uint* scratch
#else
#define SCRATCH_PARAM
#endif

__kernel void occupancy(__global const uint* next, __global uint* out, uint start_spacing, uint cycle_length,
                        uint steps SCRATCH_PARAM) {
  const uint lid = (uint)get_local_id(0);
  uint p = (uint)(((ulong)get_group_id(0) * start_spacing) % cycle_length);
  uint r[REGS];
#pragma unroll
  for (int k = 0; k < REGS; ++k) r[k] = lid * (2u * (uint)k + 1u) + (uint)k;
#if SCRATCH
  scratch[lid] = lid ^ p;
#else
  const uint kept = lid ^ p;
#endif
  for (uint s = 0; s < steps; ++s) {
#pragma unroll
    for (int k = 0; k < REGS; ++k) {
      p = next[p];
      r[k] += p;
    }
  }
#if SCRATCH
  uint h = p ^ scratch[lid];
#else
  uint h = p ^ kept;
#endif
#pragma unroll
  for (int k = 0; k < REGS; ++k) h = (h ^ r[k]) * 0x9E3779B1u;
  out[get_global_id(0)] = h;
}
