// Host-side twin of the `occupancy` kernel family (src/kernels/opencl/occupancy.cl):
// what one work-group writes. Its work-items chase one cycle together from
// `start`, REGS live sums each, then hash them. The probe's check
// (src/probes/occupancy.cpp) and the sim family
// (src/backends/sim/family_occupancy.cpp) both use it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace gpuscope::occupancy_twin {

// The hash's multiplier: h = (h ^ r[k]) * kHashMultiplier.
inline constexpr uint32_t kHashMultiplier = 0x9E3779B1u;

// The `wg` outputs of a group starting at `start` whose walk ended on `p`
// with the REGS sums `sums` (sums[k]: every (k+1)-th, (k+1+REGS)-th, ...
// index the walk reached, mod 2^32).
inline std::vector<uint32_t> hash_outputs(uint32_t p, uint32_t start, const std::vector<uint32_t>& sums,
                                          uint32_t wg) {
  // Lane by lane each hash is a chain of REGS dependent multiplies; the
  // loops run the other way round so that the lanes' chains proceed side
  // by side (the compiler vectorises the inner loop). Same values.
  std::vector<uint32_t> out(wg);
  for (uint32_t lid = 0; lid < wg; ++lid) out[lid] = p ^ (lid ^ start);  // the kernel keeps lid ^ start
  for (size_t k = 0; k < sums.size(); ++k) {
    const auto ku = static_cast<uint32_t>(k);
    const uint32_t odd = 2u * ku + 1u, add = ku + sums[k];
    for (uint32_t lid = 0; lid < wg; ++lid) out[lid] = (out[lid] ^ (lid * odd + add)) * kHashMultiplier;
  }
  return out;
}

// The `wg` outputs of a group starting at `start` after `steps` x `regs`
// chase steps; `next(p)` is the cycle's successor of p (it may throw on a
// bad index).
template <class Next>
std::vector<uint32_t> group_outputs(Next&& next, uint32_t start, int regs, uint32_t steps, uint32_t wg) {
  uint32_t p = start;
  std::vector<uint32_t> sums(static_cast<size_t>(regs), 0);
  for (uint32_t s = 0; s < steps; ++s)
    for (int k = 0; k < regs; ++k) {
      p = next(p);
      sums[static_cast<size_t>(k)] += p;
    }
  return hash_outputs(p, start, sums, wg);
}

// The same outputs as group_outputs for a `next` that is one cycle through
// all its indices, from sums over the cycle's order instead of hop by hop:
// the h-th hop (h = 1..steps x REGS) reaches order[(pos[start] + h) mod L]
// and adds it to sums[(h - 1) mod REGS]. For one k those positions step by
// REGS round the cycle, so they repeat every L / g hops (g = gcd(REGS, L)),
// covering the positions = (b + k) mod g once each (coset), and the rest
// are runs of strided positions up to the end of the order (strided prefix
// sums). O(REGS^2) a group where the walk costs steps x REGS.
class CycleIndex {
 public:
  CycleIndex() = default;
  // Indexes `next`; valid() is false when it is not a single cycle through
  // every index.
  explicit CycleIndex(const std::vector<uint32_t>& next) {
    const auto n = static_cast<uint32_t>(next.size());
    order_.assign(n, 0);
    pos_.assign(n, UINT32_MAX);
    uint32_t p = 0;
    bool one_cycle = n > 0;
    for (uint32_t j = 0; j < n && one_cycle; ++j) {
      one_cycle = p < n && pos_[p] == UINT32_MAX;
      if (!one_cycle) break;
      order_[j] = p;
      pos_[p] = j;
      p = next[p];
    }
    if (!one_cycle || p != 0) {
      order_.clear();
      pos_.clear();
    }
  }
  bool valid() const { return !order_.empty(); }

  // group_outputs(next, start, regs, steps, wg); valid() must hold and
  // start lie on the cycle.
  std::vector<uint32_t> group_outputs(uint32_t start, int regs, uint32_t steps, uint32_t wg) {
    const uint64_t L = order_.size();
    const auto R = static_cast<uint64_t>(regs);
    const uint64_t g = std::gcd(R, L);
    if (strided_regs_ != regs) {
      // strided[j] = order[j] + strided[j - REGS] (mod 2^32; order[j] for
      // j < REGS); coset[r] the sum of order[j] over j = r mod g.
      strided_.assign(L, 0);
      for (uint64_t j = 0; j < L; ++j) strided_[j] = order_[j] + (j >= R ? strided_[j - R] : 0u);
      coset_.assign(g, 0);
      for (uint64_t j = 0; j < L; ++j) coset_[j % g] += order_[j];
      strided_regs_ = regs;
    }
    const uint64_t period = L / g;  // hops of one k before its positions repeat
    const uint64_t b = pos_[start];
    std::vector<uint32_t> sums(static_cast<size_t>(regs), 0);
    for (uint64_t k = 0; k < R; ++k) {
      const uint64_t q0 = (b + k + 1) % L;
      uint32_t sum = static_cast<uint32_t>(steps / period) * coset_[q0 % g];
      uint64_t left = steps % period;
      uint64_t q = q0;
      while (left > 0) {
        // Terms q, q + R, ... below L: a run of the strided prefix sums.
        const uint64_t run = std::min<uint64_t>(left, (L - 1 - q) / R + 1);
        const uint64_t last = q + (run - 1) * R;
        sum += strided_[last] - (q >= R ? strided_[q - R] : 0u);
        left -= run;
        q = (last + R) % L;
      }
      sums[k] = sum;
    }
    return hash_outputs(order_[(b + uint64_t{steps} * R) % L], start, sums, wg);
  }

 private:
  std::vector<uint32_t> order_, pos_;  // order[j]: the index j hops after 0; pos its inverse
  int strided_regs_ = 0;               // the REGS strided_ and coset_ are for
  std::vector<uint32_t> strided_, coset_;
};

}  // namespace gpuscope::occupancy_twin
