// Copy kernels of the coalescing experiments: the twin of
// opencl/coalescing.cl (B[i] = A[i * stride + offset], one 32-bit element
// per invocation; its comments say why). Buffers are at most 4 GiB through
// Vulkan's storage-buffer range, so 32-bit element indices suffice.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

// The host mirrors it (coalescing_value()).
uint coalescing_hash(uint i, uint seed) {
  uint x = (i ^ seed) * 0x9E3779B1u;
  x ^= x >> 15;
  x *= 0x85EBCA77u;
  x ^= x >> 13;
  return x;
}

#if defined(ENTRY_FILL)
// fill(a, count: u64, seed): a[i] = hash(i) for every i < count, grid-stride.
layout(set = 0, binding = 0) restrict writeonly buffer A { uint a[]; };
layout(push_constant) uniform Args {
  uint64_t count;
  uint seed;
} args;

void main() {
  const uint grid = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint count = uint(args.count);
  for (uint i = gl_GlobalInvocationID.x; i < count; i += grid) a[i] = coalescing_hash(i, args.seed);
}

#elif defined(ENTRY_COPY)
// copy(a, b, offset, stride, count)
layout(set = 0, binding = 0) restrict readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) restrict writeonly buffer B { uint b[]; };
layout(push_constant) uniform Args {
  uint offset;
  uint stride;
  uint count;
} args;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < args.count) b[i] = a[i * args.stride + args.offset];
}
#endif
