// Matrix products: Gemm, MatMul (batched, broadcast, 1-D operands), their
// quantised forms, Einsum, and Det.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "analyzer/cost/cost_helpers.hpp"
#include "analyzer/cost/shape_rule_helpers.hpp"

namespace modelstat::cost {
namespace {

// Gemm: Y = alpha * op(A) @ op(B) + beta * C with A [M,K], B [K,N] after transposes.
// MACs = M*N*K; FLOPs = 2*MACs + (C ? M*N : 0) + (alpha != 1 ? M*N : 0)
//        + (C && beta != 1 ? M*N : 0).
// extra_per_output: FLOPs of work fused after the product (FusedGemm's activation).
RuleResult gemm_cost(const CostContext& ctx, int64_t extra_per_output) {
  const char* rule = "gemm";
  auto a = ctx.input_dims(0);
  auto b = ctx.input_dims(1);
  if (!a || !b) return RuleResult::unknown_shape(rule, "A or B shape unknown");
  if (a->size() != 2 || b->size() != 2) return RuleResult::unknown_shape(rule, "A and B must be 2-D");
  const Node& node = ctx.node();
  const bool trans_a = node.attr_int("transA", 0) != 0;
  const bool trans_b = node.attr_int("transB", 0) != 0;
  const int64_t m = trans_a ? (*a)[1] : (*a)[0];
  const int64_t k = trans_a ? (*a)[0] : (*a)[1];
  const int64_t k_b = trans_b ? (*b)[1] : (*b)[0];
  const int64_t n = trans_b ? (*b)[0] : (*b)[1];
  if (k != k_b) return RuleResult::unknown_shape(rule, "inner dims of A and B disagree");
  const int64_t mn = checked_mul(m, n, node);
  const int64_t macs = checked_mul(mn, k, node);
  int64_t flops = checked_mul(2, macs, node);
  const bool has_c = ctx.input(2) != nullptr;
  if (has_c) flops = checked_add(flops, mn, node);
  if (node.attr_float("alpha", 1.0) != 1.0) flops = checked_add(flops, mn, node);
  if (has_c && node.attr_float("beta", 1.0) != 1.0) flops = checked_add(flops, mn, node);
  if (extra_per_output) flops = checked_add(flops, checked_mul(extra_per_output, mn, node), node);
  return exact(rule, macs, flops);
}

RuleResult gemm(const CostContext& ctx) {
  return gemm_cost(ctx, 0);
}

// com.microsoft FusedGemm: Gemm, then its `activation` on every output element,
// counted as the activation's own record counts it.
RuleResult fused_gemm(const CostContext& ctx) {
  const std::string activation = ctx.node().attr_string("activation", "");
  auto per_element = activation_flops_per_element(activation);
  if (!per_element)
    return RuleResult::unknown_shape("gemm", "activation '" + activation + "' has no elementwise record");
  return gemm_cost(ctx, *per_element);
}

// numpy matmul of operands shaped a and b: MACs = prod(broadcast batch dims) *
// M * N * K; FLOPs = 2*MACs + extra_per_output per output element.
RuleResult matmul_of(const CostContext& ctx, std::optional<std::vector<int64_t>> a,
                     std::optional<std::vector<int64_t>> b, int64_t requant_per_output) {
  const char* rule = "matmul";
  if (!a || !b) return RuleResult::unknown_shape(rule, "operand shape unknown");
  if (a->empty() || b->empty()) return RuleResult::unknown_shape(rule, "scalar operand");
  // 1-D operands: A [K] is [1,K] with M dropped; B [K] is [K,1] with N dropped.
  if (a->size() == 1) a->insert(a->begin(), 1);
  if (b->size() == 1) b->push_back(1);
  const int64_t m = (*a)[a->size() - 2], k = (*a)[a->size() - 1];
  const int64_t k_b = (*b)[b->size() - 2], n = (*b)[b->size() - 1];
  if (k != k_b) return RuleResult::unknown_shape(rule, "inner dims disagree");
  auto batch = broadcast_shapes(std::vector<int64_t>(a->begin(), a->end() - 2),
                                std::vector<int64_t>(b->begin(), b->end() - 2));
  if (!batch) return RuleResult::unknown_shape(rule, "batch dims do not broadcast");
  const Node& node = ctx.node();
  const int64_t outputs = checked_mul(checked_product(*batch, node), checked_mul(m, n, node), node);
  const int64_t macs = checked_mul(outputs, k, node);
  int64_t flops = checked_mul(2, macs, node);
  if (requant_per_output)
    flops = checked_add(flops, checked_mul(requant_per_output, outputs, node), node);
  return exact(rule, macs, flops);
}

RuleResult matmul_cost(const CostContext& ctx, size_t a_index, size_t b_index, int64_t requant_per_output) {
  return matmul_of(ctx, ctx.input_dims(a_index), ctx.input_dims(b_index), requant_per_output);
}

RuleResult matmul(const CostContext& ctx) { return matmul_cost(ctx, 0, 1, 0); }
RuleResult qlinear_matmul(const CostContext& ctx) { return matmul_cost(ctx, 0, 3, 2); }

// FusedMatMul's operand as multiplied: transBatch moves dim 0 to the
// second-to-last place ([d0, d1.., M, K] -> [d1.., M, d0, K], as ONNX Runtime
// does), then trans swaps the last two dims.
std::optional<std::vector<int64_t>> fused_operand(std::optional<std::vector<int64_t>> dims, bool trans_batch,
                                                  bool trans) {
  if (!dims) return dims;
  const size_t rank = dims->size();
  if (trans_batch && rank >= 3) std::rotate(dims->begin(), dims->begin() + 1, dims->end() - 1);
  if (trans && rank >= 2) std::swap((*dims)[rank - 2], (*dims)[rank - 1]);
  return dims;
}

// com.microsoft FusedMatMul: alpha * op(A) @ op(B): as MatMul, + 1 per output
// element when alpha != 1.
RuleResult fused_matmul(const CostContext& ctx) {
  const Node& node = ctx.node();
  auto a =
      fused_operand(ctx.input_dims(0), node.attr_int("transBatchA", 0) != 0, node.attr_int("transA", 0) != 0);
  auto b =
      fused_operand(ctx.input_dims(1), node.attr_int("transBatchB", 0) != 0, node.attr_int("transB", 0) != 0);
  return matmul_of(ctx, a, b, node.attr_float("alpha", 1.0) != 1.0 ? 1 : 0);
}

// com.microsoft MatMulNBits: A [..., K] times the dequantised weight [K, N]
// (stored as N rows of K `bits`-bit values): MACs = rows * K * N (rows = the
// product of A's leading dims); FLOPs = 2*MACs + 2*N*K (dequantising each
// weight once: subtract its zero point, multiply by its scale) + (bias ? rows*N : 0).
RuleResult matmul_nbits(const CostContext& ctx) {
  const char* rule = "matmul_nbits";
  const Node& node = ctx.node();
  const int64_t k = node.attr_int("K", 0), n = node.attr_int("N", 0);
  if (k < 1 || n < 1) return RuleResult::unknown_shape(rule, "attributes K and N must be positive");
  auto a = ctx.input_dims(0);
  if (!a) return RuleResult::unknown_shape(rule, "A's shape unknown");
  if (a->empty() || a->back() != k) return RuleResult::unknown_shape(rule, "A's last dim is not K");
  const int64_t rows = checked_product(std::vector<int64_t>(a->begin(), a->end() - 1), node);
  const int64_t outputs = checked_mul(rows, n, node);
  const int64_t weights = checked_mul(n, k, node);
  const int64_t macs = checked_mul(outputs, k, node);
  int64_t flops = checked_add(checked_mul(2, macs, node), checked_mul(2, weights, node), node);
  if (ctx.input(5)) flops = checked_add(flops, outputs, node);
  return exact(rule, macs, flops);
}

namespace shape = cost::shape;

// FusedMatMul: numpy matmul of the operands as fused_operand() arranges them.
void fused_matmul_shape(onnx::InferenceContext& ctx) {
  const auto* a = shape::input_shape(ctx, 0);
  const auto* b = shape::input_shape(ctx, 1);
  if (!a || !b) return;
  auto arrange = [&](const onnx::TensorShapeProto& s, const char* batch_attr, const char* trans_attr) {
    std::vector<shape::Dim> d(s.dim().begin(), s.dim().end());
    if (shape::attr_int(ctx, batch_attr, 0) && d.size() >= 3)
      std::rotate(d.begin(), d.begin() + 1, d.end() - 1);
    if (shape::attr_int(ctx, trans_attr, 0) && d.size() >= 2) std::swap(d[d.size() - 2], d[d.size() - 1]);
    return d;
  };
  std::vector<shape::Dim> da = arrange(*a, "transBatchA", "transA"),
                          db = arrange(*b, "transBatchB", "transB");
  if (da.empty() || db.empty()) fail_shape_inference("FusedMatMul needs operands of rank >= 1");
  const bool a_vector = da.size() == 1, b_vector = db.size() == 1;
  if (a_vector) da.insert(da.begin(), shape::known(1));
  if (b_vector) db.push_back(shape::known(1));
  // Batch dims broadcast from the right; a known 1 gives way to the other.
  std::vector<shape::Dim> out;
  const size_t batch_a = da.size() - 2, batch_b = db.size() - 2, batch = std::max(batch_a, batch_b);
  for (size_t i = 0; i < batch; ++i) {
    const shape::Dim* x = i + batch_a >= batch ? &da[i + batch_a - batch] : nullptr;
    const shape::Dim* y = i + batch_b >= batch ? &db[i + batch_b - batch] : nullptr;
    if (!x || (shape::value(*x) == 1 && y)) {
      out.push_back(*y);
    } else if (!y || shape::value(*y) == 1) {
      out.push_back(*x);
    } else {
      if (shape::value(*x) && shape::value(*y) && *shape::value(*x) != *shape::value(*y))
        fail_shape_inference("batch dims ", *shape::value(*x), " and ", *shape::value(*y),
                             " do not broadcast");
      out.push_back(shape::value(*x) ? *x : *y);
    }
  }
  if (!a_vector) out.push_back(da[da.size() - 2]);
  if (!b_vector) out.push_back(db.back());
  shape::set_output(ctx, 0, 0, out);
}

// FusedGemm: Gemm's inference (opset 13).
void fused_gemm_shape(onnx::InferenceContext& ctx) {
  shape::infer_as(ctx, "Gemm", 13);
}

// MatMulNBits: A's dims with the last one N, in A's type; A's last dim must be K.
void matmul_nbits_shape(onnx::InferenceContext& ctx) {
  const auto* a = shape::input_shape(ctx, 0);
  if (!a) return;
  if (a->dim_size() < 1) fail_shape_inference("A must have rank >= 1");
  const int64_t k = shape::attr_int(ctx, "K", 0), n = shape::attr_int(ctx, "N", 0);
  const auto a_k = shape::value(a->dim(a->dim_size() - 1));
  if (a_k && *a_k != k) fail_shape_inference("A's last dim ", *a_k, " is not K = ", k);
  std::vector<shape::Dim> dims(a->dim().begin(), a->dim().end() - 1);
  dims.push_back(n > 0 ? shape::known(n) : shape::unknown());
  shape::set_output(ctx, 0, 0, dims);
}

// ---- Einsum ----------------------------------------------------------------

// One operand's subscripts. Letters are kept as chars; the ellipsis expands to
// pseudo-indices 0..n-1 counted from the right (stored as negative keys so they
// cannot clash with letters).
struct Term {
  std::string letters_before, letters_after;  // around the ellipsis
  bool ellipsis = false;
};

std::optional<Term> parse_term(const std::string& text) {
  Term t;
  const auto pos = text.find("...");
  if (pos != std::string::npos) {
    t.ellipsis = true;
    t.letters_before = text.substr(0, pos);
    t.letters_after = text.substr(pos + 3);
  } else {
    t.letters_before = text;
  }
  for (const std::string* s : {&t.letters_before, &t.letters_after})
    for (char c : *s)
      if (!std::isalpha(static_cast<unsigned char>(c))) return std::nullopt;
  return t;
}

RuleResult einsum(const CostContext& ctx) {
  const char* rule = "einsum";
  std::string equation;
  for (char c : ctx.node().attr_string("equation", ""))
    if (!std::isspace(static_cast<unsigned char>(c))) equation += c;
  if (equation.empty()) return RuleResult::unknown_shape(rule, "missing equation");

  const auto arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    auto term = parse_term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!term) return RuleResult::unknown_shape(rule, "cannot parse equation '" + equation + "'");
    terms.push_back(*term);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.num_inputs())
    return RuleResult::unknown_shape(rule, "equation and input count disagree");

  // Index sizes: letters as their char code, ellipsis dims as -(1 + position from the right).
  std::map<int, int64_t> size_of;
  std::map<int, int> uses;  // how many times an index appears across the inputs
  auto bind = [&](int key, int64_t dim) {
    auto [it, inserted] = size_of.emplace(key, dim);
    if (!inserted && it->second != dim) {
      if (it->second == 1)
        it->second = dim;  // broadcast
      else if (dim != 1)
        return false;
    }
    ++uses[key];
    return true;
  };
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    auto dims = ctx.input_dims(i);
    if (!dims) return RuleResult::unknown_shape(rule, "input " + std::to_string(i) + " shape unknown");
    const Term& t = terms[i];
    const size_t named = t.letters_before.size() + t.letters_after.size();
    if (dims->size() < named || (!t.ellipsis && dims->size() != named))
      return RuleResult::unknown_shape(rule, "input rank does not match its subscripts");
    const size_t n_ellipsis = dims->size() - named;
    ellipsis_rank = std::max<int64_t>(ellipsis_rank, int64_t(n_ellipsis));
    size_t d = 0;
    bool ok = true;
    for (char c : t.letters_before) ok = ok && bind(c, (*dims)[d++]);
    for (size_t e = 0; e < n_ellipsis; ++e, ++d) ok = ok && bind(-int(n_ellipsis - e), (*dims)[d]);
    for (char c : t.letters_after) ok = ok && bind(c, (*dims)[d++]);
    if (!ok) return RuleResult::unknown_shape(rule, "subscript sizes disagree");
  }

  // Output indices: explicit after "->", else letters used exactly once plus the ellipsis.
  std::map<int, bool> in_output;
  if (arrow != std::string::npos) {
    auto out = parse_term(equation.substr(arrow + 2));
    if (!out) return RuleResult::unknown_shape(rule, "cannot parse equation output");
    for (const std::string* s : {&out->letters_before, &out->letters_after})
      for (char c : *s) {
        if (!size_of.count(c)) return RuleResult::unknown_shape(rule, "output subscript not in inputs");
        in_output[c] = true;
      }
    if (out->ellipsis)
      for (int64_t e = 1; e <= ellipsis_rank; ++e) in_output[-int(e)] = true;
  } else {
    for (const auto& [key, count] : uses)
      if (key < 0 || count == 1) in_output[key] = true;
  }

  bool reduces = false;
  for (const auto& [key, size] : size_of)
    if (!in_output.count(key)) reduces = true;
  // Repeated index within one operand (trace/diagonal) is already one index.
  const Node& node = ctx.node();
  int64_t all_indices = 1;
  for (const auto& [key, size] : size_of) all_indices = checked_mul(all_indices, size, node);

  const int64_t operands = int64_t(terms.size());
  if (operands == 1) {
    // Transpose/diagonal moves data; a reduction adds every input element once.
    if (!reduces) return exact(rule, 0, 0, "single operand, no reduction: data movement");
    auto in_elements = ctx.input_elements(0);
    return exact(rule, 0, in_elements ? *in_elements : 0);
  }
  // (operands-1) multiplies per term of the full index space.
  const int64_t multiplies = checked_mul(operands - 1, all_indices, node);
  if (!reduces) return exact(rule, 0, multiplies, "no summed index: elementwise products");
  return exact(rule, multiplies, checked_mul(2, multiplies, node));
}

// Det of [*, M, M]: LU factorisation, 2*M^3/3 FLOPs per matrix (rounded down).
RuleResult det(const CostContext& ctx) {
  const char* rule = "det";
  auto x = ctx.input_dims(0);
  if (!x) return RuleResult::unknown_shape(rule, "input shape unknown");
  if (x->size() < 2 || (*x)[x->size() - 1] != (*x)[x->size() - 2])
    return RuleResult::unknown_shape(rule, "input is not a stack of square matrices");
  const Node& node = ctx.node();
  const int64_t m = x->back();
  const int64_t batch = checked_product(std::vector<int64_t>(x->begin(), x->end() - 2), node);
  const int64_t per_matrix = checked_mul(checked_mul(m, m, node), m, node) / 3 * 2;
  return exact(rule, 0, checked_mul(batch, per_matrix, node));
}

}  // namespace

void add_gemm_matmul_rules(std::vector<CostRule>& rules) {
  static const OpRow kRows[] = {
      {"Gemm", 1, gemm,
       "MACs = M*N*K; FLOPs = 2*MACs + (C ? M*N : 0) + (alpha != 1 ? M*N : 0) + "
       "(C and beta != 1 ? M*N : 0)",
       OpTraits{}.dense(DenseFamily::Gemm)},
      {"MatMul", 1, matmul,
       "numpy matmul (1-D operands promoted): MACs = prod(broadcast batch dims)*M*N*K; "
       "FLOPs = 2*MACs",
       OpTraits{}.dense(DenseFamily::Gemm)},
      {"MatMulInteger", 10, matmul, "as MatMul (integer MACs); zero points not counted"},
      {"QLinearMatMul", 10, qlinear_matmul,
       "as MatMul (integer MACs); FLOPs = 2*MACs + 2 per output element (requantisation)"},
      {"Einsum", 12, einsum,
       "2+ operands with a summed index: MACs = (operands-1)*prod(sizes of all distinct "
       "indices), FLOPs = 2*MACs; nothing summed: FLOPs = (operands-1)*prod(sizes); one "
       "operand: FLOPs = input elements if it reduces, else 0"},
      {"Det", 11, det, "LU factorisation: FLOPs = batch * 2*M^3/3"},
      // ONNX Runtime's fused and weight-quantised contractions (com.microsoft).
      {"FusedMatMul", 1, fused_matmul,
       "as MatMul on the operands after transBatchA/B (dim 0 moved before the last two) and transA/B: "
       "MACs = prod(broadcast batch dims)*M*N*K; FLOPs = 2*MACs + (alpha != 1 ? outputs : 0)",
       OpTraits{}.shape(fused_matmul_shape).dense(DenseFamily::Gemm), nullptr, "com.microsoft"},
      {"FusedGemm", 1, fused_gemm,
       "as Gemm + the activation's own per-element count on each of the M*N outputs",
       OpTraits{}.shape(fused_gemm_shape).dense(DenseFamily::Gemm), nullptr, "com.microsoft"},
      {"MatMulNBits", 1, matmul_nbits,
       "MACs = rows*K*N (rows = product of A's leading dims); FLOPs = 2*MACs + 2*N*K (dequantise each weight "
       "once: subtract zero point, multiply scale) + (bias ? rows*N : 0); params: B's values (bytes*8/bits: "
       "N*K, blocks padded), not its bytes",
       OpTraits{}
           .shape(matmul_nbits_shape)
           .packed_weight(1)
           .constant_input(1)
           .constant_input(2)
           .constant_input(3)
           .constant_input(4)
           .dense(DenseFamily::Gemm),
       nullptr, "com.microsoft"},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost
