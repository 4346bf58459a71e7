// Op classes of the fit forecast's latency (docs/FIT.md, "Latency"): which
// nodes are contractions priced on the matmul curve and at what equivalent
// square-GEMM size, which measured op class (DeviceCeilings::op_costs) prices
// a node, and the bytes it is priced at. Shape questions only; no prices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "modelstat/analysis.hpp"
#include "modelstat/graph.hpp"

namespace modelstat::fit {

// A node with multiply-accumulates: priced on the matmul curve.
bool is_contraction(const NodeReport& r);
bool is_gemm_or_matmul(const Node& n);
// Bytes of tensor t (0 when unknown or t < 0).
int64_t tensor_bytes(const Graph& g, int t);
// The dims of a fully known shape; empty when any is unknown.
std::vector<int64_t> known_dims(const Shape& s);
// n_eff = 3 / (1/M + 1/N + 1/K) of one of the node's products (see op_classes.cc).
double equivalent_gemm_n(const Graph& g, const Node& n, int64_t macs);
// How the CPU executor holds 4-D activation t for inference (see op_classes.cc):
// channels-last as a Conv group writes it, in a form a Conv group must copy
// channels-last first (fed NCHW, reshaped), or not known.
enum class HeldLayout { ChannelsLast, NeedsCopy, Unknown };
HeldLayout held_layout(const Graph& g, int t);
// The measured op class a node belongs to ("" for dense contractions).
std::string op_cost_key(const Graph& g, const Node& n);
// The dense contraction class whose backward / forward ratio prices its backward.
std::string dense_class(const Graph& g, const Node& n);
// The bytes a node of a measured class is priced at (a pool's taps, not its bytes).
double class_bytes(const Graph& g, const Node& n, double bytes);

}  // namespace modelstat::fit
