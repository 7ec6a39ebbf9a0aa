#include "app/results_saver.hpp"

#include "analysis/analyze.hpp"
#include "report/results_json.hpp"

#include <utility>

namespace gpuscope {

namespace {

void set_findings_and_write(Results& r, const std::string& path) {
  analysis::Analysis a = analysis::analyze_with_gaps(r);
  r.findings = std::move(a.findings);
  r.unfound = std::move(a.unfound);
  write_results_file_atomic(r, path);
}

}  // namespace

ResultsSaver::ResultsSaver(std::string path, bool in_background) : path_(std::move(path)) {
  if (in_background) worker_ = std::thread([this] { work(); });
}

ResultsSaver::~ResultsSaver() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void ResultsSaver::save(Results& r) {
  if (!worker_.joinable()) {
    set_findings_and_write(r, path_);
    return;
  }
  Results copy = r;
  std::lock_guard lock(mutex_);
  rethrow_locked();
  pending_ = std::move(copy);
  changed_.notify_all();
}

void ResultsSaver::finish() {
  if (!worker_.joinable()) return;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !pending_ && !busy_; });
  rethrow_locked();
}

void ResultsSaver::rethrow_locked() {
  if (!error_) return;
  std::exception_ptr e = std::exchange(error_, nullptr);
  std::rethrow_exception(e);
}

// Takes the newest copy, saves it outside the lock, and says so; on stop,
// saves what is still pending first, so no save asked for is dropped.
void ResultsSaver::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return pending_ || stop_; });
    if (!pending_) return;
    Results r = std::move(*pending_);
    pending_.reset();
    busy_ = true;
    lock.unlock();
    try {
      set_findings_and_write(r, path_);
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      busy_ = false;
      changed_.notify_all();
      continue;
    }
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

}  // namespace gpuscope
