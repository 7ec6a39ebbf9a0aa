// The graphics probes' entry points (one file each), registered in
// probes/registry.cpp. Each throws Unsupported (and is skipped with the
// reason) where the device has no graphics facet or lacks what it needs.
#pragma once

#include "probes/probe.hpp"

namespace gpuscope {

std::vector<Series> run_raster_probe(ProbeContext& ctx);
std::vector<Series> run_tilemem_probe(ProbeContext& ctx);
std::vector<Series> run_rop_probe(ProbeContext& ctx);
std::vector<Series> run_texfill_probe(ProbeContext& ctx);
std::vector<Series> run_fbcompress_probe(ProbeContext& ctx);
std::vector<Series> run_txelim_probe(ProbeContext& ctx);

}  // namespace gpuscope
