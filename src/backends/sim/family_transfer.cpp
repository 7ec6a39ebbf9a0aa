// Sim family `transfer` (src/kernels/opencl/transfer.cl): `read_sum`, every work-item summing the uint4
// vectors data[gid], data[gid + global], ... below count, each group's sums
// reduced into partial[group].
//
// Semantics: partial[g] = the sum (mod 2^32) of the words of the vectors i
// < count with (i mod global) in group g's work-items. One pass over the
// data; the result is memoised per buffer (valid while the buffer is
// unchanged: its write stamp), count and launch shape, since the probe
// repeats the same launches over the same buffers (an ordinary and a
// host-allocated one, in turn: a memo for each).
//
// Time: the bytes at DRAM bandwidth for an ordinary buffer; for a buffer in
// host memory (create_host_buffer) at the host link's bandwidth, unless the
// description says host.zero_copy (host and device share the memory).
#include "backends/sim/family.hpp"
#include "backends/sim/sim_device.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace gpuscope::sim {
namespace {

struct ReadSumMemo {
  uint64_t buffer_id = 0, written = 0, count = 0, global = 0, group = 0;
  std::vector<uint32_t> partial;
};

// read_sum(data, count, partial)
double read_sum(SimLaunch& l) {
  const SimBuffer& data = l.buffer(0);
  const uint64_t count = l.u64(1);
  SimBuffer& partial = l.buffer(2);
  const long long group = l.spec().integer("group", 0);
  if (group <= 0) throw DeviceError("sim: transfer needs a positive group parameter");
  if (l.local().total() != static_cast<size_t>(group))  // reqd_work_group_size(GROUP, 1, 1)
    throw DeviceError(fmt::format("sim: transfer read_sum requires work-groups of {}", group));
  const uint64_t global = l.global().total();
  const uint64_t groups = global / static_cast<uint64_t>(group);
  if (count * 16 > data.size_bytes()) throw DeviceError("sim: transfer read_sum reads past its buffer");
  if (groups * 4 > partial.size_bytes()) throw DeviceError("sim: transfer partial buffer too small");

  auto& m = l.state<ReadSumMemo>("transfer.read_sum." + std::to_string(data.id()));
  if (m.buffer_id != data.id() || m.written != data.last_write() || m.count != count || m.global != global ||
      m.group != static_cast<uint64_t>(group)) {
    m = ReadSumMemo{data.id(),
                    data.last_write(),
                    count,
                    global,
                    static_cast<uint64_t>(group),
                    std::vector<uint32_t>(groups, 0)};
    uint64_t item = 0;  // (i mod global) of the next vector i
    data.visit(0, count * 16, [&](const std::byte* p, size_t n) {
      const uint64_t vectors = n / 16;  // pieces are whole vectors: chunks are multiples of 16 B
      if (p == nullptr) {               // never written: zeros add nothing
        item = (item + vectors) % global;
        return;
      }
      const auto* words = reinterpret_cast<const uint32_t*>(p);
      for (uint64_t j = 0; j < vectors; ++j) {
        const uint32_t h = words[4 * j] + words[4 * j + 1] + words[4 * j + 2] + words[4 * j + 3];
        m.partial[item / static_cast<uint64_t>(group)] += h;
        if (++item == global) item = 0;
      }
    });
  }
  partial.write(0, std::as_bytes(std::span<const uint32_t>(m.partial)));
  const auto& c = l.config();
  const double gbps =
      data.host_allocated && !c.host.zero_copy ? c.host.link_bandwidth_gbps : c.dram_bandwidth_gbps;
  return static_cast<double>(count) * 16 / gbps;
}

}  // namespace

void register_sim_family_transfer(FamilyTable& table) { table.add({"transfer", "read_sum", 0, read_sum}); }

}  // namespace gpuscope::sim
