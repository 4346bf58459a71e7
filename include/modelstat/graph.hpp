// modelstat's graph IR: what the analyzer and the profiler both work on.
// It holds names, dtypes, shapes and attributes, never weight bytes (small
// integer constants excepted: shape arithmetic needs their values).
// Dependency-light on purpose: no protobuf, ONNX or LibTorch here.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "modelstat/index_list.hpp"

namespace modelstat {

// Element types, numbered as ONNX's TensorProto.DataType so conversion is a cast.
enum class DType : int32_t {
  Undefined = 0, Float = 1, UInt8 = 2, Int8 = 3, UInt16 = 4, Int16 = 5,
  Int32 = 6, Int64 = 7, String = 8, Bool = 9, Float16 = 10, Double = 11,
  UInt32 = 12, UInt64 = 13, Complex64 = 14, Complex128 = 15, BFloat16 = 16,
};

const char* dtype_name(DType t);               // "float32", "int64", ...
int64_t dtype_size_bytes(DType t);            // 0 when not fixed-size (string)
bool dtype_is_floating(DType t);
// Whether an initializer of this type counts as parameters (see docs/COST_MODEL.md):
// floating-point and 8-bit (quantised) tensors do; wider integers are shape
// constants, indices or zero points and do not.
bool dtype_counts_as_params(DType t);

// A dim's symbol (an ONNX dim_param), interned: the process keeps one copy
// of each text, so a Dim is 16 bytes and copies without an allocation (it
// was 40 with a std::string, and a 100k-node graph has ~200,000 dims). Two
// symbols are the same text exactly when they hold the same pointer. The
// texts live until the process exits (a model has a handful).
class DimSymbol {
 public:
  DimSymbol() = default;
  DimSymbol(std::string_view text);                                 // NOLINT: implicit, as the
  DimSymbol(const std::string& text) : DimSymbol(std::string_view(text)) {}  // NOLINT: std::string
  DimSymbol(const char* text) : DimSymbol(std::string_view(text)) {}         // NOLINT: it replaces
  const std::string& str() const;  // "" for none
  bool empty() const { return text_ == nullptr; }

  friend bool operator==(DimSymbol a, DimSymbol b) { return a.text_ == b.text_; }
  friend bool operator!=(DimSymbol a, DimSymbol b) { return a.text_ != b.text_; }
  friend bool operator==(DimSymbol a, const std::string& b) { return a.str() == b; }
  friend bool operator!=(DimSymbol a, const std::string& b) { return a.str() != b; }
  friend bool operator==(const std::string& a, DimSymbol b) { return a == b.str(); }
  friend bool operator!=(const std::string& a, DimSymbol b) { return a != b.str(); }
  friend bool operator==(DimSymbol a, const char* b) { return a.str() == b; }
  friend bool operator!=(DimSymbol a, const char* b) { return a.str() != b; }
  friend std::ostream& operator<<(std::ostream& os, DimSymbol s);

 private:
  const std::string* text_ = nullptr;  // nullptr: no symbol
};

// One dimension: a known non-negative size, or unknown (with its symbol, if any).
struct Dim {
  int64_t value = -1;  // -1: unknown
  DimSymbol symbol;    // dim_param name when the model gave one
  bool known() const { return value >= 0; }
};

struct Shape {
  bool rank_known = false;
  std::vector<Dim> dims;

  bool fully_known() const;
  // Product of the dims; nullopt when a dim is unknown. Throws modelstat::Error
  // (Input) when the product overflows 64 bits.
  std::optional<int64_t> element_count() const;
  std::string to_string() const;  // "1x3x224x224", "batchx?x7", "?" for unknown rank
};

enum class TensorRole {
  Input,        // graph input fed by the user
  Initializer,  // graph initializer (a weight or a constant)
  Constant,     // output of a Constant node
  Activation,   // produced by a node
};

// Where an initializer's bytes live. The analyzer never reads them.
enum class DataLocation { None, Embedded, External, ExternalMissing };

// Where an executor finds a stripped embedded payload again: a TensorProto
// payload field (9 raw_data, 4 float_data, 10 double_data: raw little-endian
// bytes; 5 int32_data, 7 int64_data, 11 uint64_data: packed varints) at a
// byte range of the model file. The analyzer never reads it.
struct PayloadRef {
  int32_t field = 0;
  int64_t offset = 0;
  int64_t length = 0;
};

// A constant's bytes, for whoever needs values (the profiler): small embedded
// tensors carry them inline as raw little-endian elements; large ones say
// where they are.
struct ConstantBytes {
  bool has_inline = false;
  std::string inline_bytes;         // raw little-endian elements (<= 4 KiB tensors)
  std::vector<PayloadRef> payload;  // stripped embedded payload(s) in the model file
  bool payload_unlocatable = false; // legacy unpacked encoding: not located
};

// A part of a struct that few instances set, kept out of line: 8 bytes
// inline instead of sizeof(T), allocated when first written. Reads of an
// unset one see a default T. Copies are deep (value semantics).
template <typename T>
class OutOfLine {
 public:
  OutOfLine() = default;
  OutOfLine(const OutOfLine& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  OutOfLine(OutOfLine&&) noexcept = default;
  OutOfLine& operator=(const OutOfLine& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  OutOfLine& operator=(OutOfLine&&) noexcept = default;

  bool has_value() const { return p_ != nullptr; }
  const T& get() const {
    static const T kDefault{};
    return p_ ? *p_ : kDefault;
  }
  T& edit() {  // allocates on first write
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }

 private:
  std::unique_ptr<T> p_;
};

// Where a constant's bytes are: set for initializers and Constant outputs
// only (Tensor::storage), a few of a graph's tensors.
struct TensorStorage {
  std::string external_path;          // resolved path for External / ExternalMissing
  int64_t external_offset = 0;        // byte offset inside external_path
  int64_t external_length = -1;       // -1: the tensor's size
  ConstantBytes bytes;                // small embedded payloads inline, stripped ones located
};

// Fields ordered largest first: a 100,000-node graph holds 100k+ tensors
// (152 bytes each; 256 when the storage fields were inline).
struct Tensor {
  std::string name;
  Shape shape;
  std::vector<int64_t> int_values;    // values of small integer constants (shape math)
  IndexList consumers;                // node indices, in node order, one entry per use
  DType dtype = DType::Undefined;
  TensorRole role = TensorRole::Activation;
  DataLocation data_location = DataLocation::None;
  int producer = -1;                  // node index, -1 for inputs/initializers
  bool has_int_values = false;

  // Bytes of this tensor when its shape is known; nullopt otherwise.
  std::optional<int64_t> size_bytes() const;
  bool is_constant() const { return role == TensorRole::Initializer || role == TensorRole::Constant; }
  // Where its bytes are (external file, inline or stripped payload); an
  // empty TensorStorage for a tensor without any (activations, inputs).
  const TensorStorage& storage() const { return storage_.get(); }
  TensorStorage& mutable_storage() { return storage_.edit(); }

 private:
  OutOfLine<TensorStorage> storage_;
};

struct Graph;

// A node attribute. Tensor attributes keep only dtype and shape (plus small
// integer values); subgraphs are converted to Graphs.
struct AttrTensor {
  DType dtype = DType::Undefined;
  Shape shape;
  std::vector<int64_t> int_values;
  ConstantBytes bytes;
};
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, AttrTensor,
                               std::shared_ptr<Graph>, std::vector<std::shared_ptr<Graph>>>;

struct Node {
  std::string name;  // never empty: unnamed nodes get "<op>_<index>"
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  IndexList inputs;   // tensor indices; -1 for an omitted optional input
  IndexList outputs;  // tensor indices; -1 for an omitted optional output
  std::map<std::string, AttrValue> attributes;
  // Control flow as one run takes it, decided at load time: an If's branch
  // (0 then_branch, 1 else_branch; -1 unknown before running) and a Loop's
  // trip count (-1 unknown), from a condition / count the loader evaluates
  // or from --branch / --trip-count; `control_source` says which (a string
  // literal, static storage: 8 bytes a node instead of a std::string's 32 on
  // graphs of 100k nodes that have no control flow).
  int64_t trip_count = -1;
  const char* control_source = "";
  int if_branch = -1;

  const AttrValue* attr(const std::string& key) const;
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  double attr_float(const std::string& key, double fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key) const;  // empty when absent
  std::vector<std::shared_ptr<Graph>> subgraphs() const;
  // The same subgraphs, each with its label in a row name: the attribute's
  // name ("body", "then_branch"), with the position for a list attribute
  // ("branches[1]").
  std::vector<std::pair<std::string, std::shared_ptr<Graph>>> named_subgraphs() const;
};

// The row name of a node inside a subgraph: the row name of the node that
// holds the subgraph, the subgraph's label (Node::named_subgraphs), the
// node's name: "If_0/then_branch/Conv_3", "Loop_3/body/If_1/else_branch/Add_2".
// The analysis's rows (AnalysisResult::subgraph_nodes) and the profiler's
// (ProfileResult::subgraph_layers) are both named by it: the report joins
// them by this name.
std::string subgraph_node_path(const std::string& holder_path, const std::string& subgraph_label,
                               const std::string& node_name);

struct Graph {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;   // topologically sorted (execution order)
  std::vector<int> inputs;   // user-fed inputs (initializers excluded)
  std::vector<int> outputs;
  std::vector<int> initializers;
  // Names of tensors this (sub)graph reads from an enclosing scope.
  std::vector<std::string> outer_scope_inputs;

  int find_tensor(const std::string& name) const;  // -1 when absent
};

struct OpsetImport {
  std::string domain;
  int64_t version = 0;
};

struct Model {
  std::string path;
  int64_t ir_version = 0;
  std::string producer_name, producer_version;
  std::vector<OpsetImport> opsets;
  int64_t file_size_bytes = 0;
  Graph graph;
  // Things the user should know about how the model was read (skeleton
  // weights, defaulted batch dims, shape inference warnings...).
  std::vector<std::string> notices;
  // When a node output is left without a full shape: the first node that is
  // the cause and why (the loader's one line). The analysis adds it to its
  // notices when coverage is below 100%; "" when every shape is known or the
  // unknowns stem only from unbound input dims (a notice of their own).
  std::string unknown_shape_cause;

  int64_t opset_version(const std::string& domain) const;  // 0 when not imported
};

// The initializers a training step updates, indexed by tensor: the float
// initializers with elements, except the constants an exported graph carries
// that a framework never trains: BatchNormalization's running statistics
// (inputs 3 and 4; buffers), Clip's bounds (inputs 1 and 2), Pow's exponent,
// and one-element operands of Add, Sub, Mul and Div (the 0.5, 1 and sqrt(2)
// of an exported GELU, an epsilon). An initializer with any other use is
// trainable. Both `profile --train-step` and `fit --train` use this rule.
std::vector<bool> trainable_initializers(const Graph& g);

}  // namespace modelstat
