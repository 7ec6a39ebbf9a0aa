// Reads a whole buffer from a shader, to tell whether host-visible memory
// lives on the device or is reached over the host link: the twin of
// opencl/transfer.cl (the same sums, checked by the host).
//
// Parameters: GROUP, the work-group size (for the local reduction).

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

#if defined(ENTRY_READ_SUM)
// read_sum(data: uvec4[], count: u64, partial)
layout(set = 0, binding = 0) restrict readonly buffer Data { uvec4 data[]; };
layout(set = 0, binding = 2) restrict writeonly buffer Partial { uint partial[]; };
layout(push_constant) uniform Args { uint64_t count; } args;

shared uint sums[GROUP];

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint count = uint(args.count);  // at most 4 GiB of uvec4: fits
  uvec4 acc = uvec4(0);
  for (uint i = gl_GlobalInvocationID.x; i < count; i += stride) acc += data[i];
  const uint lid = gl_LocalInvocationID.x;
  sums[lid] = acc.x + acc.y + acc.z + acc.w;
  memoryBarrierShared();
  barrier();
  for (uint span = GROUP / 2; span > 0; span /= 2) {
    if (lid < span) sums[lid] += sums[lid + span];
    memoryBarrierShared();
    barrier();
  }
  if (lid == 0) partial[gl_WorkGroupID.x] = sums[0];
}
#endif
