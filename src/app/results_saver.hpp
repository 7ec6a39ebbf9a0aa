// Rewrites a run's results.json after each probe, so a run stopped half-way
// keeps what finished: the findings from every series so far, then the file,
// replaced atomically.
//
// Analysing every series after every probe is not free (5.0 s of a whole
// Vulkan run on an H200, most of it after the graphics probes' traces), so
// on a GPU, whose probes time the device rather than the host's cores, the
// save runs on a thread of its own, beside the next probe. On a CPU device
// (PoCL, lavapipe) the device is the host's cores, and on the sim (whose
// budgets run on modelled time, so only wall time is at stake) the arm64
// check runs it under qemu-user, where starting a thread did not return:
// there the save runs in line, between probes, as it always did.
#pragma once

#include "core/results.hpp"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace gpuscope {

class ResultsSaver {
 public:
  ResultsSaver(std::string path, bool in_background);
  ~ResultsSaver();  // waits for the save in flight; its failure is lost then
  ResultsSaver(const ResultsSaver&) = delete;
  ResultsSaver& operator=(const ResultsSaver&) = delete;

  // Saves `r` with its findings set from its series. In line, sets r's own
  // findings and writes it. In the background, saves a copy and returns at
  // once; a copy still waiting when the next comes is replaced by it (the
  // file only ever moves forward). Throws what an earlier background save
  // threw.
  void save(Results& r);

  // Waits until every save asked for is written; throws what one threw.
  void finish();

  // Whether saves run beside the probes (then `save` leaves r's findings as
  // they were, and the caller sets them once at the end).
  bool in_background() const { return worker_.joinable(); }

 private:
  void work();
  void rethrow_locked();

  const std::string path_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Results> pending_;  // the newest copy not yet taken by the worker
  bool busy_ = false;               // the worker is saving a copy
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;  // not started in line
};

}  // namespace gpuscope
