// Choosing generated grouped convolutions and building their kernel requests.
#include "cuda/compile/lowering_grouped_conv.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "cuda/compile/tuning_choices.h"
#include "graph/attribute_builders.h"

namespace ortc::backends::cuda {

using graph::FloatAttribute;
using graph::IntAttribute;
using graph::IntsAttribute;

bool GroupedConvApplies(const PlanConv& c) {
  const bool activation = c.activation == fb::Activation::None ||
                          c.activation == fb::Activation::Relu ||
                          c.activation == fb::Activation::Clip;
  return !c.transposed && c.group > 1 && (c.x_dims.size() == 3 || c.x_dims.size() == 4) &&
         c.w_dims.size() == c.x_dims.size() && activation && c.alpha == 1.0f;
}

std::string GroupedConvKey(const PlanConv& c, bool bias, int32_t dtype) {
  auto dims = [](const std::vector<int64_t>& v) {
    std::string s;
    for (int64_t d : v) s += (s.empty() ? "" : "x") + std::to_string(d);
    return s;
  };
  static const char* kActivations[] = {"none", "relu", "gelu", "clip"};
  std::string act = kActivations[static_cast<int>(c.activation) & 3];
  if (c.activation == fb::Activation::Clip)
    act += std::to_string(c.clip_min) + ":" + std::to_string(c.clip_max);
  return "conv x=" + dims(c.x_dims) + " w=" + dims(c.w_dims) + " group=" + std::to_string(c.group) +
         " strides=" + dims(c.strides) + " dilations=" + dims(c.dilations) +
         " pads=" + dims(c.pads) + " act=" + act + " bias=" + (bias ? "1" : "0") +
         " z=" + (c.alpha2 != 0 ? "1" : "0") + " type=" + std::to_string(dtype) +
         " layout=" + (c.layout == fb::TensorLayout::NHWC ? "nhwc" : "nchw");
}

PlanChoice ChooseGroupedConv(const PlanConv& c, bool bias, const std::string& step, int32_t dtype,
                             const CudaOptions& options) {
  PlanChoice p;
  p.step = step;
  p.key = GroupedConvKey(c, bias, dtype);
  p.candidates = {kChoiceGenerated, kChoiceLibrary};
  if (options.grouped_conv != CudaOptions::GroupedConv::kAuto) {
    p.source = "option";
    p.choice = options.grouped_conv == CudaOptions::GroupedConv::kGenerated ? kChoiceGenerated
                                                                            : kChoiceLibrary;
  } else if (auto it = options.tuned_choices.find(p.key); it != options.tuned_choices.end()) {
    p.source = "measured";
    p.choice = it->second;
  } else {
    p.source = "rule";
    p.choice = c.w_dims[1] <= kGeneratedConvMaxGroupChannels ? kChoiceGenerated : kChoiceLibrary;
  }
  return p;
}

codegen::OpDesc GroupedConvDesc(const PlanConv& c, int32_t x_dtype, int32_t w_dtype,
                                int32_t bias_dtype, int32_t z_dtype, int32_t y_dtype,
                                codegen::Layout layout) {
  codegen::OpDesc d;
  d.op_type = "GroupedConv";
  d.since_version = 1;
  d.attributes = {IntAttribute("group", c.group),
                  IntsAttribute("strides", c.strides),
                  IntsAttribute("dilations", c.dilations),
                  IntsAttribute("pads", c.pads),
                  IntAttribute("activation", static_cast<int64_t>(c.activation)),
                  FloatAttribute("clip_min", c.clip_min),
                  FloatAttribute("clip_max", c.clip_max)};
  d.inputs = {{x_dtype, c.x_dims},
              {w_dtype, c.w_dims},
              {bias_dtype, bias_dtype ? std::vector<int64_t>{c.w_dims[0]} : std::vector<int64_t>{}},
              {z_dtype, z_dtype ? c.y_dims : std::vector<int64_t>{}}};
  d.outputs = {{y_dtype, c.y_dims}};
  d.constants.assign(4, std::nullopt);
  d.input_layout = d.output_layout = layout;
  return d;
}

}  // namespace ortc::backends::cuda
