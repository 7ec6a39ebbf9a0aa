// Live progress of a run on a terminal: the current probe, its latest point,
// overall progress and an ETA from the probes' planned budgets. Writes one
// line, redrawn in place; writes nothing at all when disabled (stderr not a
// terminal, or --quiet), so logs and pipes stay clean.
#pragma once

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

namespace gpuscope {

struct PlannedProbe {
  std::string name;
  double budget_s = 0;  // planned_budget_s: what the ETA is reckoned from
};

class ProgressDisplay {
 public:
  using Clock = std::chrono::steady_clock;

  ProgressDisplay(std::ostream& out, bool enabled, bool color, std::vector<PlannedProbe> plan,
                  size_t width_columns = 100);

  void begin_probe(size_t index, Clock::time_point now = Clock::now());
  // A probe's progress line (ProbeContext::progress): shown as the current point.
  void point(const std::string& line, Clock::time_point now = Clock::now());
  // A probe's own estimate of how far it is, 0..1 (ProbeContext::progress_fraction).
  void fraction(double done, Clock::time_point now = Clock::now());
  void end_probe(double wall_s, Clock::time_point now = Clock::now());
  // Clears the line, so that the summary starts on a clean one.
  void finish();

  // The status line for the current state, without escapes or colour (tests).
  std::string status_line(Clock::time_point now) const;
  // Overall progress 0..1 and the seconds left, as status_line reckons them.
  double overall_fraction(Clock::time_point now) const;
  double eta_s(Clock::time_point now) const;

 private:
  void draw(Clock::time_point now);
  // Actual over planned wall time of the finished probes (1 before any):
  // how far the plan runs fast or slow on this device.
  double pace() const;

  std::ostream& out_;
  bool enabled_;
  bool color_;
  std::vector<PlannedProbe> plan_;
  size_t width_;
  size_t current_ = 0;
  bool in_probe_ = false;
  Clock::time_point probe_start_{};
  double probe_fraction_ = -1;  // < 0: the probe has not said
  std::string point_;
  double planned_done_s_ = 0;
  double actual_done_s_ = 0;
  bool drawn_ = false;
};

// Whether stderr is an interactive terminal, and its width in columns (100 if unknown).
bool stderr_is_terminal();
size_t stderr_columns();

}  // namespace gpuscope
