// Reads a whole buffer from a kernel, to tell whether a host-allocated
// (CL_MEM_ALLOC_HOST_PTR) buffer lives in device memory or is reached over
// the host link: the same kernel is timed on both kinds of buffer.
//
// Each work-item sums a grid-stride walk of uint4 (wide, coalesced loads so
// the rate is the memory's, not the issue rate's) and each work-group writes
// one partial sum; the host adds the partials and checks them against the
// pattern it wrote, so loads the compiler dropped would be caught.
//
// Build options: -DGROUP=n  the work-group size (for the local reduction)

__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1))) void read_sum(__global const uint4* data,
                                                                           ulong count,
                                                                           __global uint* partial) {
  __local uint sums[GROUP];
  const size_t stride = get_global_size(0);
  uint4 acc = (uint4)(0);
  for (size_t i = get_global_id(0); i < count; i += stride) acc += data[i];
  const uint lid = (uint)get_local_id(0);
  sums[lid] = acc.x + acc.y + acc.z + acc.w;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint span = GROUP / 2; span > 0; span /= 2) {
    if (lid < span) sums[lid] += sums[lid + span];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = sums[0];
}
