// Builds small ONNX models in tests, so no binary fixture is ever committed.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

namespace ortc::test {

struct Attr {
  onnx::AttributeProto proto;
  Attr(const std::string& name, int64_t v);
  Attr(const std::string& name, float v);
  Attr(const std::string& name, const std::string& v);
  Attr(const std::string& name, const char* v) : Attr(name, std::string(v)) {}
  Attr(const std::string& name, std::vector<int64_t> v);
  Attr(const std::string& name, const onnx::GraphProto& g);
};

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17, int64_t ir_version = 8);

  // dims: -1 means a symbolic dimension named "N"; an empty `dims` with rank_known=false
  // leaves the shape out entirely.
  ModelBuilder& Input(const std::string& name, std::vector<int64_t> dims,
                      int32_t dtype = onnx::TensorProto::FLOAT);
  ModelBuilder& Output(const std::string& name, int32_t dtype = onnx::TensorProto::FLOAT);
  ModelBuilder& Initializer(const std::string& name, std::vector<int64_t> dims,
                            std::vector<float> values);
  ModelBuilder& IntInitializer(const std::string& name, std::vector<int64_t> values);
  ModelBuilder& ExternalInitializer(const std::string& name, std::vector<int64_t> dims,
                                    const std::string& location, int64_t offset,
                                    int64_t length = -1);
  ModelBuilder& Node(const std::string& op, std::vector<std::string> inputs,
                     std::vector<std::string> outputs, std::vector<Attr> attrs = {},
                     const std::string& name = "", const std::string& domain = "");
  ModelBuilder& Opset(const std::string& domain, int64_t version);

  onnx::ModelProto& proto() { return model_; }
  std::string Serialize() const;
  void Save(const std::filesystem::path& path) const;

 private:
  onnx::ModelProto model_;
};

// A fresh empty folder under the system temp folder, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void WriteFile(const std::filesystem::path& path, const std::string& bytes);

}  // namespace ortc::test
