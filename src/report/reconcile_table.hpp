// What the reports show of reconcile.hpp: which pairs of runs are reconciled
// and, for each finding in both, the text of its ratio, tolerance and
// verdict. The HTML and Markdown reports render these; neither decides them.
#pragma once

#include "report/reconcile.hpp"
#include "report/report_run.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace gpuscope {

// Two measured runs of one GPU, reconciled. The Finding pointers inside
// `reconciliation` point into the runs' Results, which must outlive it.
struct ReconciledPair {
  size_t a = 0;  // the runs' positions in the report, a < b
  size_t b = 0;
  std::string label_a;
  std::string label_b;
  std::string identity;  // identity_sentence(a, b)
  Reconciliation reconciliation;
  size_t only_in_a = 0;  // entries of reconciliation.only that run a has
};

// Every pair of runs that are not reference profiles and that
// match_device_identity calls the same GPU, in the order (0,1), (0,2) ...
// (1,2) ...; each reconciled with the runs' labels naming them.
std::vector<ReconciledPair> reconciled_pairs(const std::vector<ReportRun>& runs);

// One finding in both runs, as text for a table row.
struct ReconcileRow {
  const ReconciledFinding* finding = nullptr;
  std::string ratio;              // "1.23x" (b / a); empty without a ratio
  std::string tolerance_percent;  // "10%"; empty for exact and not-compared classes
  std::string tolerance_class;    // tolerance_class_name: "size", "exact", "not compared" ...
  // "ok" within tolerance; "outside" beyond a percentage; "differs" where
  // the class allows no difference; "not compared".
  std::string verdict;
};

ReconcileRow reconcile_row(const ReconciledFinding& r);

}  // namespace gpuscope
