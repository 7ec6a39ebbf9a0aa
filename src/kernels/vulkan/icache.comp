// Instruction cache: the twin of opencl/icache.cl (which says why the kernel
// looks as it does): throughput of a loop whose body is BODY float adds,
// written out by the preprocessor so that the code really grows with BODY.
//
// Parameters: BODY, adds per loop iteration, a multiple of 64 below 32768.
// Arguments: start, out; iters, a.
//
// The accumulators are `precise`: no driver may fold x + a + a into x + 2a
// or reorder the adds, as OpenCL C without fast-math may not.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

layout(set = 0, binding = 0) readonly buffer Start { float start[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Args {
  uint iters;
  float a;
} args;

#define ADD8 x0 += a; x1 += a; x2 += a; x3 += a; x4 += a; x5 += a; x6 += a; x7 += a;
#define ADD64 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8
#define ADD128 ADD64 ADD64
#define ADD256 ADD128 ADD128
#define ADD512 ADD256 ADD256
#define ADD1024 ADD512 ADD512
#define ADD2048 ADD1024 ADD1024
#define ADD4096 ADD2048 ADD2048
#define ADD8192 ADD4096 ADD4096
#define ADD16384 ADD8192 ADD8192

void main() {
  const uint gid = gl_GlobalInvocationID.x;
  const float s = start[gid];
  const float a = args.a;
  // Distinct starting values: equal ones would let the compiler see eight
  // identical chains and keep one.
  precise float x0 = s, x1 = s + 1.0, x2 = s + 2.0, x3 = s + 3.0, x4 = s + 4.0, x5 = s + 5.0, x6 = s + 6.0,
                x7 = s + 7.0;
  for (uint i = 0; i < args.iters; ++i) {
#if (BODY & 64) != 0
    ADD64
#endif
#if (BODY & 128) != 0
    ADD128
#endif
#if (BODY & 256) != 0
    ADD256
#endif
#if (BODY & 512) != 0
    ADD512
#endif
#if (BODY & 1024) != 0
    ADD1024
#endif
#if (BODY & 2048) != 0
    ADD2048
#endif
#if (BODY & 4096) != 0
    ADD4096
#endif
#if (BODY & 8192) != 0
    ADD8192
#endif
#if (BODY & 16384) != 0
    ADD16384
#endif
  }
  // Sums of exact integers below 2^24 (times powers of two): exact.
  precise float sum = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
  out_[gid] = sum;
}
