#include "analyzer/suite/results_compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "analyzer/suite/cell_json.hpp"
#include "modelstat/error.hpp"

namespace modelstat::suite {

namespace {

ResultFilter side_filter(const ResultFilter& common, const ResultSelector& s) {
  ResultFilter f = common;
  f.latest_only = true;
  f.limit = f.offset = 0;
  if (s.key == "machine") f.machine = s.value;
  if (s.key == "commit") f.commit = s.value;
  if (s.key == "run") f.run = s.value;
  if (s.key == "date") f.since = f.until = s.value;
  return f;
}

// The samples of a stored result as compare reads a run (whole model only).
RunSamples samples_of(const std::string& record, const ResultRow& row) {
  const CellResult r = read_cell_result(record, "result " + std::to_string(row.result_id));
  RunSamples s;
  s.origin = row.machine_name + " (" + row.run_id + ")";
  s.document_kind = kCellResultKind;
  s.model_path = r.cell.model_path;
  if (r.context) s.context = *r.context;
  if (r.totals && r.totals->flops) s.total_flops = *r.totals->flops;
  if (r.measurement) s.whole = r.measurement->latency.samples;
  return s;
}

}  // namespace

ResultSelector parse_selector(const std::string& text, const char* flag) {
  const auto eq = text.find('=');
  const std::string key = text.substr(0, eq);
  if (eq == std::string::npos || eq + 1 == text.size() ||
      (key != "machine" && key != "commit" && key != "date" && key != "run"))
    throw_usage(std::string(flag) + " '" + text +
                "': expected machine=NAME, commit=PREFIX, date=YYYY-MM-DD or run=ID");
  return {key, text.substr(eq + 1)};
}

ResultsComparison compare_results(ResultsDb& db, const ResultFilter& common, const ResultSelector& base,
                                  const ResultSelector& next, const CompareOptions& options) {
  if (base.key != next.key)
    throw_usage("--base and --new must select the same kind of side (" + base.key + " vs " + next.key + ")");
  ResultsComparison out;
  out.base = base;
  out.next = next;
  out.options = options;
  const bool by_machine = base.key == "machine";
  const auto pair_key = [&](const ResultRow& r) { return by_machine ? r.cell_key : r.cell_key + "/" + r.machine_id; };
  // One row per pair key and side: the latest (rows come ordered by finish time within a cell).
  const auto side = [&](const ResultSelector& s) {
    std::map<std::string, ResultRow> rows;
    for (ResultRow& r : db.query(side_filter(common, s))) {
      auto it = rows.find(pair_key(r));
      if (it == rows.end() || it->second.finished_at <= r.finished_at) rows[pair_key(r)] = std::move(r);
    }
    return rows;
  };
  const std::map<std::string, ResultRow> a = side(base), b = side(next);
  const auto label = [](const ResultRow& r) { return r.cell().label(); };
  for (const auto& [key, rb] : a) {
    const auto it = b.find(key);
    if (it == b.end()) {
      out.only_base.push_back(label(rb) + " on " + rb.machine_name);
      continue;
    }
    const ResultRow& rn = it->second;
    CellComparison c;
    c.cell_key = rb.cell_key;
    c.model = rb.model;
    c.label = label(rb);
    c.base_machine = rb.machine_name;
    c.new_machine = rn.machine_name;
    c.base_run = rb.run_id;
    c.new_run = rn.run_id;
    c.base_status = rb.status;
    c.new_status = rn.status;
    const std::vector<std::string> records = db.records({rb, rn});
    const RunSamples sb = samples_of(records[0], rb), sn = samples_of(records[1], rn);
    if (sb.whole.empty() || sn.whole.empty()) {
      c.whole.verdict = Verdict::NoData;
      c.whole.median_base = rb.median_s.value_or(std::nan(""));
      c.whole.median_new = rn.median_s.value_or(std::nan(""));
      c.whole.delta = c.whole.p_value = c.whole.ratio_ci_low = c.whole.ratio_ci_high = std::nan("");
    } else {
      const Comparison cmp = compare_runs(sb, sn, options);
      c.whole = cmp.whole;
      c.warnings = cmp.warnings;
    }
    out.cells.push_back(std::move(c));
  }
  for (const auto& [key, rn] : b)
    if (!a.count(key)) out.only_new.push_back(label(rn) + " on " + rn.machine_name);
  const auto rank = [](Verdict v) {
    return v == Verdict::Regression ? 0 : v == Verdict::Improvement ? 1 : v == Verdict::Unchanged ? 2 : 3;
  };
  std::stable_sort(out.cells.begin(), out.cells.end(), [&](const CellComparison& x, const CellComparison& y) {
    return rank(x.whole.verdict) < rank(y.whole.verdict);
  });
  for (const CellComparison& c : out.cells) {
    out.regressions += c.whole.verdict == Verdict::Regression;
    out.improvements += c.whole.verdict == Verdict::Improvement;
    out.unchanged += c.whole.verdict == Verdict::Unchanged;
    out.no_data += c.whole.verdict == Verdict::NoData;
  }
  return out;
}

}  // namespace modelstat::suite
