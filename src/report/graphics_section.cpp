#include "report/graphics_section.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <unordered_set>

#include "report/format.hpp"
#include "report/html_builder.hpp"
#include "report/html_report.hpp"
#include "report/raster_picture.hpp"

namespace gpuscope {

namespace {

using nlohmann::json;
using html::Markup;

// The contract's ids (docs/results-format.md, issue 15).
constexpr const char* kOrderSeries = "graphics.raster.order";
constexpr const char* kWideSeries = "graphics.raster.order_wide";
constexpr const char* kTileMemorySeries = "graphics.tile_memory";
constexpr const char* kFbRenderedSeries = "graphics.fb_compression.rendered";
constexpr const char* kFbStorageSeries = "graphics.fb_compression.storage";
constexpr const char* kTxElimSeries = "graphics.transaction_elimination";

constexpr const char* kTileWidth = "graphics.tile.width_px";
constexpr const char* kTileHeight = "graphics.tile.height_px";
constexpr const char* kTileOrder = "graphics.tile.order";
constexpr const char* kBinning = "graphics.binning";
constexpr const char* kTileMemory = "graphics.tile.memory_bytes";
constexpr const char* kFbBlock = "graphics.fb_compression.block_px";
constexpr const char* kTxElim = "graphics.transaction_elimination";

// Fill rates: graphics.rop.<format>[.blend].gpixels, graphics.texture.<filter>.gtexels.
struct RateKind {
  const char* prefix;
  const char* suffix;
  const char* title;
  const char* summary_label;
};
constexpr RateKind kRop = {"graphics.rop.", ".gpixels", "ROP fill rate by attachment format", "ROP fill"};
constexpr RateKind kTexture = {"graphics.texture.", ".gtexels", "Texture fill rate by filter",
                               "texture fill"};

bool is_rate(const std::string& id, const RateKind& k) {
  return id.size() > std::string_view(k.prefix).size() + std::string_view(k.suffix).size() &&
         id.starts_with(k.prefix) && id.ends_with(k.suffix);
}

// "rgba8 + blend" from graphics.rop.rgba8.blend.gpixels.
std::string rate_label(const std::string& id, const RateKind& k) {
  std::string middle =
      id.substr(std::string_view(k.prefix).size(),
                id.size() - std::string_view(k.prefix).size() - std::string_view(k.suffix).size());
  for (size_t at = middle.find('.'); at != std::string::npos; at = middle.find('.', at + 3))
    middle.replace(at, 1, " + ");
  return middle;
}

// A rate a bar can show: a finite number.
bool drawable(const Finding* f) {
  return f && std::holds_alternative<double>(f->value) && std::isfinite(number(*f));
}

std::vector<const Finding*> rates(const Results& r, const RateKind& k) {
  std::vector<const Finding*> out;
  for (const auto& f : r.findings)
    if (is_rate(f.id, k) && drawable(&f)) out.push_back(&f);
  return out;
}

std::optional<double> scalar(const Results& r, const char* id) {
  const Finding* f = r.find_finding(id);
  if (!f) return std::nullopt;
  if (const auto* d = std::get_if<double>(&f->value); d && std::isfinite(*d)) return *d;
  return std::nullopt;
}

std::string whole_or_three(double v) {
  // format_significant writes the huge ones as 1e+308 (report/format.hpp).
  return std::abs(v) < 1e15 && v == std::floor(v) ? fmt::format("{:.0f}", v) : format_significant(v);
}

Markup finding_link(const Finding& f, const std::string& text) {
  return html::format("<a href=\"#{}\">{}</a>", finding_anchor(f.id), text);
}

std::string conf_text(const Finding& f) {
  return fmt::format("confidence {:.2f}{}", f.confidence, is_low_confidence(f) ? ", a guess" : "");
}

// The findings that cite `series` in any run, linked, for a caption.
Markup cited_findings(const std::vector<ReportRun>& runs, const std::string& series) {
  Markup out;
  std::unordered_set<std::string> anchors;
  for (const auto& run : runs)
    for (const Finding* f : run.index().citing(series)) {
      if (!anchors.insert(finding_anchor(f->id)).second) continue;
      if (!out.empty()) out += ", ";
      out += finding_link(*f, f->id);
    }
  return out;
}

Markup run_heading(const std::vector<ReportRun>& runs, size_t i) {
  return runs.size() > 1 ? html::format("<h4><span class=\"swatch\" style=\"background:{}\"></span>{}</h4>\n",
                                        run_colour(i), runs[i].label)
                         : Markup();
}

// ---- Pictures ------------------------------------------------------------------

// An indexed image shown at `display_px` CSS pixels wide (at most), pixels
// kept square-edged, with the tile grid drawn over it in image coordinates.
// The grid's finest spacing in screen pixels where a picture `width`
// pixels wide is shown `display_px` wide (a large number where there are no
// lines).
double grid_spacing_px(uint32_t width, const TileGrid& grid, double display_px) {
  double finest = 1e9;
  const auto scan = [&finest](const std::vector<uint32_t>& lines) {
    uint32_t last = 0;
    for (uint32_t v : lines) {
      finest = std::min<double>(finest, v - last);
      last = v;
    }
  };
  scan(grid.xs);
  scan(grid.ys);
  return width ? finest * std::min(1.0, display_px / width) : finest;
}

// Grid lines closer than this on screen hide the picture under them.
constexpr double kFinestGridPx = 6;

Markup picture_html(const IndexedImage& img, const TileGrid& grid, double display_px,
                    const std::string& alt) {
  std::string path;
  if (grid_spacing_px(img.width, grid, display_px) >= kFinestGridPx) {
    for (uint32_t x : grid.xs) path += fmt::format("M{} 0V{}", x, img.height);
    for (uint32_t y : grid.ys) path += fmt::format("M0 {}H{}", y, img.width);
  }
  Markup out = html::format(
      "<div class=\"picture\" style=\"max-width:{:.0f}px\"><img class=\"gpuscope-picture\" width=\"{}\" "
      "height=\"{}\" alt=\"{}\" src=\"{}\">",
      display_px, img.width, img.height, alt, png_data_uri(img));
  if (!path.empty())
    out += html::format(
        "<svg viewBox=\"0 0 {} {}\" preserveAspectRatio=\"none\" aria-hidden=\"true\"><path "
        "class=\"tile-grid\" "
        "d=\"{}\"/></svg>",
        img.width, img.height, path);
  return out + "</div>";
}

std::string ramp_css() {
  std::string stops;
  for (int i = 0; i <= 8; ++i) {
    const Rgb c = ramp_colour(i / 8.0);
    stops += fmt::format("{}#{:02x}{:02x}{:02x}", i ? "," : "", c[0], c[1], c[2]);
  }
  return "linear-gradient(to right," + stops + ")";
}

Markup ticket_legend(bool any_grid) {
  const Rgb grey = ticket_palette()[kGreyIndex];
  Markup out = html::format(
      "<div class=\"ticket-legend\"><span>first shaded</span><span class=\"ramp\" "
      "style=\"background:{}\"></span>"
      "<span>last recorded</span><span class=\"swatch\" style=\"background:#{:02x}{:02x}{:02x}\"></span>"
      "<span>no ticket recorded</span>",
      ramp_css(), grey[0], grey[1], grey[2]);
  if (any_grid) out += "<span class=\"grid-key\"></span><span>tile grid found</span>";
  return out + "</div>\n";
}

// One run's picture of one raster trace, with its caption and first-N views.
Markup raster_run_html(const std::vector<ReportRun>& runs, size_t i, const Series& s, bool& any_grid) {
  const Results& r = *runs[i].results;
  Markup body = "<div class=\"raster-run\">\n" + run_heading(runs, i);
  const RasterPicture p = raster_picture(s);
  if (!p.problem.empty()) return body + html::format("<p class=\"note\">Not drawn: {}.</p>\n</div>\n", p.problem);
  const TraceCells cells = trace_cells(s);
  const Finding* fw = r.find_finding(kTileWidth);
  const Finding* fh = r.find_finding(kTileHeight);
  const auto tw = scalar(r, kTileWidth), th = scalar(r, kTileHeight);
  const double stride = p.stride;
  const TileGrid grid = tw && th ? tile_grid(p.width, p.height, *tw / stride, *th / stride) : TileGrid{};
  any_grid = any_grid || ((!grid.xs.empty() || !grid.ys.empty()) &&
                           grid_spacing_px(p.width, grid, std::min<double>(p.width, 512)) >= kFinestGridPx);
  body += picture_html(
      ticket_image(p), grid, std::min<double>(p.width, 512),
      fmt::format("the raster order of a {}x{} framebuffer, each recorded pixel coloured by its ticket",
                  cells.width, cells.height));
  Markup caption = html::format("{} x {} px framebuffer, {}: rectangle 0's tickets, 0 to {}", cells.width,
                                    cells.height,
                                    p.stride == 1 ? std::string("every pixel recorded")
                                                  : fmt::format("every {}th pixel along each axis recorded",
                                                                p.stride),
                                    p.last_ticket);
  if (p.tickets_taken) caption += html::format(" of {} fragments shaded", p.tickets_taken);
  if (p.ignored) caption += html::format("; {} records not whole tickets or repeated, left out", p.ignored);
  if (fw && fh && tw && th)
    caption += html::format(
        "; grid: tiles of {} x {} px{}", finding_link(*fw, whole_or_three(*tw)),
        finding_link(*fh, whole_or_three(*th)),
        grid_spacing_px(p.width, grid, std::min<double>(p.width, 512)) < kFinestGridPx
            ? " (too fine to draw at this size)"
            : "");
  else
    caption += "; no tile size found, so no grid";
  if (const Finding* o = r.find_finding(kTileOrder))
    caption += "; order between tiles " + finding_link(*o, format_value(*o));
  if (const Finding* b = r.find_finding(kBinning)) caption += "; binning " + finding_link(*b, format_value(*b));
  body += "<p class=\"note\">" + caption + ".</p>\n";
  // A tile's fragments: its pixels once per rectangle drawn.
  double rects_drawn = 1;
  if (s.meta.contains("rects_drawn") && s.meta["rects_drawn"].is_number())
    rects_drawn = std::max(1.0, s.meta["rects_drawn"].get<double>());
  const auto steps = first_n_steps(p, tw && th ? *tw * *th * rects_drawn : 0);
  if (!steps.empty()) {
    body += "<div class=\"first-n\">\n";
    for (uint64_t n : steps)
      body += "<figure class=\"thumb\">" +
              picture_html(ticket_image(p, n), grid, 160, fmt::format("the first {} fragments shaded", n)) +
              html::format("<figcaption>first {} fragments</figcaption></figure>\n", n);
    body += "</div>\n";
  }
  return body + "</div>\n";
}

Markup raster_figure(const std::vector<ReportRun>& runs) {
  bool any_grid = false;
  Markup body;
  for (size_t i = 0; i < runs.size(); ++i)
    for (const char* id : {kOrderSeries, kWideSeries})
      if (const Series* s = runs[i].results->find_series(id)) body += raster_run_html(runs, i, *s, any_grid);
  return html::format(
      "<figure id=\"{}\" class=\"raster\" data-series=\"{}\">\n<h3>Raster order</h3>\n"
      "<p class=\"note\">Every fragment of a pass of full-screen rectangles took a ticket from an atomic "
      "counter and recorded it at its pixel; the picture shows the first rectangle's: the colour runs from "
      "the first ticket to the last recorded, so a tile shows as a square of one shade and the walk between "
      "tiles as the order of the shades. The small pictures show only the first fragments, coloured over "
      "their own range.</p>\n{}<div "
      "class=\"raster-runs\">\n{}</div>\n</figure>\n",
      chart_anchor(kOrderSeries), kOrderSeries, ticket_legend(any_grid), body);
}

Markup binning_figure(const std::vector<ReportRun>& runs) {
  Markup body;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Results& r = *runs[i].results;
    const Series* s = r.find_series(kWideSeries);
    if (!s) s = r.find_series(kOrderSeries);
    if (!s) continue;
    body += run_heading(runs, i);
    const BinningPicture b = binning_picture(*s);
    if (!b.problem.empty()) {
      body += html::format("<p class=\"note\">Not drawn: {}.</p>\n", b.problem);
      continue;
    }
    const uint32_t rows = b.image.height;
    body += html::format(
        "<div class=\"strip\"><span class=\"axis-y\">rectangle 0<br>to {}</span><img "
        "class=\"gpuscope-picture "
        "binning\" width=\"{}\" height=\"{}\" style=\"height:{}px\" alt=\"rectangle against ticket\" "
        "src=\"{}\"></div>\n",
        b.rects - 1, b.image.width, rows, std::clamp<uint32_t>(rows * 6, 48, 240), png_data_uri(b.image));
    Markup caption =
        html::format("{} fragments of {} rectangles; a column is {} ticket{}, first on the left", b.records,
                     b.rects, b.tickets_per_column, b.tickets_per_column == 1 ? "" : "s");
    if (const Finding* f = r.find_finding(kBinning))
      caption += "; binning: " + finding_link(*f, format_value(*f)) + html::format(" ({})", conf_text(*f));
    body += "<p class=\"note\">" + caption + ".</p>\n";
  }
  return html::format(
      "<figure id=\"{}\" class=\"binning\" data-series=\"{}\">\n<h3>Binning</h3>\n<p class=\"note\">Which "
      "rectangle each recorded fragment belonged to, by ticket (dark: all of a column's fragments), from the "
      "first two rectangles of the raster trace. A GPU that bins "
      "shades every rectangle of one tile before the next tile: the rectangles recur along the strip. One "
      "that "
      "renders each rectangle across the screen first draws a single staircase.</p>\n{}</figure>\n",
      chart_anchor(kOrderSeries) + "-binning", kOrderSeries, body);
}

Markup tile_memory_figure(const std::vector<ReportRun>& runs) {
  const Series* first = nullptr;
  for (const auto& run : runs)
    if (!first) first = run.results->find_series(kTileMemorySeries);
  const std::string anchor = chart_anchor(kTileMemorySeries);
  const Markup cited = cited_findings(runs, kTileMemorySeries);
  return html::format(
      "<figure id=\"{0}\" data-series=\"{1}\">\n<h3>Tile memory</h3>\n<div class=\"chart-box\"><canvas "
      "id=\"canvas-{0}\" role=\"img\" aria-label=\"{2} against {3}\"></canvas></div>\n<figcaption>{2} "
      "against {3}, "
      "{4} points. The tile holds its pixels' attachments on chip: once they outgrow the tile memory the "
      "tile "
      "shrinks as memory / bytes per pixel (dashed); the knee is where the largest tile stops fitting{5}."
      "</figcaption>\n</figure>\n",
      anchor, kTileMemorySeries, first->y.name, first->x.name, first->points.size(),
      cited.empty() ? Markup() : "; findings: " + cited);
}

// Horizontal bars, a group per rate and a bar per run that has it: the
// value, its interval as a whisker, the bar's strength its confidence.
Markup rate_bars(const std::vector<ReportRun>& runs, const RateKind& k) {
  std::vector<std::string> ids;
  std::unordered_set<std::string> seen;
  for (const auto& run : runs)
    for (const Finding* f : rates(*run.results, k))
      if (seen.insert(f->id).second) ids.push_back(f->id);
  if (ids.empty()) return Markup();
  double top = 0;
  size_t bars = 0;
  for (const auto& id : ids)
    for (const auto& run : runs)
      if (const Finding* f = run.index().finding(id); drawable(f)) {
        top = std::max(top, number(*f));
        if (f->high && std::isfinite(*f->high)) top = std::max(top, *f->high);
        ++bars;
      }
  if (!(top > 0)) top = 1;
  constexpr double kWidth = 660, kLabel = 150, kBar = 320, kRow = 20, kGap = 8, kHead = 18;
  const double height = kHead + bars * kRow + ids.size() * kGap;
  Markup svg = html::format(
      "<svg class=\"bars\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "aria-label=\"{2}\">"
      "<text x=\"{3}\" y=\"12\" class=\"head\">value</text><text x=\"{4}\" y=\"12\" class=\"head\" "
      "text-anchor=\"end\">confidence</text>",
      kWidth, height, k.title, kLabel + kBar + 10, kWidth - 2);
  double y = kHead;
  for (const auto& id : ids) {
    y += kGap / 2;
    bool first_bar = true;
    for (size_t i = 0; i < runs.size(); ++i) {
      const Finding* f = runs[i].index().finding(id);
      if (!drawable(f)) continue;
      const double v = number(*f);
      const auto at = [&](double x) { return kLabel + std::clamp(x / top, 0.0, 1.0) * kBar; };
      const double opacity =
          0.3 + 0.7 * (std::isfinite(f->confidence) ? std::clamp(f->confidence, 0.0, 1.0) : 0.0);
      svg += html::format("<a href=\"#{}\"><title>{}: {} ({})</title>", finding_anchor(id), id,
                          value_with_interval(*f), conf_text(*f));
      if (first_bar)
        svg += html::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", kLabel - 8, y + 14,
                            rate_label(id, k));
      svg += html::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"14\" fill=\"{}\" fill-opacity=\"{:.2f}\"/>",
          kLabel, y + 3, at(v) - kLabel, run_colour(i), opacity);
      if (f->low && f->high && std::isfinite(*f->low) && std::isfinite(*f->high) && *f->high > *f->low)
        svg += html::format(
            "<path class=\"whisker\" d=\"M{0:.1f} {2}H{1:.1f}M{0:.1f} {3}V{4}M{1:.1f} {3}V{4}\"/>",
            at(*f->low), at(*f->high), y + 10, y + 6, y + 14);
      svg += html::format("<text x=\"{}\" y=\"{}\">{}{}</text>", kLabel + kBar + 10, y + 14, format_value(*f),
                          is_low_confidence(*f) ? Markup(" <tspan class=\"low\">?</tspan>") : Markup());
      svg += html::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.2f}</text></a>", kWidth - 2, y + 14,
                          f->confidence);
      y += kRow;
      first_bar = false;
    }
    y += kGap / 2;
  }
  return html::format(
      "<figure class=\"rates\">\n<h3>{}</h3>\n{}</svg>\n<figcaption>Each bar links to its finding; "
      "whiskers: the interval; pale bars: low confidence.</figcaption>\n</figure>\n",
      k.title, svg);
}

// One point's y with its sample spread, as the tables show it.
Markup point_cell(const Point& p, const std::string& unit) {
  Markup s = html::text(format_significant(p.y) + (unit.empty() ? "" : " " + unit));
  if (p.samples.size() > 1) {
    const auto [lo, hi] = std::minmax_element(p.samples.begin(), p.samples.end());
    s += html::format(" <span class=\"dim\">[{} .. {}]</span>", format_significant(*lo), format_significant(*hi));
  }
  return s;
}

// The first point of `s` at each x; a point with no x (NaN) is in no row.
std::map<double, const Point*> points_by_x(const Series* s) {
  std::map<double, const Point*> out;
  if (s)
    for (const auto& p : s->points)
      if (!std::isnan(p.x)) out.try_emplace(p.x, &p);
  return out;
}

const Point* point_at(const std::map<double, const Point*>& points, double x) {
  const auto it = points.find(x);
  return it == points.end() ? nullptr : it->second;
}

Markup fb_compression_table(const std::vector<ReportRun>& runs) {
  Markup out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Results& r = *runs[i].results;
    const Series* rendered = r.find_series(kFbRenderedSeries);
    const Series* storage = r.find_series(kFbStorageSeries);
    if (!rendered && !storage) continue;
    const Series& any = rendered ? *rendered : *storage;
    const auto rendered_at = points_by_x(rendered), storage_at = points_by_x(storage);
    std::vector<double> xs;
    for (const auto* at : {&rendered_at, &storage_at})
      for (const auto& [x, p] : *at) xs.push_back(x);
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    const auto block = scalar(r, kFbBlock);
    out += run_heading(runs, i);
    out += html::format(
        "<table class=\"graphics\"><tr><th>{} ({})</th><th><a href=\"#{}\">rendered</a> {}</th><th><a "
        "href=\"#{}\">storage image</a> {}</th><th>rendered / storage</th></tr>\n",
        any.x.name, any.x.unit.empty() ? "count" : any.x.unit, chart_anchor(kFbRenderedSeries), any.y.name,
        chart_anchor(kFbStorageSeries), any.y.name);
    for (double x : xs) {
      const Point* a = point_at(rendered_at, x);
      const Point* b = point_at(storage_at, x);
      const bool found = block && *block == x;
      out += html::format(
          "<tr{}><td class=\"num\">{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td></tr>\n",
          found ? Markup(" class=\"found\"") : Markup(), whole_or_three(x), x == 0 ? " (flat)" : "",
          a ? point_cell(*a, any.y.unit) : Markup("-"), b ? point_cell(*b, any.y.unit) : Markup("-"),
          a && b && b->y != 0 ? fmt::format("{:.3g}x", a->y / b->y) : "");
    }
    out += "</table>\n";
    if (const Finding* f = r.find_finding(kFbBlock))
      out += "<p class=\"note\">Compression block: " + finding_link(*f, value_with_interval(*f)) +
             html::format(" ({}), the highlighted row.</p>\n", conf_text(*f));
  }
  if (out.empty()) return Markup();
  return "<figure class=\"graphics-table\">\n<h3>Framebuffer compression</h3>\n<p class=\"note\">Frames of "
         "flat "
         "colour, blocky noise and full noise, read back by compute: a rendered frame the driver compressed "
         "reads "
         "faster than the same pixels written through a storage image, until the blocks are finer than the "
         "compression block.</p>\n" +
         out + "</figure>\n";
}

Markup transaction_elimination_table(const std::vector<ReportRun>& runs) {
  Markup out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Results& r = *runs[i].results;
    const Series* s = r.find_series(kTxElimSeries);
    if (!s) continue;
    const auto at = points_by_x(s);
    const Point* same = point_at(at, 0);
    const Point* changed = point_at(at, 1);
    out += run_heading(runs, i);
    out += html::format("<table class=\"graphics\"><tr><th>redraw</th><th><a href=\"#{}\">{}</a></th></tr>\n",
                        chart_anchor(kTxElimSeries), s->y.name);
    out += "<tr><td>identical content</td><td class=\"num\">" +
           (same ? point_cell(*same, s->y.unit) : Markup("-")) +
           "</td></tr>\n<tr><td>changed content</td><td class=\"num\">" +
           (changed ? point_cell(*changed, s->y.unit) : Markup("-")) + "</td></tr>\n";
    if (same && changed && same->y > 0)
      out += html::format("<tr><td>changed / identical</td><td class=\"num\">{:.3g}x</td></tr>\n",
                          changed->y / same->y);
    out += "</table>\n";
    if (const Finding* f = r.find_finding(kTxElim))
      out += "<p class=\"note\">Unchanged tiles skipped: " + finding_link(*f, format_value(*f)) +
             html::format(" ({}).</p>\n", conf_text(*f));
  }
  if (out.empty()) return Markup();
  return "<figure class=\"graphics-table\">\n<h3>Transaction elimination <span class=\"dim\">(experimental)"
         "</span></h3>\n<p class=\"note\">The same frame drawn again against a changed one: a GPU that "
         "compares each tile with what memory holds writes only the tiles that changed.</p>\n" +
         out + "</figure>\n";
}

Markup summary_table(const std::vector<ReportRun>& runs) {
  Markup out;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].reference) continue;
    const auto lines = graphics_summary(*runs[i].results);
    if (lines.empty()) continue;
    out += run_heading(runs, i) + "<table class=\"graphics-summary\">\n";
    for (const auto& l : lines)
      out += html::format("<tr><th>{}</th><td>{}</td><td class=\"num dim\">conf {:.2f}</td></tr>\n", l.label,
                          l.text, l.confidence);
    out += "</table>\n";
  }
  return out;
}

bool is_graphics(const std::string& id) { return id.starts_with("graphics."); }

}  // namespace

bool drawn_as_picture(const std::string& series_id) {
  return series_id == kOrderSeries || series_id == kWideSeries;
}

bool shown_in_graphics_section(const std::string& series_id) {
  return drawn_as_picture(series_id) || series_id == kTileMemorySeries;
}

Markup graphics_section_html(const std::vector<ReportRun>& runs) {
  const auto has_series = [&](const char* id) {
    return std::any_of(runs.begin(), runs.end(),
                       [&](const ReportRun& r) { return r.results->find_series(id); });
  };
  const bool any = std::any_of(runs.begin(), runs.end(), [](const ReportRun& r) {
    return std::any_of(r.results->series.begin(), r.results->series.end(),
                       [](const Series& s) { return is_graphics(s.id); }) ||
           std::any_of(r.results->findings.begin(), r.results->findings.end(),
                       [](const Finding& f) { return is_graphics(f.id); });
  });
  if (!any) return Markup();
  Markup out =
      "<h2 id=\"graphics\">Graphics</h2>\n" + summary_table(runs) + "<div class=\"graphics\">\n";
  if (has_series(kOrderSeries) || has_series(kWideSeries)) out += raster_figure(runs);
  if (has_series(kOrderSeries) || has_series(kWideSeries)) out += binning_figure(runs);
  if (has_series(kTileMemorySeries)) out += tile_memory_figure(runs);
  out += rate_bars(runs, kRop);
  out += rate_bars(runs, kTexture);
  out += fb_compression_table(runs);
  out += transaction_elimination_table(runs);
  return out + "</div>\n";
}

json tile_memory_overlays(const Series& tile_memory, size_t run_index, const Results& r) {
  json markers = json::array(), guides = json::array();
  const Finding* f = r.find_finding(kTileMemory);
  const auto memory = scalar(r, kTileMemory);
  double plateau = 0, x_lo = std::numeric_limits<double>::infinity(), x_hi = 0;
  for (const auto& p : tile_memory.points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || p.x <= 0 || p.y <= 0) continue;
    plateau = std::max(plateau, p.y);
    x_lo = std::min(x_lo, p.x);
    x_hi = std::max(x_hi, p.x);
  }
  if (f && memory && *memory > 0 && plateau > 0) {
    const auto knee = [&](const std::optional<double>& m) { return m ? json(*m / plateau) : json(nullptr); };
    markers.push_back({{"run", run_index},
                       {"axis", "x"},
                       {"value", *memory / plateau},
                       {"low", knee(f->low)},
                       {"high", knee(f->high)},
                       {"label", "tile memory " + format_value(*f)},
                       {"finding", f->id}});
    // The hyperbola where it stays near the measured tiles, so that it does
    // not stretch the y axis.
    const double from = std::max(x_lo, *memory / (1.5 * plateau));
    if (x_hi > from) {
      json points = json::array();
      constexpr int kSteps = 24;
      for (int k = 0; k <= kSteps; ++k) {
        const double x = from * std::pow(x_hi / from, static_cast<double>(k) / kSteps);
        points.push_back(json::array({x, *memory / x}));
      }
      guides.push_back({{"run", run_index},
                        {"label", format_bytes(*memory) + " / bytes per pixel"},
                        {"points", std::move(points)}});
    }
  }
  return {{"markers", std::move(markers)}, {"guides", std::move(guides)}};
}

std::vector<GraphicsLine> graphics_summary(const Results& r) {
  std::vector<GraphicsLine> lines;
  // A part of a line from one finding: its text, "?" after a guess.
  const auto take = [](GraphicsLine& line, const Finding& f, const std::string& text) {
    line.finding_ids.push_back(f.id);
    line.confidence = std::min(line.confidence, f.confidence);
    line.low_confidence = line.low_confidence || is_low_confidence(f);
    return is_low_confidence(f) ? text + " ?" : text;
  };
  const auto join = [](std::vector<std::string> parts) {
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
    return s;
  };

  GraphicsLine tile;
  tile.label = "tile";
  std::vector<std::string> parts;
  const Finding* w = r.find_finding(kTileWidth);
  const Finding* h = r.find_finding(kTileHeight);
  if (w && h) {
    const std::string size = whole_or_three(number(*w)) + " x " + whole_or_three(number(*h)) + " px";
    take(tile, *w, "");
    parts.push_back(take(tile, *h, size));
    if (is_low_confidence(*w) && !is_low_confidence(*h)) parts.back() += " ?";
  } else if (w) {
    parts.push_back(take(tile, *w, whole_or_three(number(*w)) + " px wide"));
  } else if (h) {
    parts.push_back(take(tile, *h, whole_or_three(number(*h)) + " px high"));
  }
  if (const Finding* o = r.find_finding(kTileOrder))
    parts.push_back(take(tile, *o, format_value(*o) + " order"));
  if (const Finding* b = r.find_finding(kBinning)) {
    const auto* yes = std::get_if<bool>(&b->value);
    parts.push_back(
        take(tile, *b, yes ? (*yes ? "bins primitives" : "no binning") : "binning " + format_value(*b)));
  }
  if (!parts.empty()) {
    tile.text = join(parts);
    lines.push_back(tile);
  }
  if (const Finding* m = r.find_finding(kTileMemory)) {
    GraphicsLine line;
    line.label = "tile memory";
    line.text = take(line, *m, value_with_interval(*m));
    lines.push_back(line);
  }
  for (const RateKind* k : {&kRop, &kTexture}) {
    GraphicsLine line;
    line.label = k->summary_label;
    parts.clear();
    for (const Finding* f : rates(r, *k))
      parts.push_back(take(line, *f, rate_label(f->id, *k) + " " + format_value(*f)));
    if (parts.empty()) continue;
    line.text = join(parts);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace gpuscope
