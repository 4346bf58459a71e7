// The training step's graph for the memory forecast (training_graph.hpp).
#include "analyzer/fit/training_graph.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "analyzer/fit/sharding.hpp"

namespace modelstat::fit {

namespace {

bool is_float(DType t) { return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16; }

// torch.autocast: 16-bit ops' outputs are 16-bit; every other op follows
// ATen's type promotion over its float inputs (a 0-d tensor does not widen
// a dimensioned one), so a 16-bit product plus an fp32 bias is fp32 again.
DType promoted_float(const Graph& g, const Node& n, const std::vector<DType>& dtype, DType low) {
  bool any_dimensioned = false, wide_dimensioned = false, wide_scalar = false;
  for (int t : n.inputs) {
    if (t < 0 || !is_float(dtype[size_t(t)])) continue;
    const Shape& s = g.tensors[size_t(t)].shape;
    const bool scalar = s.rank_known && s.dims.empty();
    const bool wide = dtype[size_t(t)] == DType::Float || dtype[size_t(t)] == DType::Double;
    if (scalar) {
      wide_scalar = wide_scalar || wide;
    } else {
      any_dimensioned = true;
      wide_dimensioned = wide_dimensioned || wide;
    }
  }
  if (any_dimensioned) return wide_dimensioned ? DType::Float : low;
  return wide_scalar ? DType::Float : low;
}

void relink(Graph& g) {
  for (Tensor& t : g.tensors) {
    t.producer = -1;
    t.consumers.clear();
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int t : g.nodes[i].inputs)
      if (t >= 0) g.tensors[size_t(t)].consumers.push_back(int(i));
    for (int t : g.nodes[i].outputs)
      if (t >= 0) g.tensors[size_t(t)].producer = int(i);
  }
}

// autocast (torch.autocast): the 16-bit ops cast each fp32 float input: a
// trainable weight once per step (the cache), anything else at every use.
void apply_autocast(TrainingGraph& tg, DType low) {
  Graph& g = tg.graph;
  std::vector<DType> dtype;
  for (const Tensor& t : g.tensors) dtype.push_back(t.dtype);
  std::map<int, int> weight_cast;  // trainable weight -> its cached 16-bit copy
  std::vector<Node> nodes;
  auto add_cast = [&](int source) {
    Tensor copy = g.tensors[size_t(source)];
    copy.name += "/autocast_" + std::string(dtype_name(low));
    copy.dtype = low;
    copy.role = TensorRole::Activation;
    copy.mutable_storage().bytes = {};
    copy.int_values.clear();
    copy.has_int_values = false;
    g.tensors.push_back(copy);
    dtype.push_back(low);
    const int id = int(g.tensors.size()) - 1;
    Node cast;
    cast.name = copy.name;
    cast.op_type = "Cast";
    cast.inputs = {source};
    cast.outputs = {id};
    cast.attributes["to"] = int64_t(low);  // DType values are ONNX TensorProto codes
    nodes.push_back(std::move(cast));
    return id;
  };
  for (Node n : g.nodes) {
    if (autocast_lower_precision_op(n)) {
      for (int& t : n.inputs) {
        if (t < 0 || dtype[size_t(t)] != DType::Float) continue;
        if (tg.trainable[size_t(t)]) {
          auto it = weight_cast.find(t);
          if (it == weight_cast.end()) it = weight_cast.emplace(t, add_cast(t)).first;
          t = it->second;
        } else {
          t = add_cast(t);
        }
      }
      for (int t : n.outputs)
        if (t >= 0 && is_float(dtype[size_t(t)])) dtype[size_t(t)] = low;
    } else if (!(n.domain.empty() && n.op_type == "Cast")) {
      const DType out = promoted_float(g, n, dtype, low);
      for (int t : n.outputs)
        if (t >= 0 && dtype[size_t(t)] == DType::Float) dtype[size_t(t)] = out;
    }
    nodes.push_back(std::move(n));
  }
  g.nodes = std::move(nodes);
  for (size_t t = 0; t < g.tensors.size(); ++t) g.tensors[t].dtype = dtype[t];
  tg.trainable.resize(g.tensors.size(), false);
  tg.weight_copy.assign(g.tensors.size(), false);
  for (const auto& [weight, copy] : weight_cast) tg.weight_copy[size_t(copy)] = true;
  relink(g);
}

// A 16-bit model (ZeRO / DeepSpeed): every float tensor, weights included, in 16 bits.
void apply_16bit_model(Graph& g, DType low) {
  for (Tensor& t : g.tensors)
    if (t.dtype == DType::Float) t.dtype = low;
}

bool is_activation(const Graph& g, int t) { return t >= 0 && !g.tensors[size_t(t)].is_constant(); }

std::optional<int64_t> elements(const Graph& g, int t) { return g.tensors[size_t(t)].shape.element_count(); }

bool activation_matmul(const Graph& g, const Node& n) {
  return n.domain.empty() && n.op_type == "MatMul" && n.inputs.size() == 2 && is_activation(g, n.inputs[0]) &&
         is_activation(g, n.inputs[1]);
}

// Selective (Korthikanti et al. 2022, section 4.2): the attention core's
// score tensors, from a MatMul of two activations (Q x K^T) through every
// node whose output has the scores' element count (scaling, mask, Softmax,
// Dropout), and no contraction, to the MatMul of two activations that reads
// them (scores x V). (scores x V's own output reaches the next layer's
// Q x K^T only through projections, so it starts no core.)
// Those outputs are recomputed at that second MatMul's backward.
void mark_selective(TrainingGraph& tg) {
  const Graph& g = tg.graph;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& qk = g.nodes[i];
    if (!activation_matmul(g, qk) || qk.outputs.empty() || qk.outputs[0] < 0) continue;
    const auto scores = elements(g, qk.outputs[0]);
    if (!scores || *scores <= 0) continue;
    std::set<int> region = {int(i)};
    std::vector<int> frontier = {qk.outputs[0]};
    int av = -1;
    while (!frontier.empty()) {
      const int t = frontier.back();
      frontier.pop_back();
      for (int c : g.tensors[size_t(t)].consumers) {
        const Node& n = g.nodes[size_t(c)];
        if (activation_matmul(g, n) && c != int(i)) {
          av = std::max(av, c);
          continue;
        }
        if (autocast_lower_precision_op(n)) continue;  // a projection: the core ends there
        if (n.outputs.empty() || n.outputs[0] < 0 || elements(g, n.outputs[0]) != scores) continue;
        if (region.insert(c).second) frontier.push_back(n.outputs[0]);
      }
    }
    if (av < 0) continue;
    for (int n : region) tg.recompute_at[size_t(n)] = std::max(tg.recompute_at[size_t(n)], av);
    ++tg.recomputed_regions;
  }
}

// Full: every node of a block (block_of) is recomputed at the backward of
// the block's last node, except those whose outputs leave the block (its
// output, the next block's input, is what checkpointing keeps).
void mark_full(TrainingGraph& tg) {
  const Graph& g = tg.graph;
  std::vector<std::string> block(g.nodes.size());
  std::map<std::string, int> last;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    block[i] = block_of(g.nodes[i].name);
    if (!block[i].empty()) last[block[i]] = int(i);
  }
  std::set<int> outputs(g.outputs.begin(), g.outputs.end());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (block[i].empty()) continue;
    bool leaves = false;
    for (int t : g.nodes[i].outputs) {
      if (t < 0) continue;
      leaves = leaves || outputs.count(t);
      for (int c : g.tensors[size_t(t)].consumers) leaves = leaves || block[size_t(c)] != block[i];
    }
    if (!leaves) tg.recompute_at[i] = last[block[i]];
  }
  tg.recomputed_regions = int(last.size());
}

}  // namespace

bool autocast_lower_precision_op(const Node& n) {
  static const std::set<std::string> kOps = {"Conv", "ConvTranspose", "Gemm", "MatMul", "Einsum"};
  return n.domain.empty() && kOps.count(n.op_type) > 0;
}

std::string block_of(const std::string& name) {
  size_t start = 0;
  while (true) {
    const size_t slash = name.find('/', start + 1);
    if (slash == std::string::npos) return "";  // the rest is the node's own name
    const std::string part = name.substr(start, slash - start);
    size_t digits = part.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(part[digits - 1]))) --digits;
    if (digits < part.size() && (digits == 0 || part[digits - 1] == '.' || part[digits - 1] == '_' ||
                                 part[digits - 1] == '/'))
      return name.substr(0, slash);
    start = slash;
  }
}

TrainingGraph training_graph(const Graph& g, const FitOptions& options) {
  TrainingGraph tg;
  tg.graph = g;
  tg.trainable = trainable_initializers(g);
  tg.weight_copy.assign(g.tensors.size(), false);
  const DType low = options.precision == TrainPrecision::Fp16 ? DType::Float16 : DType::BFloat16;
  if (options.precision == TrainPrecision::Fp32) {
    tg.layout = "weights, gradients, optimizer state and activations in fp32";
  } else if (options.zero_stage >= 0) {
    apply_16bit_model(tg.graph, low);
    tg.layout = std::string("16-bit model (") + name_of(options.precision) +
                " weights, gradients and activations) with fp32 master weights and moments in the optimizer, "
                "as ZeRO and DeepSpeed hold them";
  } else {
    apply_autocast(tg, low);
    tg.layout = std::string("torch.autocast to ") + name_of(options.precision) +
                ": fp32 weights (the master weights), gradients and moments; Conv, ConvTranspose, Gemm, MatMul "
                "and Einsum compute in 16 bits on cast inputs (a weight's cast cached for the step), other ops "
                "follow type promotion";
  }
  tg.recompute_at.assign(tg.graph.nodes.size(), -1);
  if (options.checkpointing == Checkpointing::Selective) mark_selective(tg);
  if (options.checkpointing == Checkpointing::Full) mark_full(tg);
  return tg;
}

}  // namespace modelstat::fit
