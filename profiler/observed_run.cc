// count_what_ran (observed_run.hpp).
#include "profiler/observed_run.hpp"

#include <memory>
#include <string>
#include <vector>

namespace modelstat::profiler {

namespace {

// A control-flow node anywhere in the model, with its subgraphs.
struct ControlNode {
  const Node* node = nullptr;
  bool top_level = false;
  std::vector<std::pair<std::string, const Graph*>> subgraphs;  // label -> subgraph
};

void collect_control(const Graph& g, bool top_level, std::vector<ControlNode>& out) {
  for (const Node& n : g.nodes) {
    const auto subs = n.named_subgraphs();
    if (subs.empty()) continue;
    ControlNode c{&n, top_level, {}};
    for (const auto& [label, sub] : subs) c.subgraphs.emplace_back(label, sub.get());
    out.push_back(c);
    for (const auto& [label, sub] : subs) collect_control(*sub, false, out);
  }
}

int64_t runs_of(const RunObservation& seen, const Graph* g) {
  const auto it = seen.subgraph_runs.find(g);
  return it == seen.subgraph_runs.end() ? 0 : it->second;
}

// "then", "else", "both" (an If inside a loop body taking each), or "" (not reached).
std::string branch_taken(const ControlNode& c, const RunObservation& seen) {
  int64_t then_runs = 0, else_runs = 0;
  for (const auto& [label, sub] : c.subgraphs) {
    if (label == "then_branch") then_runs = runs_of(seen, sub);
    if (label == "else_branch") else_runs = runs_of(seen, sub);
  }
  if (then_runs > 0 && else_runs > 0) return "both";
  return then_runs > 0 ? "then" : else_runs > 0 ? "else" : "";
}

// "If_32 else" entries, at most `limit` named, the rest counted.
std::string listed(const std::vector<std::string>& items, size_t limit = 6) {
  std::string text;
  for (size_t i = 0; i < items.size() && i < limit; ++i) text += (i ? ", " : "") + items[i];
  if (items.size() > limit) text += ", ... (" + std::to_string(items.size() - limit) + " more)";
  return text;
}

std::string in_quotes(const std::string& name) { return "'" + name + "'"; }

}  // namespace

void count_what_ran(ProfileSession& s, ProfileResult& result) {
  const Graph& g = s.model->graph;
  std::vector<ControlNode> control;
  collect_control(g, true, control);
  if (control.empty() && result.analysis.totals.nodes_unknown_shape == 0) return;

  std::vector<RunObservation> seen;
  for (const auto& inputs : s.inputs) seen.push_back(s.executor->observe(inputs));
  const size_t sets = seen.size();

  LoadOptions load = s.load;
  bool recount = false;
  std::vector<std::string> taken_text, varied_text, trips_text, changed_text;
  for (const ControlNode& c : control) {
    ControlFlowRun run;
    run.node = c.node->name;
    run.op_type = c.node->op_type;
    const bool is_if = run.op_type == "If";
    for (const RunObservation& o : seen) {
      if (is_if) run.taken.push_back(branch_taken(c, o));
      else run.trips.push_back(c.subgraphs.empty() ? 0 : runs_of(o, c.subgraphs.front().second));
    }
    for (size_t k = 1; k < sets; ++k)
      run.varied = run.varied || (is_if ? run.taken[k] != run.taken[0] : run.trips[k] != run.trips[0]);
    if (is_if) {
      const std::string& first = run.taken[0];
      if (first == "then" || first == "else") {
        const int branch = first == "then" ? 0 : 1;
        load.observed_branches[run.node] = branch == 0;
        run.counted = true;
        if (c.node->if_branch != branch) {
          recount = true;
          changed_text.push_back("If " + in_quotes(run.node) + " counts its " + first + " branch (before: " +
                                 (c.node->if_branch < 0 ? std::string("the costlier one")
                                                        : std::string(c.node->if_branch == 0 ? "then" : "else") +
                                                              ", " + c.node->control_source) +
                                 ")");
        }
      }
      taken_text.push_back(run.node + " " + (first.empty() ? "not reached" : first));
      if (run.varied) {
        std::string per_set;
        for (size_t k = 0; k < sets; ++k)
          per_set += (k ? ", " : "") + std::string("set ") + std::to_string(k) + " " +
                     (run.taken[k].empty() ? "not reached" : run.taken[k]);
        varied_text.push_back(run.node + " (" + per_set + ")");
      }
    } else {
      // A top-level Loop's body runs are its trips; deeper, they are summed
      // over the enclosing trips (not one node's count). A Scan's length
      // comes from its inputs' shapes, counted already where they are known.
      if (run.op_type == "Loop" && c.top_level) {
        load.observed_trip_counts[run.node] = run.trips[0];
        run.counted = true;
        if (c.node->trip_count != run.trips[0]) {
          recount = true;
          changed_text.push_back("Loop " + in_quotes(run.node) + " counts " + std::to_string(run.trips[0]) +
                                 " trip(s) (before: " +
                                 (c.node->trip_count < 0 ? std::string("one") : std::to_string(c.node->trip_count)) +
                                 ")");
        }
      }
      trips_text.push_back(run.node + " " + std::to_string(run.trips[0]) + (c.top_level ? "" : " (body runs)"));
      if (run.varied) {
        std::string per_set;
        for (size_t k = 0; k < sets; ++k)
          per_set += (k ? ", " : "") + std::string("set ") + std::to_string(k) + " " + std::to_string(run.trips[k]);
        varied_text.push_back(run.node + " (" + per_set + ")");
      }
    }
    result.control_flow.push_back(std::move(run));
  }

  // Values whose shapes the static analysis left unknown, as the first set ran them.
  int64_t shapes_varied = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const auto& dims = seen[0].top_level_dims[t];
    if (!dims || g.tensors[t].shape.fully_known() || g.tensors[t].is_constant()) continue;
    load.observed_shapes[g.tensors[t].name] = *dims;
    for (size_t k = 1; k < sets; ++k) shapes_varied += seen[k].top_level_dims[t] != dims;
    recount = true;
  }

  const std::string in_sets = sets == 1 ? "the input set" : "input set 0";
  if (!taken_text.empty())
    result.notices.push_back("If branches taken (" + in_sets + "): " + listed(taken_text));
  if (!trips_text.empty())
    result.notices.push_back("Loop/Scan trips per run (" + in_sets + "): " + listed(trips_text));
  if (!varied_text.empty())
    result.notices.push_back("control flow changed between the input sets (random inputs select it; give the "
                             "values with --value or --inputs): " + listed(varied_text) +
                             "; the count follows input set 0");
  if (!recount) return;

  const AnalysisResult statically = std::move(result.analysis);
  auto counted = std::make_shared<const Model>(s.file->bind(load));
  result.analysis = analyze_model(*counted);
  result.analysis.model = std::move(counted);
  const int64_t observed = mark_observed_costs(statically, result.analysis);
  if (!changed_text.empty())
    result.notices.push_back("the count follows what ran: " + listed(changed_text));
  if (observed > 0)
    result.notices.push_back(std::to_string(observed) +
                             " node(s) counted on the shapes the run observed (the static analysis could not infer "
                             "them; marked 'observed')" +
                             (shapes_varied > 0 ? ": the shapes of " + std::to_string(shapes_varied) +
                                                      " value(s) differ between the input sets, input set 0's counted"
                                                : std::string()));
}

}  // namespace modelstat::profiler
