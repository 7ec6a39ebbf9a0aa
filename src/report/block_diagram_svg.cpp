#include "report/block_diagram_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "report/html_builder.hpp"
#include "report/html_report.hpp"

namespace gpuscope {

namespace {

using html::Markup;

// Geometry in SVG user units (CSS pixels at 100%).
constexpr double kWidth = 640;
constexpr double kMargin = 8;
constexpr double kStack = 4;        // offset of each unit drawn behind the first
constexpr double kBandHead = 22;    // a frame's heading
constexpr double kPad = 8;          // inside a frame
constexpr double kGap = 8;          // between boxes
constexpr double kConnector = 16;   // the line between bands
constexpr double kBoxHead = 19;     // a box's title
constexpr double kLine = 14;        // a field's line
constexpr double kCharWidth = 6.1;  // an 11 px sans-serif character, on average
constexpr double kMinFieldColumn = 168;
constexpr size_t kPerUnitColumns = 4;

struct Style {
  const char* fill;
  const char* stroke;
};

Style style_of(BoxKind kind) {
  switch (kind) {
    case BoxKind::kComputeUnit:
      return {"#e7f4e8", "#2e7d32"};
    case BoxKind::kCache:
      return {"#e4effb", "#1d5fa8"};
    case BoxKind::kLocalMemory:
      return {"#f3e6f6", "#6a1b9a"};
    case BoxKind::kTexture:
      return {"#fff1df", "#b85c00"};
    case BoxKind::kDram:
      return {"#eceff1", "#37474f"};
    case BoxKind::kHost:
      return {"#fbf6d9", "#7a6200"};
  }
  return {"#ffffff", "#333333"};
}

std::string num(double v) { return fmt::format("{:.1f}", v); }

// Text that is squeezed to `max_width` where its estimated width exceeds it,
// so that no label runs out of its box whatever the font.
Markup text(double x, double y, const std::string& s, double max_width, const Markup& attrs) {
  const double estimate = kCharWidth * static_cast<double>(s.size());
  const Markup fit =
      estimate > max_width
          ? html::format(" textLength=\"{}\" lengthAdjust=\"spacingAndGlyphs\"", num(max_width))
          : Markup();
  return html::format("<text x=\"{}\" y=\"{}\"{} {}>{}</text>", num(x), num(y), fit, attrs, s);
}

size_t field_columns(double box_width) {
  return std::max<size_t>(1, static_cast<size_t>((box_width - 2 * kPad) / kMinFieldColumn));
}

double box_height(const DiagramBox& b, double box_width) {
  const size_t cols = field_columns(box_width);
  const size_t rows = (b.fields.size() + cols - 1) / cols;
  return kBoxHead + kLine * static_cast<double>(rows) + 6;
}

class Svg {
 public:
  explicit Svg(std::string page) : page_(std::move(page)) {}

  void box(const DiagramBox& b, double x, double y, double w, double h) {
    const Style st = style_of(b.kind);
    const Markup dash = b.uncertain ? Markup(" stroke-dasharray=\"5 3\"") : Markup();
    const std::string target =
        b.chart.empty() ? finding_anchor(b.fields.front().finding_id) : chart_anchor(b.chart);
    body_ += html::format("<g class=\"box{}\" data-box=\"{}\">\n", b.uncertain ? " uncertain" : "", b.id);
    body_ += html::format("<a href=\"{}#{}\" data-box=\"{}\" class=\"box-link\"><title>{}: {}</title>\n", page_,
                          target, b.id, b.title, b.chart.empty() ? "its finding" : "evidence chart " + b.chart);
    body_ += html::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" fill=\"{}\" stroke=\"{}\" "
        "stroke-width=\"1.3\"{}/>\n",
        num(x), num(y), num(w), num(h), st.fill, st.stroke, dash);
    body_ += text(x + kPad, y + 14, b.title + (b.uncertain ? " ?" : ""), w - 2 * kPad,
                  html::format("font-weight=\"700\" font-size=\"12\" fill=\"{}\"", st.stroke)) +
             "\n</a>\n";
    const size_t cols = field_columns(w);
    const double col_width = (w - 2 * kPad) / static_cast<double>(cols);
    for (size_t i = 0; i < b.fields.size(); ++i) {
      const DiagramField& f = b.fields[i];
      const size_t row = i / cols, col = i % cols;  // fields fill the columns row by row
      const double fx = x + kPad + col_width * static_cast<double>(col);
      const double fy = y + kBoxHead + 10 + kLine * static_cast<double>(row);
      body_ += html::format("<a href=\"{}#{}\" data-box=\"{}\" data-finding=\"{}\"{}><title>{}</title>", page_,
                            finding_anchor(f.finding_id), b.id, f.finding_id,
                            f.uncertain ? Markup(" class=\"uncertain\"") : Markup(),
                            f.finding_id + (f.uncertain ? ": confidence below 0.5" : ""));
      body_ += text(fx, fy, f.label + " " + f.value + (f.uncertain ? " ?" : ""), col_width - 6,
                    f.uncertain ? Markup("fill=\"#9a6700\" font-style=\"italic\"") : Markup("fill=\"#222\""));
      body_ += "</a>\n";
    }
    body_ += "</g>\n";
  }

  void frame(double x, double y, double w, double h, const std::string& heading, bool dashed,
             size_t stacked) {
    for (size_t k = stacked; k > 0; --k) {
      const double o = kStack * static_cast<double>(k);
      body_ += html::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\" fill=\"#fafafa\" "
          "stroke=\"#9e9e9e\"/>\n",
          num(x + o), num(y + o), num(w), num(h));
    }
    body_ += html::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\" fill=\"#ffffff\" stroke=\"#616161\" "
        "stroke-width=\"1.2\"{}/>\n",
        num(x), num(y), num(w), num(h), dashed ? Markup(" stroke-dasharray=\"6 4\"") : Markup());
    body_ += text(x + kPad, y + 15, heading, w - 2 * kPad,
                  "font-weight=\"700\" font-size=\"12\" fill=\"#424242\"") +
             "\n";
  }

  void connector(double x, double y0, double y1) {
    body_ += html::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#616161\" stroke-width=\"2\"/>\n", num(x),
        num(y0), num(y1));
  }

  void note(double x, double y, const std::string& s) {
    body_ += text(x, y, s, kWidth - 2 * kMargin, "font-size=\"10.5\" fill=\"#666\"") + "\n";
  }

  // On a white ground of its own, so that the file reads on a dark page too.
  Markup done(const std::string& title, double height) const {
    return html::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"block-diagram\" viewBox=\"0 0 {0} {1}\" "
        "width=\"{0}\" height=\"{1}\" font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\" "
        "font-size=\"11\" role=\"img\" aria-label=\"{2}\">\n<title>{2}</title>\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{3}</svg>\n",
        num(kWidth), num(std::ceil(height)), title, body_);
  }

 private:
  std::string page_;
  Markup body_;
};

std::vector<const DiagramBox*> placed(const BlockDiagram& d, Placement p) {
  std::vector<const DiagramBox*> out;
  for (const auto& b : d.boxes)
    if (b.placement == p) out.push_back(&b);
  return out;
}

// Boxes in a grid of up to kPerUnitColumns inside a frame of width `w` from
// (x, y); returns the height used. With no `svg` it only measures.
double grid(Svg* svg, const std::vector<const DiagramBox*>& boxes, double x, double y, double w) {
  const size_t cols = std::min(kPerUnitColumns, boxes.size());
  const double bw = (w - kGap * static_cast<double>(cols - 1)) / static_cast<double>(cols);
  double top = y;
  for (size_t row = 0; row * cols < boxes.size(); ++row) {
    double h = 0;
    for (size_t c = 0; c < cols && row * cols + c < boxes.size(); ++c)
      h = std::max(h, box_height(*boxes[row * cols + c], bw));
    for (size_t c = 0; c < cols && row * cols + c < boxes.size(); ++c)
      if (svg) svg->box(*boxes[row * cols + c], x + (bw + kGap) * static_cast<double>(c), top, bw, h);
    top += h + kGap;
  }
  return top - y - kGap;
}

// Boxes one a row at width `w` from (x, y), the far half of a split cache
// beside its near half; returns the height used. With no `svg` it only
// measures.
double rows(Svg* svg, const std::vector<const DiagramBox*>& boxes, double x, double y, double w) {
  double top = y;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (i + 1 < boxes.size() && boxes[i + 1]->far_half_of == boxes[i]->id) {
      const double half = (w - kGap) / 2;
      const double h = std::max(box_height(*boxes[i], half), box_height(*boxes[i + 1], half));
      if (svg) {
        svg->box(*boxes[i], x, top, half, h);
        svg->box(*boxes[i + 1], x + half + kGap, top, half, h);
      }
      top += h + kGap;
      ++i;
    } else {
      const double h = box_height(*boxes[i], w);
      if (svg) svg->box(*boxes[i], x, top, w, h);
      top += h + kGap;
    }
  }
  return top - y - kGap;
}

}  // namespace

std::string render_block_diagram_svg(const BlockDiagram& d, const std::string& page) {
  return block_diagram_svg_markup(d, page).str();
}

html::Markup block_diagram_svg_markup(const BlockDiagram& d, const std::string& page) {
  Svg svg(page);
  const double frame_w = kWidth - 2 * kMargin - 2 * kStack;
  const double center = kMargin + frame_w / 2;
  double y = kMargin;
  const auto connect = [&] {
    if (y == kMargin) return;
    svg.connector(center, y, y + kConnector);
    y += kConnector;
  };
  // A frame holding boxes laid out by `layout` (called once to measure,
  // with no svg, and once to draw).
  const auto band = [&](const auto& layout, const std::string& heading, bool dashed, size_t stacked) {
    connect();
    const double h = kBandHead + layout(nullptr, 0.0, 0.0) + kPad;
    svg.frame(kMargin, y, frame_w, h, heading, dashed, stacked);
    layout(&svg, kMargin + kPad, y + kBandHead);
    y += h + kStack * static_cast<double>(stacked);
  };
  const double inner_w = frame_w - 2 * kPad;

  if (const auto per_cu = placed(d, Placement::kPerComputeUnit); !per_cu.empty()) {
    const std::string heading = d.compute_units > 1
                                    ? fmt::format("{} compute units, each with", d.compute_units)
                                    : std::string("compute unit");
    band([&](Svg* to, double x, double top) { return grid(to, per_cu, x, top, inner_w); }, heading, false,
         d.compute_units > 1 ? 2 : 0);
  }
  if (const auto unknown = placed(d, Placement::kUnknown); !unknown.empty())
    band([&](Svg* to, double x, double top) { return grid(to, unknown, x, top, inner_w); },
         "not measured whether per compute unit or shared", true, 0);

  // On-chip shared boxes in a frame, one a row, a split cache's halves side
  // by side; DRAM and the host link below it.
  std::vector<const DiagramBox*> on_chip, off_chip;
  for (const DiagramBox* b : placed(d, Placement::kShared))
    (b->kind == BoxKind::kDram || b->kind == BoxKind::kHost ? off_chip : on_chip).push_back(b);
  if (!on_chip.empty()) {
    const std::string heading = d.compute_units > 1
                                    ? fmt::format("shared by the {} compute units", d.compute_units)
                                    : std::string("shared");
    band([&](Svg* to, double x, double top) { return rows(to, on_chip, x, top, inner_w); }, heading, false,
         0);
  }
  for (const DiagramBox* b : off_chip) {
    connect();
    const double h = box_height(*b, frame_w);
    svg.box(*b, kMargin, y, frame_w, h);
    y += h;
  }
  y += 16;
  svg.note(kMargin, y,
           "Dashed, \"?\": confidence below 0.5. A box links to its evidence chart, a value to its finding.");
  return svg.done("Block diagram of " + d.device + " as gpuscope measured it", y + kMargin);
}

}  // namespace gpuscope
