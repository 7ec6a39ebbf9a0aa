#include "core/lbm_lattice.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace gpuscope::lbm {

size_t storage_bytes(Storage s) { return s == Storage::fp32 ? 4 : 2; }

std::string storage_name(Storage s) {
  switch (s) {
    case Storage::fp32:
      return "fp32";
    case Storage::fp16s:
      return "fp16s";
    case Storage::fp16c:
      return "fp16c";
  }
  return "?";
}

uint16_t float_to_half(float v) {
  const uint32_t x = std::bit_cast<uint32_t>(v);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<uint16_t>(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: infinity
  if (a < 0x38800000u) {
    // Below half's smallest normal: m = |v| * 2^24, rounded to nearest even.
    const float scaled = std::bit_cast<float>(a) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  // Rebias 127 -> 15 and round the 23-bit mantissa to 10 bits, ties to even.
  const uint32_t r = a - 0x38000000u;
  const uint32_t lsb = (r >> 13) & 1u;
  return static_cast<uint16_t>(sign | ((r + 0xfffu + lsb) >> 13));
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t{h} & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 31u;
  const uint32_t m = h & 0x3ffu;
  float mag;
  if (e == 0)
    mag = static_cast<float>(m) * 5.9604644775390625e-8f;  // 2^-24
  else if (e == 31)
    mag = m ? std::nanf("") : INFINITY;
  else
    mag = std::bit_cast<float>(((e + 112u) << 23) | (m << 13));
  return std::bit_cast<float>(std::bit_cast<uint32_t>(mag) | sign);
}

uint16_t float_to_fp16c(float v) {
  const uint32_t x = std::bit_cast<uint32_t>(v);
  const uint32_t s = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;
  if (a >= 0x38800000u) {
    const uint32_t r = (a - 0x38000000u + 0x800u) >> 12;
    return static_cast<uint16_t>(s | (r < 0x7fffu ? r : 0x7fffu));
  }
  return static_cast<uint16_t>(s | static_cast<uint32_t>(std::bit_cast<float>(a) * 33554432.0f + 0.5f));
}

float fp16c_to_float(uint16_t h) {
  const uint32_t s = (uint32_t{h} & 0x8000u) << 16;
  const uint32_t e = (h >> 11) & 15u;
  const float mag = e ? std::bit_cast<float>(((uint32_t{h} & 0x7fffu) << 12) + 0x38000000u)
                      : static_cast<float>(h & 0x7ffu) * 2.98023223876953125e-8f;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(mag) | s);
}

uint32_t encode(Storage s, float shifted) {
  switch (s) {
    case Storage::fp32:
      return std::bit_cast<uint32_t>(shifted);
    case Storage::fp16s:
      return float_to_half(shifted * 32768.0f);
    case Storage::fp16c:
      return float_to_fp16c(shifted);
  }
  return 0;
}

float decode(Storage s, uint32_t bits) {
  switch (s) {
    case Storage::fp32:
      return std::bit_cast<float>(bits);
    case Storage::fp16s:
      return half_to_float(static_cast<uint16_t>(bits)) * 3.0517578125e-5f;
    case Storage::fp16c:
      return fp16c_to_float(static_cast<uint16_t>(bits));
  }
  return 0;
}

float Box::shifted(int i, size_t n) const {
  const size_t k = static_cast<size_t>(i) * cells() + n;
  if (storage == Storage::fp32) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * k, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, bytes.data() + 2 * k, 2);
  return decode(storage, h);
}

void Box::set_shifted(int i, size_t n, float v) {
  const size_t k = static_cast<size_t>(i) * cells() + n;
  if (storage == Storage::fp32) {
    std::memcpy(bytes.data() + 4 * k, &v, 4);
    return;
  }
  const uint16_t h = static_cast<uint16_t>(encode(storage, v));
  std::memcpy(bytes.data() + 2 * k, &h, 2);
}

float shifted_equilibrium(int i, float drho, float ux, float uy, float uz) {
  const float rho = 1.0f + drho;
  const float u2 = 1.5f * (ux * ux + uy * uy + uz * uz);
  const float cu =
      static_cast<float>(kCx[i]) * ux + static_cast<float>(kCy[i]) * uy + static_cast<float>(kCz[i]) * uz;
  return kW[i] * (drho + rho * (cu * (3.0f + 4.5f * cu) - u2));
}

void step(const Box& in, Box& out, float omega) {
  out.nx = in.nx;
  out.ny = in.ny;
  out.nz = in.nz;
  out.storage = in.storage;
  out.bytes.resize(in.bytes.size());
  const uint32_t nx = in.nx, ny = in.ny, nz = in.nz;
  for (uint32_t z = 0; z < nz; ++z)
    for (uint32_t y = 0; y < ny; ++y)
      for (uint32_t x = 0; x < nx; ++x) {
        const size_t n = x + size_t{nx} * (y + size_t{ny} * z);
        std::array<float, kQ> f;
        for (int i = 0; i < kQ; ++i) {
          const uint32_t sx = (x + nx - static_cast<uint32_t>(kCx[i] + 1) + 1) % nx;
          const uint32_t sy = (y + ny - static_cast<uint32_t>(kCy[i] + 1) + 1) % ny;
          const uint32_t sz = (z + nz - static_cast<uint32_t>(kCz[i] + 1) + 1) % nz;
          f[i] = in.shifted(i, sx + size_t{nx} * (sy + size_t{ny} * sz));
        }
        float drho = 0, mx = 0, my = 0, mz = 0;
        for (int i = 0; i < kQ; ++i) {
          drho += f[i];
          mx += static_cast<float>(kCx[i]) * f[i];
          my += static_cast<float>(kCy[i]) * f[i];
          mz += static_cast<float>(kCz[i]) * f[i];
        }
        const float inv_rho = 1.0f / (1.0f + drho);
        const float ux = mx * inv_rho, uy = my * inv_rho, uz = mz * inv_rho;
        for (int i = 0; i < kQ; ++i) {
          const float feq = shifted_equilibrium(i, drho, ux, uy, uz);
          out.set_shifted(i, n, f[i] + omega * (feq - f[i]));
        }
      }
}

double mass(const Box& b) {
  const size_t n_cells = b.cells();
  double sum = static_cast<double>(n_cells);
  for (int i = 0; i < kQ; ++i) {
    double part = 0;
    for (size_t n = 0; n < n_cells; ++n) part += b.shifted(i, n);
    sum += part;
  }
  return sum;
}

std::vector<double> momentum_x(const Box& b) {
  std::vector<double> out(b.cells(), 0.0);
  for (int i = 0; i < kQ; ++i) {
    if (kCx[i] == 0) continue;
    for (size_t n = 0; n < out.size(); ++n) out[n] += kCx[i] * static_cast<double>(b.shifted(i, n));
  }
  return out;
}

}  // namespace gpuscope::lbm
