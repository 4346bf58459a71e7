// Decoders: the KV cache recognised in a graph's inputs and outputs, and the
// prefill / decode views of one graph at a context length (--context). The
// rules are documented in docs/COST_MODEL.md ("Decoders and the KV cache").
#include <algorithm>
#include <cctype>
#include <set>

#include "modelstat/analysis.hpp"
#include "modelstat/error.hpp"

namespace modelstat {

const char* const kNoKvCacheRecognised =
    "no KV cache recognised (looked for float graph inputs named past* or *cache* paired with outputs named "
    "present* (past_key_values.N.key -> present.N.key, past_key -> present_key, past.N -> present.N), and, "
    "failing that, for two or more input/output pairs of one dtype that differ on one growing axis): name the "
    "pairs with --kv PAST=PRESENT (repeatable)";

double DecoderView::flops_per_token() const {
  const int64_t n = tokens * batch;
  return n > 0 ? double(totals.flops) / double(n) : 0.0;
}

double DecoderView::bytes_per_token() const {
  const int64_t n = tokens * batch;
  return n > 0 ? double(totals.weight_bytes + kv_read_bytes + kv_written_bytes) / double(n) : 0.0;
}

double DecoderView::arithmetic_intensity() const {
  const double b = bytes_per_token();
  return b > 0 ? flops_per_token() / b : 0.0;
}

double DecoderView::attention_share() const {
  return totals.flops > 0 ? double(attention_flops) / double(totals.flops) : 0.0;
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

bool is_float(DType t) { return dtype_is_floating(t); }

// The names an exporter gives a cache input's output: present.N.key for
// past_key_values.N.key (Hugging Face Optimum), present_key for past_key
// (ONNX Runtime's contrib attention), present.N for past.N (GPT-2's old exports).
std::vector<std::string> present_names(const std::string& past) {
  std::vector<std::string> out;
  auto swap = [&](const std::string& from, const std::string& to) {
    const auto pos = past.find(from);
    if (pos != std::string::npos) out.push_back(past.substr(0, pos) + to + past.substr(pos + from.size()));
  };
  swap("past_key_values", "present");
  swap("past_key_values", "present_key_values");
  swap("past", "present");
  swap("cache", "present");
  return out;
}

// The axis on which a cache output is longer than its input: the dims differ
// there (values, or a symbol against another symbol / an unknown); -1 when no
// single axis differs.
int growing_axis(const Shape& in, const Shape& out) {
  if (!in.rank_known || !out.rank_known || in.dims.size() != out.dims.size()) return -1;
  int axis = -1;
  for (size_t k = 0; k < in.dims.size(); ++k) {
    const Dim& a = in.dims[k];
    const Dim& b = out.dims[k];
    const bool same = (a.known() && b.known()) ? a.value == b.value : (!a.known() && !b.known() && a.symbol == b.symbol && !a.symbol.empty());
    if (!same) {
      if (axis >= 0) return -1;
      axis = int(k);
    }
  }
  return axis;
}

// The sequence axis of a cache input when its output does not show it: the
// symbol naming a length (past, seq, len, ...), else rank - 2 ([batch, heads,
// seq, head] and [2, batch, heads, seq, head] alike).
int named_seq_axis(const Shape& in) {
  for (size_t k = 0; k < in.dims.size(); ++k) {
    const std::string s = lower(in.dims[k].symbol.str());
    if (contains(s, "past") || contains(s, "seq") || contains(s, "len")) return int(k);
  }
  return in.dims.size() >= 2 ? int(in.dims.size()) - 2 : -1;
}

const Tensor& tensor(const Graph& g, int k) { return g.tensors[size_t(k)]; }

std::string names_of(const Graph& g, const std::vector<int>& ids) {
  std::string list;
  for (int k : ids) list += (list.empty() ? "" : ", ") + tensor(g, k).name;
  return list;
}

// --kv PAST=PRESENT: a float graph input and a graph output of its dtype and rank.
KvCacheTensor explicit_pair(const Graph& g, const std::string& past, const std::string& present) {
  const std::string flag = "--kv " + past + "=" + present;
  const int in = g.find_tensor(past), out = g.find_tensor(present);
  if (in < 0 || tensor(g, in).role != TensorRole::Input)
    throw Error(ErrorKind::Usage, flag + ": '" + past + "' is not a graph input (inputs: " + names_of(g, g.inputs) + ")");
  if (out < 0 || std::find(g.outputs.begin(), g.outputs.end(), out) == g.outputs.end())
    throw Error(ErrorKind::Usage,
                flag + ": '" + present + "' is not a graph output (outputs: " + names_of(g, g.outputs) + ")");
  const Tensor& a = tensor(g, in);
  const Tensor& b = tensor(g, out);
  if (!is_float(a.dtype) || a.dtype != b.dtype)
    throw Error(ErrorKind::Usage, flag + ": a cache pair is two float tensors of one dtype, not " +
                                      dtype_name(a.dtype) + " and " + dtype_name(b.dtype));
  if (!a.shape.rank_known || !b.shape.rank_known || a.shape.dims.size() != b.shape.dims.size() ||
      a.shape.dims.size() < 2)
    throw Error(ErrorKind::Usage, flag + ": the two must have one rank (at least 2), not " + a.shape.to_string() +
                                      " and " + b.shape.to_string());
  int axis = growing_axis(a.shape, b.shape);
  if (axis < 0) axis = named_seq_axis(a.shape);
  return {past, present, axis};
}

// ONNX Runtime GenAI's layout: every cache input is the past_key (input 3) or
// past_value (input 4) of a com.microsoft GroupQueryAttention, which keeps
// max(past rows, total_sequence_length) rows in present: the runtime feeds
// one buffer of the maximum length as past and gets it back as present.
bool shared_buffer_layout(const Graph& g, const KvCache& cache) {
  for (const KvCacheTensor& t : cache.tensors) {
    const int id = g.find_tensor(t.input);
    bool read_as_past = false;
    for (int c : tensor(g, id).consumers) {
      const Node& n = g.nodes[size_t(c)];
      if (n.op_type != "GroupQueryAttention" || n.domain != "com.microsoft") continue;
      for (size_t k = 3; k < 5 && k < n.inputs.size(); ++k) read_as_past = read_as_past || n.inputs[k] == id;
    }
    if (!read_as_past) return false;
  }
  return !cache.tensors.empty();
}

// Whether tensor t is computed from position ids or a Range (within a few
// producers, through reshapes, casts and arithmetic): the positions a
// position table is indexed with, as opposed to the token ids.
bool from_positions(const Graph& g, int t, const std::set<std::string>& cache_inputs, int depth = 0) {
  if (t < 0 || depth > 6) return false;
  const Tensor& x = tensor(g, t);
  if (x.role == TensorRole::Input)
    return contains(lower(x.name), "position") && !cache_inputs.count(x.name);
  if (x.producer < 0) return false;
  const Node& n = g.nodes[size_t(x.producer)];
  if (n.op_type == "Range") return true;
  for (int in : n.inputs)
    if (from_positions(g, in, cache_inputs, depth + 1)) return true;
  return false;
}

// KvCache::max_context: the rows of a learned position table (a Gather of a
// constant 2-D table indexed by positions) or of a rotary cos cache.
void find_max_context(const Graph& g, const std::set<std::string>& cache_inputs, KvCache& cache) {
  auto take = [&](int table, const std::string& what) {
    const Tensor& t = tensor(g, table);
    if (!t.is_constant() || !t.shape.rank_known || t.shape.dims.empty() || !t.shape.dims[0].known()) return;
    const int64_t rows = t.shape.dims[0].value;
    if (rows <= 0 || (cache.max_context >= 0 && rows >= cache.max_context)) return;
    cache.max_context = rows;
    cache.max_context_source = what + " '" + t.name + "' (" + std::to_string(rows) + " rows)";
  };
  for (const Node& n : g.nodes) {
    if (n.op_type == "Gather" && n.domain.empty() && n.inputs.size() == 2 && n.inputs[0] >= 0 &&
        tensor(g, n.inputs[0]).shape.dims.size() == 2 && from_positions(g, n.inputs[1], cache_inputs))
      take(n.inputs[0], "position table");
    if (n.domain != "com.microsoft") continue;
    if (n.op_type == "GroupQueryAttention" && n.attr_int("do_rotary", 0) != 0 && n.inputs.size() > 7 &&
        n.inputs[7] >= 0)
      take(n.inputs[7], "GroupQueryAttention cos_cache");
    if (n.op_type == "RotaryEmbedding" && n.inputs.size() > 2 && n.inputs[2] >= 0)
      take(n.inputs[2], "RotaryEmbedding cos_cache");
  }
}

}  // namespace

std::map<std::string, int64_t> KvCache::bindings(int64_t seq, int64_t past) const {
  std::map<std::string, int64_t> b;
  if (!seq_dim.empty()) b[seq_dim] = seq;
  if (!past_dim.empty()) b[past_dim] = past;
  for (const auto& t : total_dims) b[t] = past + seq;
  return b;
}

std::optional<KvCache> find_kv_cache(const Model& model,
                                     const std::vector<std::pair<std::string, std::string>>& explicit_pairs) {
  const Graph& g = model.graph;
  std::map<std::string, int> outputs;
  for (int k : g.outputs) outputs[tensor(g, k).name] = k;
  KvCache cache;
  std::set<int> used_outputs;
  if (!explicit_pairs.empty()) {
    cache.recognised_by = "--kv";
    for (const auto& [past, present] : explicit_pairs) cache.tensors.push_back(explicit_pair(g, past, present));
  }
  // By name: a float input of rank 3 or more called past* / *cache* with an
  // output named as its present.
  for (int k : explicit_pairs.empty() ? g.inputs : std::vector<int>{}) {
    const Tensor& in = tensor(g, k);
    const std::string name = lower(in.name);
    if (!is_float(in.dtype) || !in.shape.rank_known || in.shape.dims.size() < 3) continue;
    if (!contains(name, "past") && !contains(name, "cache")) continue;
    for (const std::string& candidate : present_names(in.name)) {
      auto it = outputs.find(candidate);
      if (it == outputs.end() || used_outputs.count(it->second)) continue;
      int axis = growing_axis(in.shape, tensor(g, it->second).shape);
      if (axis < 0) axis = named_seq_axis(in.shape);
      cache.tensors.push_back({in.name, candidate, axis});
      used_outputs.insert(it->second);
      break;
    }
  }
  if (explicit_pairs.empty()) cache.recognised_by = "name";
  // By shape: a float input (not the first) whose output of the same dtype
  // and rank differs from it on exactly one axis, where the input's dim is
  // symbolic or smaller.
  if (cache.tensors.empty()) {
    cache.recognised_by = "shape";
    for (size_t i = 1; i < g.inputs.size(); ++i) {
      const Tensor& in = tensor(g, g.inputs[i]);
      if (!is_float(in.dtype) || !in.shape.rank_known || in.shape.dims.size() < 3) continue;
      for (int o : g.outputs) {
        const Tensor& out = tensor(g, o);
        if (used_outputs.count(o) || out.dtype != in.dtype) continue;
        const int axis = growing_axis(in.shape, out.shape);
        if (axis < 0) continue;
        const Dim& a = in.shape.dims[size_t(axis)];
        const Dim& b = out.shape.dims[size_t(axis)];
        if (a.known() && b.known() && b.value <= a.value) continue;
        if (a.known() && !b.known()) continue;  // a fixed input against an open output is not a cache
        cache.tensors.push_back({in.name, out.name, axis});
        used_outputs.insert(o);
        break;
      }
    }
    // One pair alone is more likely a coincidence than a cache.
    if (cache.tensors.size() < 2) return std::nullopt;
  }
  if (cache.tensors.empty()) return std::nullopt;

  // The symbols a context length binds.
  const Tensor& first = tensor(g, g.find_tensor(cache.tensors.front().input));
  const int axis = cache.tensors.front().seq_axis;
  if (axis >= 0 && size_t(axis) < first.shape.dims.size()) cache.past_dim = first.shape.dims[size_t(axis)].symbol.str();
  std::set<std::string> cache_inputs;
  for (const auto& t : cache.tensors) cache_inputs.insert(t.input);
  // The token input: integer ids [batch, seq] (input_ids first), else a
  // float [batch, seq, hidden] that is not a cache.
  const Tensor* tokens = nullptr;
  for (int k : g.inputs) {
    const Tensor& in = tensor(g, k);
    if (cache_inputs.count(in.name) || !in.shape.rank_known) continue;
    const bool ids = (in.dtype == DType::Int64 || in.dtype == DType::Int32) && in.shape.dims.size() == 2;
    if (ids && contains(lower(in.name), "input_ids")) {
      tokens = &in;
      break;
    }
    if (!tokens && (ids || (is_float(in.dtype) && in.shape.dims.size() == 3) ) && !contains(lower(in.name), "mask") &&
        !contains(lower(in.name), "position"))
      tokens = &in;
  }
  if (tokens && tokens->shape.dims.size() >= 2) cache.seq_dim = tokens->shape.dims[1].symbol.str();
  // Dims equal to past + seq: an attention mask's [batch, total].
  for (int k : g.inputs) {
    const Tensor& in = tensor(g, k);
    if (!contains(lower(in.name), "mask") || !in.shape.rank_known) continue;
    for (const Dim& d : in.shape.dims)
      if (!d.symbol.empty() && d.symbol != cache.seq_dim && d.symbol != cache.past_dim &&
          std::find(cache.total_dims.begin(), cache.total_dims.end(), d.symbol) == cache.total_dims.end() &&
          &d != &in.shape.dims.front())
        cache.total_dims.push_back(d.symbol.str());
  }

  cache.layout = shared_buffer_layout(g, cache) ? "shared buffer" : "separate";
  find_max_context(g, cache_inputs, cache);

  // Sizes at the bound shapes.
  int64_t past = 0, present = 0;
  bool known = true;
  for (const auto& t : cache.tensors) {
    const Tensor& in = tensor(g, g.find_tensor(t.input));
    const Tensor& out = tensor(g, g.find_tensor(t.output));
    auto a = in.size_bytes(), b = out.size_bytes();
    if (!a || !b) {
      known = false;
      break;
    }
    past += *a;
    present += *b;
  }
  const Tensor& out0 = tensor(g, g.find_tensor(cache.tensors.front().output));
  if (known) {
    cache.past_bytes = past;
    cache.present_bytes = present;
    if (axis >= 0 && first.shape.dims[size_t(axis)].known()) cache.past_length = first.shape.dims[size_t(axis)].value;
    if (axis >= 0 && out0.shape.rank_known && size_t(axis) < out0.shape.dims.size() &&
        out0.shape.dims[size_t(axis)].known())
      cache.present_length = out0.shape.dims[size_t(axis)].value;
    if (cache.present_length > 0 && present % cache.present_length == 0)
      cache.bytes_per_token = present / cache.present_length;
  }
  return cache;
}

namespace {

// Attention's share of a step: fused attention ops, contractions between two
// activations (QK^T and AV: neither operand a weight), softmax, and the nodes
// whose output has a softmax input's shape (the scores' scale and mask).
int64_t attention_flops(const AnalysisResult& r) {
  static const std::set<std::string> kFused = {"Attention", "MultiHeadAttention", "GroupQueryAttention",
                                               "DecoderMaskedMultiHeadAttention", "PackedAttention",
                                               "PackedMultiHeadAttention", "SparseAttention"};
  std::set<std::string> score_shapes;
  for (const NodeReport& n : r.nodes)
    if (n.op_type == "Softmax" && !n.input_shapes.empty()) score_shapes.insert(n.input_shapes.front());
  int64_t flops = 0;
  for (const NodeReport& n : r.nodes) {
    const bool contraction = (n.op_type == "MatMul" || n.op_type == "FusedMatMul") && n.cost.weight_bytes == 0;
    const bool scores = !n.output_shapes.empty() && score_shapes.count(n.output_shapes.front());
    if (kFused.count(n.op_type) || contraction || n.op_type == "Softmax" || scores) flops += n.cost.flops;
  }
  return flops;
}

DecoderView make_view(const std::string& name, const AnalysisResult& r, int64_t tokens, int64_t context,
                      const std::map<std::string, int64_t>& bindings) {
  DecoderView v;
  v.name = name;
  v.tokens = tokens;
  v.context = context;
  v.bindings = bindings;
  v.totals = r.totals;
  v.attention_flops = attention_flops(r);
  if (r.kv_cache) {
    v.kv_read_bytes = std::max<int64_t>(r.kv_cache->past_bytes, 0);
    v.kv_written_bytes = std::max<int64_t>(r.kv_cache->present_bytes, 0);
  }
  if (r.model) {
    // The batch: dim 0 of the first graph input (the token ids).
    const Graph& g = r.model->graph;
    if (!g.inputs.empty()) {
      const Shape& s = g.tensors[size_t(g.inputs.front())].shape;
      if (s.rank_known && !s.dims.empty() && s.dims.front().known()) v.batch = std::max<int64_t>(s.dims.front().value, 1);
    }
  }
  return v;
}

std::string bindings_text(const std::map<std::string, int64_t>& b) {
  std::string s;
  for (const auto& [k, v] : b) s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s;
}

}  // namespace

DecoderBindings decoder_bindings(const std::string& path, const LoadOptions& options, int64_t context,
                                 int64_t prompt) {
  if (context < 1) throw Error(ErrorKind::Usage, "--context must be at least 1");
  if (prompt < 1 || prompt > context)
    throw Error(ErrorKind::Usage, "--prompt must be between 1 and --context (" + std::to_string(context) + ")");
  // The cache and its symbols, on the model as the user bound it.
  const Model unbound = load_model(path, options);
  const std::optional<KvCache> cache = find_kv_cache(unbound, options.kv_pairs);
  if (!cache)
    throw Error(ErrorKind::Usage, std::string("--context: ") + kNoKvCacheRecognised + "; or bind the dims with --dim instead");
  if (cache->past_dim.empty())
    throw Error(ErrorKind::Usage, "--context: the KV cache input '" + cache->tensors.front().input +
                                      "' has no symbolic sequence dim to bind: bind the dims with --dim instead");
  if (cache->seq_dim.empty())
    throw Error(ErrorKind::Usage,
                "--context: no token input with a symbolic sequence dim (input_ids [batch, seq]) to bind: bind "
                "the dims with --dim instead");
  auto bind = [&](int64_t seq, int64_t past) {
    const std::map<std::string, int64_t> b = cache->bindings(seq, past);
    for (const auto& [k, v] : b)
      if (options.dim_values.count(k))
        throw Error(ErrorKind::Usage, "--context binds '" + k + "', which --dim binds too: give one of them");
    return b;
  };
  DecoderBindings d;
  d.cache = *cache;
  d.context = context;
  d.prompt = prompt;
  d.prefill = bind(prompt, 0);
  d.decode = bind(1, context - 1);
  return d;
}

std::string DecoderBindings::describe() const {
  return "--context " + std::to_string(context) + ": one decode step binds " + bindings_text(decode) +
         "; prefill of " + std::to_string(prompt) + " tokens binds " + bindings_text(prefill) +
         "; KV cache recognised by " + cache.recognised_by + " (" + std::to_string(cache.tensors.size()) +
         " tensors: " + cache.tensors.front().input + " -> " + cache.tensors.front().output + ", ...)";
}

AnalysisResult analyze_decoder(const std::string& path, const LoadOptions& options, int64_t context, int64_t prompt) {
  const DecoderBindings b = decoder_bindings(path, options, context, prompt);
  LoadOptions prefill_options = options, decode_options = options;
  for (const auto& [k, v] : b.prefill) prefill_options.dim_values[k] = v;
  for (const auto& [k, v] : b.decode) decode_options.dim_values[k] = v;
  const AnalysisResult prefill = analyze_file(path, prefill_options);
  AnalysisResult decode = analyze_file(path, decode_options);

  DecoderAnalysis d;
  d.context = context;
  d.prompt = prompt;
  d.kv_cache = decode.kv_cache ? *decode.kv_cache : b.cache;
  d.prefill = make_view("prefill", prefill, prompt, prompt, b.prefill);
  d.decode = make_view("decode", decode, 1, context, b.decode);
  decode.notices.insert(decode.notices.begin(), b.describe() + "; the rows are the decode step");
  if (prefill.totals.nodes_exact < prefill.totals.nodes)
    decode.notices.push_back("prefill: " + std::to_string(prefill.totals.nodes - prefill.totals.nodes_exact) +
                             " node(s) not counted exactly");
  decode.decoder = std::move(d);
  return decode;
}

}  // namespace modelstat
