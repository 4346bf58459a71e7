// Static analysis: load an ONNX model, bind its dims, and count params, MACs,
// FLOPs, bytes and memory per node and in total. See docs/COST_MODEL.md for
// every counting rule; kCostConvention below is the one-paragraph summary that
// every report prints.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "modelstat/graph.hpp"

namespace modelstat {

extern const char* const kCostConvention;

// Options shared by every command that reads a model.
struct LoadOptions {
  // --input NAME:1x3x224x224 ; a full shape for a graph input.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // --dim NAME=VALUE ; a value for a symbolic dim (dim_param) wherever it occurs.
  std::map<std::string, int64_t> dim_values;
  // Value given to an unbound leading (batch) dim of a graph input.
  int64_t default_batch = 1;
  // Accept domains modelstat has no rules for (their nodes become "unknown").
  bool allow_custom_domains = false;
  // --branch NODE=then|else: the branch an If counts when its condition is
  // unknown before running (true: then_branch).
  std::map<std::string, bool> branches;
  // --trip-count NODE=N: a Loop's trip count when the model does not fix it.
  std::map<std::string, int64_t> trip_counts;
  // --kv PAST=PRESENT: the KV cache given by hand, (graph input, graph output)
  // pairs, in place of the cache find_kv_cache recognises (decoder.cc).
  std::vector<std::pair<std::string, std::string>> kv_pairs;
  // What a run observed (profile, report: profiler/observed_run.hpp), so that
  // the count follows what ran. observed_branches / observed_trip_counts: an
  // If's branch (true: then_branch) and a Loop's trips per run, by node name;
  // they take precedence over --branch / --trip-count and over what the
  // loader evaluates (control_source "observed at run time").
  // observed_shapes: top-level values' dims as the executor saw them, by
  // tensor name: a value that inference leaves without a full shape takes
  // them (where rank and known dims agree).
  std::map<std::string, bool> observed_branches;
  std::map<std::string, int64_t> observed_trip_counts;
  std::map<std::string, std::vector<int64_t>> observed_shapes;
  // Refuse a model whose graph inputs keep an unknown dim after binding
  // (Error(Input) naming every such input and the flags that bind them):
  // what running it needs (profile, report); the analysis counts around them.
  bool require_bound_inputs = false;
  // For a process that loads one model and exits (the `modelstat` binary):
  // the heap the parse and the IR will fill is mapped in one call before the
  // parse (MADV_POPULATE_WRITE, sized from the stripped bytes and the node
  // count; Linux with glibc only) instead of by a page fault per first-touched
  // page (~2 us each on a VM). Leaves the memory in the process's heap: off
  // where the process lives on (the Python module, tests).
  bool prefault_heap = false;
};

// How sure a node's cost is.
enum class CostStatus {
  Exact,          // a rule applied to fully known shapes
  UnknownShape,   // a rule exists but a shape it needs is unknown
  UnknownOp,      // no rule for this op: not counted, listed
};
const char* cost_status_name(CostStatus s);

struct NodeCost {
  CostStatus status = CostStatus::Exact;
  int64_t params = 0;         // elements of weights first used by this node
  int64_t macs = 0;           // multiply-accumulates (contractions only)
  int64_t flops = 0;          // all floating-point operations, see kCostConvention
  int64_t bytes_read = 0;     // inputs read: weights + activations
  int64_t bytes_written = 0;  // outputs written
  int64_t weight_bytes = 0;   // part of bytes_read that is constant data
  std::string rule;           // which documented rule produced this ("conv", "elementwise:1", ...)
  std::string note;           // why it is unknown, or anything notable
  // "observed": the cost is exact only because it was counted on the shapes
  // a run observed (LoadOptions::observed_shapes; mark_observed_costs); the
  // static analysis could not infer them. Empty otherwise.
  std::string shapes;

  int64_t bytes() const { return bytes_read + bytes_written; }
  // FLOPs per byte moved; 0 when nothing moves.
  double arithmetic_intensity() const;
};

struct NodeReport {
  int index = 0;
  std::string name, op_type, domain;
  std::vector<std::string> input_shapes, output_shapes;  // Shape::to_string()
  std::string output_dtype;
  std::string operand_dtype;  // dtype of the first input (what a contraction multiplies)
  NodeCost cost;
  int subgraph_nodes = 0;  // for If/Loop/Scan: nodes counted inside
};

struct OpTypeSummary {
  std::string op_type;
  int64_t count = 0, params = 0, macs = 0, flops = 0, bytes = 0;
  int64_t unknown = 0;  // nodes of this type whose cost is not exact
};

// The top-level nodes of one group under --group-by (modelstat/grouping.hpp),
// their costs summed. Params add up to the nodes' (each weight counted at its
// first reader, so no group counts a shared weight twice). Peak activation
// memory is a property of the whole order, not of a set of nodes: not here.
struct NodeGroup {
  std::string key;      // GroupRule::key of its nodes
  int first_index = 0;  // index of its first node; groups are in this order
  int64_t nodes = 0;
  int64_t nodes_not_exact = 0;  // nodes whose cost is not exact: the sums hold the known counts only
  int64_t params = 0, macs = 0, flops = 0, bytes_read = 0, bytes_written = 0;
  int64_t weight_bytes = 0;  // part of bytes_read that is constant data
  int64_t bytes() const { return bytes_read + bytes_written; }
};

struct DTypeSize {
  std::string dtype;
  int64_t tensors = 0, elements = 0, bytes = 0;
};

// MACs by the dtype of what they multiply (the first input of each node with
// MACs): integer MACs (ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul,
// on uint8/int8 data) count as MACs like float ones, and this says how many.
struct DTypeMacs {
  std::string dtype;
  int64_t nodes = 0, macs = 0;
};

struct SharedWeight {
  std::string name;
  int64_t elements = 0;
  std::vector<std::string> consumers;  // node names
};

struct AnalysisTotals {
  int64_t nodes = 0;
  int64_t nodes_exact = 0;          // nodes whose cost is fully counted
  int64_t nodes_unknown_shape = 0;
  int64_t nodes_unknown_op = 0;
  int64_t params = 0;               // deduplicated
  int64_t macs = 0, flops = 0, bytes_read = 0, bytes_written = 0;
  int64_t weight_bytes = 0;                 // model size: all constant data, every dtype
  int64_t peak_activation_bytes = 0;        // max live activation bytes over the order
  std::string peak_at_node;                 // node at which the peak occurs
  int peak_at_index = -1;                   // its index (-1: the inputs); the human formats
                                            // name an elided long name by it
  bool peak_is_lower_bound = false;         // some activation sizes were unknown
  int64_t input_bytes = 0, output_bytes = 0;
  double coverage() const { return nodes ? double(nodes_exact) / double(nodes) : 1.0; }
};

// A decoder's key-value cache: graph inputs that hold the keys and values of
// the tokens before (past_key_values.*, past_key, past.N, ...) paired with the
// outputs that return them one step longer (present.*), recognised by name or,
// failing that, by shape (analyzer/decoder.cc).
struct KvCacheTensor {
  std::string input, output;  // graph input (past) and graph output (present)
  int seq_axis = -1;          // the axis that grows by the step's tokens
};

struct KvCache {
  std::vector<KvCacheTensor> tensors;
  std::string recognised_by;  // "name", "shape" or "--kv"
  // How a runtime holds it between steps: "separate" (each step returns a new
  // present tensor, past + the step's rows, which becomes the next past) or
  // "shared buffer" (ONNX Runtime GenAI's layout: every cache input is read
  // by a com.microsoft GroupQueryAttention as its past_key / past_value; the
  // runtime allocates one buffer of the maximum length per tensor, feeds it as
  // past and receives it as present, the step's rows written in place).
  std::string layout = "separate";
  // The longest context the model holds (tokens), -1 when it sets none: the
  // rows of its learned position table (a Gather of a constant [N, d] table
  // whose indices come from position ids or a Range, GPT-2's wpe) or of a
  // rotary cos cache (GroupQueryAttention / RotaryEmbedding); the smallest
  // when there are several. max_context_source says which.
  int64_t max_context = -1;
  std::string max_context_source;
  // Symbols of the dims that a context length binds: the cache's sequence
  // axis (past), the token input's sequence axis (seq) and the dims equal to
  // past + seq (an attention mask's); empty where the model fixes the dim.
  std::string past_dim, seq_dim;
  std::vector<std::string> total_dims;
  // At the bound shapes (whole batch): bytes of the cache inputs and outputs,
  // their sequence lengths, and the bytes one more token of context adds to
  // the cache (all tensors). -1 where the shapes are not known.
  int64_t past_bytes = -1, present_bytes = -1;
  int64_t past_length = -1, present_length = -1;
  int64_t bytes_per_token = -1;

  // The dims a step of `seq` new tokens after `past` cached ones binds: seq,
  // past and the totals (past + seq); only the symbols the model has.
  std::map<std::string, int64_t> bindings(int64_t seq, int64_t past) const;
};

// One step of a decoder at a context length: prefill (`tokens` = the prompt,
// nothing cached before) or one decode step (1 token, context - 1 cached).
struct DecoderView {
  std::string name;         // "prefill" or "decode"
  int64_t tokens = 0;       // tokens this step processes, per sequence
  int64_t batch = 1;        // sequences
  int64_t context = 0;      // context length after the step
  std::map<std::string, int64_t> bindings;  // the dims bound for this view
  AnalysisTotals totals;
  int64_t kv_read_bytes = 0, kv_written_bytes = 0;  // cache inputs read, outputs written
  int64_t attention_flops = 0;  // QK^T, AV, softmax, scale and mask (analyzer/decoder.cc)
  // Per token (of the whole batch): FLOPs; bytes moved = weights read once per
  // step + KV cache read + written; intensity = FLOPs / bytes moved.
  double flops_per_token() const;
  double bytes_per_token() const;
  double arithmetic_intensity() const;
  double attention_share() const;
};

struct DecoderAnalysis {
  int64_t context = 0, prompt = 0;
  KvCache kv_cache;  // at the decode step's bindings
  DecoderView prefill, decode;
};

// A graph input or output as bound and inferred: JSON {"name", "dtype",
// "dims"}, dims an integer, a symbol (string) or null each, null when the
// rank is unknown.
struct GraphValue {
  std::string name;
  std::string dtype;  // dtype_name()
  Shape shape;
  // "name: dtype dims", the human formats' line.
  std::string to_string() const;
};

struct AnalysisResult {
  std::string model_path;
  std::string producer;
  int64_t ir_version = 0;
  std::vector<OpsetImport> opsets;
  int64_t file_size_bytes = 0;
  std::vector<GraphValue> inputs, outputs;
  std::vector<NodeReport> nodes;             // execution order
  // The nodes inside If / Loop / Scan subgraphs that one run executes (the
  // If's selected or costlier branch), each named by its path
  // ("If_0/then_branch/Conv_3"), in order after their parent; `index` is the
  // top-level parent's. Their costs are as one run incurs them (a Loop body's
  // times its trip count) and are already in the parent's row: totals do not
  // add them again; coverage counts them.
  std::vector<NodeReport> subgraph_nodes;
  std::vector<OpTypeSummary> by_op_type;     // sorted by FLOPs, descending
  // --group-by: the rule as given ("" when none) and the top-level nodes summed
  // per group, in order of first appearance (apply_grouping, modelstat/grouping.hpp).
  std::string group_by;
  std::vector<NodeGroup> groups;
  std::vector<DTypeSize> size_by_dtype;      // sorted by bytes, descending
  std::vector<DTypeMacs> macs_by_dtype;      // sorted by MACs, descending; nodes with MACs only
  std::vector<SharedWeight> shared_weights;
  std::vector<std::string> unknown_dims;     // symbols/dims left unknown
  std::vector<std::string> notices;
  AnalysisTotals totals;
  // The KV cache when the graph has one (nullopt otherwise), and, with
  // --context, the prefill and decode views (analyze_decoder).
  std::optional<KvCache> kv_cache;
  std::optional<DecoderAnalysis> decoder;
  double analysis_seconds = 0;
  // The loaded IR the figures were computed from (analyze_file/analyze_buffer
  // and profile_model keep it; analyze_model leaves it empty, and a record
  // read back from JSON has none).
  std::shared_ptr<const Model> model;
};

// The whole pipeline for a file on disk.
AnalysisResult analyze_file(const std::string& path, const LoadOptions& options);
// The same on an in-memory model (external data resolved against base_dir; "" refuses it).
AnalysisResult analyze_buffer(const void* data, size_t size, const LoadOptions& options,
                              const std::string& base_dir = {});
// Loading alone: file -> validated, shape-bound, shape-inferred IR (what the
// profiler executes). Throws Error(Input) on a bad model.
Model load_model(const std::string& path, const LoadOptions& options);

namespace loader {
struct ModelSource;  // analyzer/loader/loader.hpp
}
// A model file read once (its graph without the weight payloads), bound to
// other dims as often as wanted without reading the file again: a batch
// sweep rebinds the batch of the model it profiles.
class ModelFile {
 public:
  // Reads `path` (Error(Input) on a bad file).
  explicit ModelFile(const std::string& path);
  // load_model(path(), options), from what was read.
  Model bind(const LoadOptions& options) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::shared_ptr<const loader::ModelSource> source_;
};
// How many model files this process has read (ModelFile, load_model,
// analyze_file each read one): what tests count.
int64_t model_files_read();
// Costing on an already-loaded model.
AnalysisResult analyze_model(const Model& model);

// `counted`: the analysis of the model bound with the shapes a run observed
// (LoadOptions::observed_shapes); `statically`: the same model's analysis
// without them. Marks each row (top-level and subgraph, matched by name)
// whose cost was unknown in `statically` and is exact in `counted` with
// cost.shapes = "observed", and returns how many it marked.
int64_t mark_observed_costs(const AnalysisResult& statically, AnalysisResult& counted);

// A decoder at a context length (--context): recognises the KV cache, binds
// past / seq / total for prefill (seq = prompt, past = 0) and one decode step
// (seq = 1, past = context - 1) on top of `options`, and analyses both. The
// result is the decode step's analysis with `decoder` set; the dims bound are
// named in its notices. Throws Error(Usage) when the model has no KV cache or
// a dim to bind cannot be identified (bind it with --dim instead).
AnalysisResult analyze_decoder(const std::string& path, const LoadOptions& options, int64_t context, int64_t prompt);

// The dims --context binds, identified on the model as `options` bind it:
// prefill (seq = prompt, past = 0, totals = prompt) and decode (seq = 1,
// past = context - 1, totals = context). Throws Error(Usage) as analyze_decoder.
struct DecoderBindings {
  KvCache cache;  // on the unbound model (symbols, no sizes)
  std::map<std::string, int64_t> prefill, decode;
  int64_t context = 0, prompt = 0;
  std::string describe() const;  // "--context 1024: decode binds past=1023, seq=1; prefill ..."
};
DecoderBindings decoder_bindings(const std::string& path, const LoadOptions& options, int64_t context, int64_t prompt);

// What find_kv_cache looks for, for an error when it finds none: "no KV cache
// recognised (looked for ...): name the pairs with --kv PAST=PRESENT".
extern const char* const kNoKvCacheRecognised;

// The KV cache of a loaded model; nullopt when it has none. `explicit_pairs`
// (--kv PAST=PRESENT), when given, is the cache: each pair must name a float
// graph input and a graph output of its dtype and rank (Error(Usage) naming
// the flag otherwise).
std::optional<KvCache> find_kv_cache(const Model& model,
                                     const std::vector<std::pair<std::string, std::string>>& explicit_pairs = {});

// Parse "1x3x224x224" (also "1,3,224,224"). Throws Error(Usage).
std::vector<int64_t> parse_shape_spec(const std::string& text);
// Parse "--input NAME:SHAPE" and "--dim NAME=VALUE" values into options. Throws Error(Usage).
void parse_input_spec(const std::string& spec, LoadOptions& options);
void parse_dim_spec(const std::string& spec, LoadOptions& options);
// "--branch NODE=then|else" and "--trip-count NODE=N". Throw Error(Usage).
void parse_branch_spec(const std::string& spec, LoadOptions& options);
void parse_trip_count_spec(const std::string& spec, LoadOptions& options);

}  // namespace modelstat
