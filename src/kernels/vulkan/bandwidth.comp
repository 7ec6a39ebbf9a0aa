// Global-memory bandwidth: read, write and copy, the twin of
// opencl/bandwidth.cl. The same entries, arguments, access pattern, stored
// values and sums; the layout (per-group cursors, grid-stride streams, whole
// grids) and why it is so are explained there.
//
// Parameters:
//   VEC=1|2|4|8|16   uint words per access (4 to 64 bytes); 8 and 16 are
//                    structs of uvec4, laid out as OpenCL's uint8 / uint16
//   UNROLL=n         independent accesses each invocation has in flight per step

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

#ifndef UNROLL
#define UNROLL 4
#endif

uvec4 splat4(uint x) { return uvec4(x, x ^ 0x9e3779b9u, x ^ 0x7f4a7c15u, x ^ 0x85ebca6bu); }
uint hsum4(uvec4 v) { return v.x + v.y + v.z + v.w; }

#if VEC == 1
#define vec_t uint
vec_t vzero() { return 0u; }
vec_t vadd(vec_t a, vec_t b) { return a + b; }
uint hsum(vec_t v) { return v; }
vec_t splat(uint x) { return x; }
#elif VEC == 2
#define vec_t uvec2
vec_t vzero() { return uvec2(0); }
vec_t vadd(vec_t a, vec_t b) { return a + b; }
uint hsum(vec_t v) { return v.x + v.y; }
vec_t splat(uint x) { return uvec2(x, x ^ 0x9e3779b9u); }
#elif VEC == 4
#define vec_t uvec4
vec_t vzero() { return uvec4(0); }
vec_t vadd(vec_t a, vec_t b) { return a + b; }
uint hsum(vec_t v) { return hsum4(v); }
vec_t splat(uint x) { return splat4(x); }
#elif VEC == 8
struct V8 { uvec4 lo; uvec4 hi; };
#define vec_t V8
vec_t vzero() { return V8(uvec4(0), uvec4(0)); }
vec_t vadd(vec_t a, vec_t b) { return V8(a.lo + b.lo, a.hi + b.hi); }
uint hsum(vec_t v) { return hsum4(v.lo) + hsum4(v.hi); }
vec_t splat(uint x) { return V8(splat4(x), splat4(x ^ 0xc2b2ae35u)); }
#elif VEC == 16
struct V16 { uvec4 q0; uvec4 q1; uvec4 q2; uvec4 q3; };
#define vec_t V16
vec_t vzero() { return V16(uvec4(0), uvec4(0), uvec4(0), uvec4(0)); }
vec_t vadd(vec_t a, vec_t b) { return V16(a.q0 + b.q0, a.q1 + b.q1, a.q2 + b.q2, a.q3 + b.q3); }
uint hsum(vec_t v) { return hsum4(v.q0) + hsum4(v.q1) + hsum4(v.q2) + hsum4(v.q3); }
vec_t splat(uint x) {
  return V16(splat4(x), splat4(x ^ 0xc2b2ae35u), splat4(x ^ 0x27d4eb2fu), splat4(x ^ 0x165667b1u));
}
#else
#error "VEC must be 1, 2, 4, 8 or 16"
#endif

// Advances a cursor by one step, wrapping at n (a compare and subtract).
uint next_step(uint b, uint step, uint n) {
  b += step;
  return b >= n ? b - n : b;
}

#define LSZ gl_WorkGroupSize.x
#define GSZ (gl_NumWorkGroups.x * gl_WorkGroupSize.x)

#if defined(ENTRY_READ)
// read(src, n, start, count, sums)
layout(set = 0, binding = 0) restrict readonly buffer Src { vec_t src[]; };
layout(set = 0, binding = 2) restrict readonly buffer Start { uint start[]; };
layout(set = 0, binding = 4) restrict writeonly buffer Sums { uint sums[]; };
layout(push_constant) uniform Args { uint n; uint count; } args;

void main() {
  const uint step = UNROLL * LSZ;
  const uint a = start[gl_WorkGroupID.x];
  const uint r = (a & (step - 1)) + gl_LocalInvocationID.x;
  uint b = a & ~(step - 1);
  vec_t acc = vzero();
  for (uint done = 0; done < args.count; done += step) {
    vec_t v[UNROLL];
    [[unroll]] for (int k = 0; k < UNROLL; ++k) v[k] = src[r + b + k * LSZ];
    [[unroll]] for (int k = 0; k < UNROLL; ++k) acc = vadd(acc, v[k]);
    b = next_step(b, step, args.n);
  }
  sums[gl_GlobalInvocationID.x] = hsum(acc);
}

#elif defined(ENTRY_WRITE)
// write(dst, n, start, count, seed)
layout(set = 0, binding = 0) restrict writeonly buffer Dst { vec_t dst[]; };
layout(set = 0, binding = 2) restrict readonly buffer Start { uint start[]; };
layout(push_constant) uniform Args { uint n; uint count; uint seed; } args;

void main() {
  const uint step = UNROLL * LSZ;
  const uint a = start[gl_WorkGroupID.x];
  const uint r = (a & (step - 1)) + gl_LocalInvocationID.x;
  uint b = a & ~(step - 1);
  for (uint done = 0; done < args.count; done += step) {
    [[unroll]] for (int k = 0; k < UNROLL; ++k) {
      const uint i = r + b + k * LSZ;
      dst[i] = splat((i * 0x9e3779b1u) ^ args.seed);
    }
    b = next_step(b, step, args.n);
  }
}

#elif defined(ENTRY_COPY)
// copy(src, dst, n, start, count)
layout(set = 0, binding = 0) restrict readonly buffer Src { vec_t src[]; };
layout(set = 0, binding = 1) restrict writeonly buffer Dst { vec_t dst[]; };
layout(set = 0, binding = 3) restrict readonly buffer Start { uint start[]; };
layout(push_constant) uniform Args { uint n; uint count; } args;

void main() {
  const uint step = UNROLL * LSZ;
  const uint a = start[gl_WorkGroupID.x];
  const uint r = (a & (step - 1)) + gl_LocalInvocationID.x;
  uint b = a & ~(step - 1);
  for (uint done = 0; done < args.count; done += step) {
    vec_t v[UNROLL];
    [[unroll]] for (int k = 0; k < UNROLL; ++k) v[k] = src[r + b + k * LSZ];
    [[unroll]] for (int k = 0; k < UNROLL; ++k) dst[r + b + k * LSZ] = v[k];
    b = next_step(b, step, args.n);
  }
}

#elif defined(ENTRY_READ_STREAM)
// read_stream(src, n, first, count, sums)
layout(set = 0, binding = 0) restrict readonly buffer Src { vec_t src[]; };
layout(set = 0, binding = 4) restrict writeonly buffer Sums { uint sums[]; };
layout(push_constant) uniform Args { uint n; uint first; uint count; } args;

void main() {
  const uint g = GSZ;
  const uint step = UNROLL * g;
  const uint gid = gl_GlobalInvocationID.x;
  uint b = args.first;
  vec_t acc = vzero();
  for (uint done = 0; done < args.count; done += step) {
    vec_t v[UNROLL];
    [[unroll]] for (int k = 0; k < UNROLL; ++k) v[k] = src[gid + b + k * g];
    [[unroll]] for (int k = 0; k < UNROLL; ++k) acc = vadd(acc, v[k]);
    b = next_step(b, step, args.n);
  }
  sums[gid] = hsum(acc);
}

#elif defined(ENTRY_WRITE_STREAM)
// write_stream(dst, n, first, count, seed)
layout(set = 0, binding = 0) restrict writeonly buffer Dst { vec_t dst[]; };
layout(push_constant) uniform Args { uint n; uint first; uint count; uint seed; } args;

void main() {
  const uint g = GSZ;
  const uint step = UNROLL * g;
  const uint gid = gl_GlobalInvocationID.x;
  uint b = args.first;
  for (uint done = 0; done < args.count; done += step) {
    [[unroll]] for (int k = 0; k < UNROLL; ++k) {
      const uint i = b + k * g + gid;
      dst[i] = splat((i * 0x9e3779b1u) ^ args.seed);
    }
    b = next_step(b, step, args.n);
  }
}

#elif defined(ENTRY_COPY_STREAM)
// copy_stream(src, dst, n, first, count)
layout(set = 0, binding = 0) restrict readonly buffer Src { vec_t src[]; };
layout(set = 0, binding = 1) restrict writeonly buffer Dst { vec_t dst[]; };
layout(push_constant) uniform Args { uint n; uint first; uint count; } args;

void main() {
  const uint g = GSZ;
  const uint step = UNROLL * g;
  const uint gid = gl_GlobalInvocationID.x;
  uint b = args.first;
  for (uint done = 0; done < args.count; done += step) {
    vec_t v[UNROLL];
    [[unroll]] for (int k = 0; k < UNROLL; ++k) v[k] = src[gid + b + k * g];
    [[unroll]] for (int k = 0; k < UNROLL; ++k) dst[gid + b + k * g] = v[k];
    b = next_step(b, step, args.n);
  }
}

#elif defined(ENTRY_WRITE_GRID)
// write_grid(dst, n, first, seed)
layout(set = 0, binding = 0) restrict writeonly buffer Dst { vec_t dst[]; };
layout(push_constant) uniform Args { uint n; uint first; uint seed; } args;

void main() {
  uint i = args.first + gl_GlobalInvocationID.x;
  i = i >= args.n ? i - args.n : i;
  dst[i] = splat((i * 0x9e3779b1u) ^ args.seed);
}

#elif defined(ENTRY_COPY_GRID)
// copy_grid(src, dst, n, first)
layout(set = 0, binding = 0) restrict readonly buffer Src { vec_t src[]; };
layout(set = 0, binding = 1) restrict writeonly buffer Dst { vec_t dst[]; };
layout(push_constant) uniform Args { uint n; uint first; } args;

void main() {
  uint i = args.first + gl_GlobalInvocationID.x;
  i = i >= args.n ? i - args.n : i;
  dst[i] = src[i];
}
#endif
