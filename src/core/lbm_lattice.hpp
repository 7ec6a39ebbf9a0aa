// D3Q19 single-relaxation-time (BGK) lattice Boltzmann on a periodic box, as
// plain host C++: the lattice's tables, the three storage formats of the lbm
// probe's kernel (src/kernels/opencl/lbm.cl, which this mirrors line by line), one
// reference step, and the moments the probe's physics checks read. Used by
// the probe to check the device's steps and by the sim backend to do them.
//
// Storage: structure of arrays, population i of cell n at index i*N + n
// (N cells, n = x + nx*(y + ny*z)). What is stored is the population minus
// its rest weight, f_i - w_i (small numbers near 0, whose low bits carry the
// flow: FluidX3D's "DDF shifting"), in one of three formats:
//   FP32   float
//   FP16S  IEEE half of (f_i - w_i) * 32768, converted round-to-nearest-even
//   FP16C  gpuscope's 16-bit s1e4m11: sign, 4-bit exponent e, 11-bit mantissa
//          m; e >= 1 is (1 + m/2048) * 2^(e-15), e = 0 is m * 2^-25; largest
//          finite 2 - 2^-11, stores past it saturate. One more mantissa bit
//          than half, for a range (2^-25 .. 2) that fits shifted populations.
// Arithmetic is FP32 in every mode.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope::lbm {

enum class Storage { fp32 = 0, fp16s = 1, fp16c = 2 };

inline constexpr int kQ = 19;
inline constexpr std::array<int, kQ> kCx = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0};
inline constexpr std::array<int, kQ> kCy = {0, 0, 0, 1, -1, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 1, -1};
inline constexpr std::array<int, kQ> kCz = {0, 0, 0, 0, 0, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0, -1, 1, -1, 1};
inline constexpr float kW0 = 1.0f / 3.0f, kWs = 1.0f / 18.0f, kWe = 1.0f / 36.0f;
inline constexpr std::array<float, kQ> kW = {kW0, kWs, kWs, kWs, kWs, kWs, kWs, kWe, kWe, kWe,
                                             kWe, kWe, kWe, kWe, kWe, kWe, kWe, kWe, kWe};

// Bytes one population takes in `s`.
size_t storage_bytes(Storage s);
// "fp32", "fp16s", "fp16c".
std::string storage_name(Storage s);

// Bytes of DRAM traffic one cell update moves in the kernel: 19 populations
// read and 19 written, plus the cell's one-byte flag.
inline double bytes_per_cell_update(Storage s) {
  return 2.0 * kQ * static_cast<double>(storage_bytes(s)) + 1.0;
}

// Floating-point operations of one cell update as lbm.cl is written (counted
// from its source: the moments 56, the 19 equilibria and relaxations 19 x 11,
// a division), and the integer operations FP16C's decoding and encoding add
// (per population about 6 to decode and 8 to encode, counted from lbm.cl).
// The sim times the kernel from these; the probe states them.
inline constexpr double kFlopsPerCell = 56 + 19 * 11 + 1;
inline constexpr double kFp16cIntOpsPerCell = 19 * (6 + 8);

// One population's stored bits (in a uint32, low 16 bits used by the 16-bit
// formats) and back; `shifted` is f_i - w_i.
uint32_t encode(Storage s, float shifted);
float decode(Storage s, uint32_t bits);
// IEEE half conversions (round to nearest even, like vstore_half_rte).
uint16_t float_to_half(float v);
float half_to_float(uint16_t h);
// gpuscope's FP16C (above).
uint16_t float_to_fp16c(float v);
float fp16c_to_float(uint16_t h);

// A box of cells in one storage format, as the device holds it.
struct Box {
  uint32_t nx = 0, ny = 0, nz = 0;
  Storage storage = Storage::fp32;
  std::vector<uint8_t> bytes;  // kQ * cells() populations in storage_bytes(storage) each
  size_t cells() const { return size_t{nx} * ny * nz; }
  float shifted(int i, size_t n) const;  // population i of cell n, decoded
  void set_shifted(int i, size_t n, float v);
};

// The equilibrium state of density 1 + drho and velocity (ux, uy, uz) at
// every cell, from a function of the cell coordinates.
struct CellState {
  float drho = 0, ux = 0, uy = 0, uz = 0;
};
template <class F>
Box equilibrium_box(uint32_t nx, uint32_t ny, uint32_t nz, Storage s, F&& state_at);
// The shifted equilibrium population i for density 1 + drho and velocity u.
float shifted_equilibrium(int i, float drho, float ux, float uy, float uz);

// One pull step of the kernel on the host: out's cell n gets the
// populations streamed into n from `in`, relaxed with rate omega. Flags are
// all fluid (the kernel leaves solid cells untouched; the probe marks none).
void step(const Box& in, Box& out, float omega);

// Total mass, sum over cells of the density (1 + sum of shifted
// populations), in double.
double mass(const Box& b);

// Momentum density along x of each cell, sum_i c_ix f_i (equal before and
// after collision, so it is the flow at the step the box holds).
std::vector<double> momentum_x(const Box& b);

template <class F>
Box equilibrium_box(uint32_t nx, uint32_t ny, uint32_t nz, Storage s, F&& state_at) {
  Box b;
  b.nx = nx;
  b.ny = ny;
  b.nz = nz;
  b.storage = s;
  b.bytes.assign(kQ * b.cells() * storage_bytes(s), 0);
  for (uint32_t z = 0; z < nz; ++z)
    for (uint32_t y = 0; y < ny; ++y)
      for (uint32_t x = 0; x < nx; ++x) {
        const CellState c = state_at(x, y, z);
        const size_t n = x + size_t{nx} * (y + size_t{ny} * z);
        for (int i = 0; i < kQ; ++i) b.set_shifted(i, n, shifted_equilibrium(i, c.drho, c.ux, c.uy, c.uz));
      }
  return b;
}

}  // namespace gpuscope::lbm
