// Arithmetic throughput (tp_<OP>) and dependent-chain latency (lat_<OP>) of
// one element type: the twin of opencl/compute.cl, whose header says why
// every kernel has the shape it has. Same entries, arguments, maps and
// buffer layouts; what GLSL spells differently is said where it happens.
//
// Parameters (as the OpenCL build options): SCALAR and SCALAR_IS_<T>, VEC
// (1, 2 or 4: GLSL has no 8- and 16-lane vectors), KIND_FLOAT | KIND_INT
// (KIND_PTX_F16X2 and HAS_PTX are NVIDIA inline PTX, which GLSL cannot
// embed: a build asking for either fails with that reason), API_DOT (dp4a
// through the API's integer dot product, below), CHAINS, UNROLL,
// LAT_UNROLL, UNROLL_SLOW, LAT_UNROLL_SLOW, OPS_<OP> | OPS_FAST | OPS_ALL.
// GLSL has one entry per shader: ENTRY_TP_<OP> or ENTRY_LAT_<OP> picks it;
// OPS_* (which kernels an OpenCL program holds) changes nothing here, since
// every build holds its one entry only.
//
// What GLSL spells differently:
// - Vulkan's built-ins have one precision each (the SPIR-V environment's
//   tables), so NATIVE_<OP> and <OP> compile to the same instructions here;
//   both are kept so that a run through either API has the same op list.
// - GLSL has exp, log and sin for 16- and 32-bit floats only: those fp64
//   entries fail to build with that reason.
// - Chains are `precise` (no reassociation, no contraction; a precise fma()
//   is one fused operation), as OpenCL C without fast-math arithmetic is.
//   MAD is not: mad(), like OpenCL's, may be fused or not as the driver likes.
// - The lat_ kernels read the subgroup's cycle counter (clockARB) where the
//   device has one (HAS_SUBGROUP_CLOCK); else cycles[0] is 0.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

#if defined(KIND_PTX_F16X2) || HAS_PTX
#error "compute: NVIDIA inline PTX (packed-half instructions, dp4a, %clock64) is not reachable from GLSL"
#endif
#if SCALAR_IS_F64 && !HAS_FLOAT64
#error "compute: the device has no double precision (shaderFloat64)"
#endif
#if SCALAR_IS_F16 && !HAS_FLOAT16
#error "compute: the device has no half arithmetic or 16-bit storage (shaderFloat16)"
#endif
#if SCALAR_IS_I64 && !HAS_INT64
#error "compute: the device has no 64-bit integers (shaderInt64)"
#endif
#if SCALAR_IS_I8 && !HAS_INT8
#error "compute: the device has no 8-bit integers or 8-bit storage (shaderInt8)"
#endif
#if SCALAR_IS_I16
#if !defined(HAS_INT16) || !HAS_INT16
#error "compute: the device has no 16-bit integers or 16-bit storage (shaderInt16)"
#endif
#extension GL_EXT_shader_16bit_storage : require
#endif
#if SCALAR_IS_F16
#extension GL_EXT_shader_16bit_storage : require
#endif
#if SCALAR_IS_I8
#extension GL_EXT_shader_8bit_storage : require
#endif
#if API_DOT
#if !(VEC == 1 && SCALAR_IS_I32 && defined(KIND_INT))
#error "compute: the integer dot product runs in the scalar int32 program only"
#endif
// Debian 12's glslang has no GL_EXT_integer_dot_product: the instruction is
// spelled through GL_EXT_spirv_intrinsics instead.
#extension GL_EXT_spirv_intrinsics : require
#endif

#ifndef CHAINS
#define CHAINS 8
#endif
#ifndef UNROLL
#define UNROLL 32
#endif
#ifndef LAT_UNROLL
#define LAT_UNROLL 64
#endif
#ifndef UNROLL_SLOW
#define UNROLL_SLOW 4
#endif
#ifndef LAT_UNROLL_SLOW
#define LAT_UNROLL_SLOW 16
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

// The chain's type ELEM: SCALAR, or its VEC-lane vector.
#if SCALAR_IS_F32
#define VPREFIX vec
#elif SCALAR_IS_F64
#define VPREFIX dvec
#elif SCALAR_IS_F16
#define VPREFIX f16vec
#elif SCALAR_IS_I32
#define VPREFIX ivec
#elif SCALAR_IS_I64
#define VPREFIX i64vec
#elif SCALAR_IS_I16
#define VPREFIX i16vec
#elif SCALAR_IS_I8
#define VPREFIX i8vec
#elif SCALAR_IS_U32
#define VPREFIX uvec
#endif
#if VEC == 1
#define ELEM SCALAR
#elif VEC == 2 || VEC == 4
#define ELEM CAT(VPREFIX, VEC)
#else
#error "compute: GLSL vectors have 2 to 4 lanes"
#endif

#if SCALAR_IS_F64
#define ARG_SCALAR double
#else
#define ARG_SCALAR float
#endif

// The seed and out buffers hold ELEMs back to back: std430 lays vectors of 2
// and 4 lanes out tightly (OpenCL's vloadN / vstoreN layout); param holds
// SCALARs. Bindings 0, 1, 2 as the arguments' positions.
layout(set = 0, binding = 0) readonly buffer Seed { ELEM seed[]; };
layout(set = 0, binding = 1) readonly buffer Param { SCALAR param[]; };
layout(set = 0, binding = 2) writeonly buffer Out { ELEM out_[]; };

#if HAS_SUBGROUP_CLOCK
uint64_t cycle_counter() { return clockARB(); }
#else
uint64_t cycle_counter() { return 0ul; }
#endif

// ---------------------------------------------------------------- op steps
// STEP_<OP>(x, y, a, b): one step of one chain, two counted ops.

#if defined(KIND_FLOAT)
#define STEP_ADD(x, y, a, b) \
  x = x + y;                 \
  y = y - x;
#define STEP_MUL(x, y, a, b) \
  x = y * a;                 \
  y = x * b;
#define STEP_FMA(x, y, a, b) \
  x = fma(y, a, b);          \
  y = fma(x, a, b);
#define STEP_MAD(x, y, a, b) \
  x = y * a + b;             \
  y = x * a + b;
#define TP_STEP_FMA(x, y, a, b) \
  x = fma(x, a, b);             \
  y = fma(y, a, b);
#define TP_STEP_MAD(x, y, a, b) \
  x = x * a + b;                \
  y = y * a + b;
#define STEP_DIV(x, y, a, b) \
  x = a / y;                 \
  y = b / x;
#define STEP_SQRT(x, y, a, b) \
  x = sqrt(y);                \
  y = sqrt(x);
#define STEP_RSQRT(x, y, a, b) \
  x = inversesqrt(y);          \
  y = inversesqrt(x);
#define STEP_EXP(x, y, a, b) \
  x = exp(-y);               \
  y = exp(-x);
#define STEP_LOG(x, y, a, b) \
  x = log(y * a);            \
  y = log(x * a);
#define STEP_SIN(x, y, a, b) \
  x = sin(y);                \
  y = sin(x);
#define STEP_NATIVE_DIVIDE STEP_DIV
#define STEP_NATIVE_SQRT STEP_SQRT
#define STEP_NATIVE_RSQRT STEP_RSQRT
#define STEP_NATIVE_EXP STEP_EXP
#define STEP_NATIVE_LOG STEP_LOG
#define STEP_NATIVE_SIN STEP_SIN
#endif  // KIND_FLOAT

#if defined(KIND_INT)
#define STEP_ADD(x, y, a, b) \
  x = x + y;                 \
  y = y + x;
#define STEP_MUL(x, y, a, b) \
  x = x * y;                 \
  y = y * x;
#define STEP_MAD(x, y, a, b) \
  x = y * a + b;             \
  y = x * a + b;
#define STEP_DIV(x, y, a, b) \
  x = a / (y | ELEM(1));     \
  y = a / (x | ELEM(1));
#if API_DOT
// compute.cl's dp4a through the API: OpSDotKHR (id 4450) on packed 4x8-bit
// operands (PackedVectorFormat4x8Bit = 0; capabilities DotProductKHR 6019
// and DotProductInput4x8BitPackedKHR 6018), the signed int8 dot product of
// v's and a's bytes, as PTX dp4a.s32.s32; then the int32 add of b, which
// wraps as dp4a's accumulation does. Needs shaderIntegerDotProduct (core in
// Vulkan 1.3).
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot_4x8_packed(uint v, uint a, spirv_literal int packed_vector_format);
#define DP4A(v, a, s) (sdot_4x8_packed(uint(v), uint(a), 0) + (s))
#define STEP_DP4A(x, y, a, b) \
  x = DP4A(y, a, b);          \
  y = DP4A(x, a, b);
#endif
#if VEC == 1 && SCALAR_IS_I32
// int -> float -> int; the multiply by a float the host sets to 1.0 stops
// the compiler from folding the round trip. int() truncates, as
// convert_int_rtz does.
#define STEP_CVT(x, y, a, b)                            \
  x = int(float(y) * uintBitsToFloat(uint(a)));         \
  y = int(float(x) * uintBitsToFloat(uint(a)));
#endif
#endif  // KIND_INT

// ---------------------------------------------------------------- kernels
// Declares `PREC ELEM x[CHAINS], y[CHAINS]` from seed, runs ITERS trips of
// STEPS x CHAINS steps of STEP, stores them: compute.cl's THROUGHPUT_KERNEL.
#define THROUGHPUT_BODY(PREC, STEPS, STEP, A, B)                    \
  const uint base = gl_GlobalInvocationID.x * 2u * uint(CHAINS);    \
  const ELEM a = A;                                                 \
  const ELEM b = B;                                                 \
  PREC ELEM x[CHAINS];                                              \
  PREC ELEM y[CHAINS];                                              \
  [[unroll]] for (int c = 0; c < CHAINS; ++c) {                     \
    x[c] = seed[base + 2u * uint(c)];                               \
    y[c] = seed[base + 2u * uint(c) + 1u];                          \
  }                                                                 \
  for (uint i = 0; i < args.iters; ++i) {                           \
    [[unroll]] for (int u = 0; u < STEPS; ++u) {                    \
      [[unroll]] for (int c = 0; c < CHAINS; ++c) { STEP(x[c], y[c], a, b) } \
    }                                                               \
  }                                                                 \
  [[unroll]] for (int c = 0; c < CHAINS; ++c) {                     \
    out_[base + 2u * uint(c)] = x[c];                               \
    out_[base + 2u * uint(c) + 1u] = y[c];                          \
  }

// One invocation, one chain: seed[0..1] -> out[0..1]; cycles[0] = cycles
// spent in the loop where a counter exists (else 0).
#define LATENCY_BODY(PREC, STEP, STEPS)                               \
  const ELEM a = ELEM(param[0]);                                    \
  const ELEM b = ELEM(param[1]);                                    \
  PREC ELEM x = seed[0];                                            \
  PREC ELEM y = seed[1];                                            \
  const uint64_t t0 = cycle_counter();                              \
  for (uint i = 0; i < args.iters; ++i) {                           \
    [[unroll]] for (int u = 0; u < STEPS; ++u) { STEP(x, y, a, b) } \
  }                                                                 \
  const uint64_t t1 = cycle_counter();                              \
  out_[0] = x;                                                      \
  out_[1] = y;                                                      \
  cycles[0] = t1 - t0;

#define TP_ARGS layout(push_constant) uniform Args { uint iters; } args;
// compute.cl's THROUGHPUT_KERNEL_BYVAL: FMA and MAD take a and b by value as
// well (float, or double for fp64); `param` holds the same values.
#define TP_ARGS_BYVAL layout(push_constant) uniform Args { uint iters; ARG_SCALAR pa; ARG_SCALAR pb; } args;
#define LAT_ARGS                                                                \
  layout(set = 0, binding = 3) writeonly buffer Cycles { uint64_t cycles[]; }; \
  layout(push_constant) uniform Args { uint iters; } args;

#define PARAM_A ELEM(param[0])
#define PARAM_B ELEM(param[1])
#define BYVAL_A ELEM(SCALAR(args.pa))
#define BYVAL_B ELEM(SCALAR(args.pb))

// Entries compute.cl leaves out of vector programs (latency kernels, slow
// ops) or out of this kind's op set are build errors here, as the missing
// kernel is in OpenCL.
#if VEC != 1 && (defined(ENTRY_LAT_ADD) || defined(ENTRY_LAT_MUL) || defined(ENTRY_LAT_FMA) || \
                 defined(ENTRY_LAT_MAD) || defined(ENTRY_LAT_DIV) || defined(ENTRY_TP_DIV) ||   \
                 defined(ENTRY_TP_CVT) || defined(ENTRY_LAT_CVT))
#error "compute: vector programs hold the throughput kernels of the fast ops only"
#endif

#if defined(ENTRY_TP_ADD)
TP_ARGS
void main() { THROUGHPUT_BODY(precise, UNROLL, STEP_ADD, PARAM_A, PARAM_B) }
#elif defined(ENTRY_LAT_ADD)
LAT_ARGS
void main() { LATENCY_BODY(precise, STEP_ADD, LAT_UNROLL) }
#elif defined(ENTRY_TP_MUL)
TP_ARGS
void main() { THROUGHPUT_BODY(precise, UNROLL, STEP_MUL, PARAM_A, PARAM_B) }
#elif defined(ENTRY_LAT_MUL)
LAT_ARGS
void main() { LATENCY_BODY(precise, STEP_MUL, LAT_UNROLL) }
#elif defined(ENTRY_TP_MAD)
// mad may fuse: no `precise`. Integers have no by-value form (compute.cl).
#if defined(KIND_FLOAT)
TP_ARGS_BYVAL
void main() { THROUGHPUT_BODY(, UNROLL, TP_STEP_MAD, BYVAL_A, BYVAL_B) }
#else
TP_ARGS
void main() { THROUGHPUT_BODY(, UNROLL, STEP_MAD, PARAM_A, PARAM_B) }
#endif
#elif defined(ENTRY_LAT_MAD)
LAT_ARGS
void main() { LATENCY_BODY(, STEP_MAD, LAT_UNROLL) }
#elif defined(ENTRY_TP_FMA) && defined(KIND_FLOAT)
TP_ARGS_BYVAL
void main() { THROUGHPUT_BODY(precise, UNROLL, TP_STEP_FMA, BYVAL_A, BYVAL_B) }
#elif defined(ENTRY_LAT_FMA) && defined(KIND_FLOAT)
LAT_ARGS
void main() { LATENCY_BODY(precise, STEP_FMA, LAT_UNROLL) }
#elif defined(ENTRY_TP_CVT) && defined(STEP_CVT)
TP_ARGS
void main() { THROUGHPUT_BODY(precise, UNROLL, STEP_CVT, PARAM_A, PARAM_B) }
#elif defined(ENTRY_LAT_CVT) && defined(STEP_CVT)
LAT_ARGS
void main() { LATENCY_BODY(precise, STEP_CVT, LAT_UNROLL) }
#elif defined(ENTRY_TP_DP4A) && defined(STEP_DP4A)
TP_ARGS
void main() { THROUGHPUT_BODY(precise, UNROLL, STEP_DP4A, PARAM_A, PARAM_B) }
#elif defined(ENTRY_LAT_DP4A) && defined(STEP_DP4A)
LAT_ARGS
void main() { LATENCY_BODY(precise, STEP_DP4A, LAT_UNROLL) }
#elif defined(ENTRY_TP_DIV)
TP_ARGS
void main() { THROUGHPUT_BODY(precise, UNROLL_SLOW, STEP_DIV, PARAM_A, PARAM_B) }
#elif defined(ENTRY_LAT_DIV)
LAT_ARGS
void main() { LATENCY_BODY(precise, STEP_DIV, LAT_UNROLL_SLOW) }
#elif defined(KIND_FLOAT) && VEC == 1
// The slow float ops, one per build; fp64 has no exp, log or sin in GLSL.
#if SCALAR_IS_F64 && (defined(ENTRY_TP_EXP) || defined(ENTRY_LAT_EXP) || defined(ENTRY_TP_LOG) ||           \
                      defined(ENTRY_LAT_LOG) || defined(ENTRY_TP_SIN) || defined(ENTRY_LAT_SIN) ||           \
                      defined(ENTRY_TP_NATIVE_EXP) || defined(ENTRY_LAT_NATIVE_EXP) ||                      \
                      defined(ENTRY_TP_NATIVE_LOG) || defined(ENTRY_LAT_NATIVE_LOG) ||                      \
                      defined(ENTRY_TP_NATIVE_SIN) || defined(ENTRY_LAT_NATIVE_SIN) ||                      \
                      defined(ENTRY_TP_NATIVE_DIVIDE) || defined(ENTRY_LAT_NATIVE_DIVIDE) ||                \
                      defined(ENTRY_TP_NATIVE_SQRT) || defined(ENTRY_LAT_NATIVE_SQRT) ||                    \
                      defined(ENTRY_TP_NATIVE_RSQRT) || defined(ENTRY_LAT_NATIVE_RSQRT))
#error "compute: GLSL has no double-precision exp, log or sin, and compute.cl no fp64 native_ ops"
#endif
#if defined(ENTRY_TP_SQRT)
#define SLOW_TP STEP_SQRT
#elif defined(ENTRY_LAT_SQRT)
#define SLOW_LAT STEP_SQRT
#elif defined(ENTRY_TP_RSQRT)
#define SLOW_TP STEP_RSQRT
#elif defined(ENTRY_LAT_RSQRT)
#define SLOW_LAT STEP_RSQRT
#elif defined(ENTRY_TP_EXP)
#define SLOW_TP STEP_EXP
#elif defined(ENTRY_LAT_EXP)
#define SLOW_LAT STEP_EXP
#elif defined(ENTRY_TP_LOG)
#define SLOW_TP STEP_LOG
#elif defined(ENTRY_LAT_LOG)
#define SLOW_LAT STEP_LOG
#elif defined(ENTRY_TP_SIN)
#define SLOW_TP STEP_SIN
#elif defined(ENTRY_LAT_SIN)
#define SLOW_LAT STEP_SIN
#elif defined(ENTRY_TP_NATIVE_DIVIDE)
#define SLOW_TP STEP_DIV
#elif defined(ENTRY_LAT_NATIVE_DIVIDE)
#define SLOW_LAT STEP_DIV
#elif defined(ENTRY_TP_NATIVE_SQRT)
#define SLOW_TP STEP_SQRT
#elif defined(ENTRY_LAT_NATIVE_SQRT)
#define SLOW_LAT STEP_SQRT
#elif defined(ENTRY_TP_NATIVE_RSQRT)
#define SLOW_TP STEP_RSQRT
#elif defined(ENTRY_LAT_NATIVE_RSQRT)
#define SLOW_LAT STEP_RSQRT
#elif defined(ENTRY_TP_NATIVE_EXP)
#define SLOW_TP STEP_EXP
#elif defined(ENTRY_LAT_NATIVE_EXP)
#define SLOW_LAT STEP_EXP
#elif defined(ENTRY_TP_NATIVE_LOG)
#define SLOW_TP STEP_LOG
#elif defined(ENTRY_LAT_NATIVE_LOG)
#define SLOW_LAT STEP_LOG
#elif defined(ENTRY_TP_NATIVE_SIN)
#define SLOW_TP STEP_SIN
#elif defined(ENTRY_LAT_NATIVE_SIN)
#define SLOW_LAT STEP_SIN
#endif
#if defined(SLOW_TP)
TP_ARGS
void main() { THROUGHPUT_BODY(precise, UNROLL_SLOW, SLOW_TP, PARAM_A, PARAM_B) }
#elif defined(SLOW_LAT)
LAT_ARGS
void main() { LATENCY_BODY(precise, SLOW_LAT, LAT_UNROLL_SLOW) }
#elif defined(ENTRY_TP_MIX_FMA_ADD) && SCALAR_IS_F32
// Dual issue: even chains fma, odd chains add, in one instruction stream.
TP_ARGS
void main() {
  const uint base = gl_GlobalInvocationID.x * 2u * uint(CHAINS);
  const float a = param[0];
  const float b = param[1];
  precise float x[CHAINS];
  precise float y[CHAINS];
  [[unroll]] for (int c = 0; c < CHAINS; ++c) {
    x[c] = seed[base + 2u * uint(c)];
    y[c] = seed[base + 2u * uint(c) + 1u];
  }
  for (uint i = 0; i < args.iters; ++i) {
    [[unroll]] for (int u = 0; u < UNROLL; ++u) {
      [[unroll]] for (int c = 0; c < CHAINS; c += 2) {
        STEP_FMA(x[c], y[c], a, b) STEP_ADD(x[c + 1], y[c + 1], a, b)
      }
    }
  }
  [[unroll]] for (int c = 0; c < CHAINS; ++c) {
    out_[base + 2u * uint(c)] = x[c];
    out_[base + 2u * uint(c) + 1u] = y[c];
  }
}
#elif defined(ENTRY_TP_MIX_FMA_IADD) && SCALAR_IS_F32
// fp32 fma beside int32 adds; the int chains live in the float buffers as
// bit patterns.
TP_ARGS
void main() {
  const uint base = gl_GlobalInvocationID.x * 2u * uint(CHAINS);
  const float a = param[0];
  const float b = param[1];
  precise float x[CHAINS / 2];
  precise float y[CHAINS / 2];
  int p[CHAINS / 2];
  int q[CHAINS / 2];
  [[unroll]] for (int c = 0; c < CHAINS / 2; ++c) {
    x[c] = seed[base + 4u * uint(c)];
    y[c] = seed[base + 4u * uint(c) + 1u];
    p[c] = floatBitsToInt(seed[base + 4u * uint(c) + 2u]);
    q[c] = floatBitsToInt(seed[base + 4u * uint(c) + 3u]);
  }
  for (uint i = 0; i < args.iters; ++i) {
    [[unroll]] for (int u = 0; u < UNROLL; ++u) {
      [[unroll]] for (int c = 0; c < CHAINS / 2; ++c) {
        x[c] = fma(y[c], a, b);
        y[c] = fma(x[c], a, b);
        p[c] = p[c] + q[c];
        q[c] = q[c] + p[c];
      }
    }
  }
  [[unroll]] for (int c = 0; c < CHAINS / 2; ++c) {
    out_[base + 4u * uint(c)] = x[c];
    out_[base + 4u * uint(c) + 1u] = y[c];
    out_[base + 4u * uint(c) + 2u] = intBitsToFloat(p[c]);
    out_[base + 4u * uint(c) + 3u] = intBitsToFloat(q[c]);
  }
}
#else
#error "compute: no such entry in this kind, type and vector form"
#endif
#else
#error "compute: no such entry in this kind, type and vector form"
#endif
