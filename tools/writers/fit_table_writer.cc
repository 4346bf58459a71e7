// Fit report, terminal table: the forecast, its parts, the verdict against
// the budgets and the slowest nodes. Formats only.
#include <fmt/format.h>

#include <algorithm>

#include "tools/writers/fit_writers.hpp"
#include "tools/writers/format_util.hpp"

namespace modelstat::report {

namespace {

using report_detail::bytes_with_exact;
using report_detail::human_seconds;
using report_detail::KeyValueBlock;
using report_detail::percent_of;

constexpr int kSlowestNodes = 10;

std::string verdict(const std::optional<bool>& ok, const std::string& yes, const std::string& no) {
  return !ok ? std::string("-") : (*ok ? yes : no);
}

std::string largest(const std::optional<int64_t>& b, int64_t limit) {
  if (!b) return "-";
  if (*b == 0) return "none (batch 1 already exceeds it)";
  return (*b >= limit ? ">= " : "") + std::to_string(*b);
}

class FitTableWriter : public FitWriter {
 public:
  void write(const FitReport& r, const ReportOptions&, std::ostream& out) const override {
    const DeviceCeilings& c = r.ceilings;
    out << "modelstat fit: " << r.model_path << "\n";
    KeyValueBlock head;
    head.add("mode", r.train ? std::string("training step, ") + name_of(r.optimizer) : std::string("inference"));
    head.add("batch", std::to_string(r.batch));
    head.add("device", fmt::format("{} ({}{}), ceilings: {}{}", c.device_name.empty() ? c.device_kind : c.device_name,
                                   c.device_kind, c.threads > 0 ? fmt::format(", {} thread{}", c.threads, c.threads == 1 ? "" : "s") : "",
                                   c.source, c.date.empty() ? "" : ", " + c.date));
    head.add("ceilings", fmt::format("{} {} peak, {}, {} per op, {}", r.compute_dtype,
                                     human_flops_rate(r.compute_peak_flops_per_second),
                                     human_bandwidth(c.memory_bandwidth),
                                     human_seconds(c.op_overhead_seconds),
                                     c.op_costs.empty() ? std::string("no op classes")
                                                        : fmt::format("{} op classes measured", c.op_costs.size())));
    head.print(out);

    const MemoryForecast& m = r.memory;
    // The training setup's lines appear only when it is not the default
    // (fp32, nothing recomputed, no ZeRO), whose output is unchanged.
    const bool setup = r.train && (m.precision != "fp32" || m.checkpointing != "none" || m.zero_stage >= 0);
    auto divided = [&](const std::string& component) {
      for (const auto& d : m.divided_by_shards)
        if (d == component) return fmt::format(" (per process: divided by {} shards)", m.shards);
      return std::string();
    };
    out << "\nMemory (predicted peak" << (m.lower_bound ? ", lower bound" : "")
        << (m.basis.empty() ? "" : ", " + m.basis) << ")\n";
    KeyValueBlock mem;
    if (setup) {
      mem.add("precision", m.precision + ": " + m.precision_layout);
      mem.add("checkpointing",
              m.checkpointing == "none"        ? std::string("none (autograd keeps every tensor it saves)")
              : m.checkpointing == "selective" ? fmt::format("selective: the score tensors of {} attention core(s) "
                                                             "recomputed in backward", m.recomputed_regions)
                                               : fmt::format("full: {} block(s) recomputed in backward, their inputs "
                                                             "kept", m.recomputed_regions));
      if (m.zero_stage >= 0)
        mem.add("sharding", fmt::format("ZeRO stage {} over {} data-parallel process{}", m.zero_stage, m.shards,
                                        m.shards == 1 ? "" : "es"));
    }
    mem.add("weights", bytes_with_exact(m.weights_bytes) + divided("weights"));
    if (setup && m.precision != "fp32" && m.zero_stage < 0)
      mem.add("16-bit weight copies", bytes_with_exact(m.low_precision_weight_bytes_at_peak) + " live at the peak, of " +
                                          bytes_with_exact(m.low_precision_weight_bytes) +
                                          " (autocast's cached casts; counted in the activations)");
    if (r.train) {
      mem.add("gradients", bytes_with_exact(m.gradient_bytes_at_peak) + " live at the peak, of " +
                               bytes_with_exact(m.gradient_bytes) + divided("gradients"));
      if (setup && m.master_weight_bytes > 0)
        mem.add("fp32 master weights", bytes_with_exact(m.master_weight_bytes) + divided("master weights"));
      mem.add("optimizer state", bytes_with_exact(m.optimizer_state_bytes) + divided("optimizer state"));
      if (m.gathered_parameter_bytes > 0)
        mem.add("gathered (ZeRO-3)", bytes_with_exact(m.gathered_parameter_bytes) +
                                         " (the largest weight's 16-bit parameters and gradients, gathered)");
      mem.add("saved for backward", bytes_with_exact(m.saved_activation_bytes) + " (end of forward)");
    }
    mem.add("activations", bytes_with_exact(m.activation_peak_bytes) + " at the peak (" + m.activation_sharing + ")");
    mem.add("workspace", bytes_with_exact(m.workspace_bytes) + " at the peak");
    mem.add("total", bytes_with_exact(m.total_bytes));
    if (m.deepspeed_model_states_bytes)
      mem.add("DeepSpeed's estimate", bytes_with_exact(*m.deepspeed_model_states_bytes) + " of model states per GPU, " +
                                          m.deepspeed_estimator + ", formula-based (not measured)");
    mem.add("peak during", m.peak_node + " (" + m.peak_phase + ")");
    if (m.largest_workspace_bytes > 0)
      mem.add("largest scratch", bytes_with_exact(m.largest_workspace_bytes) + " at " + m.largest_workspace_node);
    mem.print(out);

    const LatencyForecast& l = r.latency;
    out << "\nLatency (predicted)\n";
    KeyValueBlock lat;
    lat.add("forward", human_seconds(l.forward_seconds));
    if (r.train) {
      lat.add("backward", human_seconds(l.backward_seconds));
      lat.add("optimizer", human_seconds(l.optimizer_seconds));
    }
    lat.add(r.train ? "training step" : "total", human_seconds(l.total_seconds));
    int64_t fresh = l.optimizer_fresh_bytes;
    double fresh_seconds = double(l.optimizer_fresh_bytes) * c.fresh_allocation_seconds_per_byte;
    for (const auto& n : r.nodes) {
      fresh += n.fresh_bytes + n.backward_fresh_bytes;
      fresh_seconds += n.fresh_seconds + double(n.backward_fresh_bytes) * c.fresh_allocation_seconds_per_byte;
    }
    if (fresh > 0)
      lat.add("of which fresh memory",
              fmt::format("{} for {} in buffers above {} (mapped afresh on each allocation)", human_seconds(fresh_seconds),
                          bytes_with_exact(fresh), bytes_with_exact(c.fresh_allocation_threshold_bytes)));
    lat.print(out);

    if (r.decoder) {
      const DecoderForecast& d = *r.decoder;
      out << fmt::format("\nDecoder at context {}, batch {} (predicted)\n", d.context, d.batch);
      KeyValueBlock dec;
      dec.add("prefill", fmt::format("{} for {} prompt tokens per sequence", human_seconds(d.prefill_seconds), d.prompt));
      dec.add("decode", fmt::format("{} per step (one token per sequence), {:.1f} tokens/s", human_seconds(d.decode_seconds),
                                    d.tokens_per_second));
      dec.add("weights", bytes_with_exact(d.weights_bytes));
      dec.add("KV cache", fmt::format("{} at context {} ({} per token of context)", bytes_with_exact(d.kv_cache_bytes),
                                      d.context, bytes_with_exact(d.kv_bytes_per_token)));
      dec.add("weights + KV cache", bytes_with_exact(d.weights_bytes + d.kv_cache_bytes));
      dec.add("peak memory", fmt::format("prefill {}, decode {}", bytes_with_exact(d.prefill_memory_bytes),
                                         bytes_with_exact(d.decode_memory_bytes)));
      dec.print(out);
    }

    out << "\nVerdict\n";
    KeyValueBlock v;
    if (r.decoder && r.decoder->token_budget_seconds)
      v.add("decode latency", fmt::format("{} against {} per token", verdict(r.decoder->meets_token_budget, "meets", "EXCEEDS"),
                                          human_seconds(*r.decoder->token_budget_seconds)));
    if (r.memory_budget_bytes)
      v.add("memory", fmt::format("{} against {}", verdict(r.fits_memory, "fits", "EXCEEDS"),
                                  bytes_with_exact(*r.memory_budget_bytes)));
    if (r.latency_budget_seconds)
      v.add("latency", fmt::format("{} against {}", verdict(r.meets_latency, "meets", "EXCEEDS"),
                                   human_seconds(*r.latency_budget_seconds)));
    if (!r.memory_budget_bytes && !r.latency_budget_seconds && !(r.decoder && r.decoder->token_budget_seconds))
      v.add("budgets", "none given (--memory, --latency-budget)");
    const BatchSearch& s = r.batch_search;
    if (s.searched) {
      if (r.memory_budget_bytes) v.add("largest batch (memory)", largest(s.largest_fitting_memory, s.limit));
      if (r.latency_budget_seconds) v.add("largest batch (latency)", largest(s.largest_meeting_latency, s.limit));
      v.add("search", fmt::format("doubling then binary search, {} batches analysed", s.analyses));
    } else if (!s.note.empty() && (r.memory_budget_bytes || r.latency_budget_seconds)) {
      v.add("batch search", s.note);
    }
    v.print(out);

    std::vector<const NodeForecast*> slowest;
    for (const auto& n : r.nodes) slowest.push_back(&n);
    std::stable_sort(slowest.begin(), slowest.end(), [](const NodeForecast* a, const NodeForecast* b) {
      return a->forward_seconds + a->backward_seconds > b->forward_seconds + b->backward_seconds;
    });
    if (slowest.size() > size_t(kSlowestNodes)) slowest.resize(size_t(kSlowestNodes));
    if (!slowest.empty()) {
      out << "\nSlowest nodes (predicted)\n";
      std::vector<report_detail::Column> cols = {{"#"},          {"node", report_detail::Align::Left, 36},
                                                 {"op", report_detail::Align::Left}, {"n_eff"},
                                                 {"forward"},    {"bound", report_detail::Align::Left}};
      if (r.train) cols.push_back({"backward"});
      cols.push_back({"% of total"});
      report_detail::TextTable t(cols);
      for (const NodeForecast* n : slowest) {
        std::vector<std::string> row = {std::to_string(n->index), n->name, n->op_type,
                                        n->contraction ? fmt::format("{:.0f}", n->equivalent_gemm_n) : "-",
                                        human_seconds(n->forward_seconds), bound_name(n->bound)};
        if (r.train) row.push_back(human_seconds(n->backward_seconds));
        row.push_back(percent_of(n->forward_seconds + n->backward_seconds, l.total_seconds));
        t.add_row(row);
      }
      t.print(out, report_detail::Style(false));
    }
    for (const auto& notice : r.notices) out << "note: " << notice << "\n";
    out << "Bound: the largest term of a node: compute (FLOPs at the rate of its n_eff), memory (bytes at the copy "
           "bandwidth), kernel (bytes at its op class's measured rate), scratch, overhead (fixed cost), fresh (first touch of "
           "buffers the host maps afresh).\n";
    out << "Rules: docs/FIT.md. A forecast, not a measurement: check it with 'modelstat profile --memory "
           "--train-step'.\n";
  }
};

}  // namespace

std::unique_ptr<FitWriter> make_fit_table_writer() { return std::make_unique<FitTableWriter>(); }

}  // namespace modelstat::report
