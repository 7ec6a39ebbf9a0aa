// Copy kernels of the Adreno 320/420 paper's coalescing experiments (its Figures 3-5):
// B[i] = A[i * stride + offset], one 32-bit element per work-item.
//
// No build options. Elements are uint (the paper copies floats; the width
// is what matters, and integers compare exactly on the host).
//
// Why this shape:
// - One element per work-item, as in the paper: the work-group size then
//   sets how many neighbouring addresses the hardware may coalesce, and the
//   offset and stride set how those addresses fall on its memory segments.
// - Offset and stride are kernel arguments, not build options: the compiler
//   must not specialise the address arithmetic (a constant stride 1 could be
//   vectorised in ways that hide what the memory system does on its own).
// - The source holds values made by `fill` from a hash of the index, so the
//   copy cannot be folded, and the host checks chunks of B against the same
//   hash after each measurement.

// A 32-bit mix of the element index (the host mirrors it in
// coalescing_value()); any value the copy kernel cannot predict would do.
uint coalescing_hash(uint i, uint seed) {
  uint x = (i ^ seed) * 0x9E3779B1u;
  x ^= x >> 15;
  x *= 0x85EBCA77u;
  x ^= x >> 13;
  return x;
}

// A[i] = hash(i) for every i < count (count may exceed the grid: the loop
// strides by the grid size so that an 8 GiB source needs no huge grid).
__kernel void fill(__global uint* a, ulong count, uint seed) {
  const size_t grid = get_global_size(0);
  for (size_t i = get_global_id(0); i < count; i += grid) a[i] = coalescing_hash((uint)i, seed);
}

__kernel void copy(__global const uint* a, __global uint* b, uint offset, uint stride, uint count) {
  const size_t i = get_global_id(0);
  if (i < count) b[i] = a[i * (size_t)stride + offset];
}
