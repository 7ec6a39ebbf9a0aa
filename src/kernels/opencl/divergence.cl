// Branch divergence: how many consecutive work-items must agree on a branch
// before the device stops paying for both sides (the wave width), and which
// waves of a work-group share a scheduler (the Adreno 530 article's partition test).
//
// Build options:
//   -DCHAINS=8   independent FMA chains per work-item
//
// Shape, and why:
// - Each side of the branch runs CHAINS independent fma chains, so the
//   device is bound by issue (how many instructions a wave can start per
//   clock), not by one chain's latency. A wave whose lanes disagree must
//   issue both sides one after the other, which costs twice the issue slots;
//   a latency-bound kernel could hide the second side in the first's stalls
//   (NVIDIA's independent thread scheduling interleaves divergent paths).
// - The two sides loop `iters_a` and `iters_b` times, kernel arguments the
//   compiler cannot see to be equal, and with their operands swapped: it
//   cannot merge the loops into one with selected operands (if-conversion),
//   which would remove the divergence being measured. The host passes
//   equal counts so both sides cost the same.
// - The chains start from `seed[gid]`, a buffer the host fills with zeros,
//   and every work-item writes its sum: the compiler can neither fold the
//   chains nor drop them. Since every work-item on one side computes the
//   same value, the host checks every output against two numbers.
// - Which side a work-item takes is bit `block_shift` of its local id:
//   blocks of 2^block_shift consecutive work-items alternate sides.

__kernel void diverge(__global const float* seed, __global float* out, uint block_shift, uint iters_a,
                      uint iters_b, float a, float b) {
  const size_t gid = get_global_id(0);
  const uint lid = (uint)get_local_id(0);
  float x[CHAINS];
  const float s = seed[gid];
  for (int c = 0; c < CHAINS; ++c) x[c] = s + (float)c;
  if (((lid >> block_shift) & 1u) == 0u) {
    for (uint i = 0; i < iters_a; ++i) {
#pragma unroll
      for (int c = 0; c < CHAINS; ++c) x[c] = fma(x[c], a, b);
    }
  } else {
    for (uint i = 0; i < iters_b; ++i) {
#pragma unroll
      for (int c = 0; c < CHAINS; ++c) x[c] = fma(x[c], b, a);
    }
  }
  float sum = 0.0f;
  for (int c = 0; c < CHAINS; ++c) sum += x[c];
  out[gid] = sum;
}

// The partition test: within each work-group only the waves whose index
// (local id / wave_width) is a multiple of `stride` and below
// `active_waves * stride` run the chains; the others return at once. The
// number of working waves is the same for every stride; where a scheduler
// partition takes waves round-robin, a stride that is a multiple of the
// partition count piles them all onto one partition and throughput falls.
// Inactive work-items write nothing; the host checks only the active ones.
__kernel void partition(__global const float* seed, __global float* out, uint wave_width, uint stride,
                        uint active_waves, uint iters, float a, float b) {
  const size_t gid = get_global_id(0);
  const uint wave = (uint)get_local_id(0) / wave_width;
  if (wave % stride != 0u || wave / stride >= active_waves) return;
  float x[CHAINS];
  const float s = seed[gid];
  for (int c = 0; c < CHAINS; ++c) x[c] = s + (float)c;
  for (uint i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = fma(x[c], a, b);
  }
  float sum = 0.0f;
  for (int c = 0; c < CHAINS; ++c) sum += x[c];
  out[gid] = sum;
}
