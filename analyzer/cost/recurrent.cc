// Recurrent layers: RNN, GRU, LSTM. Shapes come from W [dirs, gates*hidden, input]
// and R [dirs, gates*hidden, hidden]; the sequence length and batch from X
// ([seq, batch, input], or [batch, seq, input] with layout=1, opset 14).
// The full seq_length is counted (sequence_lens is ignored: an upper bound), and
// the default activations' constants are used whatever `activations` says.
#include <string>

#include "analyzer/cost/cost_helpers.hpp"

namespace modelstat::cost {
namespace {

struct RecurrentKind {
  const char* rule;
  int64_t gates;
  int64_t elementwise_per_unit;  // FLOPs per (direction, step, batch row, hidden unit)
};

// LSTM: 3 sigmoid gates (4 each) + tanh candidate (1) + c = f*c + i*g (3) +
//       h = o*tanh(c) (2) = 18.
// GRU:  2 sigmoid gates (4 each) + candidate r*(h R) + add + tanh (3) +
//       h = (1-z)*h~ + z*h (4) = 15.
// RNN:  tanh (1) = 1.
constexpr RecurrentKind kLstm{"lstm", 4, 18};
constexpr RecurrentKind kGru{"gru", 3, 15};
constexpr RecurrentKind kRnn{"rnn", 1, 1};

RuleResult recurrent_cost(const CostContext& ctx, const RecurrentKind& kind) {
  auto x = ctx.input_dims(0);
  auto w = ctx.input_dims(1);
  auto r = ctx.input_dims(2);
  if (!x || !w || !r) return RuleResult::unknown_shape(kind.rule, "X, W or R shape unknown");
  if (x->size() != 3 || w->size() != 3 || r->size() != 3)
    return RuleResult::unknown_shape(kind.rule, "X, W and R must be 3-D");
  const Node& node = ctx.node();
  const int64_t directions = (*w)[0];
  const int64_t hidden = (*r)[2];
  const int64_t input_size = (*w)[2];
  if ((*w)[1] != checked_mul(kind.gates, hidden, node) || (*r)[1] != (*w)[1] || (*r)[0] != directions)
    return RuleResult::unknown_shape(kind.rule, "W and R dims do not match gates*hidden_size");
  const bool batch_first = node.attr_int("layout", 0) == 1;
  const int64_t seq = batch_first ? (*x)[1] : (*x)[0];
  const int64_t batch = batch_first ? (*x)[0] : (*x)[1];
  if ((*x)[2] != input_size) return RuleResult::unknown_shape(kind.rule, "X and W input sizes disagree");

  // Units: one (direction, step, batch row, hidden unit).
  const int64_t units = checked_product({directions, seq, batch, hidden}, node);
  const int64_t macs =
      checked_mul(checked_mul(units, kind.gates, node), checked_add(input_size, hidden, node), node);
  int64_t per_unit = kind.elementwise_per_unit;
  if (ctx.input(3)) per_unit += 2 * kind.gates;             // Wb and Rb adds
  if (kind.gates == 4 && ctx.input(7)) per_unit += 6;      // LSTM peepholes: 3 multiply-adds
  const int64_t flops = checked_add(checked_mul(2, macs, node), checked_mul(units, per_unit, node), node);
  return exact(kind.rule, macs, flops);
}

RuleResult lstm(const CostContext& ctx) { return recurrent_cost(ctx, kLstm); }
RuleResult gru(const CostContext& ctx) { return recurrent_cost(ctx, kGru); }
RuleResult rnn(const CostContext& ctx) { return recurrent_cost(ctx, kRnn); }

}  // namespace

void add_recurrent_rules(std::vector<CostRule>& rules) {
  static const OpRow kRows[] = {
      {"LSTM", 1, lstm,
       "MACs = dirs*seq*batch*4*hidden*(input+hidden); FLOPs = 2*MACs + dirs*seq*batch*hidden*"
       "(18 + (B ? 8 : 0) + (P ? 6 : 0))"},
      {"GRU", 1, gru,
       "MACs = dirs*seq*batch*3*hidden*(input+hidden); FLOPs = 2*MACs + dirs*seq*batch*hidden*"
       "(15 + (B ? 6 : 0))"},
      {"RNN", 1, rnn,
       "MACs = dirs*seq*batch*hidden*(input+hidden); FLOPs = 2*MACs + dirs*seq*batch*hidden*"
       "(1 + (B ? 2 : 0))"},
  };
  add_rows(rules, kRows);
}

}  // namespace modelstat::cost
