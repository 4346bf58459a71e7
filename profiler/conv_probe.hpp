// The convolution samples of `modelstat device` (modelstat::ConvSample): fp32
// Conv groups run by modelstat's CPU executor over a grid of synthetic shapes,
// which `fit` prices a model's Conv groups from (docs/FIT.md, "Convolution
// samples").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "modelstat/ceilings.hpp"
#include "modelstat/graph.hpp"
#include "profiler/ceilings_plan.hpp"
#include "profiler/device.hpp"

namespace modelstat::profiler {

// Median seconds of one run of `model` on the executor (inference, fp32),
// its 4-D inputs channels-last as a Conv group reads them in a model; a note
// when the timing did not converge. The samples' common timer.
double time_probe_model(Device& device, const CeilingsPlan& plan, const Model& model, const std::string& label,
                        std::vector<std::string>& notes);
// The protocol of the samples (many points, each a few ms): 0.04 s of
// warm-up, >= 5 samples over >= 0.08 s, until the median's CI is within 3% or
// 1 s has passed.
CeilingsPlan sample_plan(const CeilingsPlan& plan);
// The bytes of weights and outputs a sample's copies pass so that each weight
// comes from memory, as in a model larger than the caches (64 MiB: twice the
// project VM's last-level cache).
inline constexpr int64_t kProbeColdBytes = int64_t(64) << 20;
// 0 .. n-1 in an order shuffled once by `seed`: the samples' points run so,
// and a slow spell of the machine lands on points scattered over a grid.
std::vector<size_t> shuffled_order(size_t n, unsigned seed);
// Times one Conv of each grid point (kinds "1x1", "kxk", "kxk/s2"; input and
// output channels and output size on a grid, products above 1 GFLOP left
// out except the wide kxk convs, which a weight past the L2 cache slows:
// reading 512 channels up to 2 GFLOP, writing 1024 from 256 or more up to 8;
// depthwise "dw", "dw/s2", 3x3 and 5x5, 32-512 channels; `quick`: a
// coarser grid) as the executor runs it in a model: oneDNN
// with its weights prepacked, the input channels-last, several copies with
// weights of their own run in turn so that a weight is not in cache when its
// conv runs (as in a model whose weights exceed the caches). CPU only; a
// point that fails is left out with a note.
std::vector<ConvSample> measure_conv_samples(Device& device, const CeilingsPlan& plan, bool quick,
                                             std::vector<std::string>& notes);

// The int8 samples (kinds "int8 1x1", "int8 kxk", "int8 dw", stride 1; a
// coarser grid, products up to 1 GFLOP): the executor's int8 convolution of
// a QDQ group (int8_conv: u8 activations channels-last, s8 weights of the
// full range, dequantized as written), two copies with weights of their own
// run in turn. The full probe runs two passes, half a minute apart, and takes
// each point's geometric mean (merge_sample_passes). `fit` prices QDQ,
// ConvInteger and QLinearConv convs on them (docs/FIT.md, "int8 convolution
// samples"). CPU with oneDNN's int8 kernels only (none elsewhere, with a note).
std::vector<ConvSample> measure_int8_conv_samples(Device& device, const CeilingsPlan& plan, bool quick,
                                                  std::vector<std::string>& notes);

// Each sample of `first` takes the geometric mean of its rate and that of
// the sample of the same kind and M, N, K in `again` (the int8 samples'
// second pass); a sample `again` lacks keeps its rate.
void merge_sample_passes(std::vector<ConvSample>& first, const std::vector<ConvSample>& again);

struct FreshAllocationCost;

// The training samples (modelstat::TrainConvSample): one Conv of each point of
// a coarser grid (kinds as above; channels 16-1024 and outputs 7-112 in steps
// of 4, 3-channel stems, pointwise convs over one position, depthwise 3x3 and
// 5x5; products up to 0.5 GFLOP) run as a training step runs it (ATen, NCHW,
// autograd), its forward and its backward (input and weight gradients) timed
// apart. CPU only; a point that fails is left out with a note.
std::vector<TrainConvSample> measure_train_conv_samples(Device& device, const CeilingsPlan& plan, bool quick,
                                                        const FreshAllocationCost& fresh,
                                                        std::vector<std::string>& notes);

// What a Conv group's residual Add (its sum post-op) adds per byte of the
// residual it reads: a 1x1 conv of 64 -> 256 channels at 56 x 56 with and
// without one, in cold copies as above. CPU only (0 elsewhere or on failure).
double measure_conv_residual_cost(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes);

// What a Conv group's trailing SiLU (Sigmoid and Mul, x * sigmoid(x); the
// executor's own pass after the oneDNN kernel, profiler/ops/silu.hpp) adds per
// byte of the group's output: the same conv with and without one.
double measure_conv_silu_cost(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes);

// What a Conv group reading an NCHW image adds (the executor turns it
// channels-last first), per byte of the image: the executor's conversion of a
// 1x3x224x224 image timed alone, images taken in turn from 64 MiB of them.
// CPU with oneDNN only (0 elsewhere: ATen's convolution reads NCHW itself).
double measure_conv_layout_cost(Device& device, const CeilingsPlan& plan, std::vector<std::string>& notes);

// The channel block of the executor's fp32 Conv kernels (DeviceCeilings::
// conv_channel_block): oneDNN's fp32 vector lanes where oneDNN runs the
// convs on the CPU; 0 elsewhere (ATen's own convolution, CUDA).
int64_t conv_channel_block(Device& device);

}  // namespace modelstat::profiler
