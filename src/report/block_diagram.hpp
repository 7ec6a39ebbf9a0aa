// The device as gpuscope found it, as boxes: compute units, each cache level,
// local memory, the texture path, DRAM and the host link, each box holding
// the findings it is drawn from. Built from findings alone (no layout, no
// device-specific code); block_diagram_svg.hpp and block_diagram_text.hpp
// draw it, so tests check the structure here and the renderers only place it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/results.hpp"

namespace gpuscope {

enum class BoxKind { kComputeUnit, kCache, kLocalMemory, kTexture, kDram, kHost };

// Where a box sits, as measured: inside every compute unit, one for the whole
// device, or not measured (the renderers draw these apart, never guessed).
enum class Placement { kPerComputeUnit, kShared, kUnknown };

// One line of a box: "latency" "16.2 ns", from one finding.
struct DiagramField {
  std::string label;
  std::string value;       // format_value of the finding, or a derived reading ("258 KiB")
  std::string finding_id;  // the finding it shows; report.html anchors it as finding-<id>
  bool uncertain = false;  // the finding's confidence is below 0.5
};

struct DiagramBox {
  std::string id;     // "cu", "memory.L1", "local", "texture", "dram", "host"
  std::string title;  // "L1", "L2 near half", "DRAM"
  BoxKind kind = BoxKind::kCache;
  Placement placement = Placement::kUnknown;
  // How the placement was decided, for a person: "measured", or why it follows.
  std::string placement_basis;
  std::vector<DiagramField> fields;  // never empty; the first is the box's defining value
  std::string chart;       // the first recorded series a field's finding cites (its chart); "" when none
  bool uncertain = false;  // the defining value is uncertain: the box is drawn dashed
  // The far half of a split cache: the id of the near half's box, which
  // comes right before it (analysis::is_far_half_of_split).
  std::string far_half_of;
};

struct BlockDiagram {
  std::string device;             // the device's name
  uint32_t compute_units = 0;     // 0 when neither the driver nor a finding says
  std::vector<DiagramBox> boxes;  // the compute unit first, then inward to outward, the host link last

  const DiagramBox* find(const std::string& id) const {
    for (const auto& b : boxes)
      if (b.id == id) return &b;
    return nullptr;
  }
};

// The diagram of a run's findings. A box appears only where a finding gives
// it a value; cache levels are memory.L<n>, in order, with the line and fetch
// sizes and bandwidth read for them. Placement: memory.L<n>.shared_by_cus
// where measured; a level beyond a shared level is shared; local memory is
// per compute unit when on chip and shared (global memory) when not; the
// texture path sits with the L1 when it shares it.
BlockDiagram block_diagram(const Results& r);

}  // namespace gpuscope
