// Sim family `matrix`: `chain`, the matrix engine's multiply-accumulate
// chains (core/matrix_chain.hpp states the kernel), and `numerics`, one
// multiply-accumulate per subgroup on given values (below). `chain`'s
// arguments: A, B, B2, C, out (buffers), pairs (uint32). Build parameters of
// both: a, b, c, result (type tags), m, n, k; `chain` also chains.
//
// Semantics: A, B, B2 and C are read from their buffers and decoded; each
// accumulator's result is C_j + pairs x (A x B + A x B2), computed with
// exact products and sums (double). That equals the step-by-step chain
// wherever every step is exact, which is what the family's values are
// chosen for; a result outside the result type's exact range is not
// modelled (Unsupported). Every subgroup stores every accumulator.
//
// Time: the description's matrix.shapes entry of the same types and shape
// gives a rate R (multiply-adds per clock per core) and a latency L
// (cycles). Subgroups of core.wave_width work-items are spread evenly over
// the shader cores; a core holds units_per_core x waves_per_unit of them at
// once and runs further ones in rounds. A core's time is the longer of its
// engine's (all its multiply-adds at R per clock) and its chains' (each
// round 2 x pairs dependent multiply-accumulates of L cycles): the latency
// when too few chains are in flight to hide it, the rate otherwise.
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "core/matrix_arithmetic.hpp"
#include "core/matrix_chain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::sim {
namespace {

const MatrixUnitShape* find_unit(const SimConfig& cfg, const KernelSpec& spec) {
  const auto word = [&](const char* name) { return spec.word(name).value_or(""); };
  for (const auto& u : cfg.matrix.shapes)
    if (u.a == word("a") && u.b == word("b") && u.c == word("c") && u.result == word("result") &&
        int64_t{u.m} == spec.integer("m", 0) && int64_t{u.n} == spec.integer("n", 0) &&
        int64_t{u.k} == spec.integer("k", 0))
      return &u;
  return nullptr;
}

std::vector<double> decode_buffer(SimBuffer& buf, MatrixType t, size_t count, const char* what) {
  const size_t eb = matrix_type_bytes(t);
  if (buf.size_bytes() < count * eb)
    throw DeviceError(fmt::format("sim: matrix {} holds {} bytes, {} needed", what, buf.size_bytes(), count * eb));
  std::vector<std::byte> bytes(count * eb);
  buf.read(0, bytes);
  std::vector<double> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = matrix_decode(t, bytes.data() + i * eb);
  return v;
}

double chain(SimLaunch& l) {
  const SimConfig& cfg = l.config();
  const KernelSpec& spec = l.spec();
  const MatrixUnitShape* unit = find_unit(cfg, spec);
  if (!unit) throw Unsupported(fmt::format("sim: this device's matrix engine has no {}", spec.key()));
  std::string why;
  const auto shape =
      matrix_chain_shape(unit->a, unit->b, unit->c, unit->result, unit->m, unit->n, unit->k, &why);
  if (!shape) throw Unsupported("sim: matrix " + why);
  const auto chains = static_cast<uint32_t>(spec.integer("chains", 1));
  if (chains < 1 || chains > 64) throw Unsupported(fmt::format("sim: matrix chains = {} (modelled: 1..64)", chains));
  const uint32_t m = shape->m, n = shape->n, k = shape->k;
  const size_t mn = size_t{m} * n;

  const auto a = decode_buffer(l.buffer(0), shape->a, size_t{m} * k, "A");
  const auto b = decode_buffer(l.buffer(1), shape->b, size_t{k} * n, "B");
  const auto b2 = decode_buffer(l.buffer(2), shape->b, size_t{k} * n, "B2");
  const auto c = decode_buffer(l.buffer(3), shape->c, chains * mn, "C");
  SimBuffer& out = l.buffer(4);
  const uint64_t pairs = l.u32(5);

  const uint32_t wave = cfg.core.wave_width;
  if (l.global().total() % wave != 0)
    throw DeviceError(fmt::format("sim: matrix launch of {} work-items is not whole subgroups of {}",
                                  l.global().total(), wave));
  const uint64_t subgroups = l.global().total() / wave;
  const size_t eb = matrix_type_bytes(shape->result);
  if (out.size_bytes() < subgroups * chains * mn * eb)
    throw DeviceError(fmt::format("sim: matrix out holds {} bytes, {} subgroups x {} accumulators need {}",
                                  out.size_bytes(), subgroups, chains, subgroups * chains * mn * eb));

  std::vector<double> sum_b(b.size());
  for (size_t i = 0; i < b.size(); ++i) sum_b[i] = b[i] + b2[i];
  const std::vector<double> g = matrix_product(a, sum_b, m, n, k);
  std::vector<std::byte> one(chains * mn * eb);
  for (uint32_t j = 0; j < chains; ++j)
    for (size_t i = 0; i < mn; ++i) {
      const double v = c[j * mn + i] + static_cast<double>(pairs) * g[i];
      try {
        matrix_encode(shape->result, v, one.data() + (j * mn + i) * eb);
      } catch (const DeviceError&) {
        throw Unsupported(fmt::format("sim: a matrix chain reaching {} leaves {}'s exact range (not modelled)", v,
                                      unit->result));
      }
    }
  out.fill(0, subgroups * one.size(), [&](std::byte* p, uint64_t at, size_t len) {
    for (size_t i = 0; i < len; ++i) p[i] = one[(at + i) % one.size()];
  });

  const uint64_t cores = cfg.core.shader_cores;
  const uint64_t per_core = (subgroups + cores - 1) / cores;
  const uint64_t capacity = uint64_t{cfg.core.units_per_core} * cfg.core.waves_per_unit;
  const uint64_t resident = std::min(per_core, capacity);
  const uint64_t rounds = (per_core + resident - 1) / resident;
  const double steps = 2.0 * static_cast<double>(pairs);
  const double engine_cycles =
      static_cast<double>(per_core * chains) * steps * static_cast<double>(shape->macs()) / unit->macs_per_clock_per_core;
  const double chain_cycles = static_cast<double>(rounds) * steps * unit->latency_cycles;
  return std::max(engine_cycles, chain_cycles) / cfg.clock_ghz();
}

// `numerics`: per subgroup g, D_g = A_g x B_g + C_g, with A_g (m x k), B_g
// (k x n) and C_g, D_g (m x n) row-major, subgroup g's after those of the
// subgroups before it in each buffer (arguments A, B, C, out). Every element
// is the dot product of the shape's described arithmetic
// (matrix.shapes[].arithmetic; core/matrix_arithmetic.hpp), so the probe's
// numerics part has a ground truth. Time: each core's subgroups' multiply-
// adds at the engine's rate, at least one latency.
double numerics(SimLaunch& l) {
  const SimConfig& cfg = l.config();
  const MatrixUnitShape* unit = find_unit(cfg, l.spec());
  if (!unit) throw Unsupported(fmt::format("sim: this device's matrix engine has no {}", l.spec().key()));
  const auto type = [](const std::string& tag) { return *matrix_type_from_tag(tag); };  // checked by the reader
  const MatrixChainShape s{type(unit->a), type(unit->b), type(unit->c), type(unit->result), unit->m, unit->n, unit->k};
  const uint32_t wave = cfg.core.wave_width;
  if (l.global().total() % wave != 0)
    throw DeviceError(fmt::format("sim: matrix launch of {} work-items is not whole subgroups of {}",
                                  l.global().total(), wave));
  const uint64_t subgroups = l.global().total() / wave;
  const size_t a_n = size_t{s.m} * s.k, b_n = size_t{s.k} * s.n, c_n = size_t{s.m} * s.n;
  const auto a = decode_buffer(l.buffer(0), s.a, subgroups * a_n, "A");
  const auto b = decode_buffer(l.buffer(1), s.b, subgroups * b_n, "B");
  const auto c = decode_buffer(l.buffer(2), s.c, subgroups * c_n, "C");
  SimBuffer& out = l.buffer(3);
  const size_t eb = matrix_type_bytes(s.result);
  if (out.size_bytes() < subgroups * c_n * eb)
    throw DeviceError(fmt::format("sim: matrix out holds {} bytes, {} subgroups need {}", out.size_bytes(), subgroups,
                                  subgroups * c_n * eb));
  std::vector<std::byte> d(subgroups * c_n * eb);
  std::vector<double> row(s.k), col(s.k);
  for (uint64_t g = 0; g < subgroups; ++g)
    for (uint32_t i = 0; i < s.m; ++i)
      for (uint32_t j = 0; j < s.n; ++j) {
        for (uint32_t kk = 0; kk < s.k; ++kk) {
          row[kk] = a[g * a_n + size_t{i} * s.k + kk];
          col[kk] = b[g * b_n + size_t{kk} * s.n + j];
        }
        const size_t at = g * c_n + size_t{i} * s.n + j;
        matrix_encode_value(s.result, matrix_dot(unit->arithmetic, s, row, col, c[at]), d.data() + at * eb);
      }
  out.write(0, d);
  const uint64_t cores = cfg.core.shader_cores;
  const double per_core = static_cast<double>((subgroups + cores - 1) / cores);
  const double cycles =
      std::max(unit->latency_cycles, per_core * static_cast<double>(s.macs()) / unit->macs_per_clock_per_core);
  return cycles / cfg.clock_ghz();
}

}  // namespace

void register_sim_family_matrix(FamilyTable& table) {
  table.add({"matrix", "chain", 0, chain});
  table.add({"matrix", "numerics", 0, numerics});
}

}  // namespace gpuscope::sim
