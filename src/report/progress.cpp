#include "report/progress.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace gpuscope {

namespace {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long total = std::lround(s);
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
}

// Progress lines may carry several spaces for alignment; one line is enough here.
std::string squeezed(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  return out;
}

}  // namespace

ProgressDisplay::ProgressDisplay(std::ostream& out, bool enabled, bool color, std::vector<PlannedProbe> plan,
                                 size_t width_columns)
    : out_(out), enabled_(enabled), color_(color), plan_(std::move(plan)), width_(std::max<size_t>(width_columns, 40)) {}

double ProgressDisplay::pace() const {
  if (planned_done_s_ <= 0) return 1.0;
  // Clamped: one odd probe should not throw the whole estimate.
  return std::clamp(actual_done_s_ / planned_done_s_, 0.25, 4.0);
}

double ProgressDisplay::overall_fraction(Clock::time_point now) const {
  double total = 0;
  for (const auto& p : plan_) total += p.budget_s;
  if (total <= 0) return plan_.empty() ? 1.0 : static_cast<double>(current_) / static_cast<double>(plan_.size());
  double done = planned_done_s_;
  if (in_probe_ && current_ < plan_.size()) {
    const double planned = plan_[current_].budget_s;
    const double elapsed = std::chrono::duration<double>(now - probe_start_).count();
    // A probe that says how far it is is believed; otherwise its elapsed time
    // counts against its plan, never past 95% of it.
    done += probe_fraction_ >= 0 ? planned * probe_fraction_ : std::min(elapsed / pace(), 0.95 * planned);
  }
  return std::clamp(done / total, 0.0, 1.0);
}

double ProgressDisplay::eta_s(Clock::time_point now) const {
  double left = 0;
  for (size_t i = current_ + (in_probe_ ? 1 : 0); i < plan_.size(); ++i) left += plan_[i].budget_s * pace();
  if (in_probe_ && current_ < plan_.size()) {
    const double elapsed = std::chrono::duration<double>(now - probe_start_).count();
    if (probe_fraction_ > 0.05)
      left += elapsed * (1 - probe_fraction_) / probe_fraction_;
    else
      left += std::max(plan_[current_].budget_s * pace() - elapsed, 0.0);
  }
  return left;
}

std::string ProgressDisplay::status_line(Clock::time_point now) const {
  const std::string name = current_ < plan_.size() ? plan_[current_].name : "";
  std::string line = fmt::format("[{}/{}] {:3.0f}%  ETA {}  {}", std::min(current_ + 1, plan_.size()), plan_.size(),
                                 100 * overall_fraction(now), format_duration(eta_s(now)), name);
  if (!point_.empty()) line += "  " + point_;
  if (line.size() > width_ - 1) line = line.substr(0, width_ - 4) + "...";
  return line;
}

void ProgressDisplay::draw(Clock::time_point now) {
  if (!enabled_) return;
  const std::string line = status_line(now);
  // \r and erase-line redraw in place; colour only on the bracketed counter.
  if (color_) {
    const size_t close = line.find(']');
    out_ << "\r\x1b[K\x1b[1m" << line.substr(0, close + 1) << "\x1b[0m" << line.substr(close + 1);
  } else {
    out_ << "\r\x1b[K" << line;
  }
  out_.flush();
  drawn_ = true;
}

void ProgressDisplay::begin_probe(size_t index, Clock::time_point now) {
  current_ = index;
  in_probe_ = true;
  probe_start_ = now;
  probe_fraction_ = -1;
  point_.clear();
  draw(now);
}

void ProgressDisplay::point(const std::string& line, Clock::time_point now) {
  point_ = squeezed(line);
  draw(now);
}

void ProgressDisplay::fraction(double done, Clock::time_point now) {
  if (!std::isfinite(done)) return;
  probe_fraction_ = std::clamp(done, 0.0, 1.0);
  draw(now);
}

void ProgressDisplay::end_probe(double wall_s, Clock::time_point now) {
  if (current_ < plan_.size()) {
    planned_done_s_ += plan_[current_].budget_s;
    actual_done_s_ += wall_s;
  }
  in_probe_ = false;
  point_.clear();
  if (current_ < plan_.size()) ++current_;
  draw(now);
}

void ProgressDisplay::finish() {
  if (enabled_ && drawn_) {
    out_ << "\r\x1b[K";
    out_.flush();
  }
  drawn_ = false;
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

size_t stderr_columns() {
  winsize w{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 100;
}

}  // namespace gpuscope
