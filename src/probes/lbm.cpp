// Probe `lbm`: a real application kernel, a D3Q19 BGK lattice Boltzmann step
// (lbm.cl), in three storage modes (FP32, FP16S, FP16C), to tell whether the
// device runs it at its memory bandwidth or falls behind on arithmetic (the
// Mali-G52 and Adreno 530 articles close with FluidX3D for this question).
//
// Shape of the experiment, and why:
// - Per mode, first the kernel is checked: one step on a small odd-sized box
//   of random flow against the host's step (core/lbm_lattice.hpp), then the
//   physics: a shear wave u_x = U sin(2 pi y / ny) must decay as
//   exp(-nu k^2 t) with nu = (tau - 1/2) / 3, and the mass must stay put.
//   The decay rate is read between two times after the initial transient
//   (the equilibrium start lacks the wave's non-equilibrium part).
// - Then MLUP/s against box size: cubes of edge 16, 32, 64, ... as long as
//   both buffers fit, one step stays far under the launch cap and the budget
//   lasts. One launch is one time step (as in FluidX3D); a sample is the
//   summed device time of K consecutive steps (K sized for ~10 ms, every
//   step a real step of the flow, buffers swapped), so each point's samples
//   are whole stretches of simulation. Mass is checked on the host after
//   every box's steps.
// - The analysis converts MLUP/s to GB/s with the bytes a cell update moves
//   (lbm.cl states them) and compares with the bandwidth probe's DRAM rate.
#include "core/error.hpp"
#include "core/lbm_lattice.hpp"
#include "core/random.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>

namespace gpuscope {
namespace {

using lbm::Storage;

// The physics check's flow: tau 0.9 (nu = 2/15), amplitude 0.05 (Mach
// 0.09), a wave of 32 cells (k^2 = 0.039), 4 x 4 cells across it. The decay
// is read from step 50 to step 350: the amplitude falls to e^-1.5. Why these:
// 16-bit storage rounds every population every step by up to 2^-11 (FP16S)
// or 2^-12 (FP16C) of itself; against a slow decay (tau 0.8, a 64-cell wave:
// 1e-3 per step) that rounding biased FP16S's viscosity by -1.5% on PoCL.
// At 5e-3 per step all three modes are within 0.2% (PoCL: FP32 +0.12%,
// FP16S +0.03%, FP16C +0.01%), while BGK's own discretisation error at this
// k stays far under 1% (FP32's +0.12%).
constexpr float kTau = 0.9f;
constexpr double kNu = (kTau - 0.5) / 3.0;
constexpr float kWaveU = 0.05f;
constexpr uint32_t kWaveLength = 32;
constexpr int kDecayFrom = 50, kDecaySteps = 300;
constexpr double kViscosityTolerance = 0.01;
// Mass, relative, over the physics check's 350 steps (PoCL: FP32 4e-10,
// FP16S 1.4e-6, FP16C 2.1e-6).
constexpr double kMassTolerance = 1e-5;
// Mass over a timed box's steps (up to about 1000 of a slowly decaying wave).
// 16-bit rounding of a nearly steady flow errs the same way step after step,
// so the drift grows with the steps: on the H100, FP16S drifted 2.0e-4 over
// 1002 steps of a 96^3 box (PoCL: up to 6e-6 after a few hundred). 1e-3
// still catches any indexing or conversion fault (those move the mass by
// O(1) or make it NaN); the drift is recorded per box.
double timed_mass_tolerance(Storage s) { return s == Storage::fp32 ? 1e-5 : 1e-3; }

struct DeviceBox {
  std::unique_ptr<Buffer> a, b, flags;
  uint32_t nx = 0, ny = 0, nz = 0;
  Storage storage = Storage::fp32;
  bool a_current = true;  // which buffer holds the latest step
  size_t cells() const { return size_t{nx} * ny * nz; }
  size_t bytes() const { return lbm::kQ * cells() * lbm::storage_bytes(storage); }
};

DeviceBox upload(Device& dev, const lbm::Box& box) {
  DeviceBox d;
  d.nx = box.nx;
  d.ny = box.ny;
  d.nz = box.nz;
  d.storage = box.storage;
  d.a = dev.create_buffer(d.bytes());
  d.b = dev.create_buffer(d.bytes());
  d.flags = dev.create_buffer(d.cells());
  dev.write(*d.a, 0, std::as_bytes(std::span(box.bytes)));
  const std::vector<uint8_t> fluid(d.cells(), 0);
  dev.write(*d.flags, 0, std::as_bytes(std::span(fluid)));
  return d;
}

// One step; returns its device ns.
double step(Device& dev, Kernel& k, DeviceBox& d, float omega, size_t local) {
  Buffer* in = d.a_current ? d.a.get() : d.b.get();
  Buffer* out = d.a_current ? d.b.get() : d.a.get();
  const KernelArg args[] = {in, out, d.flags.get(), d.nx, d.ny, d.nz, omega};
  const double ns = dev.launch(k, Range::d1(d.cells()), Range::d1(local), args);
  d.a_current = !d.a_current;
  return ns;
}

lbm::Box download(Device& dev, const DeviceBox& d) {
  lbm::Box box;
  box.nx = d.nx;
  box.ny = d.ny;
  box.nz = d.nz;
  box.storage = d.storage;
  box.bytes.resize(d.bytes());
  dev.read(d.a_current ? *d.a : *d.b, 0, std::as_writable_bytes(std::span(box.bytes)));
  return box;
}

// A work-group size that divides every box the probe runs (all are
// multiples of 16 cells), within the kernel's limit; 0 lets the driver pick.
size_t pick_local(Kernel& k, size_t cells) {
  for (size_t l : {size_t{128}, size_t{64}, size_t{32}, size_t{16}})
    if (l <= k.max_work_group_size() && cells % l == 0) return l;
  return 0;
}

// Sine amplitude of the x momentum along y.
double wave_amplitude(const lbm::Box& b) {
  const auto jx = lbm::momentum_x(b);
  const double k = 2 * std::numbers::pi / b.ny;
  double sum = 0;
  for (uint32_t z = 0; z < b.nz; ++z)
    for (uint32_t y = 0; y < b.ny; ++y)
      for (uint32_t x = 0; x < b.nx; ++x)
        sum += jx[x + size_t{b.nx} * (y + size_t{b.ny} * z)] * std::sin(k * y);
  return 2 * sum / static_cast<double>(b.cells());
}

lbm::Box shear_wave(uint32_t nx, uint32_t ny, uint32_t nz, Storage s) {
  const double k = 2 * std::numbers::pi / ny;
  return lbm::equilibrium_box(nx, ny, nz, s, [&](uint32_t, uint32_t y, uint32_t) {
    return lbm::CellState{0, static_cast<float>(kWaveU * std::sin(k * y)), 0, 0};
  });
}

// The device's one step on random flow against the host's.
void check_step(Device& dev, Kernel& k, Storage s) {
  SplitMix64 rng(0x1b3c5d7f ^ static_cast<uint64_t>(s));
  const auto uniform = [&](float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(rng.next() >> 40) / static_cast<float>(1 << 24);
  };
  lbm::Box in = lbm::equilibrium_box(6, 5, 4, s, [&](uint32_t, uint32_t, uint32_t) {
    return lbm::CellState{uniform(-0.02f, 0.02f), uniform(-0.08f, 0.08f), uniform(-0.08f, 0.08f),
                          uniform(-0.08f, 0.08f)};
  });
  // Off equilibrium, so that the relaxation is exercised.
  for (int i = 0; i < lbm::kQ; ++i)
    for (size_t n = 0; n < in.cells(); ++n)
      in.set_shifted(i, n, in.shifted(i, n) + lbm::kW[i] * uniform(-0.05f, 0.05f));
  lbm::Box want;
  const float omega = 1.0f / kTau;
  lbm::step(in, want, omega);
  DeviceBox d = upload(dev, in);
  step(dev, k, d, omega, 0);
  const lbm::Box got = download(dev, d);
  // FP32: the device may contract to FMAs; 16-bit formats: two of their ulps.
  const double rel = s == Storage::fp32 ? 1e-5 : s == Storage::fp16s ? 2.0 / 1024 : 2.0 / 2048;
  for (int i = 0; i < lbm::kQ; ++i)
    for (size_t n = 0; n < in.cells(); ++n) {
      const double g = got.shifted(i, n), w = want.shifted(i, n);
      if (!(std::abs(g - w) <= 1e-7 + rel * std::abs(w)))
        throw ValidationError(
            fmt::format("lbm {}: one step on a 6x5x4 box: population {} of cell {} is {:.8g}, "
                        "the host's step gives {:.8g}",
                        lbm::storage_name(s), i, n, g, w));
    }
}

struct Physics {
  double nu_measured = 0;
  double nu_rel_error = 0;
  double mass_rel_error = 0;
};

Physics check_physics(Device& dev, Kernel& k, Storage s) {
  const lbm::Box start = shear_wave(4, kWaveLength, 4, s);
  const double mass0 = lbm::mass(start);
  DeviceBox d = upload(dev, start);
  const size_t local = pick_local(k, d.cells());
  const float omega = 1.0f / kTau;
  for (int t = 0; t < kDecayFrom; ++t) step(dev, k, d, omega, local);
  const double a1 = wave_amplitude(download(dev, d));
  for (int t = 0; t < kDecaySteps; ++t) step(dev, k, d, omega, local);
  const lbm::Box end = download(dev, d);
  const double a2 = wave_amplitude(end);
  const double kw = 2 * std::numbers::pi / kWaveLength;
  Physics p;
  p.nu_measured = std::log(a1 / a2) / (kw * kw * kDecaySteps);
  p.nu_rel_error = p.nu_measured / kNu - 1;
  p.mass_rel_error = lbm::mass(end) / mass0 - 1;
  const std::string name = lbm::storage_name(s);
  if (!(std::abs(p.mass_rel_error) <= kMassTolerance))
    throw ValidationError(fmt::format("lbm {}: shear wave: mass changed by {:.3g} (relative) over {} steps",
                                      name, p.mass_rel_error, kDecayFrom + kDecaySteps));
  if (!(std::abs(p.nu_rel_error) <= kViscosityTolerance))
    throw ValidationError(
        fmt::format("lbm {}: shear wave decayed with viscosity {:.5f}, the analytic one is {:.5f} ({:+.2f}%, "
                    "tolerance {:.0f}%)",
                    name, p.nu_measured, kNu, 100 * p.nu_rel_error, 100 * kViscosityTolerance));
  return p;
}

}  // namespace

std::vector<Series> run_lbm_probe(ProbeContext& ctx) {
  Device& dev = ctx.device;
  const DeviceInfo& info = dev.info();
  // Wall time on every device, the sim included: a box's cost is mostly the
  // host's (building the shear wave, checking mass and viscosity), which a
  // simulated device's modelled clock does not see, so on that clock the
  // boxes would grow to the allocation limit.
  TimeBudget budget(ctx.budget_s);
  const HarnessConfig& h = ctx.options.harness;
  const std::vector<Storage> modes = {Storage::fp32, Storage::fp16s, Storage::fp16c};
  // Edges of the cubes, as far as memory, the launch cap and the budget allow.
  const std::vector<uint32_t> edges = {16, 32, 64, 96, 128, 192, 256, 320, 384};
  std::vector<Series> out;
  for (size_t mi = 0; mi < modes.size(); ++mi) {
    const Storage s = modes[mi];
    const std::string name = lbm::storage_name(s);
    Kernel& k = dev.kernel({"lbm", "lbm_step", {{"mode", static_cast<int>(s)}}});
    check_step(dev, k, s);
    const Physics phys = check_physics(dev, k, s);
    ctx.progress(fmt::format("lbm {}: shear wave viscosity {:+.2f}% from analytic, mass {:+.1e}", name,
                             100 * phys.nu_rel_error, phys.mass_rel_error));

    Series series = make_series("lbm." + name, "lbm", {"cells", ""}, {"lattice updates", "MLUP/s"});
    nlohmann::json boxes = nlohmann::json::array();
    // This mode's share of what is left of the budget.
    const double mode_deadline_s =
        budget.elapsed_s() + budget.remaining_s() / static_cast<double>(modes.size() - mi);
    double last_cost_s = 0;
    uint32_t last_edge = 0;
    for (uint32_t edge : edges) {
      const size_t cells = size_t{edge} * edge * edge;
      const double buffer_bytes = lbm::kQ * static_cast<double>(cells) * lbm::storage_bytes(s);
      if (lbm::kQ * cells >= (size_t{1} << 32) || buffer_bytes > static_cast<double>(info.max_alloc_bytes) ||
          2 * buffer_bytes + cells > 0.5 * static_cast<double>(info.global_mem_bytes))
        break;
      // A box costs about its cells' worth of host work and steps: the next
      // one about (edge / last edge)^3 times the last.
      if (last_edge &&
          budget.elapsed_s() + last_cost_s * std::pow(double(edge) / last_edge, 3) > mode_deadline_s &&
          !series.points.empty())
        break;
      const double t0 = budget.elapsed_s();
      const lbm::Box start = shear_wave(edge, edge, edge, s);
      const double mass0 = lbm::mass(start);
      DeviceBox d;
      try {
        d = upload(dev, start);
      } catch (const OutOfResources&) {
        break;
      }
      const size_t local = pick_local(k, cells);
      const float omega = 1.0f / kTau;
      double step_ns = 0;
      for (int w = 0; w < std::max(1, h.warmup_launches) + 1; ++w) step_ns = step(dev, k, d, omega, local);
      if (step_ns > 0.5 * h.max_launch_ms * 1e6) break;  // one step near the watchdog cap: stop here
      const int per_sample =
          std::clamp(static_cast<int>(std::ceil(h.target_launch_ms * 1e6 / std::max(step_ns, 1.0))), 3, 200);
      std::vector<double> mlups;
      int steps = std::max(1, h.warmup_launches) + 1;
      for (int sample = 0; sample < h.min_samples; ++sample) {
        double ns = 0;
        for (int i = 0; i < per_sample; ++i) ns += step(dev, k, d, omega, local);
        steps += per_sample;
        mlups.push_back(static_cast<double>(cells) * per_sample / ns * 1e3);
      }
      const double mass_error = lbm::mass(download(dev, d)) / mass0 - 1;
      if (!(std::abs(mass_error) <= timed_mass_tolerance(s)))
        throw ValidationError(fmt::format("lbm {}: box {}^3: mass changed by {:.3g} (relative) over {} steps",
                                          name, edge, mass_error, steps));
      add_point(series, static_cast<double>(cells), mlups);
      boxes.push_back({{"edge", edge},
                       {"steps", steps},
                       {"steps_per_sample", per_sample},
                       {"local_size", local},
                       {"mass_rel_error", mass_error},
                       {"mass_tolerance", timed_mass_tolerance(s)}});
      last_cost_s = budget.elapsed_s() - t0;
      last_edge = edge;
      ctx.progress(fmt::format("lbm {}: {}^3 cells {:.0f} MLUP/s", name, edge, median(mlups)));
    }
    if (series.points.empty())
      throw Unsupported(fmt::format("lbm {}: not even a 16^3 box fits the device or the launch cap", name));
    series.meta = {
        {"kernel", "lbm/lbm_step"},
        {"storage", name},
        {"method", "D3Q19 BGK, pull scheme, two buffers, periodic cube; one launch per step"},
        {"bytes_per_cell_update", lbm::bytes_per_cell_update(s)},
        {"flops_per_cell_update", lbm::kFlopsPerCell},
        {"int_ops_per_cell_update", s == Storage::fp16c ? lbm::kFp16cIntOpsPerCell : 0.0},
        {"tau", kTau},
        {"boxes", boxes},
        {"physics",
         {{"flow", fmt::format("shear wave u_x = {} sin(2 pi y / {}) on 4x{}x4 cells", kWaveU, kWaveLength,
                               kWaveLength)},
          {"steps", fmt::format("decay read from step {} to {}", kDecayFrom, kDecayFrom + kDecaySteps)},
          {"nu_analytic", kNu},
          {"nu_measured", phys.nu_measured},
          {"nu_rel_error", phys.nu_rel_error},
          {"nu_tolerance", kViscosityTolerance},
          {"mass_tolerance", kMassTolerance},
          {"mass_rel_error", phys.mass_rel_error}}},
        {"wall_s", budget.elapsed_s()}};
    out.push_back(std::move(series));
    ctx.progress_fraction(static_cast<double>(mi + 1) / static_cast<double>(modes.size()));
  }
  return out;
}

// The three storage modes' kernels, for the work-group size pick_local
// takes where the kernel allows it (128: every box is a multiple of 16
// cells, and 16^3 of 128).
void build_lbm_ahead(Device& dev, const ProbeOptions& /*options*/) {
  std::vector<KernelSpec> specs;
  for (Storage s : {Storage::fp32, Storage::fp16s, Storage::fp16c})
    specs.push_back({"lbm", "lbm_step", {{"mode", static_cast<int>(s)}}});
  dev.build_ahead(specs, LaunchShape{Range::d1(16 * 16 * 16), Range::d1(128)});
}

}  // namespace gpuscope
