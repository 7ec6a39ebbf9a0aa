// One time step of a D3Q19 single-relaxation-time (BGK) lattice Boltzmann
// method on a periodic nx x ny x nz box (the method of Krueger et al., "The
// Lattice Boltzmann Method", and of FluidX3D's documentation; this is
// gpuscope's own kernel). One work-item per cell, pull scheme with two
// buffers: the cell gathers population i from its neighbour at x - c_i in
// `fi` (post-collision values of the last step), relaxes them toward the
// equilibrium of their density and velocity, and writes its own cell in `fo`.
// The host swaps the buffers between steps. src/core/lbm_lattice.hpp mirrors
// this file on the host (tables, formats, the step) and says the layout.
//
// Build options: -DMODE=0 FP32, 1 FP16S (IEEE half of (f - w) * 32768 through
// vload_half / vstore_half_rte: no cl_khr_fp16 needed), 2 FP16C (gpuscope's
// s1e4m11 16-bit format, decoded and encoded with integer arithmetic).
// Arithmetic is FP32 in every mode.
//
// Bytes moved per cell update, what MLUP/s converts to GB/s with:
//   19 populations read + 19 written, S bytes each, + 1 flag byte
//   FP32: 19*4*2 + 1 = 153 B       FP16S, FP16C: 19*2*2 + 1 = 77 B
// Operations per cell update (lbm_lattice.hpp's kFlopsPerCell): moments 56
// flops and a division, then per population 11 (equilibrium and relaxation);
// FP16C adds about 14 integer ops per population.
//
// Flags: bit 0 marks a solid cell, left untouched (as FluidX3D's solid
// cells). The probe marks no cell solid; the byte is read so that the
// kernel moves what a real one moves. Populations are indexed in uint:
// the host keeps 19 * N below 2^32.

#ifndef MODE
#define MODE 0
#endif

#if MODE == 0
typedef float store_t;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#elif MODE == 1
typedef half store_t;
#define LOAD(p, i) (vload_half((i), (p)) * 3.0517578125e-5f)
#define STORE(p, i, v) vstore_half_rte((v) * 32768.0f, (i), (p))
#elif MODE == 2
typedef ushort store_t;

// float -> s1e4m11: normal results rebias the exponent (127 -> 15, i.e.
// subtract 112 << 23) and round the mantissa to 11 bits (adding half an
// output ulp before the shift; a carry moves into the exponent, as it
// should); magnitudes past the largest finite saturate; below 2^-14 the
// value is m * 2^-25, m = round(|v| * 2^25) (m = 2048 is 2^-14 exactly).
inline uint enc16c(float v) {
  const uint x = as_uint(v);
  const uint s = (x >> 16) & 0x8000u;
  const uint a = x & 0x7fffffffu;
  const uint normal = min((a - 0x38000000u + 0x800u) >> 12, 0x7fffu);
  const uint tiny = (uint)(as_float(a) * 33554432.0f + 0.5f);
  return s | (a >= 0x38800000u ? normal : tiny);
}

inline float dec16c(uint h) {
  const uint s = (h & 0x8000u) << 16;
  const uint e = (h >> 11) & 15u;
  const float normal = as_float(((h & 0x7fffu) << 12) + 0x38000000u);
  const float tiny = (float)(h & 0x7ffu) * 2.98023223876953125e-8f;
  return as_float(as_uint(e ? normal : tiny) | s);
}

#define LOAD(p, i) dec16c((p)[i])
#define STORE(p, i, v) ((p)[i] = (ushort)enc16c(v))
#else
#error "MODE must be 0, 1 or 2"
#endif

// Rest weights.
#define W0 (1.0f / 3.0f)
#define WS (1.0f / 18.0f)
#define WE (1.0f / 36.0f)

__kernel void lbm_step(__global const store_t* fi, __global store_t* fo, __global const uchar* flags, uint nx,
                       uint ny, uint nz, float omega) {
  const uint n = get_global_id(0);
  const uint N = nx * ny * nz;
  if (n >= N) return;
  if (flags[n] & 1u) return;
  const uint x = n % nx, y = (n / nx) % ny, z = n / (nx * ny);
  // Neighbour coordinates, periodic.
  const uint xm = x == 0 ? nx - 1 : x - 1, xp = x == nx - 1 ? 0 : x + 1;
  const uint ym = y == 0 ? ny - 1 : y - 1, yp = y == ny - 1 ? 0 : y + 1;
  const uint zm = z == 0 ? nz - 1 : z - 1, zp = z == nz - 1 ? 0 : z + 1;
  // Cell index of the source of a population moving along (CX, CY, CZ).
#define SRC(CX, CY, CZ) \
  (((CX) > 0 ? xm : (CX) < 0 ? xp : x) + nx * (((CY) > 0 ? ym : (CY) < 0 ? yp : y) + ny * ((CZ) > 0 ? zm : (CZ) < 0 ? zp : z)))
#define PULL(I, CX, CY, CZ) const float f##I = LOAD(fi, (I) * N + SRC(CX, CY, CZ));
  PULL(0, 0, 0, 0)
  PULL(1, 1, 0, 0)
  PULL(2, -1, 0, 0)
  PULL(3, 0, 1, 0)
  PULL(4, 0, -1, 0)
  PULL(5, 0, 0, 1)
  PULL(6, 0, 0, -1)
  PULL(7, 1, 1, 0)
  PULL(8, -1, -1, 0)
  PULL(9, 1, 0, 1)
  PULL(10, -1, 0, -1)
  PULL(11, 0, 1, 1)
  PULL(12, 0, -1, -1)
  PULL(13, 1, -1, 0)
  PULL(14, -1, 1, 0)
  PULL(15, 1, 0, -1)
  PULL(16, -1, 0, 1)
  PULL(17, 0, 1, -1)
  PULL(18, 0, -1, 1)

  // Moments of the shifted populations: drho = rho - 1 (18 adds), momentum
  // (3 x 9 adds/subs), velocity (1 division, 3 muls), u.u (5), 1.5 u.u (1),
  // rho (1): 56 flops and the division.
  const float drho = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8 + f9 + f10 + f11 + f12 + f13 + f14 + f15 + f16 +
                     f17 + f18;
  const float rho = 1.0f + drho;
  const float inv_rho = 1.0f / rho;
  const float ux = (f1 - f2 + f7 - f8 + f9 - f10 + f13 - f14 + f15 - f16) * inv_rho;
  const float uy = (f3 - f4 + f7 - f8 + f11 - f12 - f13 + f14 + f17 - f18) * inv_rho;
  const float uz = (f5 - f6 + f9 - f10 + f11 - f12 - f15 + f16 - f17 + f18) * inv_rho;
  const float u2 = 1.5f * (ux * ux + uy * uy + uz * uz);

  // Per population (11 flops): c.u (up to 2), the equilibrium
  // w (drho + rho (3 cu + 4.5 cu^2 - 1.5 u^2)) (7), the relaxation
  // f + omega (feq - f) (2).
#define RELAX(I, CX, CY, CZ, W)                                                             \
  {                                                                                         \
    const float cu = (CX) * ux + (CY) * uy + (CZ) * uz;                                     \
    const float feq = (W) * (drho + rho * (cu * (3.0f + 4.5f * cu) - u2));                  \
    STORE(fo, (I) * N + n, f##I + omega * (feq - f##I));                                    \
  }
  RELAX(0, 0, 0, 0, W0)
  RELAX(1, 1, 0, 0, WS)
  RELAX(2, -1, 0, 0, WS)
  RELAX(3, 0, 1, 0, WS)
  RELAX(4, 0, -1, 0, WS)
  RELAX(5, 0, 0, 1, WS)
  RELAX(6, 0, 0, -1, WS)
  RELAX(7, 1, 1, 0, WE)
  RELAX(8, -1, -1, 0, WE)
  RELAX(9, 1, 0, 1, WE)
  RELAX(10, -1, 0, -1, WE)
  RELAX(11, 0, 1, 1, WE)
  RELAX(12, 0, -1, -1, WE)
  RELAX(13, 1, -1, 0, WE)
  RELAX(14, -1, 1, 0, WE)
  RELAX(15, 1, 0, -1, WE)
  RELAX(16, -1, 0, 1, WE)
  RELAX(17, 0, 1, -1, WE)
  RELAX(18, 0, -1, 1, WE)
}
