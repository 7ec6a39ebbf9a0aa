// Local (shared) memory: latency by dependent chase, bandwidth, the largest
// allocation that works, and the same chase and reads from global memory as
// the reference: the twin of opencl/local.cl (its comments say why).
//
// Parameters (read kernels only):
//   VEC=1|2|4   uint words per access
//   WG=n        the work-group size the read kernels are launched with
//   M=n         vectors each invocation reads per round; the window is N = M * WG
//
// The chase stores byte offsets, as the OpenCL kernel does; GLSL has no byte
// addressing, so each hop indexes with offset >> 2, in the local and the
// global chase alike (the two still differ only in which memory they load).

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

#ifndef VEC
#define VEC 1
#endif
#if VEC == 1
#define vec_t uint
#define VZERO 0u
uint hsum(uint v) { return v; }
#elif VEC == 2
#define vec_t uvec2
#define VZERO uvec2(0)
uint hsum(uvec2 v) { return v.x + v.y; }
#elif VEC == 4
#define vec_t uvec4
#define VZERO uvec4(0)
uint hsum(uvec4 v) { return v.x + v.y + v.z + v.w; }
#else
#error "VEC must be 1, 2 or 4"
#endif

#define X16(h) h h h h h h h h h h h h h h h h
#define X256(h) X16(h) X16(h) X16(h) X16(h) X16(h) X16(h) X16(h) X16(h) \
                X16(h) X16(h) X16(h) X16(h) X16(h) X16(h) X16(h) X16(h)

// 16 rounds per iteration while they last (README.md: lavapipe's loop limit).
#define WALK(rounds, h)              \
  uint r = rounds;                   \
  for (; r >= 16; r -= 16) {         \
    X256(h)                          \
  }                                  \
  for (; r > 0; --r) {               \
    X16(h)                           \
  }

#if defined(ENTRY_LOCAL_CHASE)
// local_chase(next, n, rounds, end) with n words of local memory.
layout(set = 0, binding = 0) restrict readonly buffer Next { uint next[]; };
layout(set = 0, binding = 3) restrict writeonly buffer End { uint end_off[]; };
layout(push_constant) uniform Args { uint n; uint rounds; } args;
shared uint l[LOCAL_WORDS];
#define HOP p = l[p >> 2];

void main() {
  for (uint i = 0; i < args.n; ++i) l[i] = next[i];
  memoryBarrierShared();
  barrier();
  uint p = 0;
  WALK(args.rounds, HOP)
  end_off[0] = p;
}

#elif defined(ENTRY_GLOBAL_CHASE)
// global_chase(g, rounds, end)
layout(set = 0, binding = 0) restrict readonly buffer G { uint g[]; };
layout(set = 0, binding = 2) restrict writeonly buffer End { uint end_off[]; };
layout(push_constant) uniform Args { uint rounds; } args;
#define GHOP p = g[p >> 2];

void main() {
  uint p = 0;
  WALK(args.rounds, GHOP)
  end_off[0] = p;
}

#elif defined(ENTRY_LOCAL_READ)
// local_read(src, rounds, stride, sums), launched in groups of WG.
#define N (M * WG)
layout(set = 0, binding = 0) restrict readonly buffer Src { vec_t src[]; };
layout(set = 0, binding = 3) restrict writeonly buffer Sums { uint sums[]; };
layout(push_constant) uniform Args { uint rounds; uint stride; } args;
shared vec_t lmem[2 * N];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint i = lid; i < 2 * N; i += WG) lmem[i] = src[i % N];
  memoryBarrierShared();
  barrier();
  vec_t acc = VZERO;
  for (uint r = 0; r < args.rounds; ++r) {
    const uint base = ((r * args.stride) % N) + lid;
    [[unroll]] for (int m = 0; m < M; ++m) acc += lmem[base + m * WG];
  }
  sums[gl_GlobalInvocationID.x] = hsum(acc);
}

#elif defined(ENTRY_GLOBAL_READ)
// global_read(win, rounds, stride, sums), launched in groups of WG.
#define N (M * WG)
layout(set = 0, binding = 0) restrict readonly buffer Win { vec_t win[]; };
layout(set = 0, binding = 3) restrict writeonly buffer Sums { uint sums[]; };
layout(push_constant) uniform Args { uint rounds; uint stride; } args;

void main() {
  const uint lid = gl_LocalInvocationID.x;
  vec_t acc = VZERO;
  for (uint r = 0; r < args.rounds; ++r) {
    const uint base = ((r * args.stride) % N) + lid;
    [[unroll]] for (int m = 0; m < M; ++m) acc += win[base + m * WG];
  }
  sums[gl_GlobalInvocationID.x] = hsum(acc);
}

#elif defined(ENTRY_LOCAL_TOUCH)
// local_touch(words, sums) with `words` words of local memory.
layout(set = 0, binding = 1) restrict writeonly buffer Sums { uint sums[]; };
layout(push_constant) uniform Args { uint words; } args;
shared uint l[LOCAL_WORDS];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint lsz = gl_WorkGroupSize.x;
  for (uint i = lid; i < args.words; i += lsz) l[i] = i * 0x9e3779b1u;
  memoryBarrierShared();
  barrier();
  uint s = 0;
  for (uint i = lsz - 1 - lid; i < args.words; i += lsz) s += l[i];
  sums[gl_GlobalInvocationID.x] = s;
}
#endif
