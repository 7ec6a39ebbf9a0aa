// SimDevice's GraphicsFacet: graphics.hpp's passes and frames on the raster
// model (raster_model.hpp) of the description's "raster" section, with the
// description's measurement noise on every time.
#pragma once

#include "backends/graphics.hpp"

#include <memory>

namespace gpuscope::sim {

class SimDevice;

// The facet of a device whose description has a raster section; `dev`
// outlives it (SimDevice owns it).
std::unique_ptr<GraphicsFacet> make_sim_graphics(SimDevice& dev);

}  // namespace gpuscope::sim
