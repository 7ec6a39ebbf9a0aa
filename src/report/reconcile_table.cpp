#include "report/reconcile_table.hpp"

#include <fmt/format.h>

namespace gpuscope {

std::vector<ReconciledPair> reconciled_pairs(const std::vector<ReportRun>& runs) {
  std::vector<ReconciledPair> out;
  for (size_t i = 0; i < runs.size(); ++i)
    for (size_t j = i + 1; j < runs.size(); ++j) {
      if (runs[i].reference || runs[j].reference) continue;
      const Results &ra = *runs[i].results, &rb = *runs[j].results;
      if (match_device_identity(ra.device, rb.device).verdict != DeviceIdentityMatch::Verdict::same) continue;
      ReconciledPair p;
      p.a = i;
      p.b = j;
      p.label_a = runs[i].label;
      p.label_b = runs[j].label;
      p.identity = identity_sentence(ra, rb);
      p.reconciliation = reconcile(ra, rb, p.label_a, p.label_b);
      for (const auto& o : p.reconciliation.only) p.only_in_a += o.in_a ? 1 : 0;
      out.push_back(std::move(p));
    }
  return out;
}

ReconcileRow reconcile_row(const ReconciledFinding& r) {
  using Status = ReconciledFinding::Status;
  const double tol = tolerance_of(r.tolerance);
  ReconcileRow row;
  row.finding = &r;
  row.ratio = r.ratio ? fmt::format("{:.3g}x", *r.ratio) : "";
  row.tolerance_percent = tol > 0 ? fmt::format("{:.0f}%", tol * 100) : "";
  row.tolerance_class = tolerance_class_name(r.tolerance);
  row.verdict = r.status == Status::within    ? "ok"
                : r.status == Status::outside ? (tol > 0 ? "outside" : "differs")
                                              : "not compared";
  return row;
}

}  // namespace gpuscope
