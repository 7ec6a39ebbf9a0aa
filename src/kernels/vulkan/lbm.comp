// One time step of a D3Q19 BGK lattice Boltzmann method on a periodic
// nx x ny x nz box: the twin of opencl/lbm.cl, which states the method, the
// layout, the bytes moved and the operations per cell;
// src/core/lbm_lattice.hpp mirrors both on the host.
//
// Parameters: MODE 0 FP32; 1 FP16S (IEEE half of (f - w) * 32768, stored
// through 16-bit storage, GL_EXT_shader_16bit_storage: the device's
// storageBuffer16BitAccess, no half arithmetic); 2 FP16C (s1e4m11, encoded
// with integer arithmetic into 16-bit words). Arithmetic is FP32 in every
// mode. FP16S's float -> half conversion rounds as the driver converts by
// default (to nearest even on the GPUs we know; OpenCL's vstore_half_rte
// says so explicitly).
//
// Arguments: fi, fo, flags; nx, ny, nz, omega. Flags are bytes (bit 0:
// solid); without 8-bit storage they are read as the bytes of 32-bit words.

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const uint LOCAL_WORDS = 1;

#ifndef MODE
#define MODE 0
#endif

#if MODE == 1 || MODE == 2
#if !HAS_FLOAT16
#error "lbm: 16-bit storage modes need storageBuffer16BitAccess"
#endif
#extension GL_EXT_shader_16bit_storage : require
#endif

#if MODE == 0
#define store_t float
#define LOAD(p, i) (p[i])
#define STORE(p, i, v) (p[i] = (v))
#elif MODE == 1
#define store_t float16_t
#define LOAD(p, i) (float(p[i]) * 3.0517578125e-5)
#define STORE(p, i, v) (p[i] = float16_t((v) * 32768.0))
#elif MODE == 2
#define store_t uint16_t

// float -> s1e4m11 and back: opencl/lbm.cl's enc16c and dec16c.
uint enc16c(float v) {
  const uint x = floatBitsToUint(v);
  const uint s = (x >> 16) & 0x8000u;
  const uint a = x & 0x7fffffffu;
  const uint normal = min((a - 0x38000000u + 0x800u) >> 12, 0x7fffu);
  const uint tiny = uint(uintBitsToFloat(a) * 33554432.0 + 0.5);
  return s | (a >= 0x38800000u ? normal : tiny);
}

float dec16c(uint h) {
  const uint s = (h & 0x8000u) << 16;
  const uint e = (h >> 11) & 15u;
  const float normal = uintBitsToFloat(((h & 0x7fffu) << 12) + 0x38000000u);
  const float tiny = float(h & 0x7ffu) * 2.98023223876953125e-8;
  return uintBitsToFloat(floatBitsToUint(e != 0u ? normal : tiny) | s);
}

#define LOAD(p, i) dec16c(uint(p[i]))
#define STORE(p, i, v) (p[i] = uint16_t(enc16c(v)))
#else
#error "MODE must be 0, 1 or 2"
#endif

layout(set = 0, binding = 0) readonly buffer Fi { store_t fi[]; };
layout(set = 0, binding = 1) writeonly buffer Fo { store_t fo[]; };
#if HAS_INT8
#extension GL_EXT_shader_8bit_storage : require
layout(set = 0, binding = 2) readonly buffer Flags { uint8_t flags[]; };
#define FLAG(n) uint(flags[n])
#else
layout(set = 0, binding = 2) readonly buffer Flags { uint flag_words[]; };
#define FLAG(n) ((flag_words[(n) >> 2] >> (8u * ((n) & 3u))) & 0xffu)
#endif
layout(push_constant) uniform Args {
  uint nx;
  uint ny;
  uint nz;
  float omega;
} args;

// Rest weights.
#define W0 (1.0 / 3.0)
#define WS (1.0 / 18.0)
#define WE (1.0 / 36.0)

void main() {
  const uint n = gl_GlobalInvocationID.x;
  const uint nx = args.nx, ny = args.ny, nz = args.nz;
  const float omega = args.omega;
  const uint N = nx * ny * nz;
  if (n >= N) return;
  if ((FLAG(n) & 1u) != 0u) return;
  const uint x = n % nx, y = (n / nx) % ny, z = n / (nx * ny);
  // Neighbour coordinates, periodic.
  const uint xm = x == 0u ? nx - 1u : x - 1u, xp = x == nx - 1u ? 0u : x + 1u;
  const uint ym = y == 0u ? ny - 1u : y - 1u, yp = y == ny - 1u ? 0u : y + 1u;
  const uint zm = z == 0u ? nz - 1u : z - 1u, zp = z == nz - 1u ? 0u : z + 1u;
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

  const float drho = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8 + f9 + f10 + f11 + f12 + f13 + f14 + f15 + f16 +
                     f17 + f18;
  const float rho = 1.0 + drho;
  const float inv_rho = 1.0 / rho;
  const float ux = (f1 - f2 + f7 - f8 + f9 - f10 + f13 - f14 + f15 - f16) * inv_rho;
  const float uy = (f3 - f4 + f7 - f8 + f11 - f12 - f13 + f14 + f17 - f18) * inv_rho;
  const float uz = (f5 - f6 + f9 - f10 + f11 - f12 - f15 + f16 - f17 + f18) * inv_rho;
  const float u2 = 1.5 * (ux * ux + uy * uy + uz * uz);

#define RELAX(I, CX, CY, CZ, W)                                                  \
  {                                                                              \
    const float cu = float(CX) * ux + float(CY) * uy + float(CZ) * uz;           \
    const float feq = (W) * (drho + rho * (cu * (3.0 + 4.5 * cu) - u2));         \
    STORE(fo, (I) * N + n, f##I + omega * (feq - f##I));                         \
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
