// How many work-groups a compute unit runs at once, counted with atomics
// and no timestamps: the twin of opencl/scheduling.cl, which says why the
// kernel finishes whatever the scheduler does.
//
// Arguments: running, peak, sink; scratch_words, hold. The local memory the
// host gives the launch (LaunchShape::local_bytes) is `scratch`, written and
// read so that it cannot be dropped.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

layout(set = 0, binding = 0) coherent volatile buffer Running { uint running; };
layout(set = 0, binding = 1) buffer Peak { uint peak; };
layout(set = 0, binding = 2) buffer Sink { uint sink; };
layout(push_constant) uniform Args {
  uint scratch_words;
  uint hold;
} args;

shared uint scratch[LOCAL_WORDS];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  if (args.scratch_words > 0u) scratch[lid % args.scratch_words] = lid;
  if (lid == 0u) {
    uint seen = atomicAdd(running, 1u) + 1u;
    for (uint i = 0; i < args.hold; ++i) seen = max(seen, running);
    atomicMax(peak, seen);
    atomicAdd(running, 0xffffffffu);
  }
  memoryBarrierShared();
  barrier();
  if (args.scratch_words > 0u && lid == 0u) atomicAdd(sink, scratch[(lid + 1u) % args.scratch_words] + 1u);
  if (args.scratch_words == 0u && lid == 0u) atomicAdd(sink, 1u);
}
