#include "tools/writers/ceilings_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>

#include <set>

#include "tools/writers/format_util.hpp"
#include "tools/writers/units.hpp"

namespace modelstat::report {

using report_detail::Align;
using report_detail::Column;
using report_detail::KeyValueBlock;
using report_detail::Style;
using report_detail::TextTable;

void write_ceilings_table(const DeviceCeilings& c, const CeilingsTableExtras& extras, std::ostream& out) {
  const Style plain(false);
  out << "Device ceilings (" << (c.measured() ? "measured" : c.source) << ")\n";
  KeyValueBlock context;
  context.add("device", c.device_name.empty() ? "-" : c.device_name);
  std::string kind = c.device_kind;
  if (c.device_kind == "cpu" && c.threads > 0)
    kind += ", " + std::to_string(c.threads) + " intra-op thread" + (c.threads == 1 ? "" : "s");
  context.add("kind", kind);
  if (!c.torch_version.empty()) context.add("torch", c.torch_version);
  if (!c.date.empty()) context.add("measured", c.date + (c.host.empty() ? "" : " on " + c.host));
  if (extras.probe_seconds >= 0) context.add("probe took", report_detail::human_seconds(extras.probe_seconds));
  context.print(out);
  out << "\n";

  KeyValueBlock scalars;
  scalars.add("memory bandwidth",
              human_bandwidth(c.memory_bandwidth) +
                  (c.copy_bytes > 0 ? "  (device-to-device copy of " + mib(c.copy_bytes) + ", read + written counted)"
                                    : ""));
  const char* overhead_is = c.device_kind == "cuda" ? "  (per small op: kernel launches back to back)"
                                                    : "  (per small op: dispatch and allocation)";
  scalars.add("op overhead", c.op_overhead_seconds > 0
                                 ? report_detail::human_seconds(c.op_overhead_seconds) + overhead_is
                                 : std::string("-"));
  scalars.add("node overhead", c.node_overhead_seconds > 0
                                   ? report_detail::human_seconds(c.node_overhead_seconds) +
                                         "  (per node run by modelstat's executor, forward)"
                                   : std::string("-"));
  scalars.add("train node", c.train_node_overhead_seconds > 0
                                ? report_detail::human_seconds(c.train_node_overhead_seconds) +
                                      "  (per node of a training step: forward with autograd + backward)"
                                : std::string("-"));
  if (c.fresh_allocation_threshold_bytes > 0)
    scalars.add("fresh memory",
                c.fresh_allocation_seconds_per_byte > 0
                    ? fmt::format("{:.3g} ns/byte  (first touch of an allocation above {}: a new mapping each time)",
                                  c.fresh_allocation_seconds_per_byte * 1e9, mib(c.fresh_allocation_threshold_bytes))
                    : std::string("-"));
  scalars.print(out);
  out << "\n";

  if (!c.compute_roofs.empty()) {
    const bool theoretical = std::any_of(c.compute_roofs.begin(), c.compute_roofs.end(),
                                         [](const ComputeRoof& r) { return !r.measured; });
    out << (theoretical ? "Machine roofs (theoretical: SMs x clock x rate per SM; unverified on hardware)\n"
                        : "Machine roofs (FMA micro-kernels on registers, per ISA and thread count; median)\n");
    TextTable roofs({{"dtype", Align::Left}, {"kernel", Align::Left}, {"threads"}, {"peak"}});
    for (const auto& r : c.compute_roofs)
      roofs.add_row({r.dtype, r.kernel, r.threads > 0 ? std::to_string(r.threads) : "-",
                     human_flops_rate(r.flops_per_second) + (r.dtype == "int8" ? " (int ops)" : "")});
    roofs.print(out, plain);
    out << "\n";
  }
  if (!c.memory_levels.empty()) {
    out << "Memory levels (plateaus of a working-set sweep; roof: the faster of a read-only stream and an in-place\n"
           "read + write stream, bytes counted as nodes count them; capacity for those threads)\n";
    TextTable levels({{"level", Align::Left}, {"threads"}, {"roof"}, {"read"}, {"read + write"}, {"capacity"}, {"plateau"},
                      {"edge"}});
    for (const auto& l : c.memory_levels)
      levels.add_row({l.level, l.threads > 0 ? std::to_string(l.threads) : "-", human_bandwidth(l.bytes_per_second),
                      l.read_bytes_per_second > 0 ? human_bandwidth(l.read_bytes_per_second) : "-",
                      l.read_write_bytes_per_second > 0 ? human_bandwidth(l.read_write_bytes_per_second) : "-",
                      l.capacity_bytes > 0 ? human_bytes(l.capacity_bytes) : "-",
                      l.plateau_to_bytes > 0 ? human_bytes(l.plateau_from_bytes) + " .. " + human_bytes(l.plateau_to_bytes)
                                             : "-",
                      l.measured_edge_bytes > 0 ? human_bytes(l.measured_edge_bytes) : "-"});
    levels.print(out, plain);
    out << "\n";
  }
  if (!c.bandwidth_sweep.empty()) {
    // The sweep: one row per working set, one column per thread count, GB/s.
    std::set<int> threads;
    std::set<int64_t> sets;
    for (const auto& p : c.bandwidth_sweep) {
      threads.insert(p.threads);
      sets.insert(p.working_set_bytes);
    }
    out << "Read bandwidth sweep (GB/s by working set, all threads together)\n";
    std::vector<Column> columns{{"working set"}};
    for (int t : threads) columns.push_back({std::to_string(t) + (t == 1 ? " thread" : " threads")});
    TextTable sweep(columns);
    for (int64_t ws : sets) {
      std::vector<std::string> row{human_bytes(ws)};
      for (int t : threads) {
        auto it = std::find_if(c.bandwidth_sweep.begin(), c.bandwidth_sweep.end(),
                               [&](const BandwidthPoint& p) { return p.threads == t && p.working_set_bytes == ws; });
        row.push_back(it == c.bandwidth_sweep.end() ? "-" : three_digits(it->bytes_per_second / 1e9));
      }
      sweep.add_row(row);
    }
    sweep.print(out, plain);
    out << "\n";
  }

  out << "Matmul peak, achievable (square n x n x n products, 2n^3 FLOPs; median time per size)\n";
  TextTable peaks({{"dtype", Align::Left}, {"peak"}, {"at n"}});
  for (const auto& m : c.matmul)
    peaks.add_row({m.dtype, human_flops_rate(m.flops_per_second), m.best_size > 0 ? std::to_string(m.best_size) : "-"});
  peaks.print(out, plain);

  // The curve: one row per n, one column per dtype, in one unit for the whole table.
  std::set<int64_t> sizes;
  double largest = 0;
  for (const auto& m : c.matmul)
    for (const auto& p : m.curve) {
      sizes.insert(p.n);
      largest = std::max(largest, p.flops_per_second);
    }
  if (!sizes.empty()) {
    const bool tera = largest >= 1e12;
    const double scale = tera ? 1e12 : 1e9;
    out << "\nMatmul curve (" << (tera ? "TFLOP/s" : "GFLOP/s") << " by n)\n";
    std::vector<Column> columns{{"n"}};
    for (const auto& m : c.matmul) columns.push_back({m.dtype});
    TextTable curve(columns);
    for (int64_t n : sizes) {
      std::vector<std::string> row{std::to_string(n)};
      for (const auto& m : c.matmul) {
        auto it = std::find_if(m.curve.begin(), m.curve.end(), [n](const auto& p) { return p.n == n; });
        row.push_back(it == m.curve.end() ? "-" : three_digits(it->flops_per_second / scale));
      }
      curve.add_row(row);
    }
    curve.print(out, plain);
  }
  if (c.int8_weight_products > 1)
    out << "  int8 without VNNI: a full-range int8 weight runs as two 7-bit products (the curve times one); fit prices "
           "int8 at twice the curve's time\n";

  if (!c.op_costs.empty()) {
    // Per op class: fixed cost and effective bytes/s (read + written) of one
    // node as the executor runs it, forward and backward (what `fit` prices with).
    out << "\nOp costs (one node run by modelstat's executor; fixed + bytes / rate)\n";
    // train fwd: the training step's forward of the node (unfused, NCHW,
    // autograd recording) over the inference forward, large instance.
    TextTable ops({{"op", Align::Left}, {"fixed"}, {"rate"}, {"train fwd/fwd"}, {"backward fixed"}, {"backward rate"},
                   {"bwd/fwd"}});
    auto rate = [](double seconds_per_byte) {
      return seconds_per_byte > 0 ? three_digits(1e-9 / seconds_per_byte) + " GB/s" : std::string("-");
    };
    for (const auto& o : c.op_costs)
      ops.add_row({o.op, report_detail::human_seconds(o.fixed_seconds), rate(o.seconds_per_byte),
                   o.has_train_forward() ? fmt::format("{:.2f}", o.train_forward_ratio) : std::string("-"),
                   report_detail::human_seconds(o.backward_fixed_seconds), rate(o.backward_seconds_per_byte),
                   fmt::format("{:.2f}", o.backward_ratio)});
    ops.print(out, plain);
  }
  if (!c.conv_samples.empty()) {
    // Per kind: how many grid points, and the range of their rates (fit
    // prices a Conv group at its nearest samples'; docs/FIT.md).
    out << "\nConvolution samples (Conv groups on modelstat's executor, weights cold; fp32 GFLOP/s, int8 Gop/s)\n";
    TextTable conv({{"kind", Align::Left}, {"samples"}, {"slowest"}, {"median"}, {"fastest"}});
    for (const char* kind : {"1x1", "kxk", "kxk/s2", "dw", "dw/s2", "int8 1x1", "int8 kxk", "int8 dw"}) {
      std::vector<double> rates;
      for (const auto& s : c.conv_samples)
        if (s.kind == kind) rates.push_back(s.flops_per_second / 1e9);
      if (rates.empty()) continue;
      std::sort(rates.begin(), rates.end());
      conv.add_row({kind, std::to_string(rates.size()), three_digits(rates.front()),
                    three_digits(rates[rates.size() / 2]), three_digits(rates.back())});
    }
    conv.print(out, plain);
    if (c.conv_residual_seconds_per_byte > 0)
      out << fmt::format("  residual Add (sum post-op): {:.3g} ns per byte of residual\n",
                         c.conv_residual_seconds_per_byte * 1e9);
    if (c.conv_silu_seconds_per_byte > 0)
      out << fmt::format("  SiLU after the kernel: {:.3g} ns per byte of output\n", c.conv_silu_seconds_per_byte * 1e9);
    if (c.conv_layout_seconds_per_byte > 0)
      out << fmt::format("  an image read NCHW, turned channels-last: {:.3g} ns per byte of input\n",
                         c.conv_layout_seconds_per_byte * 1e9);
    if (c.conv_channel_block > 1)
      out << fmt::format("  output channels computed in blocks of {} (priced at the next multiple)\n",
                         c.conv_channel_block);
  }
  if (!c.optimizer_costs.empty()) {
    out << "\nOptimizer updates (modelstat's training step; per weight tensor + per element)\n";
    // per element: weights the caches hold (1 Mi elements); streamed: weights past them.
    TextTable opt({{"optimizer", Align::Left}, {"per tensor"}, {"per element"}, {"streamed"}});
    for (const auto& o : c.optimizer_costs)
      opt.add_row({o.optimizer, report_detail::human_seconds(o.per_tensor_seconds),
                   fmt::format("{:.3g} ns", o.seconds_per_element * 1e9),
                   o.streamed_seconds_per_element > 0 ? fmt::format("{:.3g} ns", o.streamed_seconds_per_element * 1e9)
                                                      : std::string("-")});
    opt.print(out, plain);
  }

  if (!c.notes.empty()) {
    out << "\nNotes\n";
    for (const auto& n : c.notes) out << report_detail::word_wrap(n, 100, "  - ", "    ") << "\n";
  }
  if (!extras.saved_path.empty())
    out << "\nSaved to " << extras.saved_path << " ('modelstat report' and 'modelstat fit' read it from there)\n";
}

}  // namespace modelstat::report
