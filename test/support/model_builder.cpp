// Test model construction helpers.
#include "model_builder.h"

#include <fstream>
#include <random>
#include <stdexcept>

namespace ortc::test {

Attr::Attr(const std::string& name, int64_t v) {
  proto.set_name(name);
  proto.set_type(onnx::AttributeProto::INT);
  proto.set_i(v);
}
Attr::Attr(const std::string& name, float v) {
  proto.set_name(name);
  proto.set_type(onnx::AttributeProto::FLOAT);
  proto.set_f(v);
}
Attr::Attr(const std::string& name, const std::string& v) {
  proto.set_name(name);
  proto.set_type(onnx::AttributeProto::STRING);
  proto.set_s(v);
}
Attr::Attr(const std::string& name, std::vector<int64_t> v) {
  proto.set_name(name);
  proto.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) proto.add_ints(x);
}
Attr::Attr(const std::string& name, const onnx::GraphProto& g) {
  proto.set_name(name);
  proto.set_type(onnx::AttributeProto::GRAPH);
  *proto.mutable_g() = g;
}

ModelBuilder::ModelBuilder(int64_t opset, int64_t ir_version) {
  model_.set_ir_version(ir_version);
  model_.set_producer_name("ortc-tests");
  auto* op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model_.mutable_graph()->set_name("test_graph");
}

ModelBuilder& ModelBuilder::Opset(const std::string& domain, int64_t version) {
  auto* op = model_.add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
  return *this;
}

ModelBuilder& ModelBuilder::Input(const std::string& name, std::vector<int64_t> dims,
                                  int32_t dtype) {
  auto* in = model_.mutable_graph()->add_input();
  in->set_name(name);
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) {
      shape->add_dim()->set_dim_param("N");
    } else {
      shape->add_dim()->set_dim_value(d);
    }
  }
  return *this;
}

ModelBuilder& ModelBuilder::Output(const std::string& name, int32_t dtype) {
  auto* out = model_.mutable_graph()->add_output();
  out->set_name(name);
  out->mutable_type()->mutable_tensor_type()->set_elem_type(dtype);
  return *this;
}

ModelBuilder& ModelBuilder::Initializer(const std::string& name, std::vector<int64_t> dims,
                                        std::vector<float> values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return *this;
}

ModelBuilder& ModelBuilder::IntInitializer(const std::string& name, std::vector<int64_t> values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return *this;
}

ModelBuilder& ModelBuilder::ExternalInitializer(const std::string& name, std::vector<int64_t> dims,
                                                const std::string& location, int64_t offset,
                                                int64_t length) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  return *this;
}

ModelBuilder& ModelBuilder::Node(const std::string& op, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, std::vector<Attr> attrs,
                                 const std::string& name, const std::string& domain) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  n->set_domain(domain);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  for (auto& a : attrs) *n->add_attribute() = a.proto;
  return *this;
}

std::string ModelBuilder::Serialize() const {
  return model_.SerializeAsString();
}

void ModelBuilder::Save(const std::filesystem::path& path) const {
  WriteFile(path, Serialize());
}

void WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          ("ortc-test-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ortc::test
