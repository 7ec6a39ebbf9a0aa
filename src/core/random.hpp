// A small, fast, seedable generator for building test patterns on the host
// (permutations of millions of slots: std::mt19937 would dominate set-up).
#pragma once

#include <cstdint>

namespace gpuscope {

// SplitMix64 (Steele, Lea, Flood 2014): passes BigCrush, one multiply-xorshift
// chain per draw; plenty for shuffling, not for cryptography.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) by Lemire's multiply-shift; the bias is below
  // 2^-32 for the bounds used here, far under any timing effect.
  uint32_t below(uint32_t bound) {
    return static_cast<uint32_t>(((next() >> 32) * static_cast<uint64_t>(bound)) >> 32);
  }

 private:
  uint64_t state_;
};

}  // namespace gpuscope
