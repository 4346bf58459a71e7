// Generation, CSV: one long table (docs/generation.md). A "step" row per step
// of every measured generation (step 0 the prefill: its time is the TTFT) and,
// with layers, a "node" row per node per phase (its median, cost and, from
// `report --generate`, its bound). Seconds and base units; empty fields for
// what does not apply or is not known.
#include <ostream>

#include "tools/writers/generation_writers.hpp"

namespace modelstat::report_detail {

namespace {

class GenerationCsvWriter final : public GenerationWriter {
 public:
  void write(const GenerationResult& r, const ReportOptions&, std::ostream& out) const override {
    CsvTable csv(out, {"kind", "generation", "step", "phase", "context", "name", "op_type", "seconds", "flops",
                       "bytes", "achieved_flops_per_s", "achieved_bytes_per_s", "bound"});
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
        csv.row({CsvCell::word("step"), CsvCell::count(int64_t(g)), CsvCell::count(int64_t(k)),
                 CsvCell::word(k == 0 ? "prefill" : "decode"), CsvCell::count(r.prompt + int64_t(k)), {}, {},
                 CsvCell::real(seconds), {}, {}, {}, {}, {}});
      }
    }
    for (const GenerationPhase& p : r.phases) {
      const double sum = layer_median_sum(p.profile);
      for (const LayerTiming& layer : p.profile.layers) {
        const LayerCost c = join_layer(p.profile, layer, sum);
        const size_t k = size_t(layer.index);
        const bool joined = p.joined && k < p.joined->nodes.size();
        csv.row({CsvCell::word("node"), {}, {}, CsvCell::word(p.name), CsvCell::count(p.context),
                 CsvCell::text(layer.name), CsvCell::text(layer.op_type), CsvCell::real(c.median_seconds),
                 CsvCell::count(c.flops), CsvCell::count(c.bytes), CsvCell::real(c.achieved_flops_per_second),
                 CsvCell::real(c.achieved_bytes_per_second),
                 joined ? CsvCell::word(bound_name(p.joined->nodes[k].bound)) : CsvCell()});
      }
    }
  }
};

}  // namespace

std::unique_ptr<GenerationWriter> make_generation_csv_writer() { return std::make_unique<GenerationCsvWriter>(); }

}  // namespace modelstat::report_detail
