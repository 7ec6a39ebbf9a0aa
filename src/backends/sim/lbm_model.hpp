// What family_lbm.cpp's model of lbm.cl predicts, for the recovery tests.
#pragma once

#include "backends/sim/sim_config.hpp"

namespace gpuscope::sim {

// MLUP/s of lbm.cl's step in storage mode `mode` (0 FP32, 1 FP16S, 2 FP16C)
// on the described device: the longer of its bytes through DRAM and its
// operations through the ALUs.
double sim_lbm_expected_mlups(const SimConfig& c, int mode);

}  // namespace gpuscope::sim
