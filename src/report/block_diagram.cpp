#include "report/block_diagram.hpp"

#include <fmt/format.h>

#include <optional>

#include "analysis/cache_hierarchy.hpp"
#include "report/format.hpp"

namespace gpuscope {

namespace {

// The deepest cache level looked for (devices have at most four).
constexpr int kMaxLevels = 8;

class BoxBuilder {
 public:
  BoxBuilder(const Results& r, std::string id, std::string title, BoxKind kind) : r_(r) {
    box_.id = std::move(id);
    box_.title = std::move(title);
    box_.kind = kind;
  }

  // A field showing the finding as format_value writes it, when the run has it.
  BoxBuilder& add(const std::string& label, const std::string& finding_id) {
    if (const Finding* f = r_.find_finding(finding_id)) add(label, format_value(*f), *f);
    return *this;
  }
  // A field whose text is derived from the finding.
  BoxBuilder& add(const std::string& label, std::string value, const Finding& f) {
    box_.fields.push_back({label, std::move(value), f.id, is_low_confidence(f)});
    return *this;
  }
  BoxBuilder& place(Placement p, std::string basis) {
    box_.placement = p;
    box_.placement_basis = std::move(basis);
    return *this;
  }
  bool empty() const { return box_.fields.empty(); }

  // The box, its chart the first recorded series a field's finding cites.
  DiagramBox done() {
    box_.uncertain = !box_.fields.empty() && box_.fields.front().uncertain;
    for (const auto& field : box_.fields) {
      if (!box_.chart.empty()) break;
      for (const auto& id : r_.find_finding(field.finding_id)->evidence)
        if (r_.find_series(id)) {
          box_.chart = id;
          break;
        }
    }
    return std::move(box_);
  }

 private:
  const Results& r_;
  DiagramBox box_;
};

std::optional<bool> flag(const Results& r, const std::string& id) {
  const Finding* f = r.find_finding(id);
  if (!f) return std::nullopt;
  if (const auto* b = std::get_if<bool>(&f->value)) return *b;
  return std::nullopt;
}

std::optional<double> scalar(const Results& r, const std::string& id) {
  const Finding* f = r.find_finding(id);
  if (!f) return std::nullopt;
  if (const auto* d = std::get_if<double>(&f->value)) return *d;
  return std::nullopt;
}

std::string level_id(int n) { return fmt::format("memory.L{}", n); }

DiagramBox compute_unit(const Results& r) {
  BoxBuilder b(r, "cu", "Compute unit", BoxKind::kComputeUnit);
  // Lanes: FP32 multiplies a unit retires per clock, by the fastest of fma,
  // mad and mul (an emulated fma is far below the others). Adds are left
  // out: some units issue them on a second pipe as well (Mali's FADD).
  const Finding* lanes = nullptr;
  for (const char* op : {"fma", "mad", "mul"})
    if (const Finding* f = r.find_finding(fmt::format("compute.fp32.{}.ops_per_clock_per_cu", op)))
      if (!lanes || number(*f) > number(*lanes)) lanes = f;
  if (lanes) b.add("FP32 lanes", fmt::format("{:.3g}", number(*lanes)), *lanes);
  b.add("wave", "exec.wave_width");
  // Registers are counted 32 bits wide, as every GPU's register file is.
  if (const Finding* f = r.find_finding("exec.registers.per_cu"))
    b.add("registers", format_bytes(4 * number(*f)), *f);
  b.add("waves resident", "exec.max_waves_per_cu");
  b.add("clock", "device.measured_clock_mhz");
  b.add("icache", "exec.icache_bytes");
  return b.place(Placement::kPerComputeUnit, "a compute unit").done();
}

// memory.L1, memory.L2, ... as far as the run found levels.
std::vector<DiagramBox> cache_levels(const Results& r) {
  std::vector<DiagramBox> levels;
  for (int n = 1; n <= kMaxLevels; ++n) {
    const std::string id = level_id(n);
    BoxBuilder b(r, id, fmt::format("L{}", n), BoxKind::kCache);
    b.add("capacity", id + ".capacity_bytes").add("latency", id + ".latency_ns");
    if (b.empty()) break;
    b.add("bandwidth", id + ".bandwidth_gbps");
    if (n == 1) b.add("line", "memory.line_bytes");
    b.add("fetch", id + ".fetch_bytes");
    if (const auto shared = flag(r, id + ".shared_by_cus"))
      b.place(*shared ? Placement::kShared : Placement::kPerComputeUnit, "measured");
    else if (!levels.empty() && levels.back().placement == Placement::kShared)
      b.place(Placement::kShared, "beyond a shared level");
    levels.push_back(b.done());
  }
  // A split cache's halves: named after the near one, placed alike (GPUs
  // only: HierarchyOptions::split_caches).
  for (size_t k = 1; k < levels.size() && r.device.type != "cpu"; ++k) {
    const std::string near = level_id(static_cast<int>(k)), far = level_id(static_cast<int>(k) + 1);
    const auto near_ns = scalar(r, near + ".latency_ns"), far_ns = scalar(r, far + ".latency_ns");
    const auto near_bytes = scalar(r, near + ".capacity_bytes"),
               far_bytes = scalar(r, far + ".capacity_bytes");
    if (!near_ns || !far_ns || !near_bytes || !far_bytes || *near_ns <= 0 || *near_bytes <= 0) continue;
    if (!analysis::is_far_half_of_split(*far_ns / *near_ns, *far_bytes / *near_bytes)) continue;
    levels[k - 1].title = fmt::format("L{} near half", k);
    levels[k].title = fmt::format("L{} far half", k);
    levels[k].far_half_of = near;
    // The far half's plateau ends where the whole cache does.
    levels[k].fields.front().label = fmt::format("whole L{}", k);
    if (levels[k].placement_basis != "measured") {
      levels[k].placement = levels[k - 1].placement;
      levels[k].placement_basis = "as its near half";
    }
    ++k;  // a far half is not the near half of another split
  }
  return levels;
}

DiagramBox local_memory(const Results& r) {
  const auto on_chip = flag(r, "local.on_chip");
  BoxBuilder b(r, "local", "Local memory", BoxKind::kLocalMemory);
  b.add("capacity", "local.capacity_bytes").add("on chip", "local.on_chip");
  b.add("latency", "local.latency_ns").add("bandwidth", "local.bandwidth_gbps");
  if (on_chip)
    b.place(*on_chip ? Placement::kPerComputeUnit : Placement::kShared, "measured: on chip or not");
  return b.done();
}

DiagramBox texture_path(const Results& r, const std::vector<DiagramBox>& levels) {
  BoxBuilder b(r, "texture", "Texture", BoxKind::kTexture);
  b.add("L1", "texture.L1.capacity_bytes").add("latency", "texture.L1.latency_ns");
  b.add("bandwidth", "texture.bandwidth_gbps").add("shares L1", "texture.shares_l1");
  for (int n = 2; n <= kMaxLevels; ++n)
    b.add(fmt::format("L{} latency", n), fmt::format("texture.L{}.latency_ns", n));
  b.add("DRAM latency", "texture.dram.latency_ns");
  if (flag(r, "texture.shares_l1") == true && !levels.empty())
    b.place(levels.front().placement, "shares the L1");
  return b.done();
}

DiagramBox dram(const Results& r) {
  BoxBuilder b(r, "dram", "DRAM", BoxKind::kDram);
  b.add("latency", "memory.dram.latency_ns").add("read", "memory.dram.bandwidth_gbps");
  b.add("write", "memory.dram.write_gbps").add("copy", "memory.dram.copy_gbps");
  b.add("TLB reach", "memory.tlb.reach_bytes").add("page", "memory.tlb.page_bytes");
  return b.place(Placement::kShared, "one for the device").done();
}

DiagramBox host_link(const Results& r) {
  BoxBuilder b(r, "host", "Host link", BoxKind::kHost);
  b.add("to device", "host.h2d_gbps").add("to host", "host.d2h_gbps");
  b.add("mapped", "host.map_gbps").add("zero-copy", "host.zero_copy");
  return b.place(Placement::kShared, "one for the device").done();
}

}  // namespace

BlockDiagram block_diagram(const Results& r) {
  BlockDiagram d;
  d.device = r.device.name.empty() ? r.device.id : r.device.name;
  if (const auto cus = scalar(r, "device.compute_units"); cus && *cus >= 1)
    d.compute_units = static_cast<uint32_t>(*cus);
  else
    d.compute_units = r.device.compute_units;

  const auto levels = cache_levels(r);
  const auto keep = [&](DiagramBox box) {
    if (!box.fields.empty()) d.boxes.push_back(std::move(box));
  };
  keep(compute_unit(r));
  for (const auto& level : levels) keep(level);
  keep(local_memory(r));
  keep(texture_path(r, levels));
  keep(dram(r));
  keep(host_link(r));
  return d;
}

}  // namespace gpuscope
