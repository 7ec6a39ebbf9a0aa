// "What the driver says": the driver's facts and their agreement with the
// measurements (analysis/driver_agreement), in each report format. Each
// function returns "" when the run read no driver facts.
#pragma once

#include "core/results.hpp"
#include "report/html_builder.hpp"

#include <string>

namespace gpuscope {

// A fact's value with its unit: integers in full, other numbers to 6 digits.
std::string format_driver_value(const DriverFact& f);

html::Markup driver_section_html(const Results& r);
std::string driver_section_markdown(const Results& r);
// Plain text for the terminal spec sheet.
std::string driver_section_text(const Results& r);

}  // namespace gpuscope
