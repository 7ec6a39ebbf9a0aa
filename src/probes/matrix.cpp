// Probe `matrix`: the matrix engine (tensor cores, matrix cores, XMX), for
// every multiply-accumulate the device lists (DeviceFeatures::matrix_shapes):
// its throughput with many independent accumulators, and its latency along
// a dependent chain. The kernel, its values and its result are stated once
// in core/matrix_chain.hpp.
//
// Shape of the experiment, and why:
// - Latency ("matrix.<shape>.latency"): one subgroup, one accumulator, so
//   each multiply-accumulate waits for the one before; y = ns per
//   multiply-accumulate.
// - Throughput ("matrix.<shape>.throughput"): subgroups of
//   kSubgroupsPerGroup per work-group, kGroupsPerUnit work-groups per
//   compute unit, each subgroup keeping x independent accumulators (4, then
//   8 and 2 while the budget lasts); y = Gop/s, an op being one multiply-add
//   (m x n x k of them per D = A x B + C), as compute's FMA counts one op.
// - Pairs of multiply-accumulates per launch are the harness's work unit,
//   passed as an argument (the compiler cannot specialise the timed
//   launches), and capped where a value could leave the exact range.
// - Every launch stores every accumulator of every subgroup; the host checks
//   a short launch before timing and the last timed launch after it, bit
//   for bit (the values are exact in every type).
// - Numerics ("matrix.<shape>.numerics"): what the engine computes, not how
//   fast: the crafted dot products of analysis/matrix_numerics.hpp, one
//   launch of the family's `numerics` kernel (one D = A x B + C per
//   subgroup, each pattern on a D's diagonal); y = each pattern's result
//   bits. Only where the backend has that kernel (the sim, so far); else,
//   and for types the models do not cover, the reason is in the throughput
//   series' meta ("numerics_not_run").
// A shape whose types the family has no values for, whose kernel the
// backend cannot build, or whose result is wrong, is left out with its
// reason in every series' meta ("not_run"); the probe is skipped when none
// runs, and fails when every one gave a wrong result.
#include "analysis/matrix_numerics.hpp"
#include "core/error.hpp"
#include "core/matrix_chain.hpp"
#include "probes/probe.hpp"
#include "probes/series_util.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace gpuscope {
namespace {

// 16 subgroups per compute unit: enough to keep the matrix unit's pipes
// busy with 4 accumulators each, few enough that registers never run out.
// On an H100 through Vulkan (f16 x f16 -> f32 16x16x16, 4 accumulators) 16
// subgroups per SM gave 329-336 k multiply-adds/ns over runs, 32 gave 329 k
// and 64 gave 271-324 k (tests/data/h100/matrix_occupancy_grid.txt).
constexpr uint32_t kSubgroupsPerGroup = 4;
constexpr uint32_t kGroupsPerUnit = 4;
// Four first: where the register file cannot hold every launched subgroup
// with eight accumulators (on an H100, eight 16x16 f32 accumulators and A, B,
// B2 take about 76 registers a lane, and 32 warps of that exceed its 64K),
// the subgroups left over run in a second round and the rate drops.
constexpr uint32_t kThroughputChains[] = {4, 8, 2};
constexpr uint64_t kCheckPairs = 3;

KernelSpec chain_spec(const MatrixShape& s, uint32_t chains) {
  return {"matrix",
          "chain",
          {{"a", s.a},
           {"b", s.b},
           {"c", s.c},
           {"result", s.result},
           {"m", s.m},
           {"n", s.n},
           {"k", s.k},
           {"saturating", s.saturating},
           {"chains", chains}}};
}

// One shape at one accumulator count on `subgroups` subgroups of `width`
// work-items: builds, checks a short launch, measures pairs, checks the last
// timed launch. Returns ns per pair of multiply-accumulates, one per timed
// launch; throws on a wrong result.
struct Timed {
  std::vector<double> ns_per_pair;
  uint64_t pairs = 0;
};

Timed run_chain(ProbeContext& ctx, const MatrixShape& listed, const MatrixChainShape& shape, uint32_t chains,
                uint32_t width, uint32_t group_subgroups, uint64_t subgroups) {
  Device& dev = ctx.device;
  Kernel& k = dev.kernel(chain_spec(listed, chains));
  const MatrixChainInputs in = matrix_chain_inputs(shape, chains);
  auto a = dev.create_buffer(in.a_bytes.size());
  auto b = dev.create_buffer(in.b_bytes.size());
  auto b2 = dev.create_buffer(in.b2_bytes.size());
  auto c = dev.create_buffer(in.c_bytes.size());
  const size_t out_bytes = subgroups * chains * shape.m * shape.n * matrix_type_bytes(shape.result);
  auto out = dev.create_buffer(out_bytes);
  dev.write(*a, 0, in.a_bytes);
  dev.write(*b, 0, in.b_bytes);
  dev.write(*b2, 0, in.b2_bytes);
  dev.write(*c, 0, in.c_bytes);
  const LaunchShape launch{Range::d1(subgroups * width), Range::d1(uint64_t{group_subgroups} * width), 0};

  const auto launch_pairs = [&](uint64_t pairs) {
    const KernelArg args[] = {a.get(), b.get(), b2.get(), c.get(), out.get(), static_cast<uint32_t>(pairs)};
    return dev.launch(k, launch, args);
  };
  const auto check = [&](uint64_t pairs) {
    std::vector<std::byte> got(out_bytes);
    dev.read(*out, 0, got);
    if (const std::string bad = matrix_chain_check(in, pairs, subgroups, got); !bad.empty())
      throw ValidationError(fmt::format("matrix {} with {} accumulators: {}", matrix_shape_tag(shape), chains, bad));
  };
  const uint64_t check_pairs = std::min<uint64_t>(kCheckPairs, in.max_pairs);
  launch_pairs(check_pairs);
  check(check_pairs);
  const uint64_t max_pairs = std::min<uint64_t>(in.max_pairs, UINT32_MAX);
  const Measurement m = measure(launch_pairs, 1, max_pairs, ctx.options.harness);
  check(m.work_per_launch);
  return {m.ns_per_unit, m.work_per_launch};
}

// Why the numerics part cannot run on this device and shape; "" where it
// can. Only the sim's backend has the `numerics` kernel so far (the Vulkan
// and OpenCL backends' matrix kernels are the chains alone).
std::string numerics_not_run(const DeviceInfo& info, const MatrixChainShape& shape) {
  if (info.type != "sim") return fmt::format("no numerics kernel through {} yet", info.api);
  return analysis::numerics_unsupported(shape);
}

// The numerics patterns through one launch, one subgroup per work-group;
// their results' bits as a series.
Series run_numerics(ProbeContext& ctx, const MatrixShape& listed, const MatrixChainShape& shape, uint32_t width) {
  Device& dev = ctx.device;
  KernelSpec spec = chain_spec(listed, 1);
  spec.entry = "numerics";
  spec.params.erase("chains");
  Kernel& k = dev.kernel(spec);
  const analysis::NumericsPlan plan = analysis::numerics_plan(shape);
  const analysis::NumericsInputs in = analysis::numerics_inputs(plan);
  auto a = dev.create_buffer(in.a_bytes.size());
  auto b = dev.create_buffer(in.b_bytes.size());
  auto c = dev.create_buffer(in.c_bytes.size());
  auto out = dev.create_buffer(in.out_bytes);
  dev.write(*a, 0, in.a_bytes);
  dev.write(*b, 0, in.b_bytes);
  dev.write(*c, 0, in.c_bytes);
  const KernelArg args[] = {a.get(), b.get(), c.get(), out.get()};
  dev.launch(k, {Range::d1(in.subgroups * width), Range::d1(width), 0}, args);
  std::vector<std::byte> got(in.out_bytes);
  dev.read(*out, 0, got);
  Series s = analysis::numerics_series(plan, analysis::numerics_observed(plan, got));
  s.meta["subgroup_size"] = width;
  return s;
}

// The numerics part of one shape, or nullopt with the reason in `meta`
// ("numerics_not_run"): it fails alone, the shape's rates stand without it.
std::optional<Series> numerics_part(ProbeContext& ctx, const MatrixShape& listed, const MatrixChainShape& shape,
                                    uint32_t width, nlohmann::json& meta) {
  if (std::string why = numerics_not_run(ctx.device.info(), shape); !why.empty()) {
    meta["numerics_not_run"] = why;
    return std::nullopt;
  }
  try {
    return run_numerics(ctx, listed, shape, width);
  } catch (const BuildError& e) {
    meta["numerics_not_run"] = fmt::format("{}\nbuild log:\n{}", e.what(), e.log);
  } catch (const Unsupported& e) {
    meta["numerics_not_run"] = e.what();
  } catch (const OutOfResources& e) {
    meta["numerics_not_run"] = fmt::format("out of resources: {}", e.what());
  }
  return std::nullopt;
}

// How the probe launches the chains on `info`: a subgroup's width, the
// subgroups per work-group, and the throughput launches' subgroups in all.
struct MatrixLaunch {
  uint32_t width = 0, group_subgroups = 1;
  uint64_t throughput_subgroups = 1;
};

MatrixLaunch matrix_launch(const DeviceInfo& info) {
  MatrixLaunch l;
  l.width = info.features.subgroup_sizes.empty() ? 0 : info.features.subgroup_sizes.front();
  if (l.width == 0) return l;
  l.group_subgroups = std::max<uint32_t>(
      1, std::min<uint64_t>(kSubgroupsPerGroup, info.max_work_group_size ? info.max_work_group_size / l.width : 1));
  l.throughput_subgroups = uint64_t{std::max<uint32_t>(1, info.compute_units)} * kGroupsPerUnit * l.group_subgroups;
  return l;
}

// Every listed shape's kernels and pipelines, built several at a time where
// the backend can: one at a time they took 1.7 s of an H200's 4.8 s in this
// probe. `ahead`: through Device::build_ahead (a run's build-ahead thread),
// else Device::prebuild. Those that fail are met again when run, with the
// reason.
void build_matrix_kernels(Device& dev, bool ahead) {
  const DeviceInfo& info = dev.info();
  const MatrixLaunch l = matrix_launch(info);
  if (l.width == 0) return;
  std::vector<KernelSpec> latency_specs, throughput_specs;
  for (const MatrixShape& s : info.features.matrix_shapes) {
    if (!matrix_chain_shape(s.a, s.b, s.c, s.result, s.m, s.n, s.k, nullptr)) continue;
    latency_specs.push_back(chain_spec(s, 1));
    for (uint32_t chains : kThroughputChains) throughput_specs.push_back(chain_spec(s, chains));
  }
  const LaunchShape latency{Range::d1(l.width), Range::d1(l.width), 0};
  const LaunchShape throughput{Range::d1(l.throughput_subgroups * l.width),
                               Range::d1(uint64_t{l.group_subgroups} * l.width), 0};
  if (ahead) {
    dev.build_ahead(latency_specs, latency);
    dev.build_ahead(throughput_specs, throughput);
  } else {
    dev.prebuild(latency_specs, latency);
    dev.prebuild(throughput_specs, throughput);
  }
}

}  // namespace

std::vector<Series> run_matrix_probe(ProbeContext& ctx) {
  Device& dev = ctx.device;
  const DeviceInfo& info = dev.info();
  TimeBudget budget = ctx.budget();
  const auto& shapes = info.features.matrix_shapes;
  if (shapes.empty())
    throw Unsupported(
        "the device lists no matrix multiply-accumulate shapes (its API offers no matrix engine to kernels: "
        "Vulkan without VK_KHR_cooperative_matrix, OpenCL, a sim description without `matrix`)");
  if (info.features.subgroup_sizes.empty())
    throw Unsupported("the device claims no subgroup size, which the matrix kernels are launched in");
  const MatrixLaunch launch = matrix_launch(info);
  const uint32_t width = launch.width;
  const uint32_t group_subgroups = launch.group_subgroups;
  const uint64_t throughput_subgroups = launch.throughput_subgroups;
  build_matrix_kernels(dev, false);

  std::vector<Series> result;
  nlohmann::json not_run = nlohmann::json::array();
  size_t wrong = 0;
  std::string last_wrong;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const MatrixShape& s = shapes[i];
    ctx.progress_fraction(static_cast<double>(i) / static_cast<double>(shapes.size()));
    const std::string listed = fmt::format("{}x{}->{} (c {}) {}x{}x{}", s.a, s.b, s.result, s.c, s.m, s.n, s.k);
    std::string why;
    const auto shape = matrix_chain_shape(s.a, s.b, s.c, s.result, s.m, s.n, s.k, &why);
    if (!shape) {
      not_run.push_back({{"shape", listed}, {"reason", why}});
      continue;
    }
    const std::string tag = matrix_shape_tag(*shape);
    const nlohmann::json shape_meta = {{"a", s.a}, {"b", s.b}, {"c", s.c}, {"result", s.result},
                                       {"m", s.m}, {"n", s.n}, {"k", s.k}, {"saturating", s.saturating},
                                       {"macs_per_op", shape->macs()}};
    try {
      const Timed lat = run_chain(ctx, s, *shape, 1, width, 1, 1);
      Series ls = make_series("matrix." + tag + ".latency", "matrix", {"accumulators", ""},
                              {"time per dependent multiply-accumulate", "ns"});
      std::vector<double> per_op;
      for (double ns : lat.ns_per_pair) per_op.push_back(ns / 2);
      add_point(ls, 1, per_op);
      ls.meta = {{"kernel", "matrix/chain"},
                 {"shape", shape_meta},
                 {"subgroup_size", width},
                 {"pairs_per_launch", lat.pairs},
                 {"method", "one subgroup, one accumulator: D = A x B + D, each waiting for the last"}};

      Series ts = make_series("matrix." + tag + ".throughput", "matrix", {"accumulators per subgroup", ""},
                              {"multiply-adds", "Gop/s"});
      ts.meta = {{"kernel", "matrix/chain"},
                 {"shape", shape_meta},
                 {"subgroup_size", width},
                 {"subgroups", throughput_subgroups},
                 {"subgroups_per_group", group_subgroups},
                 {"method", "independent accumulators per subgroup, every compute unit given " +
                                std::to_string(kGroupsPerUnit * group_subgroups) + " subgroups"}};
      nlohmann::json pairs = nlohmann::json::object();
      for (uint32_t chains : kThroughputChains) {
        if (!ts.points.empty() && budget.exhausted()) break;
        const Timed t = run_chain(ctx, s, *shape, chains, width, group_subgroups, throughput_subgroups);
        const double macs_per_pair = 2.0 * static_cast<double>(throughput_subgroups * chains * shape->macs());
        std::vector<double> gops;
        for (double ns : t.ns_per_pair) gops.push_back(macs_per_pair / ns);
        add_point(ts, chains, gops);
        pairs[std::to_string(chains)] = t.pairs;
      }
      ts.meta["pairs_per_launch"] = pairs;
      std::optional<Series> numerics = numerics_part(ctx, s, *shape, width, ts.meta);
      ctx.progress(fmt::format("matrix {}: {:.0f} Gop/s, {:.1f} ns per dependent multiply-accumulate", tag,
                               std::max_element(ts.points.begin(), ts.points.end(),
                                                [](const Point& x, const Point& y) { return x.y < y.y; })
                                   ->y,
                               ls.points.front().y));
      result.push_back(std::move(ls));
      result.push_back(std::move(ts));
      if (numerics) result.push_back(std::move(*numerics));
    } catch (const BuildError& e) {
      not_run.push_back({{"shape", listed}, {"reason", fmt::format("{}\nbuild log:\n{}", e.what(), e.log)}});
    } catch (const Unsupported& e) {
      not_run.push_back({{"shape", listed}, {"reason", e.what()}});
    } catch (const OutOfResources& e) {
      not_run.push_back({{"shape", listed}, {"reason", fmt::format("out of resources: {}", e.what())}});
    } catch (const ValidationError& e) {
      // Kept apart from the shapes that ran, and said loudly; the others
      // still run. Every shape wrong fails the probe.
      ++wrong;
      not_run.push_back({{"shape", listed}, {"reason", fmt::format("wrong result: {}", e.what())}});
      ctx.progress(fmt::format("matrix {}: WRONG RESULT: {}", listed, e.what()));
      last_wrong = e.what();
    }
  }
  if (result.empty() && wrong > 0 && wrong == not_run.size())
    throw ValidationError(fmt::format("every listed matrix shape gave a wrong result; the last: {}", last_wrong));
  if (result.empty()) {
    std::string reasons;
    for (const auto& n : not_run)
      reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", n["shape"].get<std::string>(),
                             n["reason"].get<std::string>());
    throw Unsupported("no listed matrix shape could be run: " + reasons);
  }
  for (auto& s : result) {
    s.meta["not_run"] = not_run;
    s.meta["wall_s"] = budget.elapsed_s();
  }
  return result;
}

void build_matrix_ahead(Device& dev, const ProbeOptions& /*options*/) { build_matrix_kernels(dev, true); }

}  // namespace gpuscope
