// The buffers a compute kernel runs on and the host's check of what it wrote;
// the values and maps themselves are the twin's (kernels/compute_twin.hpp).
#include "core/error.hpp"
#include "probes/compute/compute_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

namespace gpuscope::compute_probe {

Buffers make_buffers(Device& dev, const Form& f, const twin::Op& op, const Plan& plan, size_t items) {
  Buffers b;
  // Seeds for pattern_items work-items, repeated over the rest: the
  // compiler cannot see any of them either way, and the host's set-up
  // stays small next to a 5 ms launch.
  const size_t pattern = std::min(items, plan.pattern_items);
  const size_t values = pattern * 2 * plan.chains * f.lanes();
  b.seeds = twin::make_seeds(op, f.lane, values, 0x5eed ^ std::hash<std::string>{}(f.key() + op.name));
  b.params = twin::params_for(op, f.lane);
  const auto pattern_bytes = twin::store_block(op, f.lane, b.seeds);
  std::vector<std::byte> seed_bytes(pattern_bytes.size() / pattern * items);
  for (size_t off = 0; off < seed_bytes.size(); off += pattern_bytes.size())
    std::memcpy(seed_bytes.data() + off, pattern_bytes.data(),
                std::min(pattern_bytes.size(), seed_bytes.size() - off));
  b.seed = dev.create_buffer(seed_bytes.size());
  b.out = dev.create_buffer(seed_bytes.size());
  dev.write(*b.seed, 0, std::span<const std::byte>(seed_bytes));
  const twin::Value a{twin::device_round(f.lane, b.params.fa), b.params.ia};
  const twin::Value bb{twin::device_round(f.lane, b.params.fb), b.params.ib};
  // Params are scalars: one value each even for packed halves (the kernel
  // reads param[0] as a whole uint: both halves).
  std::vector<twin::Value> params = {a, bb};
  if (f.kind == Kind::PtxF16x2) params = {a, a, bb, bb};
  const size_t lane_bytes = scalar_bytes(f.lane);
  std::vector<std::byte> pb(params.size() * lane_bytes);
  for (size_t k = 0; k < params.size(); ++k) twin::store_value(f.lane, params[k], pb.data() + k * lane_bytes);
  b.param = dev.create_buffer(pb.size());
  dev.write(*b.param, 0, pb);
  b.cycles = dev.create_buffer(sizeof(uint64_t));
  b.by_value = f.kind == Kind::Float && op.independent_floats;
  if (f.scalar == Scalar::f64)
    b.pa = a.f, b.pb = bb.f;
  else  // float, or half: the values are exact in half, so exact in float
    b.pa = static_cast<float>(a.f), b.pb = static_cast<float>(bb.f);
  return b;
}

std::vector<twin::Value> reference(const Form& f, const twin::Op& op, const Plan& plan, const Buffers& b,
                                   size_t item, size_t steps, bool throughput) {
  const size_t per_item = 2 * plan.chains * f.lanes();
  item %= plan.pattern_items;
  std::vector<twin::Value> block(b.seeds.begin() + static_cast<ptrdiff_t>(item * per_item),
                                 b.seeds.begin() + static_cast<ptrdiff_t>((item + 1) * per_item));
  const twin::Value a{twin::device_round(f.lane, b.params.fa), b.params.ia};
  const twin::Value bb{twin::device_round(f.lane, b.params.fb), b.params.ib};
  twin::run_block(op, f.arith(), plan.chains, f.lanes(), steps, throughput, a, bb, block);
  return block;
}

void check_lanes(const std::string& probe, const Form& f, const twin::Op& op, const std::vector<twin::Value>& got,
                 const std::vector<twin::Value>& want, const std::string& what) {
  const bool floats = scalar_is_float(f.lane);
  for (size_t k = 0; k < want.size(); ++k) {
    bool ok = true;
    std::string detail;
    if (!floats) {
      ok = got[k].i == want[k].i;
      detail = fmt::format("{} vs {}", got[k].i, want[k].i);
    } else if (twin::int_lane(op, k)) {
      ok = got[k].i == want[k].i;
      detail = "int32 bit patterns differ";
    } else {
      const double g = got[k].f, w = want[k].f;
      ok = std::isfinite(g) && std::abs(g - w) <= twin::tolerance(f.lane) * std::max(1.0, std::abs(w));
      detail = fmt::format("{} vs {}", g, w);
    }
    if (!ok)
      throw ValidationError(fmt::format("{}: {} {} lane {} of {}: device {} (host reference)", probe, f.key(),
                                        op.name, k, what, detail));
  }
}

}  // namespace gpuscope::compute_probe
