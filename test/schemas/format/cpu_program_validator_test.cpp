// The CPU program validator: a valid program passes, and each damaged field is refused with a
// message naming it (what a buggy producer or an altered binary with recomputed checksums gives).
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "cpu_program_generated.h"
#include "format/cpu_program_validator.h"

namespace fbc = ortc::fb::cpu;
using ortc::format::ValidateCpuProgram;

namespace {

struct ValueSpec {
  fbc::ValueKind kind;
  int32_t dtype = 1;  // float
  std::vector<int64_t> dims = {1, 4};
  int32_t slot = -1;
  int64_t arena_offset = -1, byte_size = -1;
};
struct OpSpec {
  std::string type;
  std::vector<int32_t> inputs, outputs;
  int32_t explicit_inputs = -1;
  bool nested = false;  // a Graph attribute holding a one-op nested program
  std::vector<int32_t> captures;
};
struct ProgramSpec {
  std::vector<ValueSpec> values;
  std::vector<OpSpec> ops;
  std::vector<int32_t> inputs, outputs;
  uint64_t arena_bytes = 64;
};

// x (input) + w (weight) -> h (arena) -> Relu -> y (output).
ProgramSpec Valid() {
  ProgramSpec p;
  p.values = {{fbc::ValueKind::Input},
              {fbc::ValueKind::Weight, 1, {1, 4}, 0},
              {fbc::ValueKind::Intermediate, 1, {1, 4}, -1, 0, 16},
              {fbc::ValueKind::Output}};
  p.ops = {{"Add", {0, 1}, {2}, -1, false, {}}, {"Relu", {2}, {3}, -1, false, {}}};
  p.inputs = {0};
  p.outputs = {3};
  return p;
}

flatbuffers::Offset<fbc::Program> Write(flatbuffers::FlatBufferBuilder& b, const ProgramSpec& p) {
  std::vector<flatbuffers::Offset<fbc::Value>> values;
  for (const auto& v : p.values) {
    values.push_back(fbc::CreateValue(b, b.CreateString("v"), v.kind, v.dtype,
                                      b.CreateVector(v.dims), v.slot, v.arena_offset, v.byte_size));
  }
  std::vector<flatbuffers::Offset<fbc::Op>> ops;
  for (const auto& o : p.ops) {
    std::vector<flatbuffers::Offset<fbc::Attribute>> attrs;
    if (o.nested) {
      ProgramSpec body;  // one input, Identity to one output
      body.values = {{fbc::ValueKind::Input}, {fbc::ValueKind::Output}};
      body.ops = {{"Identity", {0}, {1}, -1, false, {}}};
      body.inputs = {0};
      body.outputs = {1};
      body.arena_bytes = 0;
      auto nested = Write(b, body);
      auto captures = b.CreateVector(o.captures);
      auto name = b.CreateString("body");
      fbc::AttributeBuilder ab(b);
      ab.add_name(name);
      ab.add_type(fbc::AttributeType::Graph);
      ab.add_program(nested);
      ab.add_captures(captures);
      attrs.push_back(ab.Finish());
    }
    ops.push_back(fbc::CreateOp(b, b.CreateString("n"), b.CreateString(o.type), b.CreateString(""),
                                13, b.CreateVector(o.inputs), b.CreateVector(o.outputs),
                                b.CreateVector(attrs), o.explicit_inputs));
  }
  return fbc::CreateProgram(b, b.CreateVector(values), b.CreateVector(ops),
                            b.CreateVector(p.inputs), b.CreateVector(p.outputs), p.arena_bytes,
                            b.CreateString("portable"));
}

ortc::Status Validate(const ProgramSpec& p, uint32_t slots = 1) {
  flatbuffers::FlatBufferBuilder b;
  fbc::FinishProgramBuffer(b, Write(b, p));
  flatbuffers::Verifier verifier(b.GetBufferPointer(), b.GetSize());
  REQUIRE(fbc::VerifyProgramBuffer(verifier));
  return ValidateCpuProgram(*fbc::GetProgram(b.GetBufferPointer()), slots, "graph 'g'");
}

}  // namespace

TEST_CASE("a valid CPU program passes the validator", "[loader][validator]") {
  CHECK(Validate(Valid()).ok());
  ProgramSpec nested = Valid();
  nested.ops.push_back({"If", {0}, {}, 1, true, {0}});
  CHECK(Validate(nested).ok());
}

TEST_CASE("each damaged CPU program field is refused and named", "[loader][validator]") {
  struct Case {
    const char* name;
    std::function<void(ProgramSpec&)> damage;
    const char* expect;
    uint32_t slots = 1;
  };
  const std::vector<Case> cases = {
      {"value kind", [](ProgramSpec& p) { p.values[2].kind = static_cast<fbc::ValueKind>(9); },
       "value 2: unknown kind 9"},
      {"element type", [](ProgramSpec& p) { p.values[2].dtype = 99; },
       "value 2: unknown element type 99"},
      {"dimension",
       [](ProgramSpec& p) {
         p.values[0].dims = {1, -7};
       },
       "value 0: dimension -7"},
      {"rank", [](ProgramSpec& p) { p.values[0].dims.assign(65, 1); }, "value 0: rank 65"},
      {"weight slot", [](ProgramSpec& p) { p.values[1].slot = 1; }, "value 1: weight_slot 1 of 1"},
      {"weight slot on a non-weight", [](ProgramSpec& p) { p.values[2].slot = 0; },
       "value 2: weight_slot 0 on a value that is not a weight"},
      {"arena range past arena_bytes", [](ProgramSpec& p) { p.values[2].arena_offset = 56; },
       "value 2: arena range 56+16"},
      {"arena range overflowing", [](ProgramSpec& p) { p.values[2].arena_offset = INT64_MAX - 8; },
       "value 2: arena range"},
      {"arena range smaller than the shape", [](ProgramSpec& p) { p.values[2].byte_size = 8; },
       "value 2: arena range 0+8"},
      {"arena on a non-intermediate",
       [](ProgramSpec& p) {
         p.values[3].arena_offset = 0;
         p.values[3].byte_size = 16;
       },
       "value 3: arena range"},
      {"arena_bytes", [](ProgramSpec& p) { p.arena_bytes = uint64_t{1} << 50; },
       "arena_bytes 1125899906842624"},
      {"op input index", [](ProgramSpec& p) { p.ops[0].inputs[1] = 4; },
       "op 0 ('n'): input 1 is value 4 of 4"},
      {"op input negative", [](ProgramSpec& p) { p.ops[0].inputs[1] = -2; },
       "op 0 ('n'): input 1 is value -2"},
      {"op output index", [](ProgramSpec& p) { p.ops[1].outputs[0] = 17; },
       "op 1 ('n'): output 0 is value 17 of 4"},
      {"read before written", [](ProgramSpec& p) { std::swap(p.ops[0], p.ops[1]); },
       "op 0 ('n'): input 0 (value 2) is read before any op writes it"},
      {"writes a weight", [](ProgramSpec& p) { p.ops[1].outputs[0] = 1; },
       "op 1 ('n'): output 0 (value 1) is a weight"},
      {"writes an input", [](ProgramSpec& p) { p.ops[1].outputs[0] = 0; },
       "op 1 ('n'): output 0 (value 0) is a weight, an input"},
      {"written twice", [](ProgramSpec& p) { p.ops[1].outputs[0] = 2; },
       "op 1 ('n'): output 0 (value 2) is a weight, an input or already written"},
      {"no op type", [](ProgramSpec& p) { p.ops[0].type = ""; }, "op 0 ('n'): no op_type"},
      {"explicit inputs", [](ProgramSpec& p) { p.ops[0].explicit_inputs = 3; },
       "op 0 ('n'): explicit_inputs 3 with 2 inputs"},
      {"capture index",
       [](ProgramSpec& p) {
         p.ops.push_back({"If", {0}, {}, 1, true, {5}});
       },
       "op 2 ('n'): capture 0 is input 5 of 1"},
      {"too many captures",
       [](ProgramSpec& p) {
         p.ops.push_back({"If", {0}, {}, 1, true, {0, 0}});
       },
       "op 2 ('n'): 2 captures for a nested program of 1 inputs"},
      {"program input index", [](ProgramSpec& p) { p.inputs[0] = 9; },
       "program input 0 is value 9 of 4"},
      {"program input kind", [](ProgramSpec& p) { p.inputs[0] = 2; },
       "program input 0 (value 2) is not of kind Input"},
      {"program output index", [](ProgramSpec& p) { p.outputs[0] = -1; },
       "program output 0 is value -1"},
      {"program output never written", [](ProgramSpec& p) { p.ops.pop_back(); },
       "program output 0 (value 3) is never written"},
  };
  for (const auto& c : cases) {
    ProgramSpec p = Valid();
    c.damage(p);
    const auto s = Validate(p, c.slots);
    INFO(c.name << ": " << s.message());
    CHECK_FALSE(s.ok());
    CHECK(s.code() == ortc::StatusCode::kInvalidGraph);
    CHECK_THAT(s.message(),
               Catch::Contains("graph 'g': the CPU program is invalid: " + std::string(c.expect)));
  }
}
