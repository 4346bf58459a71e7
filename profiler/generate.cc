// The generation loop (generate.hpp): the decoder's inputs found by role,
// each step's inputs built from the state, the present tensors fed back and
// the next token chosen.
#include "profiler/generate.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cctype>

#include "modelstat/error.hpp"
#include "profiler/ops/exec_helpers.hpp"

namespace modelstat::profiler {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

bool is_integer(DType t) {
  return t == DType::Int64 || t == DType::Int32 || t == DType::Int16 || t == DType::Int8 || t == DType::UInt8;
}

const Tensor& graph_input(const Model& m, size_t i) { return m.graph.tensors[size_t(m.graph.inputs[i])]; }

std::string shape_text(const Tensor& t) { return t.shape.rank_known ? t.shape.to_string() : "(rank unknown)"; }

// Rows of the constant table the token ids index (a Gather's data), 0 when none.
int64_t embedding_rows(const Graph& g, int input) {
  int64_t rows = 0;
  for (int c : g.tensors[size_t(input)].consumers) {
    const Node& n = g.nodes[size_t(c)];
    if (n.op_type != "Gather" || n.inputs.size() < 2 || n.inputs[1] != input || n.inputs[0] < 0) continue;
    const Tensor& table = g.tensors[size_t(n.inputs[0])];
    if (table.is_constant() && table.shape.rank_known && !table.shape.dims.empty() && table.shape.dims[0].known())
      rows = rows == 0 ? table.shape.dims[0].value : std::min(rows, table.shape.dims[0].value);
  }
  return rows;
}

const char* role_text(InputRole r) {
  switch (r) {
    case InputRole::Tokens: return "the tokens [batch, new]";
    case InputRole::AttentionMask: return "ones [batch, context]";
    case InputRole::PositionIds: return "positions past .. context - 1 [batch, new]";
    case InputRole::PastKv: return "KV cache: the previous step's";
    case InputRole::SeqLensK: return "context - 1 per sequence [batch] (GroupQueryAttention seqlens_k)";
    case InputRole::TotalLength: return "the context (GroupQueryAttention total_sequence_length)";
    case InputRole::PastLength: return "the tokens cached before the step";
  }
  return "";
}

}  // namespace

std::vector<std::string> DecoderIo::describe(const Model& model) const {
  std::vector<std::string> out;
  const Graph& g = model.graph;
  for (size_t i = 0; i < roles.size(); ++i) {
    std::string text = graph_input(model, i).name + ": " + role_text(roles[i]);
    if (roles[i] == InputRole::PastKv)
      text += " " + g.tensors[size_t(g.outputs[size_t(present_output[size_t(cache_tensor[i])])])].name;
    out.push_back(text);
  }
  out.push_back(g.tensors[size_t(g.outputs[size_t(logits_output)])].name + ": logits, the next token chosen from " +
                "the last position (vocabulary " + std::to_string(vocabulary) + ", " + vocabulary_source + ")");
  return out;
}

DecoderIo decoder_io(const Model& model, const KvCache& cache) {
  const Graph& g = model.graph;
  DecoderIo io;
  io.roles.resize(g.inputs.size());
  io.cache_tensor.assign(g.inputs.size(), -1);
  io.present_output.assign(cache.tensors.size(), -1);
  auto output_position = [&](const std::string& name) {
    for (size_t o = 0; o < g.outputs.size(); ++o)
      if (g.tensors[size_t(g.outputs[o])].name == name) return int(o);
    return -1;
  };
  for (size_t k = 0; k < cache.tensors.size(); ++k) io.present_output[k] = output_position(cache.tensors[k].output);

  int tokens = -1;
  // The token ids: input_ids by name, else the first integer [batch, seq]
  // input that is not a mask or positions (find_kv_cache's rule).
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Tensor& t = graph_input(model, i);
    const std::string name = lower(t.name);
    const bool ids = is_integer(t.dtype) && t.shape.rank_known && t.shape.dims.size() == 2 && !has(name, "mask") &&
                     !has(name, "position");
    if (ids && (has(name, "input_ids") || tokens < 0)) tokens = int(i);
  }
  if (tokens < 0)
    throw Error(ErrorKind::Usage, "--generate: the model has no token-id input (an integer [batch, sequence] "
                                  "input such as input_ids): a model fed embeddings cannot generate tokens here");
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Tensor& t = graph_input(model, i);
    const std::string name = lower(t.name);
    int k = -1;
    for (size_t c = 0; c < cache.tensors.size(); ++c)
      if (cache.tensors[c].input == t.name) k = int(c);
    const size_t rank = t.shape.rank_known ? t.shape.dims.size() : 0;
    if (k >= 0) {
      io.roles[i] = InputRole::PastKv;
      io.cache_tensor[i] = k;
    } else if (int(i) == tokens) {
      io.roles[i] = InputRole::Tokens;
    } else if (has(name, "mask") && rank == 2) {
      io.roles[i] = InputRole::AttentionMask;
    } else if (has(name, "position") && is_integer(t.dtype) && (rank == 2 || rank == 1)) {
      io.roles[i] = InputRole::PositionIds;
    } else if (is_integer(t.dtype) && has(name, "seqlens") && rank == 1) {
      io.roles[i] = InputRole::SeqLensK;
    } else if (is_integer(t.dtype) && has(name, "total") && rank <= 1) {
      io.roles[i] = InputRole::TotalLength;
    } else if (is_integer(t.dtype) && has(name, "past") && rank <= 1) {
      io.roles[i] = InputRole::PastLength;
    } else {
      throw Error(ErrorKind::Usage,
                  "--generate: graph input '" + t.name + "' (" + dtype_name(t.dtype) + " " + shape_text(t) +
                      ") is none of what a generation step feeds: the token ids, an attention mask [batch, context], "
                      "position ids [batch, new], GroupQueryAttention's seqlens_k / total_sequence_length, or a KV "
                      "cache input (name the cache pairs with --kv PAST=PRESENT)");
    }
  }
  // The logits: the output named logits, else the first float output that is not a present.
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    if (std::find(io.present_output.begin(), io.present_output.end(), int(o)) != io.present_output.end()) continue;
    const Tensor& t = g.tensors[size_t(g.outputs[o])];
    const size_t rank = t.shape.rank_known ? t.shape.dims.size() : 0;
    if (!dtype_is_floating(t.dtype) || (rank != 2 && rank != 3)) continue;
    if (io.logits_output < 0 || has(lower(t.name), "logits")) io.logits_output = int(o);
  }
  if (io.logits_output < 0)
    throw Error(ErrorKind::Usage, "--generate: no logits output (a float [batch, sequence, vocabulary] output "
                                  "besides the present KV tensors) to choose the next token from");
  const Tensor& logits = g.tensors[size_t(g.outputs[size_t(io.logits_output)])];
  const int64_t rows = embedding_rows(g, g.inputs[size_t(tokens)]);
  const Dim& last = logits.shape.dims.back();
  if (rows > 0 && (!last.known() || rows <= last.value)) {
    io.vocabulary = rows;
    io.vocabulary_source = "the rows of the table the token ids index";
  } else if (last.known() && last.value > 0) {
    io.vocabulary = last.value;
    io.vocabulary_source = "the logits' last dim";
  } else {
    throw Error(ErrorKind::Usage, "--generate: the vocabulary size is unknown (the logits '" + logits.name +
                                      "' have no fixed last dim and the token ids index no constant table)");
  }
  return io;
}

GenerationLoop::GenerationLoop(const Executor& exec, const KvCache& cache, DecoderIo io, int64_t batch,
                               int64_t prompt, int64_t generate, TokenChoice choice, uint64_t seed)
    : exec_(exec),
      cache_(cache),
      io_(std::move(io)),
      batch_(batch),
      prompt_(prompt),
      generate_(generate),
      choice_(choice),
      seed_(seed),
      shared_(cache.layout == "shared buffer") {
  const Graph& g = exec.model().graph;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  prompt_tokens_ = at::randint(0, io_.vocabulary, {batch, prompt}, gen, at::TensorOptions().dtype(at::kLong));
  for (const KvCacheTensor& t : cache.tensors) {
    const Tensor& in = g.tensors[size_t(g.find_tensor(t.input))];
    std::vector<int64_t> dims = known_dims(in.shape, "KV cache input " + in.name);
    if (t.seq_axis < 0 || size_t(t.seq_axis) >= dims.size())
      throw Error(ErrorKind::Usage, "--generate: KV cache input '" + in.name + "' " + shape_text(in) +
                                        " has no sequence axis to grow");
    dims[size_t(t.seq_axis)] = 0;
    cache_dims_.push_back(dims);
  }
}

at::Tensor GenerationLoop::filled(int input, const std::vector<int64_t>& dims, int64_t value) const {
  const Tensor& t = graph_input(exec_.model(), size_t(input));
  return at::full(dims, value, at::TensorOptions().dtype(scalar_type_of(t.dtype)).device(exec_.options().device));
}

GenerationLoop::State GenerationLoop::start() const {
  const Graph& g = exec_.model().graph;
  State s;
  const at::ScalarType forced = exec_.options().float_dtype;
  for (size_t k = 0; k < cache_.tensors.size(); ++k) {
    const Tensor& in = g.tensors[size_t(g.find_tensor(cache_.tensors[k].input))];
    std::vector<int64_t> dims = cache_dims_[k];
    if (shared_) dims[size_t(cache_.tensors[k].seq_axis)] = max_length();
    const at::ScalarType type = forced == at::ScalarType::Undefined ? scalar_type_of(in.dtype) : forced;
    s.past.push_back(at::zeros(dims, at::TensorOptions().dtype(type).device(exec_.options().device)));
  }
  s.tokens = prompt_tokens_;
  return s;
}

GenerationLoop::State GenerationLoop::snapshot(const State& s) const {
  State copy = s;
  if (shared_)
    for (at::Tensor& t : copy.past) t = t.clone();
  return copy;
}

std::vector<at::Tensor> GenerationLoop::inputs(const State& s) const {
  const Graph& g = exec_.model().graph;
  const int64_t fed = s.tokens.size(1), context = s.past_length + fed;
  const at::Device device = exec_.options().device;
  std::vector<at::Tensor> in(g.inputs.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Tensor& t = graph_input(exec_.model(), i);
    const at::ScalarType type = scalar_type_of(t.dtype);
    switch (io_.roles[i]) {
      case InputRole::Tokens:
        in[i] = s.tokens.to(device, type);
        break;
      case InputRole::AttentionMask:
        in[i] = filled(int(i), {batch_, context}, 1);
        break;
      case InputRole::PositionIds: {
        at::Tensor p = at::arange(s.past_length, context, at::TensorOptions().dtype(at::kLong));
        const bool per_sequence = t.shape.dims.size() == 2 && !(t.shape.dims[0].known() && t.shape.dims[0].value == 1);
        if (t.shape.dims.size() == 2) p = per_sequence ? p.unsqueeze(0).repeat({batch_, 1}) : p.unsqueeze(0);
        in[i] = p.to(device, type);
        break;
      }
      case InputRole::PastKv:
        in[i] = s.past[size_t(io_.cache_tensor[i])];
        break;
      case InputRole::SeqLensK:
        in[i] = filled(int(i), {batch_}, context - 1);
        break;
      case InputRole::TotalLength:
        in[i] = filled(int(i), t.shape.dims.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{1}, context);
        break;
      case InputRole::PastLength:
        in[i] = filled(int(i), t.shape.dims.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{1}, s.past_length);
        break;
    }
  }
  return in;
}

at::Tensor GenerationLoop::choose(const std::vector<at::Tensor>& outputs, int64_t step) const {
  if (choice_ == TokenChoice::Random) {
    // Fixed per step: every generation feeds the same ids, whatever the logits.
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed_ + 0x9e3779b9ULL * uint64_t(step + 1));
    return at::randint(0, io_.vocabulary, {batch_}, gen, at::TensorOptions().dtype(at::kLong));
  }
  const at::Tensor& logits = outputs[size_t(io_.logits_output)];
  const at::Tensor last = logits.dim() == 3 ? logits.select(1, logits.size(1) - 1) : logits;
  return last.argmax(-1).to(at::kLong);
}

at::Tensor GenerationLoop::step(State& s, const Executor::NodeHook& hook) const {
  std::vector<at::Tensor> outputs = exec_.run(inputs(s), hook);
  const int64_t fed = s.tokens.size(1);
  for (size_t k = 0; k < s.past.size(); ++k) s.past[k] = outputs[size_t(io_.present_output[k])];
  at::Tensor next = choose(outputs, s.step);
  s.past_length += fed;
  s.tokens = next.view({batch_, 1});
  ++s.step;
  return next;
}

GenerationLoop::Timings GenerationLoop::generate(IntervalTimer& timer,
                                                 const std::function<void(const State&)>& before_step) const {
  Timings t;
  State s = start();
  for (int64_t k = 0; k < generate_; ++k) {
    if (before_step) before_step(s);
    timer.start();
    at::Tensor next = step(s);
    timer.stop();
    t.step_seconds.push_back(timer.seconds());
    t.tokens.push_back(std::move(next));
  }
  t.cache_bytes = cache_bytes(s);
  return t;
}

int64_t GenerationLoop::cache_bytes(const State& s) {
  int64_t bytes = 0;
  for (const at::Tensor& t : s.past) bytes += int64_t(t.numel()) * int64_t(t.element_size());
  return bytes;
}

}  // namespace modelstat::profiler
