#include "core/error.hpp"
#include "probes/graphics/graphics_probes.hpp"
#include "probes/probe.hpp"

namespace gpuscope {

const std::vector<ProbeDef>& probe_registry() {
  static const std::vector<ProbeDef> probes = {
      {"latency", "dependent pointer chase over growing footprints: cache levels, sizes, latencies", 20.0,
       run_latency_probe},
      // bandwidth + local: 12 s of the 25 s the memory probes share on a GPU.
      {"bandwidth", "read/write/copy bandwidth vs footprint, vector width and work-group count", 9.0,
       run_bandwidth_probe, build_bandwidth_ahead},
      {"local", "local memory latency, bandwidth and capacity, against global memory", 3.0, run_local_probe},
      {"texture", "image-path chase, bandwidth, and whether texture and load/store share a first-level cache",
       5.0, run_texture_probe},
      {"coalescing", "copies B[i] = A[i*m + k]: throughput vs work-group size, offset k and stride m", 3.0,
       run_coalescing_probe},
      {"tlb", "page-strided chases over growing footprints: TLB reach and miss penalty", 2.5, run_tlb_probe},
      {"geometry", "chases that show fetch unit (sector), line size and caches shared between compute units",
       2.5, run_geometry_probe},
      {"transfer", "host<->device copies, pinned and pageable, map/unmap, SVM: link rates and zero copy", 6.5,
       run_transfer_probe},
      {"launch", "empty-kernel dispatch, round-trip and back-to-back launch costs", 1.0, run_launch_probe},
      {"atomics", "compare-and-swap hand-off latency (global, local) and atomic-add throughput", 2.0,
       run_atomics_probe},
      {"scheduling", "resident work-groups per compute unit vs group size and local memory", 1.5,
       run_scheduling_probe},
      {"clock", "the running clock: SM counters on NVIDIA, a dependent chain elsewhere", 0.5,
       run_clock_probe},
      // The next five build many kernel variants: their budgets leave room
      // for a cold compile cache (about 0.3 s per build on NVIDIA's driver).
      {"compute",
       "arithmetic throughput per type and op, independent chains: rates, ratios to fp32 FMA, dual issue",
       7.5, run_compute_probe, build_compute_ahead},
      {"oplatency", "dependent chains per type and op: latency in ns and cycles", 4.0, run_oplatency_probe,
       build_oplatency_ahead},
      // Skipped at once where the device lists no matrix shapes (OpenCL).
      {"matrix",
       "matrix engine per listed type and shape: multiply-accumulate throughput and dependent-chain latency",
       4.0, run_matrix_probe, build_matrix_ahead},
      {"divergence",
       "branch sides against agreeing block size, waves switched on by stride: wave width, scheduler "
       "partitions",
       2.0, run_divergence_probe},
      {"occupancy",
       "latency-bound chase against work-groups, live registers and local memory: waves per unit, cliffs",
       4.5, run_occupancy_probe, build_occupancy_ahead},
      {"icache",
       "issue-bound adds against loop-body size, binary size against adds: instruction cache, code bytes",
       2.8, run_icache_probe, build_icache_ahead},
      // Graphics (issue 15): render passes through the device's graphics
      // facet; each skipped with its reason where there is none. Small
      // budgets: passes of ~5 ms, a few per point.
      {"raster", "raster order of a render pass by fragment tickets: tile width and height, walk, binning", 1.0,
       run_raster_probe},
      {"tilemem", "the tile traced at growing bytes per pixel (attachments, formats, MSAA): tile memory", 1.5,
       run_tilemem_probe},
      {"rop", "fill rate by attachment format (rgba8, rgba16f, rgba32f, depth32f), blending off and on", 1.5,
       run_rop_probe},
      {"texfill", "texture fill rate by filter (point, bilinear, trilinear, aniso) from a cached texture", 1.0,
       run_texfill_probe},
      {"fbcompress", "read cost of rendered against storage frames of flat, blocky and noisy content: compression block",
       1.5, run_fbcompress_probe},
      {"txelim", "experimental: write cost of an identical redraw against changed content (transaction elimination)",
       0.5, run_txelim_probe},
      // An application after the microbenchmarks: its verdict reads the
      // bandwidth probe's DRAM rate.
      {"lbm", "D3Q19 lattice Boltzmann in FP32, FP16S and FP16C storage: MLUP/s vs box, bandwidth- or compute-bound",
       3.0, run_lbm_probe, build_lbm_ahead},
      // --sustain-s of load (3 s by default) plus ~2 s of idle gaps.
      {"sustain", "sustained FMA load: clock ramp, sustained clock, throttling, clock drops between launches",
       5.0, run_sustain_probe},
  };
  return probes;
}

double planned_budget_s(const ProbeDef& def, const ProbeOptions& options, const DeviceInfo& device) {
  return def.budget_s * options.budget_scale * (options.quick ? 0.4 : 1.0) *
         (device.type == "cpu" ? 2.5 : 1.0);
}

const ProbeDef& find_probe(const std::string& name) {
  std::string valid;
  for (const auto& p : probe_registry()) {
    if (p.name == name) return p;
    valid += (valid.empty() ? "" : ", ") + p.name;
  }
  throw UsageError("unknown probe '" + name + "'; valid probes: " + valid);
}

}  // namespace gpuscope
