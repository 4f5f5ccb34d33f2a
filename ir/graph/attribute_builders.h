// ONNX attributes built in one call (name, type and value), for passes that write nodes or
// kernel requests: the contrib-op expansions, the CUDA lowering's generated-op descriptions.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ortc::graph {

onnx::AttributeProto IntAttribute(const std::string& name, int64_t v);
onnx::AttributeProto IntsAttribute(const std::string& name, const std::vector<int64_t>& v);
onnx::AttributeProto FloatAttribute(const std::string& name, float v);
onnx::AttributeProto StringAttribute(const std::string& name, const std::string& v);

}  // namespace ortc::graph
