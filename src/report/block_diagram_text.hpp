// The block diagram as text, for the top of the terminal spec sheet: the
// compute unit's boxes framed (what every unit has), then what could not be
// placed, then what the device shares, one box a line.
#pragma once

#include <string>

#include "report/block_diagram.hpp"

namespace gpuscope {

// Lines of at most `width` columns (ASCII only, so any terminal draws it);
// an uncertain value ends in "?".
std::string format_block_diagram_text(const BlockDiagram& d, size_t width = 100);

}  // namespace gpuscope
