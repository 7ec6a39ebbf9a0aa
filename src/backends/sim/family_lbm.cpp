// Sim family `lbm` (src/kernels/opencl/lbm.cl): `lbm_step`, one D3Q19 BGK pull step of a periodic
// box in storage mode `mode` (0 FP32, 1 FP16S, 2 FP16C).
//
// Semantics: exact, through core/lbm_lattice.hpp's host step (the same
// formats and the same arithmetic as the kernel, in FP32); cells whose flag
// has bit 0 set are left as `fo` held them, as the kernel leaves them.
//
// Time: the kernel streams each population once in and once out, so a step
// takes the longer of its bytes through DRAM (bytes_per_cell_update x cells
// over dram_bandwidth_gbps) and its arithmetic through the ALUs
// (kFlopsPerCell at the device's fp32 ADD rate, plus FP16C's integer
// decoding at its int ADD rate, per shader core per clock). Caches are not
// modelled for this kernel: a box fits them only at its smallest sizes,
// where a real device's launch overhead dominates anyway.
#include "backends/sim/family.hpp"
#include "backends/sim/lbm_model.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"
#include "core/lbm_lattice.hpp"

#include <algorithm>
#include <cstring>

namespace gpuscope::sim {
namespace {

double lbm_step(SimLaunch& l) {
  const long long mode = l.spec().integer("mode", 0);
  if (mode < 0 || mode > 2) throw Unsupported("sim: lbm.cl MODE must be 0, 1 or 2");
  const auto s = static_cast<lbm::Storage>(mode);
  SimBuffer& in = l.buffer(0);
  SimBuffer& out = l.buffer(1);
  SimBuffer& flags = l.buffer(2);
  const uint32_t nx = l.u32(3), ny = l.u32(4), nz = l.u32(5);
  const float omega = l.f32(6);
  const size_t cells = size_t{nx} * ny * nz;
  const size_t bytes = lbm::kQ * cells * lbm::storage_bytes(s);
  if (cells == 0 || in.size_bytes() < bytes || out.size_bytes() < bytes || flags.size_bytes() < cells)
    throw DeviceError("sim: lbm.cl buffers smaller than the box");
  if (l.global().total() < cells) throw Unsupported("sim: lbm.cl is modelled for one work-item per cell");

  lbm::Box box;
  box.nx = nx;
  box.ny = ny;
  box.nz = nz;
  box.storage = s;
  box.bytes.resize(bytes);
  in.read(0, std::as_writable_bytes(std::span(box.bytes)));
  std::vector<uint8_t> flag(cells);
  flags.read(0, std::as_writable_bytes(std::span(flag)));
  lbm::Box next;
  lbm::step(box, next, omega);
  if (std::any_of(flag.begin(), flag.end(), [](uint8_t f) { return (f & 1u) != 0; })) {
    std::vector<uint8_t> old(bytes);
    out.read(0, std::as_writable_bytes(std::span(old)));
    const size_t sb = lbm::storage_bytes(s);
    for (size_t n = 0; n < cells; ++n)
      if (flag[n] & 1u)
        for (int i = 0; i < lbm::kQ; ++i)
          std::memcpy(&next.bytes[(i * cells + n) * sb], &old[(i * cells + n) * sb], sb);
  }
  out.write(0, std::as_bytes(std::span(next.bytes)));

  const SimConfig& c = l.config();
  const double cells_d = static_cast<double>(cells);
  const double mem_ns = cells_d * lbm::bytes_per_cell_update(s) / c.dram_bandwidth_gbps;
  const double per_clock = static_cast<double>(c.core.shader_cores) * c.clock_ghz();  // per ns
  double alu_ns = cells_d * lbm::kFlopsPerCell / (sim_op_rate(c, "float", "ADD") * per_clock);
  if (s == lbm::Storage::fp16c)
    alu_ns += cells_d * lbm::kFp16cIntOpsPerCell / (sim_op_rate(c, "int", "ADD") * per_clock);
  return std::max(mem_ns, alu_ns);
}

}  // namespace

// The expected MLUP/s of the model above, for the recovery tests.
double sim_lbm_expected_mlups(const SimConfig& c, int mode) {
  const auto s = static_cast<lbm::Storage>(mode);
  const double mem_ns = lbm::bytes_per_cell_update(s) / c.dram_bandwidth_gbps;
  const double per_clock = static_cast<double>(c.core.shader_cores) * c.clock_ghz();
  double alu_ns = lbm::kFlopsPerCell / (sim_op_rate(c, "float", "ADD") * per_clock);
  if (s == lbm::Storage::fp16c)
    alu_ns += lbm::kFp16cIntOpsPerCell / (sim_op_rate(c, "int", "ADD") * per_clock);
  return 1e3 / std::max(mem_ns, alu_ns);
}

void register_sim_family_lbm(FamilyTable& table) { table.add({"lbm", "lbm_step", 0, lbm_step}); }

}  // namespace gpuscope::sim
