// The cheapest launch there is: the twin of opencl/launch.cl. One
// invocation stores the value the host passed, so the host can check that
// the last launch of a batch really ran.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

#if defined(ENTRY_EMPTY)
// empty(sink, value)
layout(set = 0, binding = 0) restrict writeonly buffer Sink { uint sink[]; };
layout(push_constant) uniform Args { uint value; } args;

void main() {
  if (gl_GlobalInvocationID.x == 0) sink[0] = args.value;
}
#endif
