#include "modelstat/graph.hpp"

#include <charconv>
#include <mutex>
#include <ostream>
#include <unordered_set>

#include "analyzer/op_traits.hpp"

#include "modelstat/error.hpp"
#include "modelstat/op_key.hpp"

namespace modelstat {

namespace {
// DimSymbol's texts: one copy of each for the process, never freed (a
// symbol may be read during static destruction; node addresses of an
// unordered_set stay put as it grows).
struct SymbolPool {
  std::mutex mutex;
  std::unordered_set<std::string> texts;
};
SymbolPool& symbol_pool() {
  static SymbolPool* pool = new SymbolPool;
  return *pool;
}
}  // namespace

DimSymbol::DimSymbol(std::string_view text) {
  if (text.empty()) return;
  // A model's dims name the same few symbols over and over: the last one
  // this thread interned, without the lock.
  thread_local const std::string* last = nullptr;
  if (last && *last == text) {
    text_ = last;
    return;
  }
  SymbolPool& pool = symbol_pool();
  const std::lock_guard<std::mutex> lock(pool.mutex);
  text_ = &*pool.texts.emplace(text).first;
  last = text_;
}

const std::string& DimSymbol::str() const {
  static const std::string kNone;
  return text_ ? *text_ : kNone;
}

std::ostream& operator<<(std::ostream& os, DimSymbol s) { return os << s.str(); }

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float: return "float32";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Double: return "float64";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::BFloat16: return "bfloat16";
    case DType::Undefined: break;
  }
  return "undefined";
}

int64_t dtype_size_bytes(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8: return 1;
    case DType::UInt16:
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Float:
    case DType::Int32:
    case DType::UInt32: return 4;
    case DType::Int64:
    case DType::UInt64:
    case DType::Double:
    case DType::Complex64: return 8;
    case DType::Complex128: return 16;
    case DType::String:
    case DType::Undefined: break;
  }
  return 0;
}

bool dtype_is_floating(DType t) {
  return t == DType::Float || t == DType::Float16 || t == DType::BFloat16 || t == DType::Double;
}

bool dtype_counts_as_params(DType t) {
  return dtype_is_floating(t) || t == DType::Int8 || t == DType::UInt8;
}

bool Shape::fully_known() const {
  if (!rank_known) return false;
  for (const auto& d : dims)
    if (!d.known()) return false;
  return true;
}

std::optional<int64_t> Shape::element_count() const {
  if (!fully_known()) return std::nullopt;
  int64_t n = 1;
  for (const auto& d : dims) {
    if (__builtin_mul_overflow(n, d.value, &n))
      throw_input("element count overflows 64 bits: shape " + to_string() + " has more than 2^63 elements");
  }
  return n;
}

std::string Shape::to_string() const {
  if (!rank_known) return "?";
  if (dims.empty()) return "scalar";
  // Built in a stack buffer and copied once: most shapes fit the string's
  // own small buffer and never touch the heap.
  char buf[256];
  size_t n = 0;
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (n + 48 > sizeof buf) {  // room for 'x', a 20-digit value or a flush
      s.append(buf, n);
      n = 0;
    }
    if (i) buf[n++] = 'x';
    if (dims[i].known()) {
      n = size_t(std::to_chars(buf + n, buf + sizeof buf, dims[i].value).ptr - buf);
    } else {
      s.append(buf, n);
      n = 0;
      s += dims[i].symbol.empty() ? std::string_view("?") : std::string_view(dims[i].symbol.str());
    }
  }
  s.append(buf, n);
  return s;
}

std::optional<int64_t> Tensor::size_bytes() const {
  auto n = shape.element_count();
  if (!n) return std::nullopt;
  int64_t bytes = 0;
  if (__builtin_mul_overflow(*n, dtype_size_bytes(dtype), &bytes))
    throw_input("size overflows 64 bits: tensor '" + name + "' is larger than 2^63 bytes");
  return bytes;
}

const AttrValue* Node::attr(const std::string& key) const {
  auto it = attributes.find(key);
  return it == attributes.end() ? nullptr : &it->second;
}

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  if (auto* v = attr(key))
    if (auto* i = std::get_if<int64_t>(v)) return *i;
  return fallback;
}

double Node::attr_float(const std::string& key, double fallback) const {
  if (auto* v = attr(key)) {
    if (auto* f = std::get_if<double>(v)) return *f;
    if (auto* i = std::get_if<int64_t>(v)) return double(*i);
  }
  return fallback;
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  if (auto* v = attr(key))
    if (auto* s = std::get_if<std::string>(v)) return *s;
  return fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key) const {
  if (auto* v = attr(key)) {
    if (auto* i = std::get_if<std::vector<int64_t>>(v)) return *i;
    if (auto* one = std::get_if<int64_t>(v)) return {*one};
  }
  return {};
}

std::vector<std::shared_ptr<Graph>> Node::subgraphs() const {
  std::vector<std::shared_ptr<Graph>> out;
  for (const auto& [key, value] : attributes) {
    if (auto* g = std::get_if<std::shared_ptr<Graph>>(&value)) {
      if (*g) out.push_back(*g);
    } else if (auto* gs = std::get_if<std::vector<std::shared_ptr<Graph>>>(&value)) {
      for (const auto& sub : *gs)
        if (sub) out.push_back(sub);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Graph>>> Node::named_subgraphs() const {
  std::vector<std::pair<std::string, std::shared_ptr<Graph>>> out;
  for (const auto& [key, value] : attributes) {
    if (auto* g = std::get_if<std::shared_ptr<Graph>>(&value)) {
      if (*g) out.emplace_back(key, *g);
    } else if (auto* gs = std::get_if<std::vector<std::shared_ptr<Graph>>>(&value)) {
      for (size_t k = 0; k < gs->size(); ++k)
        if ((*gs)[k]) out.emplace_back(key + "[" + std::to_string(k) + "]", (*gs)[k]);
    }
  }
  return out;
}

std::string subgraph_node_path(const std::string& holder_path, const std::string& subgraph_label,
                               const std::string& node_name) {
  return holder_path + "/" + subgraph_label + "/" + node_name;
}

int Graph::find_tensor(const std::string& tensor_name) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == tensor_name) return int(i);
  return -1;
}

int64_t Model::opset_version(const std::string& domain) const {
  for (const auto& o : opsets)
    if (normalize_domain(o.domain) == normalize_domain(domain)) return o.version;
  return 0;
}

std::vector<bool> trainable_initializers(const Graph& g) {
  std::vector<bool> candidate(g.tensors.size(), false), other_use(g.tensors.size(), false);
  for (int t : g.initializers) {
    const Tensor& w = g.tensors[size_t(t)];
    candidate[size_t(t)] = dtype_is_floating(w.dtype) && w.shape.element_count().value_or(0) > 0;
  }
  for (const Node& n : g.nodes) {
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int t = n.inputs[k];
      if (t < 0 || !candidate[size_t(t)]) continue;
      const bool constant_use = op_input_is_constant(g, n, k);
      if (!constant_use) other_use[size_t(t)] = true;
    }
  }
  std::vector<bool> trainable(g.tensors.size(), false);
  for (size_t t = 0; t < g.tensors.size(); ++t) trainable[t] = candidate[t] && other_use[t];
  return trainable;
}

}  // namespace modelstat
