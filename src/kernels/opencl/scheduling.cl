// How many work-groups a compute unit runs at once (the Adreno 530 article's "one
// work-group in flight per SP"), counted with atomics and no timestamps.
//
// Every work-group's first work-item increments a global `running` counter
// on entry, then holds its group resident for `hold` reads of that counter,
// keeping the largest value it saw, and decrements it on exit; the rest of
// the group waits at a barrier so that the whole group stays resident (a
// group's slot is freed only when all its work-items finish). The largest
// value any group saw is the most groups resident at once. Nothing waits on
// another work-group, so the kernel finishes whatever the scheduler does:
// no forward-progress assumption, no hang, and on a device that runs one
// group at a time the answer is simply 1.
//
// The __local scratch (size chosen by the host) reserves local memory per
// group, which limits residency on GPUs; it is written and read so the
// allocation cannot be dropped. `hold` (reads of the counter) is an
// argument, not a build-time constant: with a constant 2048 the H200's
// driver allowed this kernel groups of at most 256 work-items, most likely
// for the registers of a fully unrolled loop; a bound the compiler cannot
// see keeps the loop a loop.

__kernel void resident(volatile __global uint* running, __global uint* peak, __global uint* sink,
                       uint scratch_words, uint hold, __local uint* scratch) {
  const uint lid = (uint)get_local_id(0);
  if (scratch_words > 0) scratch[lid % scratch_words] = lid;
  if (lid == 0) {
    uint seen = atomic_inc(running) + 1;
    for (uint i = 0; i < hold; ++i) seen = max(seen, *running);
    atomic_max(peak, seen);
    atomic_dec(running);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (scratch_words > 0 && lid == 0) atomic_add(sink, scratch[(lid + 1) % scratch_words] + 1);
  if (scratch_words == 0 && lid == 0) atomic_add(sink, 1u);
}
