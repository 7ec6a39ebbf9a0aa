// libFuzzer target: sim descriptions (`--device sim:PATH`) through the
// reader and the model's ground truth for them. Bad input must end in
// UsageError (exit 2), and what is accepted must lie within the bounds the
// sim states (sim_config.hpp).
#include "backends/sim/sim_config.hpp"
#include "core/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  sim::SimConfig c;
  try {
    c = sim::parse_sim_config_text(text, "fuzz.json");
  } catch (const UsageError&) {
    return 0;
  }
  if (c.caches.empty() || c.caches.size() > sim::kSimMaxCacheLevels) __builtin_trap();
  uint64_t lines = 0;
  for (const auto& l : c.caches) {
    if (l.capacity_bytes > sim::kSimMaxCacheBytes) __builtin_trap();
    lines += l.capacity_bytes / l.line_bytes * (l.per_core ? c.core.shader_cores : 1);
  }
  if (lines > sim::kSimMaxModelLines || c.tlb.entries > sim::kSimMaxTlbEntries) __builtin_trap();
  for (double footprint : {1024.0, 1048576.0, 2147483648.0}) {
    (void)sim::expected_chase(c, footprint);
    (void)sim::expected_chase(c, footprint, sim::CachePath::texture);
    (void)sim::chase_latency_beyond_caches(c, footprint);
  }
  return 0;
}
