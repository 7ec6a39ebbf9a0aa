// The findings as Markdown, for pasting into an issue or an article:
// `--format md` prints it, and every run writes report.md beside results.json.
#pragma once

#include <string>
#include <vector>

#include "report/report_run.hpp"

namespace gpuscope {

// A table per area of runs[0]'s findings, the other runs' values beside them
// with their ratio to runs[0] (a reference's values with "spec"/"meas"), the
// device, the command and what could not be measured (unmeasured.hpp).
// `diagram_file`: the block diagram's SVG written beside the Markdown
// (block_diagram_svg.hpp), shown under the device; "" for none. Text from
// drivers is escaped (| < > & and line breaks), so a device name cannot
// break the table or inject HTML.
std::string format_markdown(const std::vector<ReportRun>& runs, const std::string& diagram_file = "");

// A table cell's text: | escaped, < > & as entities, line breaks as spaces.
std::string markdown_cell(const std::string& s);

}  // namespace gpuscope
