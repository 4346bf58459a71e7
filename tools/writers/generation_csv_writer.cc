// Generation, CSV: one long table (docs/generation.md). A "step" row per step
// of every measured generation (step 0 the prefill: its time is the TTFT) and,
// with layers, a "node" row per node per phase (its median, cost and, from
// `report --generate`, its bound). Seconds and base units; empty fields for
// what does not apply or is not known.
#include <ostream>

#include "tools/writers/generation_writers.hpp"

namespace modelstat::report_detail {

namespace {

std::string opt(const std::optional<double>& v) { return v ? csv_double(*v) : std::string(); }
std::string opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string(); }

class GenerationCsvWriter final : public GenerationWriter {
 public:
  void write(const GenerationResult& r, const ReportOptions&, std::ostream& out) const override {
    out << "kind,generation,step,phase,context,name,op_type,seconds,flops,bytes,achieved_flops_per_s,"
           "achieved_bytes_per_s,bound\n";
    // Every measured generation's steps: TTFT (step 0) and the decode steps in order.
    const size_t steps = size_t(r.generate);
    for (size_t g = 0; g < r.ttft.samples.size(); ++g) {
      for (size_t k = 0; k < steps; ++k) {
        double seconds = r.ttft.samples[g];
        if (k > 0) {
          const size_t at = g * (steps - 1) + (k - 1);
          if (at >= r.itl.samples.size()) break;
          seconds = r.itl.samples[at];
        }
        out << "step," << g << ',' << k << ',' << (k == 0 ? "prefill" : "decode") << ','
            << r.prompt + int64_t(k) << ",,," << csv_double(seconds) << ",,,,,\n";
      }
    }
    for (const GenerationPhase& p : r.phases) {
      const double sum = layer_median_sum(p.profile);
      for (const LayerTiming& layer : p.profile.layers) {
        const LayerCost c = join_layer(p.profile, layer, sum);
        const size_t k = size_t(layer.index);
        const bool joined = p.joined && k < p.joined->nodes.size();
        out << "node,,," << p.name << ',' << p.context << ',' << csv_field(layer.name) << ','
            << csv_field(layer.op_type) << ',' << opt(c.median_seconds) << ',' << opt(c.flops) << ',' << opt(c.bytes)
            << ',' << opt(c.achieved_flops_per_second) << ',' << opt(c.achieved_bytes_per_second) << ','
            << (joined ? bound_name(p.joined->nodes[k].bound) : "") << '\n';
      }
    }
  }
};

}  // namespace

std::unique_ptr<GenerationWriter> make_generation_csv_writer() { return std::make_unique<GenerationCsvWriter>(); }

}  // namespace modelstat::report_detail
