// The matrix engine's arithmetic beside its speed: one row per
// shape whose numerics were read (compute.matrix.<shape>.numerics.*,
// docs/results-format.md), with its throughput and each property's value,
// and under the table what the internal sum's width means for a user.
#pragma once

#include <string>

#include "core/results.hpp"
#include "report/html_builder.hpp"

namespace gpuscope {

// The table as Markdown ("" where no shape has numerics findings). A value
// below confidence 0.5 is marked "?", one the run could not read is "-".
std::string matrix_numerics_markdown(const Results& r);
// The same table and lines in report.html, after the findings (empty where
// there is none).
html::Markup matrix_numerics_html(const Results& r);

}  // namespace gpuscope
