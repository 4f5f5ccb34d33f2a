// Small ONNX models for the emulator tests, each exercising one family of CUDA lowerings
// (library calls with their fused epilogues, generated kernels, views and layout changes).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model_builder.h"

namespace ortc::test::cuda {

struct TestModel {
  ModelBuilder builder;
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

// Conv + BatchNormalization + Relu, a residual Add (cuDNN's z), depthwise strided conv,
// ConvTranspose with bias, dilated conv, max and global average pooling.
TestModel ConvBlockModel();
// A MobileNet-v2 block: 1x1 expand + bias + ReLU6 (Clip [0, 6]), depthwise + ReLU6, 1x1
// project + bias + residual Add; the clips run in the convolutions' epilogues.
TestModel Relu6BlockModel();
// 1-D grouped convolution (stays NCHW at every precision) with bias and Relu.
TestModel Conv1dModel();
// Generated grouped convolutions: depthwise + bias + residual Add + Relu; depthwise with a
// channel multiplier of 2, 5x5, stride 2 and ReLU6; 3 groups of 4 channels, dilation 2, bias,
// whose result is a program output (NHWC at the tensor-core precisions, so transposed back).
TestModel GroupedConvsModel();
// MatMul + bias + Gelu(tanh), residual Add + LayerNormalization, batched MatMul with Softmax,
// Reshape/Transpose/Slice/Concat, Gemm transB + bias + Relu, Gemm alpha/beta with a [M, N] C.
TestModel MatmulBlockModel();
// AveragePool, nearest Resize, MaxPool, 1x1 conv, Sigmoid.
TestModel PoolResizeModel();
// Pooling between NHWC convolutions (at tensor-core precisions): MaxPool with ceil_mode and a
// residual Add reading it, AveragePool with and without count_include_pad, dilated MaxPool,
// GlobalAveragePool -> Flatten -> Gemm and -> 1x1 conv, GlobalMaxPool and an AveragePool as
// program outputs.
TestModel NhwcPoolModel();
// Global pools over 40 x 40 positions of NHWC data (at tensor-core precisions: split into runs
// and merged), 40 channels (a partial run of lanes), two images: GlobalAveragePool gating the
// activations (a squeeze-and-excitation Mul reading the merged pool) and GlobalMaxPool.
TestModel SplitPoolModel();
// Squeeze-and-excitation between NHWC convolutions (HardSwish, global pool, 1x1 convolutions,
// HardSigmoid gate, x * s and the residual x + x * s), then per-channel Mul / Add / Sub / Div by
// [C, 1, 1] and [1, C, 1, 1] constants, PRelu with a [C] slope, and an Add along W ([W]).
TestModel SeBlockModel();
// An FPN neck: strided convolutions, nearest (scales) and bilinear (sizes) Resize, Add of the
// upsampled coarse map, Concat on channels of four maps and on H, a head conv + Sigmoid.
TestModel FpnModel();
// Pad between convolutions (reflect, constant with a value, edge before a MaxPool), a Pad of
// channels, and a padded result that is a program output.
TestModel PadConvModel();
// The program input read by a convolution (NHWC), a Softmax (NCHW) and a Transpose in one
// graph, the two results concatenated, a Transpose of the NHWC Relu, and an input with one
// channel; the convolution's result is a program output too.
TestModel InputLayoutsModel();
// Conv followed by Add of a weight whose broadcast runs along W (shape [C] with W == C) or along
// H (shape [C, 1]): not a per-channel bias, whatever its element count.
TestModel ConvAddBroadcastModel(std::vector<int64_t> addend_dims);

// ConvTranspose with pads, stride 2, output_padding and two groups, then with dilation 2.
TestModel ConvTransposeModel();
// Relu -> Gemm with a [N] C and beta 0.5 -> Relu: the Gemm is refused by CUDA (cuBLASLt's bias
// epilogue is unscaled) and stays on the CPU between two CUDA graphs.
TestModel GemmBetaModel();

// A classifier head: Conv + bias whose output is also a model output, Relu, Flatten (a view of an
// NHWC-computed value at fp16/bf16), Gemm transB + bias; and a MatMul of a [M, K] weight with a
// batched [B, K, N] activation (batch stride 0 on the left).
TestModel HeadModel();

// One row through a merged projection, as a decode step computes it: MatMul [1, 1, 8] x [8, 24]
// Split into three [1, 1, 8] parts (contiguous ranges of the product: views), read by a Softmax,
// by a Transpose moving only unit axes then a ReduceSum, and by a Pad of zero rows then Relu.
TestModel DecodeRowModel();
// A GQA decode step in the Hugging Face export form: k and v rows projected from x, each
// appended to its float past (Concat, then an Identity as the graph output), the attention of 4
// query heads over the grown caches of 2, and a ReduceSum of the grown keys (a reader that loads
// one type). At fp16/bf16 the caches stay float and the append converts the new row.
TestModel CacheAppendModel();

}  // namespace ortc::test::cuda
