// Product samples (matmul_probe.hpp). Why a grid and not the square matmul
// curve at the product's harmonic size: on the project VM (Zen 3, one thread)
// the executor ran GPT-2's 128 x 768 x 2304 products and its 128 x 768 x 50257
// head at 66-72 GFLOP/s, ConvNeXt-T's MLPs (3136 x 96 x 384 and the like) at
// 0.71-0.80x the curve's rate at their harmonic size (~300: 89 GFLOP/s). A
// product of few rows or a short K spends more of its time packing the weight
// and writing the output than a square one, and which dimension is short
// matters, not only their mean.
#include "profiler/matmul_probe.hpp"

#include <algorithm>

#include "profiler/ceilings_timing.hpp"
#include "profiler/conv_probe.hpp"
#include "profiler/probe_graph.hpp"
#include "profiler/torch_errors.hpp"

namespace modelstat::profiler {

namespace {

using Dims = std::vector<int64_t>;

struct Product {
  int64_t m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

// Rows in steps of 4 from 8 (a few tokens) to 2048 (a ViT's or a batch's
// sequence; ConvNeXt's 3136 positions are priced at the largest); K and N
// from 64 (a small encoder's head dimension) to 4096 (an MLP's hidden width);
// products above 2.2 GFLOP (30 ms on one core) left out, the nearest smaller
// samples price them. A bound of 1 GFLOP left out 128 x 1024 x 4096, the
// neighbour of a BERT's or GPT-2's MLP (128 x 768 x 3072). 70 points;
// `quick`: 7.
std::vector<Product> product_grid(bool quick) {
  const Dims rows = quick ? Dims{32, 512} : Dims{8, 32, 128, 512, 2048};
  const Dims widths = quick ? Dims{256, 1024} : Dims{64, 256, 1024, 4096};
  std::vector<Product> points;
  for (int64_t m : rows)
    for (int64_t k : widths)
      for (int64_t n : widths) {
        const Product p{m, n, k};
        if (p.flops() <= (quick ? 1e9 : 2.2e9)) points.push_back(p);
      }
  return points;
}

// Copies run in turn until their weights and outputs together pass
// kProbeColdBytes, at most 8 and at most 2.5 GFLOP
// a run: a weight comes from memory, as in a transformer's run (a product
// of 128 rows or more reads its weight in a tenth of its time or less, so a
// large one's one or two copies need not pass the cache).
int copies_of(const Product& p) {
  const double per_copy = 4.0 * double(p.k * p.n + p.m * p.n);
  const double by_bytes = double(kProbeColdBytes) / per_copy;
  const double by_flops = 2.5e9 / p.flops();
  return int(std::clamp(std::min(by_bytes, by_flops), 1.0, 8.0));
}

// `copies` MatMuls of the point, each with a weight of its own, all reading
// the one input; every output is a graph output.
Model product_model(const Product& p, int copies) {
  ProbeGraph g;
  const int x = g.input({p.m, p.k});
  std::vector<int> outputs;
  for (int i = 0; i < copies; ++i) outputs.push_back(g.node("MatMul", {x, g.weight({p.k, p.n})}, {p.m, p.n}));
  g.model.graph.outputs = std::move(outputs);
  return g.model;
}

}  // namespace

std::vector<ConvSample> measure_matmul_samples(Device& device, const CeilingsPlan& plan, bool quick,
                                               std::vector<std::string>& notes) {
  if (!device.torch_device().is_cpu()) return {};
  const CeilingsPlan light = sample_plan(plan);
  const std::vector<Product> points = product_grid(quick);
  // Shuffled once (a fixed seed), as the conv samples: a slow spell of the
  // machine then hits points scattered over the grid, not one corner of it.
  const std::vector<size_t> order = shuffled_order(points.size(), 0x5eed);
  StageSchedule schedule(plan.allot.matmul_samples > 0 ? plan.allot.matmul_samples : 1e30, points.size());
  std::vector<std::pair<size_t, ConvSample>> out;
  for (size_t index : order) {
    const Product& p = points[index];
    const std::string label =
        "matmul " + std::to_string(p.m) + "x" + std::to_string(p.k) + " by " + std::to_string(p.k) + "x" + std::to_string(p.n);
    try {
      const int copies = copies_of(p);
      const double seconds = time_probe_model(device, schedule.next(light), product_model(p, copies), label, notes);
      if (seconds <= 0) continue;
      ConvSample s;
      s.kind = "matmul";
      s.m = p.m;
      s.n = p.n;
      s.k = p.k;
      s.flops_per_second = p.flops() * copies / seconds;
      out.push_back({index, std::move(s)});
    } catch (const std::exception& e) {
      notes.push_back(label + ": not measured (" + first_line(e) + ")");
    }
  }
  schedule.note_end("matmul samples", out.size(), points.size(), notes);
  // Saved in grid order.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<ConvSample> samples;
  samples.reserve(out.size());
  for (auto& [index, s] : out) samples.push_back(std::move(s));
  return samples;
}

}  // namespace modelstat::profiler
