// Two runs of one physical GPU (through two APIs, or twice through one) set
// side by side finding by finding: each pair's ratio, whether it is within
// the tolerance its unit's class allows, and for those outside, the likely
// reasons the results themselves record (a different method or kernel form,
// other series, clocks the drivers report differently, a feature one API
// lacks). Findings only one run has are listed with why the other lacks them.
#pragma once

#include "core/device_identity.hpp"
#include "core/results.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpuscope {

// How closely two measurements of one GPU must agree, by the finding's unit:
// sizes (B, registers, ops) and latencies (ns, us, ms, s, cycles) 10%, rates
// (anything per second, MHz, per clock, and unitless ratios and fractions of
// rates) 5%, counts and yes/no answers exactly. Unitless check residues
// (*_rel_error) and unknown units are not compared.
enum class ToleranceClass { size, latency, rate, exact, none };
ToleranceClass tolerance_class(const Finding& f);
// The allowed relative difference (0.10 for 10%); 0 for exact and none.
double tolerance_of(ToleranceClass c);
// "size", "latency", "rate", "exact", "not compared".
const char* tolerance_class_name(ToleranceClass c);

struct ReconciledFinding {
  enum class Status { within, outside, not_compared };
  std::string id;
  const Finding* a = nullptr;  // both set
  const Finding* b = nullptr;
  std::optional<double> ratio;  // b / a for numbers; none for yes/no and lists or a == 0
  ToleranceClass tolerance = ToleranceClass::none;
  Status status = Status::not_compared;
  // Outside tolerance: the likely reasons, most specific first, never empty.
  // Not compared: why.
  std::vector<std::string> reasons;
};

// A finding only one run has, and why the other has none (its skipped probe,
// its unfound entry, a probe it did not run ...).
struct OneSidedFinding {
  std::string id;
  const Finding* finding = nullptr;
  bool in_a = true;    // which run has it
  std::string reason;  // why the other run lacks it
};

struct Reconciliation {
  DeviceIdentityMatch identity;
  std::vector<ReconciledFinding> both;  // in a's findings order
  std::vector<OneSidedFinding> only;    // a's first, then b's
  size_t count(ReconciledFinding::Status s) const;
};

// `label_a` and `label_b` name the runs inside the reasons ("[1]", "[2]").
// Reconciles whatever the identity says; callers show it for the same GPU.
Reconciliation reconcile(const Results& a, const Results& b, const std::string& label_a,
                         const std::string& label_b);

// One line for a person: "the same GPU through opencl and vulkan (same uuid
// ...)", "different GPUs (uuid ... and ...)", "not known to be one GPU: ...".
std::string identity_sentence(const Results& a, const Results& b);

}  // namespace gpuscope
