// The runtime side's device queries: describe_device and its buffer rule, host-only memory, and
// the binary version gate (check_binary against the simulated device's NPU SDK version).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tests.h"

namespace npu_test {
namespace {

// check_binary: the verdict and reason for a binary recording `sdk` (NULL: none).
int32_t Verdict(OrtcBackend* b, const char* sdk, std::string* reason) {
  const OrtcKeyValue versions[] = {{"ortc", "0.2.0"}, {"npu_sdk", sdk}};
  OrtcBinaryFacts facts{};
  facts.struct_size = sizeof facts;
  facts.sdk_version = sdk;
  facts.hardware_architecture = "npu-sim-v1";
  facts.versions = versions;
  facts.num_versions = sdk ? 2 : 1;
  int32_t verdict = -1;
  char text[256];
  size_t length = 0;
  CHECK(b->check_binary(b, &facts, &verdict, text, sizeof text, &length) == ORTC_PLUGIN_OK);
  *reason = text;
  CHECK(reason->size() == length);
  return verdict;
}

}  // namespace

void TestDevice(const Plugin& p) {
  OrtcBackend* b = p.backend;
  size_t length = 0;
  CHECK(b->describe_device(b, nullptr, 0, &length) == ORTC_PLUGIN_BUFFER_TOO_SMALL);
  std::string text(length + 1, '\0');
  CHECK(b->describe_device(b, &text[0], text.size(), &length) == ORTC_PLUGIN_OK);
  text.resize(length);
  CHECK_MSG(text == R"({"device":"npu-sim-v1","sdk_version":"1.0","simulated":true})", text);

  void* mem = reinterpret_cast<void*>(0x1);
  CHECK(b->allocate_device(b, 64, &mem) == ORTC_PLUGIN_UNSUPPORTED);
  CHECK(mem == nullptr);
  CHECK(Contains(b->last_error(b), "no device memory"));
  char src[8] = "abcdefg", dst[8] = {};
  CHECK(b->copy_memory(b, dst, ORTC_MEMORY_HOST, src, ORTC_MEMORY_HOST, 8) == ORTC_PLUGIN_OK);
  CHECK(std::string(dst) == "abcdefg");
  char rows[6] = {};
  CHECK(b->copy_memory_rows(b, rows, ORTC_MEMORY_HOST, 3, src, ORTC_MEMORY_HOST, 4, 2, 2) ==
        ORTC_PLUGIN_OK);
  CHECK(rows[0] == 'a' && rows[1] == 'b' && rows[3] == 'e' && rows[4] == 'f');
}

void TestVersionGate(const Plugin& p) {
  OrtcBackend* b = p.backend;
  std::string reason;
  CHECK(Verdict(b, "1.0", &reason) == ORTC_BINARY_OPTIMAL);
  CHECK(reason.empty());
  CHECK(Verdict(b, "2.0", &reason) == ORTC_BINARY_UNSUPPORTED);
  CHECK_MSG(Contains(reason, "2.0") && Contains(reason, "1.0"), reason);
  CHECK(Verdict(b, nullptr, &reason) == ORTC_BINARY_UNSUPPORTED);
  CHECK_MSG(Contains(reason, "no npu_sdk version"), reason);

  // A device with a newer SDK: an older binary runs but should be recompiled; a binary newer
  // than the device does not run.
  setenv("ORTC_NPU_SIM_SDK_VERSION", "1.2", 1);
  CHECK(Verdict(b, "1.0", &reason) == ORTC_BINARY_PREFER_RECOMPILATION);
  CHECK_MSG(
      reason == "compiled with NPU SDK 1.0, this machine has NPU SDK 1.2: recompile to use it",
      reason);
  CHECK(Verdict(b, "1.3", &reason) == ORTC_BINARY_UNSUPPORTED);
  CHECK_MSG(Contains(reason, "1.3") && Contains(reason, "1.2"), reason);
  size_t length = 0;
  CHECK(b->describe_device(b, nullptr, 0, &length) == ORTC_PLUGIN_BUFFER_TOO_SMALL);
  std::string text(length + 1, '\0');
  CHECK(b->describe_device(b, &text[0], text.size(), &length) == ORTC_PLUGIN_OK);
  CHECK(Contains(text, "\"sdk_version\":\"1.2\""));
  unsetenv("ORTC_NPU_SIM_SDK_VERSION");

  // The buffer rule: too small, and *length says how much is needed.
  const OrtcKeyValue versions[] = {{"npu_sdk", "2.0"}};
  OrtcBinaryFacts facts{};
  facts.struct_size = sizeof facts;
  facts.versions = versions;
  facts.num_versions = 1;
  int32_t verdict = -1;
  char tiny[4];
  length = 0;
  CHECK(b->check_binary(b, &facts, &verdict, tiny, sizeof tiny, &length) ==
        ORTC_PLUGIN_BUFFER_TOO_SMALL);
  CHECK(length > sizeof tiny);
}

}  // namespace npu_test
