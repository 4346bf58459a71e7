// Data-driven checks of the cost rules. Every expected value is computed by
// hand in the comment beside it (never by calling the code under test), from
// the conventions in docs/COST_MODEL.md.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analyzer/cost/cost_rule.hpp"
#include "modelstat/error.hpp"
#include "op_cases.hpp"
#include "test_support.hpp"

namespace modelstat {
namespace {

using test::NodeBuilder;
using test::run_cost_rule;
using Ints = std::vector<int64_t>;

AttrValue ints(Ints v) { return AttrValue{std::move(v)}; }
AttrValue str(const char* s) { return AttrValue{std::string(s)}; }
AttrValue i64(int64_t v) { return AttrValue{v}; }

// ---------------------------------------------------------------------------
// Exact cases: {name, graph, MACs, FLOPs, opset, bytes}. Every registered rule
// has at least one (RuleCoverage.EveryRuleHasAnExactCase checks it).

// What the rule says about bytes (docs/COST_MODEL.md, "Byte overrides").
enum class Bytes {
  Default,   // no override: inputs read, outputs written
  NoneRead,  // reads 0 bytes (metadata only / Constant), output written as usual
  NoneMoved,  // reads and writes 0 bytes (views; control flow, whose subgraph carries the bytes)
  Selected    // reads `read_bytes` (Gather*: the selected elements + indices), output written as usual
};

struct ExactCase {
  std::string name;
  Graph graph;
  int64_t macs = 0;
  int64_t flops = 0;
  int64_t opset = 17;
  Bytes bytes = Bytes::Default;
  int64_t read_bytes = 0;  // with Bytes::Selected
};
// gtest prints parameters in test listings; the name says it all.
void PrintTo(const ExactCase& c, std::ostream* os) { *os << c.name; }

// ONNX Runtime's contrib ops (com.microsoft, opset 1) and the RMS norms:
// fused ops count the ops they fuse (docs/COST_MODEL.md).
void add_contrib_misc_cases(std::vector<ExactCase>& c) {
  const char* ms = "com.microsoft";
  // SkipLayerNormalization [2,4,8] = 64 elements: skip add 1 + bias add 1 + layer norm 8 = 10 -> 640;
  // without bias (beta given, bias omitted) 9 -> 576.
  c.push_back({"skip_layer_norm_bias",
               NodeBuilder("SkipLayerNormalization", ms)
                   .input({2, 4, 8})
                   .input({2, 4, 8})
                   .weight({8})
                   .weight({8})
                   .weight({8})
                   .output({2, 4, 8})
                   .build(),
               0, 640, 1});
  c.push_back({"skip_layer_norm_no_bias",
               NodeBuilder("SkipLayerNormalization", ms)
                   .input({2, 4, 8})
                   .input({2, 4, 8})
                   .weight({8})
                   .weight({8})
                   .output({2, 4, 8})
                   .build(),
               0, 576, 1});
  // SkipSimplifiedLayerNormalization [2,4,8]: skip add 1 + bias 1 + RMS norm 4 = 6 -> 384; no bias 5 -> 320.
  c.push_back({"skip_simplified_layer_norm_bias",
               NodeBuilder("SkipSimplifiedLayerNormalization", ms)
                   .input({2, 4, 8})
                   .input({2, 4, 8})
                   .weight({8})
                   .weight({8})
                   .output({2, 4, 8})
                   .build(),
               0, 384, 1});
  c.push_back({"skip_simplified_layer_norm_no_bias",
               NodeBuilder("SkipSimplifiedLayerNormalization", ms)
                   .input({2, 4, 8})
                   .input({2, 4, 8})
                   .weight({8})
                   .output({2, 4, 8})
                   .build(),
               0, 320, 1});
  // RMS norms [3,16] = 48 elements x 4 (square, sum, mul by 1/rms, mul scale) = 192.
  c.push_back(
      {"simplified_layer_norm",
       NodeBuilder("SimplifiedLayerNormalization").input({3, 16}).weight({16}).output({3, 16}).build(), 0,
       192, 17});
  c.push_back({"rms_normalization",
               NodeBuilder("RMSNormalization").input({3, 16}).weight({16}).output({3, 16}).build(), 0, 192,
               23});
  // EmbedLayerNormalization, output [2,5,8] = 80: word + position 1 + segment 1 + layer norm 8 = 10 -> 800,
  // + 10 mask elements (row sums) = 810; without segment and mask: 9 * 80 = 720.
  c.push_back({"embed_layer_norm_full",
               NodeBuilder("EmbedLayerNormalization", ms)
                   .input({2, 5}, DType::Int32)
                   .input({2, 5}, DType::Int32)
                   .weight({30, 8})
                   .weight({16, 8})
                   .weight({2, 8})
                   .weight({8})
                   .weight({8})
                   .input({2, 5}, DType::Int32)
                   .output({2, 5, 8})
                   .output({2}, DType::Int32)
                   .build(),
               0, 810, 1});
  c.push_back({"embed_layer_norm_plain",
               NodeBuilder("EmbedLayerNormalization", ms)
                   .input({2, 5}, DType::Int32)
                   .omitted_input()
                   .weight({30, 8})
                   .weight({16, 8})
                   .omitted_input()
                   .weight({8})
                   .weight({8})
                   .output({2, 5, 8})
                   .build(),
               0, 720, 1});
  // Gelu (com.microsoft) erf form 5 x 100 = 500; FastGelu tanh form 9 x 100 = 900, with bias 10 x 100 = 1000;
  // BiasGelu 1 + 5 = 6 x 100 = 600; BiasAdd 2 x 24 = 48; BiasSoftmax [2,3,4,4] = 96 x (1 + 5) = 576.
  c.push_back({"contrib_gelu", NodeBuilder("Gelu", ms).input({100}).output({100}).build(), 0, 500, 1});
  c.push_back({"fast_gelu", NodeBuilder("FastGelu", ms).input({4, 25}).output({4, 25}).build(), 0, 900, 1});
  c.push_back({"fast_gelu_bias",
               NodeBuilder("FastGelu", ms).input({4, 25}).weight({25}).output({4, 25}).build(), 0, 1000, 1});
  c.push_back({"bias_gelu", NodeBuilder("BiasGelu", ms).input({4, 25}).weight({25}).output({4, 25}).build(),
               0, 600, 1});
  c.push_back(
      {"bias_add",
       NodeBuilder("BiasAdd", ms).input({2, 3, 4}).weight({4}).input({2, 3, 4}).output({2, 3, 4}).build(), 0,
       48, 1});
  c.push_back({"bias_softmax",
               NodeBuilder("BiasSoftmax", ms)
                   .input({2, 3, 4, 4})
                   .input({2, 1, 4, 4})
                   .output({2, 3, 4, 4})
                   .attr("axis", i64(3))
                   .attr("is_inner_broadcast", i64(1))
                   .build(),
               0, 576, 1});
  // FusedMatMul [2,3,4] x [2,4,5]: MACs 2*3*5*4 = 120, FLOPs 240. transA/transB on [2,4,3] x [2,5,4] with
  // alpha 0.5: the same product, + 30 outputs scaled = 270. transBatchA: [3,2,4] -> [2,3,4]: 120 / 240.
  c.push_back({"fused_matmul",
               NodeBuilder("FusedMatMul", ms).input({2, 3, 4}).input({2, 4, 5}).output({2, 3, 5}).build(),
               120, 240, 1});
  c.push_back({"fused_matmul_trans_alpha",
               NodeBuilder("FusedMatMul", ms)
                   .input({2, 4, 3})
                   .input({2, 5, 4})
                   .output({2, 3, 5})
                   .attr("transA", i64(1))
                   .attr("transB", i64(1))
                   .attr("alpha", 0.5)
                   .build(),
               120, 270, 1});
  c.push_back({"fused_matmul_trans_batch",
               NodeBuilder("FusedMatMul", ms)
                   .input({3, 2, 4})
                   .input({2, 4, 5})
                   .output({2, 3, 5})
                   .attr("transBatchA", i64(1))
                   .build(),
               120, 240, 1});
  // FusedGemm [4,8] x [8,16] + C[16]: MACs 4*16*8 = 512; FLOPs 1024 + 64 (C) + activation on 64 outputs:
  // Relu 1 -> 1152, LeakyRelu 2 -> 1216, Sigmoid 4 -> 1344.
  for (const auto& [activation, flops] :
       std::vector<std::pair<const char*, int64_t>>{{"Relu", 1152}, {"LeakyRelu", 1216}, {"Sigmoid", 1344}})
    c.push_back({std::string("fused_gemm_") + activation,
                 NodeBuilder("FusedGemm", ms)
                     .input({4, 8})
                     .weight({8, 16})
                     .weight({16})
                     .output({4, 16})
                     .attr("activation", str(activation))
                     .build(),
                 512, flops, 1});
  // FusedConv [1,3,8,8] * [4,3,3,3] + B[4] -> [1,4,6,6] = 144 outputs: MACs 144*27 = 3888; FLOPs 7776 + 144
  // (bias) + 144 (Relu) = 8064; with Z and Sigmoid 7776 + 144 + 144 * (1 + 4) = 8640.
  c.push_back({"fused_conv_relu",
               NodeBuilder("FusedConv", ms)
                   .input({1, 3, 8, 8})
                   .weight({4, 3, 3, 3})
                   .weight({4})
                   .output({1, 4, 6, 6})
                   .attr("activation", str("Relu"))
                   .build(),
               3888, 8064, 1});
  c.push_back({"fused_conv_sum_sigmoid",
               NodeBuilder("FusedConv", ms)
                   .input({1, 3, 8, 8})
                   .weight({4, 3, 3, 3})
                   .weight({4})
                   .input({1, 4, 6, 6})
                   .output({1, 4, 6, 6})
                   .attr("activation", str("Sigmoid"))
                   .build(),
               3888, 8640, 1});
  // MatMulNBits A [2,3,64], K 64, N 32, 4 bits, block 32 (B [32,2,16] uint8, scales [32,2]): rows 6,
  // MACs 6*64*32 = 12288; FLOPs 24576 + 2*32*64 (dequantise) 4096 = 28672; with bias + 6*32 = 28864.
  auto nbits = [&](bool bias) {
    NodeBuilder b("MatMulNBits", ms);
    b.input({2, 3, 64}).weight({32, 2, 16}, DType::UInt8).weight({32, 2}).omitted_input().omitted_input();
    if (bias) b.weight({32});
    return b.output({2, 3, 32})
        .attr("K", i64(64))
        .attr("N", i64(32))
        .attr("bits", i64(4))
        .attr("block_size", i64(32))
        .build();
  };
  c.push_back({"matmul_nbits", nbits(false), 12288, 28672, 1});
  c.push_back({"matmul_nbits_bias", nbits(true), 12288, 28864, 1});
}

std::vector<ExactCase> exact_cases() {
  std::vector<ExactCase> c;

  // ---- Conv -------------------------------------------------------------
  // resnet conv1: 1*64*112*112*3*7*7 = 802816*147 = 118013952; FLOPs 2x = 236027904 (no bias).
  c.push_back({"conv_resnet_conv1",
               NodeBuilder("Conv").input({1, 3, 224, 224}).weight({64, 3, 7, 7}).output({1, 64, 112, 112})
                   .attr("strides", ints({2, 2})).attr("pads", ints({3, 3, 3, 3})).build(),
               118013952, 236027904});
  // 3x3 with bias: out = 64*56*56 = 200704; MACs = 200704*64*9 = 115605504;
  // FLOPs = 2*115605504 + 200704 = 231411712.
  c.push_back({"conv_3x3_bias",
               NodeBuilder("Conv").input({1, 64, 56, 56}).weight({64, 64, 3, 3}).weight({64})
                   .output({1, 64, 56, 56}).build(),
               115605504, 231411712});
  // depthwise (group=32): out = 32*112*112 = 401408; MACs = 401408*1*9 = 3612672;
  // FLOPs = 7225344 + 401408 (bias) = 7626752.
  c.push_back({"conv_depthwise",
               NodeBuilder("Conv").input({1, 32, 112, 112}).weight({32, 1, 3, 3}).weight({32})
                   .output({1, 32, 112, 112}).attr("group", i64(32)).build(),
               3612672, 7626752});
  // grouped (group=4, C_in/group=16), batch 2: out = 2*128*28*28 = 200704;
  // MACs = 200704*16*9 = 28901376; FLOPs = 57802752.
  c.push_back({"conv_grouped_batch2",
               NodeBuilder("Conv").input({2, 64, 28, 28}).weight({128, 16, 3, 3}).output({2, 128, 28, 28})
                   .attr("group", i64(4)).build(),
               28901376, 57802752});
  // 3-D: out = 64*16*56*56 = 3211264; per output 3*3*7*7 = 441;
  // MACs = 3211264*441 = 1416167424; FLOPs = 2832334848 + 3211264 = 2835546112.
  c.push_back({"conv_3d_bias",
               NodeBuilder("Conv").input({1, 3, 16, 112, 112}).weight({64, 3, 3, 7, 7}).weight({64})
                   .output({1, 64, 16, 56, 56}).build(),
               1416167424, 2835546112});
  // 1-D: out = 4*32*96 = 12288; MACs = 12288*16*5 = 983040; FLOPs = 1966080.
  c.push_back({"conv_1d",
               NodeBuilder("Conv").input({4, 16, 100}).weight({32, 16, 5}).output({4, 32, 96}).build(),
               983040, 1966080});
  // ConvTranspose stride 2: MACs = 1*64*28*28*32*4*4 = 50176*512 = 25690112;
  // FLOPs = 51380224 + 32*56*56 (bias) = 51380224 + 100352 = 51480576.
  c.push_back({"conv_transpose_bias",
               NodeBuilder("ConvTranspose").input({1, 64, 28, 28}).weight({64, 32, 4, 4}).weight({32})
                   .output({1, 32, 56, 56}).attr("strides", ints({2, 2})).build(),
               25690112, 51480576});
  // ConvTranspose group=4 (C_out/group = 2): MACs = 16*10*10*2*3*3 = 28800; FLOPs = 57600.
  c.push_back({"conv_transpose_grouped",
               NodeBuilder("ConvTranspose").input({1, 16, 10, 10}).weight({16, 2, 3, 3})
                   .output({1, 8, 12, 12}).attr("group", i64(4)).build(),
               28800, 57600});
  // ConvInteger: out = 4*6*6 = 144; MACs = 144*3*3*3 = 3888; FLOPs = 7776 (zero points not counted).
  c.push_back({"conv_integer",
               NodeBuilder("ConvInteger").input({1, 3, 8, 8}, DType::UInt8).weight({4, 3, 3, 3}, DType::UInt8)
                   .output({1, 4, 6, 6}, DType::Int32).build(),
               3888, 7776});
  // QLinearConv (W is input 3, B input 8): MACs 3888; FLOPs = 7776 + 144 (bias) + 2*144 = 8208.
  c.push_back({"qlinear_conv_bias",
               NodeBuilder("QLinearConv").input({1, 3, 8, 8}, DType::UInt8).weight({}).weight({}, DType::UInt8)
                   .weight({4, 3, 3, 3}, DType::UInt8).weight({}).weight({}, DType::UInt8).weight({})
                   .weight({}, DType::UInt8).weight({4}, DType::Int32).output({1, 4, 6, 6}, DType::UInt8).build(),
               3888, 8208});

  // ---- Gemm / MatMul ----------------------------------------------------
  // resnet fc: M=1, K=2048, N=1000 (transB): MACs = 2048000; FLOPs = 4096000 + 1000 (C) = 4097000.
  c.push_back({"gemm_fc_transB",
               NodeBuilder("Gemm").input({1, 2048}).weight({1000, 2048}).weight({1000}).output({1, 1000})
                   .attr("transB", i64(1)).build(),
               2048000, 4097000});
  // transA: A [64,32]^T -> M=32, K=64; B [64,16] -> N=16: MACs = 32*16*64 = 32768; FLOPs = 65536.
  c.push_back({"gemm_transA",
               NodeBuilder("Gemm").input({64, 32}).input({64, 16}).output({32, 16}).attr("transA", i64(1)).build(),
               32768, 65536});
  // alpha=0.5, beta=2 with C: M=8,K=4,N=5: MACs = 160; FLOPs = 320 + 40 (C) + 40 (alpha) + 40 (beta) = 440.
  c.push_back({"gemm_alpha_beta",
               NodeBuilder("Gemm").input({8, 4}).input({4, 5}).input({8, 5}).output({8, 5})
                   .attr("alpha", AttrValue{0.5}).attr("beta", AttrValue{2.0}).build(),
               160, 440});
  // BERT attention scores: 12 heads * 128*128*64 = 12*1048576 = 12582912; FLOPs = 25165824.
  c.push_back({"matmul_bert_qk",
               NodeBuilder("MatMul").input({1, 12, 128, 64}).input({1, 12, 64, 128}).output({1, 12, 128, 128}).build(),
               12582912, 25165824});
  // BERT FFN: 128*768*3072 = 301989888; FLOPs = 603979776.
  c.push_back({"matmul_bert_ffn",
               NodeBuilder("MatMul").input({1, 128, 768}).weight({768, 3072}).output({1, 128, 3072}).build(),
               301989888, 603979776});
  // broadcast batch [2,1] x [5] -> [2,5]: 10 * (M=3 * N=6 * K=4 = 72) = 720; FLOPs 1440.
  c.push_back({"matmul_broadcast",
               NodeBuilder("MatMul").input({2, 1, 3, 4}).input({5, 4, 6}).output({2, 5, 3, 6}).build(), 720, 1440});
  // 1-D x 2-D: [4] x [4,6]: M=1, N=6, K=4 = 24; FLOPs 48.
  c.push_back({"matmul_1d_2d", NodeBuilder("MatMul").input({4}).input({4, 6}).output({6}).build(), 24, 48});
  // 2-D x 1-D: [3,4] x [4]: M=3, N=1, K=4 = 12; FLOPs 24.
  c.push_back({"matmul_2d_1d", NodeBuilder("MatMul").input({3, 4}).input({4}).output({3}).build(), 12, 24});
  // dot product: [7] x [7] = 7; FLOPs 14.
  c.push_back({"matmul_dot", NodeBuilder("MatMul").input({7}).input({7}).output({}).build(), 7, 14});
  // output shape unknown does not matter: [2,3]x[3,4] = 24.
  c.push_back({"matmul_output_unknown",
               NodeBuilder("MatMul").input({2, 3}).input({3, 4}).unknown_rank_output().build(), 24, 48});
  // MatMulInteger [2,3]x[3,4] = 24; FLOPs 48.
  c.push_back({"matmul_integer",
               NodeBuilder("MatMulInteger").input({2, 3}, DType::UInt8).input({3, 4}, DType::Int8)
                   .output({2, 4}, DType::Int32).build(),
               24, 48});
  // QLinearMatMul (B is input 3): 24 MACs; FLOPs = 48 + 2*8 (requant) = 64.
  c.push_back({"qlinear_matmul",
               NodeBuilder("QLinearMatMul").input({2, 3}, DType::UInt8).weight({}).weight({}, DType::UInt8)
                   .weight({3, 4}, DType::UInt8).weight({}).weight({}, DType::UInt8).weight({})
                   .weight({}, DType::UInt8).output({2, 4}, DType::UInt8).build(),
               24, 64});

  // ---- Einsum -----------------------------------------------------------
  // bij,bjk->bik, b=2 i=3 j=4 k=5: 2*3*4*5 = 120; FLOPs 240.
  c.push_back({"einsum_batched_matmul",
               NodeBuilder("Einsum").input({2, 3, 4}).input({2, 4, 5}).output({2, 3, 5})
                   .attr("equation", str("bij,bjk->bik")).build(),
               120, 240});
  // bhqd,bhkd->bhqk, b=1 h=12 q=128 d=64 k=128: 12*128*64*128 = 12582912; FLOPs 25165824.
  c.push_back({"einsum_attention",
               NodeBuilder("Einsum").input({1, 12, 128, 64}).input({1, 12, 128, 64}).output({1, 12, 128, 128})
                   .attr("equation", str("bhqd,bhkd->bhqk")).build(),
               12582912, 25165824});
  // implicit output, spaces: "ij, jk" i=3 j=4 k=5: 60; FLOPs 120.
  c.push_back({"einsum_implicit",
               NodeBuilder("Einsum").input({3, 4}).input({4, 5}).output({3, 5}).attr("equation", str("ij, jk")).build(),
               60, 120});
  // ellipsis: ...ij,...jk->...ik with [2,3,4],[2,4,5]: 2*3*4*5 = 120.
  c.push_back({"einsum_ellipsis",
               NodeBuilder("Einsum").input({2, 3, 4}).input({2, 4, 5}).output({2, 3, 5})
                   .attr("equation", str("...ij,...jk->...ik")).build(),
               120, 240});
  // ellipsis broadcast: [6,1,3,4] and [5,4,2] -> ellipsis dims (6,5): 6*5*3*4*2 = 720.
  c.push_back({"einsum_ellipsis_broadcast",
               NodeBuilder("Einsum").input({6, 1, 3, 4}).input({5, 4, 2}).output({6, 5, 3, 2})
                   .attr("equation", str("...ij,...jk->...ik")).build(),
               720, 1440});
  // three operands ij,jk,kl->il, i=2 j=3 k=4 l=5: (3-1)*120 = 240 MACs; FLOPs 480.
  c.push_back({"einsum_three_operands",
               NodeBuilder("Einsum").input({2, 3}).input({3, 4}).input({4, 5}).output({2, 5})
                   .attr("equation", str("ij,jk,kl->il")).build(),
               240, 480});
  // outer product i,j->ij: nothing summed, 0 MACs, 3*4 = 12 multiplies.
  c.push_back({"einsum_outer",
               NodeBuilder("Einsum").input({3}).input({4}).output({3, 4}).attr("equation", str("i,j->ij")).build(),
               0, 12});
  // trace ii->: one operand that reduces: FLOPs = 25 input elements.
  c.push_back({"einsum_trace",
               NodeBuilder("Einsum").input({5, 5}).output({}).attr("equation", str("ii->")).build(), 0, 25});
  // row sum ij->i: FLOPs = 12 input elements.
  c.push_back({"einsum_sum",
               NodeBuilder("Einsum").input({3, 4}).output({3}).attr("equation", str("ij->i")).build(), 0, 12});
  // transpose ij->ji: data movement.
  c.push_back({"einsum_transpose",
               NodeBuilder("Einsum").input({3, 4}).output({4, 3}).attr("equation", str("ij->ji")).build(), 0, 0});
  // Det of 10 3x3 matrices: 10 * 2*27/3 = 180.
  c.push_back({"det", NodeBuilder("Det").input({10, 3, 3}).output({10}).build(), 0, 180});

  // ---- Recurrent --------------------------------------------------------
  // LSTM seq=10 batch=2 input=32 hidden=64 with B: units = 10*2*64 = 1280;
  // MACs = 1280*4*(32+64) = 491520; FLOPs = 983040 + 1280*(18+8) = 983040 + 33280 = 1016320.
  c.push_back({"lstm_bias",
               NodeBuilder("LSTM").input({10, 2, 32}).weight({1, 256, 32}).weight({1, 256, 64}).weight({1, 512})
                   .output({10, 1, 2, 64}).attr("hidden_size", i64(64)).build(),
               491520, 1016320});
  // bidirectional LSTM, no B: units = 2*5*1*20 = 200; MACs = 200*4*(10+20) = 24000;
  // FLOPs = 48000 + 200*18 = 51600.
  c.push_back({"lstm_bidirectional",
               NodeBuilder("LSTM").input({5, 1, 10}).weight({2, 80, 10}).weight({2, 80, 20}).output({5, 2, 1, 20})
                   .attr("direction", str("bidirectional")).build(),
               24000, 51600});
  // GRU seq=7 batch=3 input=16 hidden=8 with B: units = 168; MACs = 168*3*24 = 12096;
  // FLOPs = 24192 + 168*(15+6) = 24192 + 3528 = 27720.
  c.push_back({"gru_bias",
               NodeBuilder("GRU").input({7, 3, 16}).weight({1, 24, 16}).weight({1, 24, 8}).weight({1, 48})
                   .output({7, 1, 3, 8}).build(),
               12096, 27720});
  // RNN layout=1 (batch 4, seq 6), input 10, hidden 12: units = 6*4*12 = 288;
  // MACs = 288*(10+12) = 6336; FLOPs = 12672 + 288*1 = 12960.
  c.push_back({"rnn_batch_first",
               NodeBuilder("RNN").input({4, 6, 10}).weight({1, 12, 10}).weight({1, 12, 12}).output({4, 6, 1, 12})
                   .attr("layout", i64(1)).build(),
               6336, 12960, 14});

  // ---- Elementwise ------------------------------------------------------
  // bias add broadcast: 128*768 = 98304 outputs, 1 each.
  c.push_back({"add_broadcast",
               NodeBuilder("Add").input({1, 128, 768}).weight({768}).output({1, 128, 768}).build(), 0, 98304});
  // output shape unknown: broadcast of [2,3,1] and [4] = [2,3,4] = 24.
  c.push_back({"mul_broadcast_from_inputs",
               NodeBuilder("Mul").input({2, 3, 1}).input({4}).unknown_rank_output().build(), 0, 24});
  // Sigmoid 4 per element: 6*4 = 24.
  c.push_back({"sigmoid", NodeBuilder("Sigmoid").input({2, 3}).output({2, 3}).build(), 0, 24});
  // HardSigmoid 4 per element: 10*4 = 40.
  c.push_back({"hard_sigmoid", NodeBuilder("HardSigmoid").input({10}).output({10}).build(), 0, 40});
  // HardSwish 5 per element: 16*112*112 = 200704 *5 = 1003520.
  c.push_back({"hard_swish",
               NodeBuilder("HardSwish").input({1, 16, 112, 112}).output({1, 16, 112, 112}).build(), 0, 1003520, 14});
  // Sum of 3 inputs: 2 per element * 10 = 20.
  c.push_back({"sum_three", NodeBuilder("Sum").input({10}).input({10}).input({10}).output({10}).build(), 0, 20});
  // Mean of 3 inputs: (2 adds + 1 divide) * 10 = 30.
  c.push_back({"mean_three", NodeBuilder("Mean").input({10}).input({10}).input({10}).output({10}).build(), 0, 30});
  // Gelu erf form 5 per element: 500; tanh approximation 9: 900.
  c.push_back({"gelu_erf", NodeBuilder("Gelu").input({100}).output({100}).build(), 0, 500, 20});
  // com.microsoft QuickGelu x*sigmoid(alpha*x): mul, sigmoid (neg, exp, add, div), mul = 6 per element: 600.
  c.push_back({"quick_gelu", NodeBuilder("QuickGelu", "com.microsoft").input({100}).output({100}).build(), 0, 600, 1});
  c.push_back({"gelu_tanh",
               NodeBuilder("Gelu").input({100}).output({100}).attr("approximate", str("tanh")).build(), 0,
               900, 20});
  // Where: output [4,5] = 20 selects.
  c.push_back({"where",
               NodeBuilder("Where").input({4, 1}, DType::Bool).input({1, 5}).input({5}).output({4, 5}).build(), 0, 20});
  // Clip 2 per element: 20.
  c.push_back({"clip", NodeBuilder("Clip").input({10}).weight({}).weight({}).output({10}).build(), 0, 20});
  // Equal (comparison) on 7 elements: 7.
  c.push_back({"equal", NodeBuilder("Equal").input({7}, DType::Int64).input({7}, DType::Int64).output({7}, DType::Bool).build(),
               0, 7});
  // QuantizeLinear 2 per element: 48*2 = 96.
  c.push_back({"quantize",
               NodeBuilder("QuantizeLinear").input({1, 3, 4, 4}).weight({}).weight({}, DType::UInt8)
                   .output({1, 3, 4, 4}, DType::UInt8).build(),
               0, 96});
  // DynamicQuantizeLinear 4 per input element: 100*4 = 400.
  c.push_back({"dynamic_quantize",
               NodeBuilder("DynamicQuantizeLinear").input({10, 10}).output({10, 10}, DType::UInt8).output({})
                   .output({}, DType::UInt8).build(),
               0, 400});
  // HannWindow 5 per output element: 16*5 = 80.
  c.push_back({"hann_window", NodeBuilder("HannWindow").weight({}, DType::Int64, {16}).output({16}).build(), 0, 80});
  // Binary ops, 1 per element of the broadcast output (docs: "1 (on the broadcast output)").
  // Sub [3,1,5] - [4,1] -> [3,4,5] = 3*4*5 = 60.
  c.push_back({"sub_broadcast", NodeBuilder("Sub").input({3, 1, 5}).input({4, 1}).output({3, 4, 5}).build(), 0, 60});
  // Div [2,3] / [3] -> [2,3] = 6.
  c.push_back({"div_broadcast", NodeBuilder("Div").input({2, 3}).weight({3}).output({2, 3}).build(), 0, 6});
  // Pow [5,3] ^ scalar -> 15 (pow counted as 1).
  c.push_back({"pow_scalar_exponent", NodeBuilder("Pow").input({5, 3}).weight({}).output({5, 3}).build(), 0, 15});
  // Mod int32 [9] % [9] = 9.
  c.push_back({"mod", NodeBuilder("Mod").input({9}, DType::Int32).input({9}, DType::Int32).output({9}, DType::Int32).build(),
               0, 9, 13});
  // BitShift uint8 [3,3] >> [1] -> 9.
  c.push_back({"bit_shift",
               NodeBuilder("BitShift").input({3, 3}, DType::UInt8).weight({1}, DType::UInt8).output({3, 3}, DType::UInt8)
                   .attr("direction", str("RIGHT")).build(),
               0, 9, 11});
  // Less [2,5] < [5] -> [2,5] = 10 comparisons.
  c.push_back({"less", NodeBuilder("Less").input({2, 5}).input({5}).output({2, 5}, DType::Bool).build(), 0, 10});
  // Greater [3] > [3] = 3.
  c.push_back({"greater", NodeBuilder("Greater").input({3}).input({3}).output({3}, DType::Bool).build(), 0, 3});
  // LessOrEqual [1,7] <= [3,1] -> [3,7] = 21.
  c.push_back({"less_or_equal",
               NodeBuilder("LessOrEqual").input({1, 7}).input({3, 1}).output({3, 7}, DType::Bool).build(), 0, 21, 16});
  // GreaterOrEqual [11] >= scalar -> 11.
  c.push_back({"greater_or_equal",
               NodeBuilder("GreaterOrEqual").input({11}).weight({}).output({11}, DType::Bool).build(), 0, 11, 16});
  // And bool [2,2,3] & [3] -> 12.
  c.push_back({"and",
               NodeBuilder("And").input({2, 2, 3}, DType::Bool).input({3}, DType::Bool).output({2, 2, 3}, DType::Bool).build(),
               0, 12});
  // Or bool [5,1] | [1,3] -> [5,3] = 15.
  c.push_back({"or",
               NodeBuilder("Or").input({5, 1}, DType::Bool).input({1, 3}, DType::Bool).output({5, 3}, DType::Bool).build(),
               0, 15});
  // Xor bool [13] ^ [13] = 13.
  c.push_back({"xor",
               NodeBuilder("Xor").input({13}, DType::Bool).input({13}, DType::Bool).output({13}, DType::Bool).build(), 0, 13});
  // BitwiseAnd int32 [4,3] & [4,3] = 12.
  c.push_back({"bitwise_and",
               NodeBuilder("BitwiseAnd").input({4, 3}, DType::Int32).input({4, 3}, DType::Int32)
                   .output({4, 3}, DType::Int32).build(),
               0, 12, 18});
  // BitwiseOr int32 [2,7] | [7] -> 14.
  c.push_back({"bitwise_or",
               NodeBuilder("BitwiseOr").input({2, 7}, DType::Int32).input({7}, DType::Int32).output({2, 7}, DType::Int32).build(),
               0, 14, 18});
  // BitwiseXor int64 [17] ^ [17] = 17.
  c.push_back({"bitwise_xor",
               NodeBuilder("BitwiseXor").input({17}, DType::Int64).input({17}, DType::Int64).output({17}, DType::Int64).build(),
               0, 17, 18});

  // Variadic Sum/Max/Min: (n-1) per output element; Mean: n.
  // Max of 4 inputs [5]: 3 * 5 = 15.
  c.push_back({"max_four", NodeBuilder("Max").input({5}).input({5}).input({5}).input({5}).output({5}).build(), 0, 15});
  // Min of 2 inputs [2,3] and [3] -> [2,3]: 1 * 6 = 6.
  c.push_back({"min_two_broadcast", NodeBuilder("Min").input({2, 3}).input({3}).output({2, 3}).build(), 0, 6});
  // Sum of a single input: n-1 = 0 adds per element -> 0.
  c.push_back({"sum_single", NodeBuilder("Sum").input({7}).output({7}).build(), 0, 0});
  // Mean of 2 inputs [3,5]: (1 add + 1 divide) * 15 = 30.
  c.push_back({"mean_two", NodeBuilder("Mean").input({3, 5}).input({3, 5}).output({3, 5}).build(), 0, 30});

  // Unary ops, 1 per element (transcendentals count 1).
  c.push_back({"neg", NodeBuilder("Neg").input({3, 5}).output({3, 5}).build(), 0, 15});          // 3*5 = 15
  c.push_back({"abs", NodeBuilder("Abs").input({7}).output({7}).build(), 0, 7});                 // 7
  c.push_back({"exp", NodeBuilder("Exp").input({2, 3, 3}).output({2, 3, 3}).build(), 0, 18});    // 2*3*3 = 18
  c.push_back({"log", NodeBuilder("Log").input({11}).output({11}).build(), 0, 11});              // 11
  c.push_back({"sqrt", NodeBuilder("Sqrt").input({3, 3}).output({3, 3}).build(), 0, 9});         // 3*3 = 9
  c.push_back({"reciprocal", NodeBuilder("Reciprocal").input({5}).output({5}).build(), 0, 5});  // 5
  c.push_back({"floor", NodeBuilder("Floor").input({2, 5}).output({2, 5}).build(), 0, 10});      // 2*5 = 10
  c.push_back({"ceil", NodeBuilder("Ceil").input({13}).output({13}).build(), 0, 13});            // 13
  c.push_back({"round", NodeBuilder("Round").input({3, 7}).output({3, 7}).build(), 0, 21, 11});  // 3*7 = 21
  c.push_back({"sign", NodeBuilder("Sign").input({19}).output({19}).build(), 0, 19, 9});         // 19
  c.push_back({"erf", NodeBuilder("Erf").input({2, 3, 5}).output({2, 3, 5}).build(), 0, 30, 9}); // 2*3*5 = 30
  c.push_back({"tanh", NodeBuilder("Tanh").input({1, 9}).output({1, 9}).build(), 0, 9});         // 1*9 = 9
  c.push_back({"sin", NodeBuilder("Sin").input({5, 1}).output({5, 1}).build(), 0, 5});           // 5*1 = 5
  c.push_back({"cos", NodeBuilder("Cos").input({3, 1, 3}).output({3, 1, 3}).build(), 0, 9});     // 3*1*3 = 9
  c.push_back({"tan", NodeBuilder("Tan").input({23}).output({23}).build(), 0, 23});              // 23
  c.push_back({"asin", NodeBuilder("Asin").input({2, 7}).output({2, 7}).build(), 0, 14});        // 2*7 = 14
  c.push_back({"acos", NodeBuilder("Acos").input({3, 3, 3}).output({3, 3, 3}).build(), 0, 27}); // 3*3*3 = 27
  c.push_back({"atan", NodeBuilder("Atan").input({29}).output({29}).build(), 0, 29});            // 29
  c.push_back({"sinh", NodeBuilder("Sinh").input({5, 5}).output({5, 5}).build(), 0, 25});       // 5*5 = 25
  c.push_back({"cosh", NodeBuilder("Cosh").input({1, 1, 31}).output({1, 1, 31}).build(), 0, 31});// 31
  c.push_back({"asinh", NodeBuilder("Asinh").input({3, 11}).output({3, 11}).build(), 0, 33});   // 3*11 = 33
  c.push_back({"acosh", NodeBuilder("Acosh").input({37}).output({37}).build(), 0, 37});          // 37
  c.push_back({"atanh", NodeBuilder("Atanh").input({3, 13}).output({3, 13}).build(), 0, 39});   // 3*13 = 39
  // Not bool [41] = 41.
  c.push_back({"not", NodeBuilder("Not").input({41}, DType::Bool).output({41}, DType::Bool).build(), 0, 41});
  // BitwiseNot int32 [43] = 43.
  c.push_back({"bitwise_not",
               NodeBuilder("BitwiseNot").input({43}, DType::Int32).output({43}, DType::Int32).build(), 0, 43, 18});
  // IsNaN [5,9] = 45 comparisons.
  c.push_back({"is_nan", NodeBuilder("IsNaN").input({5, 9}).output({5, 9}, DType::Bool).build(), 0, 45, 13});
  // IsInf [47] = 47.
  c.push_back({"is_inf", NodeBuilder("IsInf").input({47}).output({47}, DType::Bool).build(), 0, 47, 10});
  // ThresholdedRelu [7,7] = 49 compare-selects.
  c.push_back({"thresholded_relu",
               NodeBuilder("ThresholdedRelu").input({7, 7}).output({7, 7}).attr("alpha", AttrValue{0.5}).build(), 0, 49, 10});

  // Composite activations.
  // LeakyRelu 2 per element (compare, mul): 3*5 = 15 -> 30.
  c.push_back({"leaky_relu", NodeBuilder("LeakyRelu").input({3, 5}).output({3, 5}).build(), 0, 30});
  // PRelu 2 per output element: X [2,3,5], slope [3,1,1] -> [2,3,5] = 30 -> 60.
  c.push_back({"prelu", NodeBuilder("PRelu").input({2, 3, 5}).weight({3, 1, 1}).output({2, 3, 5}).build(), 0, 60});
  // Softplus 3 per element: 7 -> 21.
  c.push_back({"softplus", NodeBuilder("Softplus").input({7}).output({7}).build(), 0, 21});
  // Softsign 3 per element: 3*3 = 9 -> 27.
  c.push_back({"softsign", NodeBuilder("Softsign").input({3, 3}).output({3, 3}).build(), 0, 27});
  // Shrink 3 per element: 11 -> 33.
  c.push_back({"shrink", NodeBuilder("Shrink").input({11}).output({11}).build(), 0, 33, 9});
  // Elu 4 per element: 2*5 = 10 -> 40.
  c.push_back({"elu", NodeBuilder("Elu").input({2, 5}).output({2, 5}).build(), 0, 40});
  // Selu 5 per element: 13 -> 65.
  c.push_back({"selu", NodeBuilder("Selu").input({13}).output({13}).build(), 0, 65});
  // Mish 5 per element: 3*7 = 21 -> 105.
  c.push_back({"mish", NodeBuilder("Mish").input({3, 7}).output({3, 7}).build(), 0, 105, 18});
  // Celu 7 per element: 3*3 = 9 -> 63.
  c.push_back({"celu", NodeBuilder("Celu").input({3, 3}).output({3, 3}).build(), 0, 63, 12});

  // Softmax family.
  // LogSoftmax 5 per element: 3*7 = 21 -> 105.
  c.push_back({"log_softmax", NodeBuilder("LogSoftmax").input({3, 7}).output({3, 7}).build(), 0, 105});
  // Hardmax 1 per element: 5*9 = 45 -> 45.
  c.push_back({"hardmax", NodeBuilder("Hardmax").input({5, 9}).output({5, 9}).build(), 0, 45});

  // DequantizeLinear 2 per element: uint8 [1,3,5,5] = 75 -> 150.
  c.push_back({"dequantize",
               NodeBuilder("DequantizeLinear").input({1, 3, 5, 5}, DType::UInt8).weight({}).weight({}, DType::UInt8)
                   .output({1, 3, 5, 5}).build(),
               0, 150});
  // HammingWindow 5 per output element: 9 -> 45.
  c.push_back({"hamming_window",
               NodeBuilder("HammingWindow").weight({}, DType::Int64, {9}).output({9}).build(), 0, 45});
  // BlackmanWindow 9 per output element: 7 -> 63.
  c.push_back({"blackman_window",
               NodeBuilder("BlackmanWindow").weight({}, DType::Int64, {7}).output({7}).build(), 0, 63});

  // ---- Normalization ----------------------------------------------------
  // BatchNorm inference 2 per element: 64*56*56 = 200704 *2 = 401408.
  c.push_back({"batchnorm",
               NodeBuilder("BatchNormalization").input({1, 64, 56, 56}).weight({64}).weight({64}).weight({64})
                   .weight({64}).output({1, 64, 56, 56}).build(),
               0, 401408});
  // training_mode=1: 6 per element = 1204224.
  c.push_back({"batchnorm_training",
               NodeBuilder("BatchNormalization").input({1, 64, 56, 56}).weight({64}).weight({64}).weight({64})
                   .weight({64}).output({1, 64, 56, 56}).attr("training_mode", i64(1)).build(),
               0, 1204224});
  // LayerNorm 8 per element: 128*768 = 98304 *8 = 786432.
  c.push_back({"layernorm",
               NodeBuilder("LayerNormalization").input({1, 128, 768}).weight({768}).weight({768})
                   .output({1, 128, 768}).build(),
               0, 786432});
  // InstanceNorm 8 per element: 2*3*4*4 = 96 *8 = 768.
  c.push_back({"instancenorm",
               NodeBuilder("InstanceNormalization").input({2, 3, 4, 4}).weight({3}).weight({3}).output({2, 3, 4, 4}).build(),
               0, 768});
  // AlexNet LRN size=5: (2*5+4) = 14 per element; 96*55*55 = 290400 *14 = 4065600.
  c.push_back({"lrn",
               NodeBuilder("LRN").input({1, 96, 55, 55}).output({1, 96, 55, 55}).attr("size", i64(5)).build(), 0, 4065600});
  // BatchNorm opset 9 with the four running/saved stat outputs (training): 6 per element;
  // 1*3*5 = 15 -> 90.
  c.push_back({"batchnorm_training_outputs_opset9",
               NodeBuilder("BatchNormalization").input({1, 3, 5}).weight({3}).weight({3}).weight({3}).weight({3})
                   .output({1, 3, 5}).output({3}).output({3}).output({3}).output({3}).build(),
               0, 90, 9});
  // BatchNorm opset 6, Y only: is_test=0 (the default) is training, 6 per element: 15 -> 90;
  // is_test=1 is inference, 2 per element: 30. Opset 9, Y only: inference.
  c.push_back({"batchnorm_is_test_default_opset6",
               NodeBuilder("BatchNormalization").input({1, 3, 5}).weight({3}).weight({3}).weight({3}).weight({3})
                   .output({1, 3, 5}).build(),
               0, 90, 6});
  c.push_back({"batchnorm_is_test_opset6",
               NodeBuilder("BatchNormalization").input({1, 3, 5}).weight({3}).weight({3}).weight({3}).weight({3})
                   .output({1, 3, 5}).attr("is_test", i64(1)).build(),
               0, 30, 6});
  c.push_back({"batchnorm_inference_opset9",
               NodeBuilder("BatchNormalization").input({1, 3, 5}).weight({3}).weight({3}).weight({3}).weight({3})
                   .output({1, 3, 5}).build(),
               0, 30, 9});
  // GroupNorm 8 per element: 2*6*3*3 = 108 -> 864.
  c.push_back({"groupnorm",
               NodeBuilder("GroupNormalization").input({2, 6, 3, 3}).weight({6}).weight({6}).output({2, 6, 3, 3})
                   .attr("num_groups", i64(3)).build(),
               0, 864, 21});
  // MeanVarianceNormalization 6 per element: 2*3*5 = 30 -> 180.
  c.push_back({"mvn", NodeBuilder("MeanVarianceNormalization").input({2, 3, 5}).output({2, 3, 5}).build(), 0, 180, 13});
  // LpNormalization 3 per element: 3*7 = 21 -> 63.
  c.push_back({"lp_normalization",
               NodeBuilder("LpNormalization").input({3, 7}).output({3, 7}).attr("p", i64(2)).build(), 0, 63});

  // ---- Pooling / resampling ----------------------------------------------
  // resnet maxpool 3x3: 64*56*56 = 200704 outputs * 9 = 1806336.
  c.push_back({"maxpool_resnet",
               NodeBuilder("MaxPool").input({1, 64, 112, 112}).output({1, 64, 56, 56}).attr("kernel_shape", ints({3, 3}))
                   .attr("strides", ints({2, 2})).build(),
               0, 1806336});
  // AveragePool 2x2: 16*8*8 = 1024 outputs * (4 adds + 1 divide) = 5120.
  c.push_back({"avgpool",
               NodeBuilder("AveragePool").input({1, 16, 16, 16}).output({1, 16, 8, 8}).attr("kernel_shape", ints({2, 2}))
                   .build(),
               0, 5120});
  // LpPool 2x2: 16 outputs * (2*4 + 1) = 144.
  c.push_back({"lppool",
               NodeBuilder("LpPool").input({1, 1, 8, 8}).output({1, 1, 4, 4}).attr("kernel_shape", ints({2, 2})).build(), 0, 144});
  // GlobalAveragePool resnet50: 2048*7*7 = 100352 adds + 2048 divides = 102400.
  c.push_back({"global_avgpool",
               NodeBuilder("GlobalAveragePool").input({1, 2048, 7, 7}).output({1, 2048, 1, 1}).build(), 0, 102400});
  // GlobalMaxPool: 512*49 = 25088 comparisons.
  c.push_back({"global_maxpool",
               NodeBuilder("GlobalMaxPool").input({1, 512, 7, 7}).output({1, 512, 1, 1}).build(), 0, 25088});
  // Resize linear 2x on H and W: k=2 -> 4 taps * 2 = 8 per output; 3*20*20 = 1200 outputs -> 9600.
  c.push_back({"resize_linear",
               NodeBuilder("Resize").input({1, 3, 10, 10}).omitted_input().weight({4}).output({1, 3, 20, 20})
                   .attr("mode", str("linear")).build(),
               0, 9600});
  // Resize cubic: k=2 -> 16 taps * 2 = 32 per output; 64 outputs -> 2048.
  c.push_back({"resize_cubic",
               NodeBuilder("Resize").input({1, 1, 4, 4}).omitted_input().weight({4}).output({1, 1, 8, 8})
                   .attr("mode", str("cubic")).build(),
               0, 2048});
  // Resize nearest (YOLO): data movement.
  c.push_back({"resize_nearest",
               NodeBuilder("Resize").input({1, 256, 20, 20}).omitted_input().weight({4}).output({1, 256, 40, 40}).build(), 0, 0});
  // Upsample bilinear (opset 7 "linear"): 2 axes -> 8 per output; 2*6*6 = 72 -> 576.
  c.push_back({"upsample_linear",
               NodeBuilder("Upsample").input({1, 2, 3, 3}).output({1, 2, 6, 6}).attr("mode", str("linear")).build(), 0, 576, 7});
  // GridSample bilinear on 2-D: 4 taps * 2 = 8 per output; 3*5*5 = 75 -> 600.
  c.push_back({"grid_sample",
               NodeBuilder("GridSample").input({1, 3, 10, 10}).input({1, 5, 5, 2}).output({1, 3, 5, 5}).build(), 0, 600});
  // RoiAlign sampling_ratio=2: 4*256*7*7 = 50176 outputs * (8*4 + 1 = 33) = 1655808.
  c.push_back({"roi_align",
               NodeBuilder("RoiAlign").input({1, 256, 50, 50}).input({4, 4}).input({4}, DType::Int64)
                   .output({4, 256, 7, 7}).attr("sampling_ratio", i64(2)).build(),
               0, 1655808});
  // GlobalLpPool: 2*in + N*C; in = 2*3*5*5 = 150 -> 300 + 6 = 306.
  c.push_back({"global_lppool", NodeBuilder("GlobalLpPool").input({2, 3, 5, 5}).output({2, 3, 1, 1}).build(), 0, 306});
  // Resize linear on one axis only (W 5 -> 10): k=1 -> 2 taps * 2 = 4 per output;
  // out = 1*1*3*10 = 30 -> 120.
  c.push_back({"resize_linear_one_axis",
               NodeBuilder("Resize").input({1, 1, 3, 5}).omitted_input().weight({4}).output({1, 1, 3, 10})
                   .attr("mode", str("linear")).build(),
               0, 120, 13});
  // GridSample nearest: data movement, 0.
  c.push_back({"grid_sample_nearest",
               NodeBuilder("GridSample").input({1, 3, 7, 7}).input({1, 5, 5, 2}).output({1, 3, 5, 5})
                   .attr("mode", str("nearest")).build(),
               0, 0, 16});
  // MaxUnpool: data movement, 0, default bytes.
  c.push_back({"max_unpool",
               NodeBuilder("MaxUnpool").input({1, 3, 2, 2}).input({1, 3, 2, 2}, DType::Int64).output({1, 3, 4, 4})
                   .attr("kernel_shape", ints({2, 2})).attr("strides", ints({2, 2})).build(),
               0, 0, 11});

  // ---- Reductions ---------------------------------------------------------
  // ReduceMean over the last axis: 98304 adds + 128 divides = 98432.
  c.push_back({"reduce_mean",
               NodeBuilder("ReduceMean").input({1, 128, 768}).output({1, 128, 1}).attr("axes", ints({-1})).build(), 0, 98432});
  // ReduceSum to a scalar: 20 adds.
  c.push_back({"reduce_sum", NodeBuilder("ReduceSum").input({4, 5}).output({1, 1}).build(), 0, 20, 13});
  // ReduceL2 over axis 1: 2*20 + 4 roots = 44.
  c.push_back({"reduce_l2", NodeBuilder("ReduceL2").input({4, 5}).output({4, 1}).attr("axes", ints({1})).build(), 0, 44});
  // ArgMax: 21 comparisons.
  c.push_back({"argmax", NodeBuilder("ArgMax").input({3, 7}).output({1, 7}, DType::Int64).build(), 0, 21});
  // TopK k=5 on 1000: ceil(log2 5) = 3 per element -> 3000.
  c.push_back({"topk_5",
               NodeBuilder("TopK").input({1, 1000}).weight({1}, DType::Int64, {5}).output({1, 5})
                   .output({1, 5}, DType::Int64).build(),
               0, 3000});
  // TopK k=1: at least 1 per element -> 1000.
  c.push_back({"topk_1",
               NodeBuilder("TopK").input({1, 1000}).weight({1}, DType::Int64, {1}).output({1, 1})
                   .output({1, 1}, DType::Int64).build(),
               0, 1000});
  // CumSum: 10 adds.
  c.push_back({"cumsum", NodeBuilder("CumSum").input({10}).weight({}, DType::Int64, {0}).output({10}).build(), 0, 10});
  // Unique on 8 elements: 8*ceil(log2 8) = 24.
  c.push_back({"unique", NodeBuilder("Unique").input({8}).unknown_rank_output().build(), 0, 24});
  // NLL loss, mean, no weight: 4 targets * (negate + accumulate) + 1 divide = 9.
  c.push_back({"nll_loss",
               NodeBuilder("NegativeLogLikelihoodLoss").input({4, 10}).input({4}, DType::Int64).output({}).build(), 0, 9});
  // SoftmaxCrossEntropyLoss, mean: 6*40 + 4*2 + 1 = 249.
  c.push_back({"softmax_cross_entropy",
               NodeBuilder("SoftmaxCrossEntropyLoss").input({4, 10}).input({4}, DType::Int64).output({}).build(), 0, 249});
  // ReduceMax: 1 comparison per input element; [3,5] -> [1,5]: 15.
  c.push_back({"reduce_max", NodeBuilder("ReduceMax").input({3, 5}).output({1, 5}).attr("axes", ints({0})).build(), 0, 15});
  // ReduceMin over everything: [7] -> [1]: 7.
  c.push_back({"reduce_min", NodeBuilder("ReduceMin").input({7}).output({1}).build(), 0, 7});
  // ReduceProd: 1 multiply per input element; [2,3,5] -> [2,1,5]: 30.
  c.push_back({"reduce_prod",
               NodeBuilder("ReduceProd").input({2, 3, 5}).output({2, 1, 5}).attr("axes", ints({1})).build(), 0, 30});
  // ReduceL1: 2 per input element (abs, add); [3,5] -> 2*15 = 30.
  c.push_back({"reduce_l1", NodeBuilder("ReduceL1").input({3, 5}).output({1, 1}).build(), 0, 30});
  // ReduceLogSum: in + out; [3,5] -> [3,1]: 15 + 3 = 18.
  c.push_back({"reduce_log_sum",
               NodeBuilder("ReduceLogSum").input({3, 5}).output({3, 1}).attr("axes", ints({1})).build(), 0, 18});
  // ReduceLogSumExp: 2*in + out; [2,3,5] -> [2,3,1]: 2*30 + 6 = 66.
  c.push_back({"reduce_log_sum_exp",
               NodeBuilder("ReduceLogSumExp").input({2, 3, 5}).output({2, 3, 1}).attr("axes", ints({2})).build(), 0, 66});
  // ReduceSumSquare: 2 per input element; [9] -> [1]: 18.
  c.push_back({"reduce_sum_square", NodeBuilder("ReduceSumSquare").input({9}).output({1}).build(), 0, 18});
  // ArgMin: 1 comparison per input element; [3,5] axis 1 -> [3,1]: 15.
  c.push_back({"argmin",
               NodeBuilder("ArgMin").input({3, 5}).output({3, 1}, DType::Int64).attr("axis", i64(1)).build(), 0, 15});
  // TopK axis 0, k=7 on [9,4]: ceil(log2 7) = 3 per element; 36 * 3 = 108.
  c.push_back({"topk_axis0_k7",
               NodeBuilder("TopK").input({9, 4}).weight({1}, DType::Int64, {7}).output({7, 4})
                   .output({7, 4}, DType::Int64).attr("axis", i64(0)).build(),
               0, 108});
  // Unique on 5 elements: 5 * ceil(log2 5) = 5*3 = 15.
  c.push_back({"unique_5", NodeBuilder("Unique").input({5}).unknown_rank_output().build(), 0, 15, 11});
  // NLL, weight given, reduction none: input [3,4,5], target [3,5] = 15 elements,
  // (negate + weight) = 2 each -> 30, no divide.
  c.push_back({"nll_loss_weight_none",
               NodeBuilder("NegativeLogLikelihoodLoss").input({3, 4, 5}).input({3, 5}, DType::Int64).weight({4})
                   .output({3, 5}).attr("reduction", str("none")).build(),
               0, 30});
  // NLL, reduction sum, no weight: 5 targets * (negate + accumulate) = 10, no divide.
  c.push_back({"nll_loss_sum",
               NodeBuilder("NegativeLogLikelihoodLoss").input({5, 3}).input({5}, DType::Int64).output({})
                   .attr("reduction", str("sum")).build(),
               0, 10});
  // SoftmaxCrossEntropyLoss, weight, sum: 6*15 scores + 3 labels * (negate + weight + accumulate)
  // = 90 + 9 = 99.
  c.push_back({"softmax_cross_entropy_weight_sum",
               NodeBuilder("SoftmaxCrossEntropyLoss").input({3, 5}).input({3}, DType::Int64).weight({5}).output({})
                   .attr("reduction", str("sum")).build(),
               0, 99});
  // SoftmaxCrossEntropyLoss, none: 6*(2*3) = 36 + 2 labels * 1 (negate) = 38.
  c.push_back({"softmax_cross_entropy_none",
               NodeBuilder("SoftmaxCrossEntropyLoss").input({2, 3}).input({2}, DType::Int64).output({2})
                   .attr("reduction", str("none")).build(),
               0, 38});

  // ---- Data movement / control flow ---------------------------------------
  c.push_back({"transpose", NodeBuilder("Transpose").input({2, 3}).output({3, 2}).build(), 0, 0});
  // Gather reads the rows it selects, not the table: 128*768 floats + 128 int64 indices
  // = 393,216 + 1,024 bytes.
  c.push_back({"gather",
               NodeBuilder("Gather").weight({30522, 768}).input({1, 128}, DType::Int64).output({1, 128, 768}).build(), 0, 0,
               17, Bytes::Selected, 393216 + 1024});
  // ScatterElements reduction=add: 1 per update element, 3*4 = 12.
  c.push_back({"scatter_add",
               NodeBuilder("ScatterElements").input({5, 4}).input({3, 4}, DType::Int64).input({3, 4}).output({5, 4})
                   .attr("reduction", str("add")).build(),
               0, 12, 16});
  // Copies: 0 FLOPs, default bytes (inputs read, outputs written).
  c.push_back({"split",
               NodeBuilder("Split").input({6, 5}).weight({2}, DType::Int64, {2, 4}).output({2, 5}).output({4, 5}).build(), 0, 0});
  c.push_back({"slice",
               NodeBuilder("Slice").input({7, 5}).weight({1}, DType::Int64, {1}).weight({1}, DType::Int64, {4})
                   .output({3, 5}).build(),
               0, 0});
  // GatherElements: 6 floats selected (24 B) + 6 indices (48 B); GatherND: 2 rows of 5 floats
  // (40 B) + 2 indices (16 B).
  c.push_back({"gather_elements",
               NodeBuilder("GatherElements").input({3, 5}).input({3, 2}, DType::Int64).output({3, 2}).build(), 0, 0, 17,
               Bytes::Selected, 24 + 48});
  c.push_back({"gather_nd",
               NodeBuilder("GatherND").input({3, 5}).input({2, 1}, DType::Int64).output({2, 5}).build(), 0, 0, 17,
               Bytes::Selected, 40 + 16});
  c.push_back({"scatter_opset9",
               NodeBuilder("Scatter").input({3, 5}).input({1, 5}, DType::Int64).input({1, 5}).output({3, 5}).build(), 0, 0, 9});
  // ScatterND without reduction: data movement.
  c.push_back({"scatter_nd",
               NodeBuilder("ScatterND").input({4, 3}).input({2, 1}, DType::Int64).input({2, 3}).output({4, 3}).build(), 0, 0});
  // ScatterND reduction=mul: 1 per update element; updates [2,3] = 6.
  c.push_back({"scatter_nd_mul",
               NodeBuilder("ScatterND").input({4, 3}).input({2, 1}, DType::Int64).input({2, 3}).output({4, 3})
                   .attr("reduction", str("mul")).build(),
               0, 6, 16});
  // ScatterElements with reduction=none is a copy.
  c.push_back({"scatter_elements_none",
               NodeBuilder("ScatterElements").input({5, 4}).input({3, 4}, DType::Int64).input({3, 4}).output({5, 4}).build(),
               0, 0});
  c.push_back({"pad",
               NodeBuilder("Pad").input({3, 5}).weight({4}, DType::Int64, {1, 1, 1, 1}).output({5, 7}).build(), 0, 0});
  c.push_back({"center_crop_pad",
               NodeBuilder("CenterCropPad").input({7, 5}).weight({2}, DType::Int64, {3, 9}).output({3, 9}).build(), 0, 0, 18});
  c.push_back({"tile",
               NodeBuilder("Tile").input({3, 5}).weight({2}, DType::Int64, {2, 1}).output({6, 5}).build(), 0, 0});
  c.push_back({"expand",
               NodeBuilder("Expand").input({3, 1}).weight({2}, DType::Int64, {3, 5}).output({3, 5}).build(), 0, 0});
  c.push_back({"constant_of_shape",
               NodeBuilder("ConstantOfShape").weight({2}, DType::Int64, {3, 5}).output({3, 5}).build(), 0, 0});
  c.push_back({"range",
               NodeBuilder("Range").weight({}, DType::Int64, {0}).weight({}, DType::Int64, {7})
                   .weight({}, DType::Int64, {1}).output({7}, DType::Int64).build(),
               0, 0});
  c.push_back({"eye_like", NodeBuilder("EyeLike").input({3, 5}).output({3, 5}).build(), 0, 0});
  // Cast is a conversion, counted as 0 FLOPs.
  c.push_back({"cast", NodeBuilder("Cast").input({3, 5}).output({3, 5}, DType::Float16).attr("to", i64(10)).build(), 0, 0});
  c.push_back({"cast_like",
               NodeBuilder("CastLike").input({3, 5}).input({1}, DType::Float16).output({3, 5}, DType::Float16).build(), 0, 0, 15});
  c.push_back({"depth_to_space",
               NodeBuilder("DepthToSpace").input({1, 12, 3, 5}).output({1, 3, 6, 10}).attr("blocksize", i64(2)).build(), 0, 0});
  c.push_back({"space_to_depth",
               NodeBuilder("SpaceToDepth").input({1, 3, 6, 10}).output({1, 12, 3, 5}).attr("blocksize", i64(2)).build(), 0, 0});
  c.push_back({"non_zero", NodeBuilder("NonZero").input({3, 5}).output({2, 7}, DType::Int64).build(), 0, 0});
  c.push_back({"one_hot",
               NodeBuilder("OneHot").input({3}, DType::Int64).weight({}, DType::Int64, {5}).weight({2})
                   .output({3, 5}).build(),
               0, 0});
  c.push_back({"trilu", NodeBuilder("Trilu").input({5, 5}).output({5, 5}).build(), 0, 0, 14});
  c.push_back({"compress",
               NodeBuilder("Compress").input({3, 5}).input({3}, DType::Bool).output({2, 5}).attr("axis", i64(0)).build(), 0, 0});
  c.push_back({"reverse_sequence",
               NodeBuilder("ReverseSequence").input({5, 3, 2}).input({3}, DType::Int64).output({5, 3, 2}).build(), 0, 0});

  // Views: 0 FLOPs, 0 bytes read and written.
  c.push_back({"reshape",
               NodeBuilder("Reshape").input({3, 5}).weight({1}, DType::Int64, {15}).output({15}).build(), 0, 0, 17,
               Bytes::NoneMoved});
  c.push_back({"flatten", NodeBuilder("Flatten").input({3, 5, 7}).output({3, 35}).build(), 0, 0, 17, Bytes::NoneMoved});
  c.push_back({"squeeze",
               NodeBuilder("Squeeze").input({3, 1, 5}).weight({1}, DType::Int64, {1}).output({3, 5}).build(), 0, 0, 17,
               Bytes::NoneMoved});
  c.push_back({"unsqueeze",
               NodeBuilder("Unsqueeze").input({3, 5}).weight({1}, DType::Int64, {0}).output({1, 3, 5}).build(), 0, 0, 17,
               Bytes::NoneMoved});
  c.push_back({"identity", NodeBuilder("Identity").input({3, 5}).output({3, 5}).build(), 0, 0, 17, Bytes::NoneMoved});
  c.push_back({"dropout_inference", NodeBuilder("Dropout").input({3, 5}).output({3, 5}).build(), 0, 0, 17, Bytes::NoneMoved});
  // Dropout-6 with is_test=0 (the default) trains: compare + masked scale, 2 per element: 15 -> 30.
  c.push_back({"dropout_training_is_test_default_opset6", NodeBuilder("Dropout").input({3, 5}).output({3, 5}).build(), 0,
               30, 6});
  c.push_back({"dropout_is_test_opset6",
               NodeBuilder("Dropout").input({3, 5}).output({3, 5}).attr("is_test", i64(1)).build(), 0, 0, 6,
               Bytes::NoneMoved});

  // Metadata readers: 0 bytes read, the small output written (no written override).
  c.push_back({"shape", NodeBuilder("Shape").input({3, 5, 7}).output({3}, DType::Int64).build(), 0, 0, 17, Bytes::NoneRead});
  c.push_back({"size", NodeBuilder("Size").input({3, 5, 7}).output({}, DType::Int64).build(), 0, 0, 17, Bytes::NoneRead});
  c.push_back({"constant", NodeBuilder("Constant").output({3, 5}).build(), 0, 0, 17, Bytes::NoneRead});

  // Control flow: 0 FLOPs and 0 bytes itself (subgraph nodes carry the cost, counted once).
  c.push_back({"if", NodeBuilder("If").input({}, DType::Bool).unknown_rank_output().build(), 0, 0, 17, Bytes::NoneMoved});
  c.push_back({"loop",
               NodeBuilder("Loop").input({}, DType::Int64).input({}, DType::Bool).unknown_rank_output().build(), 0, 0, 17,
               Bytes::NoneMoved});
  c.push_back({"scan", NodeBuilder("Scan").input({3, 5}).unknown_rank_output().build(), 0, 0, 16, Bytes::NoneMoved});
  c.push_back({"sequence_map",
               NodeBuilder("SequenceMap").unknown_rank_input().unknown_rank_output().build(), 0, 0, 17, Bytes::NoneMoved});
  // Sequence / optional containers: 0 FLOPs, default bytes. (Sequence-typed
  // values are given as unknown-rank tensors; the rule reads no shape.)
  c.push_back({"sequence_at",
               NodeBuilder("SequenceAt").unknown_rank_input().weight({}, DType::Int64, {0}).output({3, 5}).build(), 0, 0});
  c.push_back({"sequence_construct",
               NodeBuilder("SequenceConstruct").input({3, 5}).input({3, 5}).unknown_rank_output().build(), 0, 0});
  c.push_back({"sequence_empty", NodeBuilder("SequenceEmpty").unknown_rank_output().build(), 0, 0});
  c.push_back({"sequence_erase",
               NodeBuilder("SequenceErase").unknown_rank_input().weight({}, DType::Int64, {0}).unknown_rank_output().build(),
               0, 0});
  c.push_back({"sequence_insert",
               NodeBuilder("SequenceInsert").unknown_rank_input().input({3, 5}).unknown_rank_output().build(), 0, 0});
  c.push_back({"sequence_length",
               NodeBuilder("SequenceLength").unknown_rank_input().output({}, DType::Int64).build(), 0, 0});
  c.push_back({"split_to_sequence",
               NodeBuilder("SplitToSequence").input({6, 5}).unknown_rank_output().build(), 0, 0});
  c.push_back({"concat_from_sequence",
               NodeBuilder("ConcatFromSequence").unknown_rank_input().output({6, 5}).attr("axis", i64(0)).build(), 0, 0});
  c.push_back({"optional", NodeBuilder("Optional").input({3, 5}).unknown_rank_output().build(), 0, 0, 15});
  c.push_back({"optional_get_element",
               NodeBuilder("OptionalGetElement").unknown_rank_input().output({3, 5}).build(), 0, 0, 18});
  c.push_back({"optional_has_element",
               NodeBuilder("OptionalHasElement").unknown_rank_input().output({}, DType::Bool).build(), 0, 0, 18});
  // ---- Attention (analyzer/cost/attention.cc) -----------------------------
  // Core: MACs = B*N*S*T*H (QK^T) + B*N*S*T*Hv (AV); FLOPs = 2*MACs + per score
  // 1 (scale) + 5 (softmax) + 1 per mask source + 3 for softcap.
  // com.microsoft Attention, BERT-like: x [2,4,8], W [8,24], bias, raw mask [2,4], 2 heads of 4, T = 4.
  // projection 2*4*8*24 = 1536; scores 2*2*4*4 = 64, core 64*4 + 64*4 = 512; MACs 2048.
  // FLOPs = 4096 + bias 2*4*24 = 192 + scores 64*(6 + 1 mask) = 448 -> 4736.
  c.push_back({"contrib_attention_bert",
               NodeBuilder("Attention", "com.microsoft").input({2, 4, 8}).weight({8, 24}).weight({24})
                   .input({2, 4}, DType::Int32).output({2, 4, 8}).attr("num_heads", i64(2)).build(),
               2048, 4736, 1});
  // GPT-2 step: x [1,1,8], past [2,1,2,3,4] (P = 3, T = 4), unidirectional. projection 1*1*8*24 = 192;
  // scores 1*2*1*4 = 8, core 8*4 + 8*4 = 64; MACs 256. FLOPs = 512 + bias 24 + 8*(6 + 1 causal) = 56 -> 592.
  c.push_back({"contrib_attention_past_causal",
               NodeBuilder("Attention", "com.microsoft").input({1, 1, 8}).weight({8, 24}).weight({24}).omitted_input()
                   .input({2, 1, 2, 3, 4}).output({1, 1, 8}).output({2, 1, 2, 4, 4})
                   .attr("num_heads", i64(2)).attr("unidirectional", i64(1)).build(),
               256, 592, 1});
  // MultiHeadAttention: q [2,3,8], k [2,5,8], v [2,5,12], bias [28], key_padding_mask [2,6],
  // attention_bias [1,2,3,6], past 1 row: 2 heads, H 4, Hv 6, T = 1 + 5 = 6. scores 2*2*3*6 = 72;
  // MACs 72*4 + 72*6 = 720. FLOPs = 1440 + bias (2*3*8 + 2*5*(8+12) = 248) + 72*(6+2) = 576 -> 2264.
  c.push_back({"multi_head_attention",
               NodeBuilder("MultiHeadAttention", "com.microsoft").input({2, 3, 8}).input({2, 5, 8}).input({2, 5, 12})
                   .weight({28}).input({2, 6}, DType::Int32).input({1, 2, 3, 6}).input({2, 2, 1, 4})
                   .input({2, 2, 1, 6}).output({2, 3, 12}).attr("num_heads", i64(2)).build(),
               720, 2264, 1});
  // GroupQueryAttention with rotary: q [1,4,32] (4 heads of 8), k/v [1,4,16] (2 KV heads), 6 past rows:
  // T = 10, scores 1*4*4*10 = 160, MACs 160*8*2 = 2560. FLOPs = 5120 + 160*(6 + 1 causal) = 1120
  // + rotary 3 * 1*4*(4+2)*8 (cos_cache [16,4]: rotary dim 8) = 576 -> 6816.
  c.push_back({"group_query_attention_rotary",
               NodeBuilder("GroupQueryAttention", "com.microsoft").input({1, 4, 32}).input({1, 4, 16}).input({1, 4, 16})
                   .input({1, 2, 6, 8}).input({1, 2, 6, 8}).input({1}, DType::Int32).input({}, DType::Int32)
                   .weight({16, 4}).weight({16, 4}).output({1, 4, 32})
                   .attr("num_heads", i64(4)).attr("kv_num_heads", i64(2)).attr("do_rotary", i64(1)).build(),
               2560, 6816, 1});
  // Packed QKV [2,3,64] = (4 + 2*2) heads of 8, no past, not causal, softcap: T = 3, scores 2*4*3*3 = 72;
  // MACs 72*16 = 1152; FLOPs = 2304 + 72*(6 + 3 softcap) = 648 -> 2952.
  c.push_back({"group_query_attention_packed_softcap",
               NodeBuilder("GroupQueryAttention", "com.microsoft").input({2, 3, 64}).omitted_input().omitted_input()
                   .omitted_input().omitted_input().input({2}, DType::Int32).input({}, DType::Int32).output({2, 3, 32})
                   .attr("num_heads", i64(4)).attr("kv_num_heads", i64(2)).attr("causal", i64(0))
                   .attr("softcap", AttrValue{30.0}).build(),
               1152, 2952, 1});
  // com.microsoft RotaryEmbedding: x [2,3,16] as 2 heads of 8, cos [10,2] (rotary dim 4):
  // rotated 96/8*4 = 48 elements, 3 each = 144.
  c.push_back({"contrib_rotary_embedding",
               NodeBuilder("RotaryEmbedding", "com.microsoft").input({2, 3, 16}).input({2, 3}, DType::Int64)
                   .weight({10, 2}).weight({10, 2}).output({2, 3, 16}).attr("num_heads", i64(2)).build(),
               0, 144, 1});
  // ai.onnx RotaryEmbedding-23: X [1,2,3,8] (head 8), cos [1,3,4] (rotary dim 8): 48 rotated, 144.
  c.push_back({"onnx_rotary_embedding_23",
               NodeBuilder("RotaryEmbedding").input({1, 2, 3, 8}).input({1, 3, 4}).input({1, 3, 4})
                   .output({1, 2, 3, 8}).build(),
               0, 144, 23});
  // ai.onnx Attention-23, 3-D GQA: Q [2,3,16] (4 heads of 4), K [2,5,8] (2 KV heads), V [2,5,12]
  // (Hv 6), mask, 2 past rows, causal: T = 7, scores 2*4*3*7 = 168; MACs 168*4 + 168*6 = 1680;
  // FLOPs = 3360 + 168*(6 + 1 mask + 1 causal) = 1344 -> 4704.
  c.push_back({"onnx_attention_23_gqa",
               NodeBuilder("Attention").input({2, 3, 16}).input({2, 5, 8}).input({2, 5, 12})
                   .input({3, 7}, DType::Bool).input({2, 2, 2, 4}).input({2, 2, 2, 6}).output({2, 3, 24})
                   .attr("q_num_heads", i64(4)).attr("kv_num_heads", i64(2)).attr("is_causal", i64(1)).build(),
               1680, 4704, 23});
  // 4-D with softcap: Q [1,2,4,8], K/V [1,2,6,8]: scores 1*2*4*6 = 48; MACs 48*16 = 768;
  // FLOPs = 1536 + 48*(6 + 3) = 432 -> 1968.
  c.push_back({"onnx_attention_23_softcap",
               NodeBuilder("Attention").input({1, 2, 4, 8}).input({1, 2, 6, 8}).input({1, 2, 6, 8})
                   .output({1, 2, 4, 8}).attr("softcap", AttrValue{50.0}).build(),
               768, 1968, 23});
  add_contrib_misc_cases(c);
  return c;
}

class ExactCost : public ::testing::TestWithParam<ExactCase> {};

TEST_P(ExactCost, MatchesHandComputedValues) {
  const ExactCase& tc = GetParam();
  const cost::RuleResult r = run_cost_rule(tc.graph, tc.opset);
  EXPECT_EQ(r.status, CostStatus::Exact) << r.note;
  EXPECT_EQ(r.macs, tc.macs);
  EXPECT_EQ(r.flops, tc.flops);
  EXPECT_FALSE(r.rule.empty());
  switch (tc.bytes) {
    case Bytes::Default:
      EXPECT_FALSE(r.bytes_read_override.has_value());
      EXPECT_FALSE(r.bytes_written_override.has_value());
      break;
    case Bytes::NoneRead:
      EXPECT_EQ(r.bytes_read_override, std::optional<int64_t>(0));
      EXPECT_FALSE(r.bytes_written_override.has_value());
      break;
    case Bytes::NoneMoved:
      EXPECT_EQ(r.bytes_read_override, std::optional<int64_t>(0));
      EXPECT_EQ(r.bytes_written_override, std::optional<int64_t>(0));
      break;
    case Bytes::Selected:
      EXPECT_EQ(r.bytes_read_override, std::optional<int64_t>(tc.read_bytes));
      EXPECT_FALSE(r.bytes_written_override.has_value());
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, ExactCost, ::testing::ValuesIn(exact_cases()),
                         [](const ::testing::TestParamInfo<ExactCase>& info) { return info.param.name; });

// Every registered rule (each (domain, op type, opset range) key of
// cost::all_rules()) is the rule selected for at least one exact case above, so a
// new rule without a hand-computed case fails here, naming its op type.
TEST(RuleCoverage, EveryRuleHasAnExactCase) {
  std::set<const cost::CostRule*> covered;
  std::set<std::string> names;
  for (const ExactCase& tc : exact_cases()) {
    EXPECT_TRUE(names.insert(tc.name).second) << "duplicate case name " << tc.name;
    ASSERT_FALSE(tc.graph.nodes.empty()) << tc.name;
    const Node& node = tc.graph.nodes[0];
    const cost::CostRule* rule = cost::find_rule(node.domain, node.op_type, tc.opset);
    EXPECT_NE(rule, nullptr) << tc.name << ": no rule for " << node.op_type << " at opset " << tc.opset;
    if (rule) covered.insert(rule);
  }
  // The op case table (tests/op_cases.hpp, tests/analyzer/op_cases_test.cc) covers the ops it lists.
  for (const test::OpCase& c : test::op_cases())
    if (const cost::CostRule* rule = cost::find_rule("", c.op, c.opset)) covered.insert(rule);
  std::string missing;
  size_t n_missing = 0;
  for (const cost::CostRule& rule : cost::all_rules()) {
    if (covered.count(&rule)) continue;
    ++n_missing;
    missing += " " + (rule.key.domain.empty() ? std::string() : rule.key.domain + ".") + rule.key.op_type;
    if (rule.key.since_version != 1 || rule.key.until_version != std::numeric_limits<int64_t>::max())
      missing += "(opset " + std::to_string(rule.key.since_version) + ".." +
                 (rule.key.until_version == std::numeric_limits<int64_t>::max()
                      ? std::string()
                      : std::to_string(rule.key.until_version)) + ")";
  }
  EXPECT_EQ(n_missing, 0u) << n_missing << " of " << cost::all_rules().size()
                           << " cost rules have no exact case in exact_cases() or tests/op_cases.hpp:"
                           << missing;
}

// ---------------------------------------------------------------------------
// Unknown shapes: the rule exists but a dim it needs is unknown.

constexpr int64_t U = test::kUnknownDim;

struct UnknownCase {
  std::string name;
  Graph graph;
};
void PrintTo(const UnknownCase& c, std::ostream* os) { *os << c.name; }

std::vector<UnknownCase> unknown_cases() {
  std::vector<UnknownCase> c;
  c.push_back({"conv_output_unknown",
               NodeBuilder("Conv").input({U, 3, 224, 224}).weight({64, 3, 7, 7}).output({U, 64, 112, 112}).build()});
  c.push_back({"conv_weight_unknown_rank",
               NodeBuilder("Conv").input({1, 3, 8, 8}).unknown_rank_input().output({1, 4, 6, 6}).build()});
  c.push_back({"conv_transpose_input_unknown",
               NodeBuilder("ConvTranspose").input({1, U, 8, 8}).weight({4, 2, 3, 3}).output({1, 2, 10, 10}).build()});
  c.push_back({"gemm_unknown", NodeBuilder("Gemm").input({U, 2048}).weight({1000, 2048}).output({U, 1000}).build()});
  c.push_back({"matmul_unknown_rank", NodeBuilder("MatMul").unknown_rank_input().input({4, 5}).unknown_rank_output().build()});
  c.push_back({"einsum_unknown",
               NodeBuilder("Einsum").input({U, 3}).input({3, 4}).output({U, 4}).attr("equation", str("ij,jk->ik")).build()});
  c.push_back({"lstm_unknown_seq",
               NodeBuilder("LSTM").input({U, 1, 10}).weight({1, 80, 10}).weight({1, 80, 20}).unknown_rank_output().build()});
  c.push_back({"add_unknown",
               NodeBuilder("Add").input({U, 768}).input({768}).output({U, 768}).build()});
  c.push_back({"relu_unknown_rank", NodeBuilder("Relu").unknown_rank_input().unknown_rank_output().build()});
  c.push_back({"layernorm_unknown", NodeBuilder("LayerNormalization").input({U, 768}).weight({768}).output({U, 768}).build()});
  c.push_back({"maxpool_unknown",
               NodeBuilder("MaxPool").input({1, 3, U, U}).output({1, 3, U, U}).attr("kernel_shape", ints({3, 3})).build()});
  c.push_back({"global_avgpool_unknown", NodeBuilder("GlobalAveragePool").input({U, 8, 7, 7}).output({U, 8, 1, 1}).build()});
  c.push_back({"resize_linear_unknown",
               NodeBuilder("Resize").input({1, 3, U, U}).omitted_input().weight({4}).output({1, 3, U, U})
                   .attr("mode", str("linear")).build()});
  c.push_back({"reduce_mean_unknown", NodeBuilder("ReduceMean").input({U, 4}).output({U, 1}).build()});
  c.push_back({"softmax_unknown", NodeBuilder("Softmax").input({1, U}).output({1, U}).build()});
  c.push_back({"matmul_nbits_unknown", NodeBuilder("MatMulNBits", "com.microsoft")
                                           .input({U, 64})
                                           .weight({32, 2, 16}, DType::UInt8)
                                           .weight({32, 2})
                                           .output({U, 32})
                                           .attr("K", i64(64))
                                           .attr("N", i64(32))
                                           .build()});
  c.push_back({"fused_gemm_unknown_activation", NodeBuilder("FusedGemm", "com.microsoft")
                                                    .input({4, 8})
                                                    .weight({8, 16})
                                                    .output({4, 16})
                                                    .attr("activation", str("NoSuchActivation"))
                                                    .build()});
  // RoiAlign adaptive sampling (default 0) depends on ROI values.
  c.push_back({"roi_align_adaptive",
               NodeBuilder("RoiAlign").input({1, 256, 50, 50}).input({4, 4}).input({4}, DType::Int64)
                   .output({4, 256, 7, 7}).build()});
  // Attention: the kv length or the past length unknown.
  c.push_back({"group_query_attention_unknown_seq",
               NodeBuilder("GroupQueryAttention", "com.microsoft").input({1, U, 32}).input({1, U, 16}).input({1, U, 16})
                   .output({1, U, 32}).attr("num_heads", i64(4)).attr("kv_num_heads", i64(2)).build()});
  c.push_back({"multi_head_attention_unknown_past",
               NodeBuilder("MultiHeadAttention", "com.microsoft").input({1, 4, 8}).input({1, 4, 8}).input({1, 4, 8})
                   .omitted_input().omitted_input().omitted_input().unknown_rank_input().unknown_rank_input()
                   .output({1, 4, 8}).attr("num_heads", i64(2)).build()});
  return c;
}

class UnknownCost : public ::testing::TestWithParam<UnknownCase> {};

TEST_P(UnknownCost, ReportsUnknownShapeWithNote) {
  const cost::RuleResult r = run_cost_rule(GetParam().graph);
  EXPECT_EQ(r.status, CostStatus::UnknownShape);
  EXPECT_FALSE(r.note.empty());
  EXPECT_FALSE(r.rule.empty());
  EXPECT_EQ(r.macs, 0);
  EXPECT_EQ(r.flops, 0);
}

INSTANTIATE_TEST_SUITE_P(Rules, UnknownCost, ::testing::ValuesIn(unknown_cases()),
                         [](const ::testing::TestParamInfo<UnknownCase>& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Garbage attributes and inconsistent shapes: UnknownShape with a note, no crash.

std::vector<UnknownCase> garbage_cases() {
  std::vector<UnknownCase> c;
  c.push_back({"conv_group_zero",
               NodeBuilder("Conv").input({1, 4, 8, 8}).weight({4, 4, 3, 3}).output({1, 4, 6, 6}).attr("group", i64(0)).build()});
  c.push_back({"conv_group_negative",
               NodeBuilder("Conv").input({1, 4, 8, 8}).weight({4, 4, 3, 3}).output({1, 4, 6, 6}).attr("group", i64(-2)).build()});
  c.push_back({"conv_weight_rank_1", NodeBuilder("Conv").input({1, 4, 8, 8}).weight({4}).output({1, 4, 6, 6}).build()});
  c.push_back({"conv_missing_weight", NodeBuilder("Conv").input({1, 4, 8, 8}).output({1, 4, 6, 6}).build()});
  c.push_back({"conv_channels_mismatch",
               NodeBuilder("Conv").input({1, 4, 8, 8}).weight({5, 4, 3, 3}).output({1, 4, 6, 6}).build()});
  c.push_back({"conv_transpose_group_zero",
               NodeBuilder("ConvTranspose").input({1, 4, 8, 8}).weight({4, 2, 3, 3}).output({1, 2, 10, 10})
                   .attr("group", i64(0)).build()});
  c.push_back({"gemm_rank_3", NodeBuilder("Gemm").input({2, 3, 4}).input({4, 5}).output({2, 3, 5}).build()});
  c.push_back({"gemm_inner_mismatch", NodeBuilder("Gemm").input({3, 4}).input({5, 6}).output({3, 6}).build()});
  c.push_back({"matmul_inner_mismatch", NodeBuilder("MatMul").input({3, 4}).input({5, 6}).output({3, 6}).build()});
  c.push_back({"matmul_batch_mismatch", NodeBuilder("MatMul").input({2, 3, 4}).input({3, 4, 5}).output({2, 3, 5}).build()});
  c.push_back({"matmul_scalar", NodeBuilder("MatMul").input({}).input({4}).output({4}).build()});
  c.push_back({"einsum_no_equation", NodeBuilder("Einsum").input({3, 4}).input({4, 5}).output({3, 5}).build()});
  c.push_back({"einsum_bad_equation",
               NodeBuilder("Einsum").input({3, 4}).input({4, 5}).output({3, 5}).attr("equation", str("i#,j?->")).build()});
  c.push_back({"einsum_operand_count",
               NodeBuilder("Einsum").input({3, 4}).output({3, 4}).attr("equation", str("ij,jk->ik")).build()});
  c.push_back({"einsum_rank_mismatch",
               NodeBuilder("Einsum").input({3, 4, 5}).input({4, 5}).output({3, 5}).attr("equation", str("ij,jk->ik")).build()});
  c.push_back({"einsum_size_conflict",
               NodeBuilder("Einsum").input({3, 4}).input({6, 5}).output({3, 5}).attr("equation", str("ij,jk->ik")).build()});
  c.push_back({"einsum_output_letter_unknown",
               NodeBuilder("Einsum").input({3, 4}).input({4, 5}).output({3, 5}).attr("equation", str("ij,jk->iz")).build()});
  c.push_back({"lstm_gate_mismatch",
               NodeBuilder("LSTM").input({5, 1, 10}).weight({1, 81, 10}).weight({1, 81, 20}).unknown_rank_output().build()});
  c.push_back({"gru_missing_r", NodeBuilder("GRU").input({5, 1, 10}).weight({1, 30, 10}).unknown_rank_output().build()});
  c.push_back({"maxpool_no_kernel", NodeBuilder("MaxPool").input({1, 3, 8, 8}).output({1, 3, 4, 4}).build()});
  c.push_back({"maxpool_zero_kernel",
               NodeBuilder("MaxPool").input({1, 3, 8, 8}).output({1, 3, 4, 4}).attr("kernel_shape", ints({0, 2})).build()});
  c.push_back({"avgpool_negative_kernel",
               NodeBuilder("AveragePool").input({1, 3, 8, 8}).output({1, 3, 4, 4}).attr("kernel_shape", ints({-3, 2})).build()});
  c.push_back({"global_pool_rank_1", NodeBuilder("GlobalAveragePool").input({8}).output({8}).build()});
  c.push_back({"lrn_size_zero", NodeBuilder("LRN").input({1, 4, 4, 4}).output({1, 4, 4, 4}).attr("size", i64(0)).build()});
  c.push_back({"resize_bogus_mode",
               NodeBuilder("Resize").input({1, 3, 4, 4}).omitted_input().weight({4}).output({1, 3, 8, 8})
                   .attr("mode", str("bogus")).build()});
  c.push_back({"resize_rank_mismatch",
               NodeBuilder("Resize").input({1, 3, 4, 4}).omitted_input().weight({4}).output({3, 8, 8})
                   .attr("mode", str("linear")).build()});
  c.push_back({"topk_axis_out_of_range",
               NodeBuilder("TopK").input({1, 10}).weight({1}, DType::Int64, {3}).output({1, 3}).output({1, 3}, DType::Int64)
                   .attr("axis", i64(7)).build()});
  c.push_back({"roi_align_negative_ratio",
               NodeBuilder("RoiAlign").input({1, 8, 5, 5}).input({2, 4}).input({2}, DType::Int64).output({2, 8, 2, 2})
                   .attr("sampling_ratio", i64(-4)).build()});
  c.push_back({"det_not_square", NodeBuilder("Det").input({2, 3, 4}).output({2}).build()});
  return c;
}

class GarbageCost : public ::testing::TestWithParam<UnknownCase> {};

TEST_P(GarbageCost, ReportsUnknownShapeInsteadOfCrashing) {
  cost::RuleResult r;
  ASSERT_NO_THROW(r = run_cost_rule(GetParam().graph));
  EXPECT_EQ(r.status, CostStatus::UnknownShape);
  EXPECT_FALSE(r.note.empty());
}

INSTANTIATE_TEST_SUITE_P(Rules, GarbageCost, ::testing::ValuesIn(garbage_cases()),
                         [](const ::testing::TestParamInfo<UnknownCase>& info) { return info.param.name; });

// Every registered rule survives degenerate nodes: no inputs, unknown ranks,
// scalars, empty dims, and absurd attributes. Any status is fine; no crash, no throw.
TEST(CostRules, EveryRuleSurvivesDegenerateNodes) {
  auto garbage_attrs = [](NodeBuilder b) {
    return b.attr("group", i64(0)).attr("kernel_shape", ints({-1, 0})).attr("axis", i64(99))
        .attr("equation", str("->,...,")).attr("sampling_ratio", i64(-3)).attr("size", i64(-1))
        .attr("mode", str("??")).attr("transA", i64(7)).attr("layout", i64(5)).attr("axes", ints({42}))
        .attr("approximate", str("")).attr("reduction", str("sum"));
  };
  std::vector<std::pair<std::string, NodeBuilder (*)(const std::string&)>> shapes = {
      {"no_inputs", [](const std::string& op) { return NodeBuilder(op); }},
      {"unknown_ranks",
       [](const std::string& op) {
         NodeBuilder b(op);
         for (int i = 0; i < 9; ++i) b.unknown_rank_input();
         for (int i = 0; i < 3; ++i) b.unknown_rank_output();
         return b;
       }},
      {"scalars",
       [](const std::string& op) {
         NodeBuilder b(op);
         for (int i = 0; i < 9; ++i) b.input({});
         for (int i = 0; i < 3; ++i) b.output({});
         return b;
       }},
      {"empty_dims",
       [](const std::string& op) {
         NodeBuilder b(op);
         for (int i = 0; i < 9; ++i) b.input({0});
         for (int i = 0; i < 3; ++i) b.output({0});
         return b;
       }},
      {"rank5_ones",
       [](const std::string& op) {
         NodeBuilder b(op);
         for (int i = 0; i < 9; ++i) b.input({1, 1, 1, 1, 1});
         for (int i = 0; i < 3; ++i) b.output({1, 1, 1, 1, 1});
         return b;
       }},
      {"omitted",
       [](const std::string& op) {
         NodeBuilder b(op);
         for (int i = 0; i < 9; ++i) b.omitted_input();
         for (int i = 0; i < 3; ++i) b.omitted_output();
         return b;
       }},
  };
  for (const cost::CostRule& rule : cost::all_rules()) {
    for (const auto& [label, make] : shapes) {
      for (bool garbage : {false, true}) {
        NodeBuilder b = make(rule.key.op_type);
        if (garbage) b = garbage_attrs(b);
        const Graph g = b.build();
        SCOPED_TRACE(rule.key.op_type + " " + label + (garbage ? " +garbage attrs" : ""));
        cost::RuleResult r;
        EXPECT_NO_THROW(r = rule.fn(cost::CostContext(g, g.nodes[0], rule.key.since_version)));
        EXPECT_GE(r.macs, 0);
        EXPECT_GE(r.flops, 0);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Overflow: products beyond 2^63 throw modelstat::Error, never wrap.

TEST(CostRules, OverflowThrows) {
  const int64_t big = int64_t(1) << 31;
  // MatMul 2^31 x 2^31 x 2^31 = 2^93 MACs.
  const Graph matmul = NodeBuilder("MatMul").input({big, big}).input({big, big}).output({big, big}).build();
  EXPECT_THROW(run_cost_rule(matmul), Error);
  // Conv: output 2^62 elements, times 4*3*3 per output.
  const Graph conv = NodeBuilder("Conv").input({1, 4, 8, 8}).weight({big, 4, 3, 3})
                         .output({1, big, big, 1}).build();
  EXPECT_THROW(run_cost_rule(conv), Error);
  // Elementwise output with 2^64 elements: the element count itself overflows.
  const Graph add = NodeBuilder("Add").input({big, big, 4}).input({1}).output({big, big, 4}).build();
  EXPECT_THROW(run_cost_rule(add), Error);
  // Sigmoid: 2^62 elements fit, 4 FLOPs each do not.
  const Graph sigmoid = NodeBuilder("Sigmoid").input({big, big / 2, 2}).output({big, big / 2, 2}).build();
  EXPECT_THROW(run_cost_rule(sigmoid), Error);
  // LSTM units * gates * (input + hidden).
  const Graph lstm = NodeBuilder("LSTM").input({big, big, 8}).weight({1, 4 * big, 8}).weight({1, 4 * big, big})
                         .unknown_rank_output().build();
  EXPECT_THROW(run_cost_rule(lstm), Error);
}

TEST(CostRules, OverflowErrorNamesTheNode) {
  const int64_t big = int64_t(1) << 40;
  const Graph g = NodeBuilder("Gemm").input({big, big}).input({big, big}).output({big, big}).build();
  try {
    run_cost_rule(g);
    FAIL() << "expected modelstat::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_EQ(e.node(), "Gemm_0");
    EXPECT_EQ(e.op(), "Gemm");
  }
}

// ---------------------------------------------------------------------------
// Byte overrides: views move nothing, metadata readers read nothing.

TEST(CostRules, ViewsMoveNoBytes) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    SCOPED_TRACE(op);
    const Graph g = NodeBuilder(op).input({2, 3}).output({6}).build();
    const cost::RuleResult r = run_cost_rule(g);
    EXPECT_EQ(r.status, CostStatus::Exact);
    EXPECT_EQ(r.flops, 0);
    ASSERT_TRUE(r.bytes_read_override.has_value());
    ASSERT_TRUE(r.bytes_written_override.has_value());
    EXPECT_EQ(*r.bytes_read_override, 0);
    EXPECT_EQ(*r.bytes_written_override, 0);
  }
}

TEST(CostRules, MetadataReadersReadNothing) {
  for (const char* op : {"Shape", "Size"}) {
    SCOPED_TRACE(op);
    const Graph g = NodeBuilder(op).input({2, 3}).output({2}, DType::Int64).build();
    const cost::RuleResult r = run_cost_rule(g);
    EXPECT_EQ(r.flops, 0);
    ASSERT_TRUE(r.bytes_read_override.has_value());
    EXPECT_EQ(*r.bytes_read_override, 0);
    EXPECT_FALSE(r.bytes_written_override.has_value());  // the shape vector is written
  }
  const cost::RuleResult c = run_cost_rule(NodeBuilder("Constant").output({4}).build());
  ASSERT_TRUE(c.bytes_read_override.has_value());
  EXPECT_EQ(*c.bytes_read_override, 0);
}

TEST(CostRules, CopiesKeepDefaultBytes) {
  for (const char* op : {"Concat", "Transpose", "Slice", "Gather", "Expand", "Tile", "Pad", "Cast"}) {
    SCOPED_TRACE(op);
    const cost::RuleResult r = run_cost_rule(NodeBuilder(op).input({2, 3}).output({3, 2}).build());
    EXPECT_EQ(r.status, CostStatus::Exact);
    EXPECT_EQ(r.flops, 0);
    EXPECT_FALSE(r.bytes_read_override.has_value());
    EXPECT_FALSE(r.bytes_written_override.has_value());
  }
}

TEST(CostRules, ControlFlowCountsSubgraphsElsewhere) {
  for (const char* op : {"If", "Loop", "Scan"}) {
    SCOPED_TRACE(op);
    const cost::RuleResult r = run_cost_rule(NodeBuilder(op).input({}, DType::Bool).unknown_rank_output().build());
    EXPECT_EQ(r.status, CostStatus::Exact);
    EXPECT_EQ(r.rule, "control_flow");
    EXPECT_NE(r.note.find("subgraph"), std::string::npos) << r.note;  // its cost is the subgraph's
    EXPECT_EQ(r.macs, 0);
    EXPECT_EQ(r.flops, 0);
  }
}

// Data movement never depends on shapes: unknown dims still give an exact 0.
TEST(CostRules, DataMovementIsExactEvenWithUnknownShapes) {
  const cost::RuleResult r = run_cost_rule(NodeBuilder("Transpose").unknown_rank_input().unknown_rank_output().build());
  EXPECT_EQ(r.status, CostStatus::Exact);
  EXPECT_EQ(r.flops, 0);
}

// A bias input changes Conv FLOPs by exactly the output element count.
TEST(CostRules, ConvBiasAddsOneFlopPerOutput) {
  const Graph without = NodeBuilder("Conv").input({1, 8, 10, 10}).weight({16, 8, 3, 3}).output({1, 16, 8, 8}).build();
  const Graph with = NodeBuilder("Conv").input({1, 8, 10, 10}).weight({16, 8, 3, 3}).weight({16})
                         .output({1, 16, 8, 8}).build();
  const cost::RuleResult a = run_cost_rule(without), b = run_cost_rule(with);
  EXPECT_EQ(a.macs, b.macs);
  EXPECT_EQ(b.flops - a.flops, 16 * 8 * 8);  // 1024 bias adds
}

}  // namespace
}  // namespace modelstat
