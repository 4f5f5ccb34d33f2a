// Generation with the KV cache resident on the device, proven against the stand-in CUDA
// libraries: a decode step compiled with a fixed-size cache makes exactly one graph launch, the
// cache never crosses to the host (only the token ids and mask go in, the logits come out) and
// is updated in place; Session::AllocateDevice / CopyToHost and TensorInfo::device say which
// values may live on the device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "model_builder.h"
#include "ortc/generate.h"
#include "ortc/ortc_c.h"
#include "ortc/runtime.h"
#include "standin_fixture.h"

namespace ortc::test {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kVocab = 16, kHeads = 2, kPositions = 8, kHeadDim = 4;

// One decode step of a fixed-size cache, reduced to what the runtime sees: input_ids [1,1] and
// attention_mask [1,8] in, logits [1,1,16] (an embedding row) and present_key_0 (the past,
// masked, plus the row's sum) out; every node on CUDA, one connected group. The kernel that
// reads the past writes the present too, element i of the present from element i of the past
// (KernelLaunch.same_index); with `softmax_after`, a Softmax over the result writes the present
// instead, so every read of the past comes before the present's first write.
ModelBuilder FixedCacheStep(bool softmax_after = false) {
  std::vector<float> table(kVocab * kVocab);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i % 5);
  ModelBuilder m;
  m.Input("input_ids", {1, 1}, onnx::TensorProto::INT64)
      .Input("attention_mask", {1, kPositions}, onnx::TensorProto::INT64)
      .Input("past_key_0", {1, kHeads, kPositions, kHeadDim})
      .Output("logits")
      .Output("present_key_0")
      .Initializer("embedding", {kVocab, kVocab}, table)
      .IntInitializer("mask_shape", {1, 1, kPositions, 1})
      .IntInitializer("last_axis", {2})
      .Node("Gather", {"embedding", "input_ids"}, {"logits"})
      .Node("ReduceSum", {"logits", "last_axis"}, {"row_sum"})
      .Node("Cast", {"attention_mask"}, {"mask_f"}, {Attr("to", int64_t{1})})
      .Node("Reshape", {"mask_f", "mask_shape"}, {"mask_4d"})
      .Node("Mul", {"past_key_0", "mask_4d"}, {"kept"});
  if (softmax_after) {
    m.Node("Add", {"kept", "row_sum"}, {"updated"})
        .Node("Softmax", {"updated"}, {"present_key_0"}, {Attr("axis", int64_t{-1})});
  } else {
    m.Node("Add", {"kept", "row_sum"}, {"present_key_0"});
  }
  return m;
}

const TensorInfo& Info(const std::vector<TensorInfo>& list, const std::string& name) {
  for (const auto& i : list)
    if (i.name == name) return i;
  FAIL("no value " << name);
  return list.front();
}

}  // namespace

TEST_CASE("stand-in: generation keeps a fixed-size KV cache on the device, one launch a step") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(FixedCacheStep(), dir.path(), "kv_step");
  auto s = Open(ctx);
  REQUIRE(s->load_report().graphs.size() == 1);  // one CUDA group, nothing on the CPU
  CHECK(s->load_report().onnx_nodes == 0);
  const TensorInfo& past = Info(s->inputs(), "past_key_0");
  const TensorInfo& present = Info(s->outputs(), "present_key_0");
  CHECK(past.device == "cuda");
  CHECK(present.device == "cuda");
  CHECK(past.device_graph == present.device_graph);
  CHECK_FALSE(past.device_graph.empty());

  Probe().Reset();
  GenerationOptions options;
  options.max_new_tokens = 5;
  auto r = GenerateGreedy(*s, *s, {3}, options);
  INFO((r.ok() ? "" : r.status().ToString()));
  REQUIRE(r.ok());
  CHECK(r->tokens.size() == 5);
  CHECK(r->decode_steps == 4);
  CHECK(r->cache_on_device);
  const size_t steps = 5;  // the prefill and four decode steps: one CUDA graph launch each
  CHECK(Probe().Count("cuGraphLaunch") == steps);
  CHECK(Probe().Count("cuMemAlloc") == 1);  // one cache buffer, updated in place
  const size_t cache_bytes = kHeads * kPositions * kHeadDim * sizeof(float);
  // Host to device: the token id and the mask, nothing else; back: the logits.
  CHECK(Probe().Count("bytes:HtoD") == steps * (sizeof(int64_t) * (1 + kPositions)));
  CHECK(Probe().Count("bytes:DtoH") == steps * kVocab * sizeof(float));
  // On the device: past and present are the cache buffer itself, bound into the captured graph;
  // the one kernel that reads the past and writes the present does so element by element, so
  // no copy of the cache is made (a kernel reading other elements would need one: io_binding's
  // tests).
  CHECK(Probe().Count("bytes:DtoD") == 0);

  // The same loop with the cache forced through the host, to show what it saves: a session
  // whose runs take host tensors only (Run) moves the cache both ways every step.
  Probe().Reset();
  std::vector<std::pair<std::string, Tensor>> feeds = {
      {"input_ids", Tensor::Allocate(DataType::kInt64, {1, 1})},
      {"attention_mask", Tensor::Allocate(DataType::kInt64, {1, kPositions})},
      {"past_key_0", Tensor::Allocate(DataType::kFloat, {1, kHeads, kPositions, kHeadDim})}};
  REQUIRE(s->Run(feeds).ok());
  CHECK(Probe().Count("bytes:HtoD") == sizeof(int64_t) * (1 + kPositions) + cache_bytes);
  CHECK(Probe().Count("bytes:DtoH") == kVocab * sizeof(float) + cache_bytes);
}

TEST_CASE("stand-in: a cache read before its present is written is bound in place, no copy") {
  REQUIRE(Probe().ok());
  TempDir dir;
  auto s = Open(Compile(FixedCacheStep(true), dir.path(), "kv_softmax"));
  Probe().Reset();
  GenerationOptions options;
  options.max_new_tokens = 6;
  auto r = GenerateGreedy(*s, *s, {3}, options);
  INFO((r.ok() ? "" : r.status().ToString()));
  REQUIRE(r.ok());
  REQUIRE(r->cache_on_device);
  const size_t steps = 6;
  CHECK(Probe().Count("cuGraphLaunch") == steps);  // the bound graph, one launch a step
  CHECK(Probe().Count("cuMemAlloc") == 1);         // the one cache buffer
  CHECK(Probe().Count("bytes:DtoD") == 0);         // past and present are the buffer itself
  CHECK(Probe().Count("bytes:HtoD") == steps * (sizeof(int64_t) * (1 + kPositions)));
  CHECK(Probe().Count("bytes:DtoH") == steps * kVocab * sizeof(float));
}

TEST_CASE("stand-in: AllocateDevice gives zeroed device memory that CopyToHost reads back") {
  REQUIRE(Probe().ok());
  TempDir dir;
  auto s = Open(Compile(FixedCacheStep(), dir.path(), "kv_step"));
  auto cache = s->AllocateDevice("present_key_0");
  INFO((cache.ok() ? "" : cache.status().ToString()));
  REQUIRE(cache.ok());
  CHECK(cache->location() == MemoryLocation::kCudaDevice);
  CHECK(cache->shape() == std::vector<int64_t>{1, kHeads, kPositions, kHeadDim});
  // Stand-in device memory is host memory underneath: write it directly, read it back.
  auto* device = static_cast<float*>(const_cast<void*>(cache->raw()));
  const int64_t n = cache->elements();
  for (int64_t i = 0; i < n; ++i) CHECK(device[i] == 0.f);
  for (int64_t i = 0; i < n; ++i) device[i] = static_cast<float>(i) * 0.5f;
  auto host = s->CopyToHost(*cache);
  REQUIRE(host.ok());
  CHECK(host->location() == MemoryLocation::kHost);
  CHECK(std::memcmp(host->raw(), device, host->byte_size()) == 0);

  // The last copy of the tensor gives the memory back.
  const size_t live = Probe().LiveDeviceBytes();
  cache = Tensor();
  CHECK(Probe().LiveDeviceBytes() == live - n * sizeof(float));

  auto missing = s->AllocateDevice("nosuch");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("no input or output named 'nosuch'"));
  CHECK_FALSE(s->CopyToHost(Tensor::Allocate(DataType::kFloat, {2})).ok());
}

TEST_CASE("stand-in: CopyBytes and CopyRows move parts of device tensors, bounds checked") {
  REQUIRE(Probe().ok());
  TempDir dir;
  auto s = Open(Compile(FixedCacheStep(), dir.path(), "kv_step"));
  auto a = s->AllocateDevice("present_key_0");
  auto b = s->AllocateDevice("past_key_0");
  REQUIRE((a.ok() && b.ok()));
  const int64_t n = a->elements();
  Tensor host = Tensor::Allocate(DataType::kFloat, {n});
  for (int64_t i = 0; i < n; ++i) host.mutable_data<float>()[i] = static_cast<float>(i + 1);
  const size_t f = sizeof(float);
  const size_t dtod = Probe().Count("bytes:DtoD");
  // Host to device whole, then elements 2..5 of a to elements 10..13 of b, device to device.
  REQUIRE(s->CopyBytes(&*a, 0, host, 0, n * f).ok());
  REQUIRE(s->CopyBytes(&*b, 10 * f, *a, 2 * f, 4 * f).ok());
  CHECK(Probe().Count("bytes:DtoD") == dtod + 4 * f);
  auto back = s->CopyToHost(*b);
  REQUIRE(back.ok());
  for (int64_t i = 0; i < n; ++i)
    CHECK(back->data<float>()[i] == (i >= 10 && i < 14 ? static_cast<float>(i - 8 + 1) : 0.f));
  // Device to host at an offset, and host to host.
  Tensor out = Tensor::Allocate(DataType::kFloat, {4});
  REQUIRE(s->CopyBytes(&out, f, *b, 11 * f, 2 * f).ok());
  CHECK(out.data<float>()[1] == 4.f);
  CHECK(out.data<float>()[2] == 5.f);
  REQUIRE(s->CopyBytes(&out, 0, host, 0, f).ok());
  CHECK(out.data<float>()[0] == 1.f);

  // A range past either end is refused before anything moves.
  auto past_end = s->CopyBytes(&*b, (n - 1) * f, *a, 0, 2 * f);
  REQUIRE_FALSE(past_end.ok());
  CHECK_THAT(past_end.message(), Catch::Contains("pass the end of a tensor"));
  CHECK_FALSE(s->CopyBytes(&*b, 0, *a, n * f, 1).ok());
  CHECK(Probe().Count("bytes:DtoD") == dtod + 4 * f);

  // CopyRows: three rows of two floats, a's elements 1-2, 5-6, 9-10 to b's 0-1, 3-4, 6-7, in one
  // strided copy (b's elements 10-13 hold the copy above).
  REQUIRE(std::min(n, b->elements()) >= 14);
  const size_t calls = Probe().Count("cuMemcpy2DAsync");
  REQUIRE(s->CopyRows(&*b, 0, 3 * f, *a, f, 4 * f, 2 * f, 3).ok());
  CHECK(Probe().Count("cuMemcpy2DAsync") == calls + 1);
  CHECK(Probe().Count("bytes:DtoD") == dtod + 10 * f);
  auto rows = s->CopyToHost(*b);
  REQUIRE(rows.ok());
  const std::vector<float> want = {2, 3, 0, 6, 7, 0, 10, 11, 0};
  for (size_t i = 0; i < want.size(); ++i) CHECK(rows->data<float>()[i] == want[i]);
  // Host to host takes the same arguments.
  Tensor six = Tensor::Allocate(DataType::kFloat, {6});
  REQUIRE(s->CopyRows(&six, 0, 2 * f, host, 0, 4 * f, 2 * f, 3).ok());
  CHECK(std::vector<float>(six.data<float>(), six.data<float>() + 6) ==
        std::vector<float>{1, 2, 5, 6, 9, 10});
  // The last row past the end, or a pitch shorter than a row, is refused before anything moves.
  auto rows_past_end = s->CopyRows(&*b, 0, b->byte_size() / 2, *a, 0, f, f, 3);
  REQUIRE_FALSE(rows_past_end.ok());
  CHECK_THAT(rows_past_end.message(), Catch::Contains("pass the end of a tensor"));
  CHECK_FALSE(s->CopyRows(&*b, 0, f, *a, 0, 2 * f, 2 * f, 2).ok());
  CHECK(Probe().Count("cuMemcpy2DAsync") == calls + 1);
}

TEST_CASE("stand-in: values a CPU kernel reads or writes are not device values") {
  REQUIRE(Probe().ok());
  TempDir dir;
  ModelBuilder m;  // Relu on CUDA, its result read by ArgMax on the CPU and also an output
  m.Input("x", {2, 3})
      .Output("r")
      .Output("y", onnx::TensorProto::INT64)
      .Node("Relu", {"x"}, {"r"})
      .Node("ArgMax", {"r"}, {"y"});
  auto s = Open(Compile(m, dir.path(), "mixed"));
  CHECK(Info(s->inputs(), "x").device == "cuda");
  CHECK(Info(s->outputs(), "r").device.empty());  // ArgMax reads it on the CPU
  CHECK(Info(s->outputs(), "y").device.empty());
  auto r = s->AllocateDevice("r");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("read or written on the CPU"));
}

TEST_CASE("stand-in: the C API keeps a cache on the device and generates") {
  REQUIRE(Probe().ok());
  TempDir dir;
  const fs::path ctx = Compile(FixedCacheStep(), dir.path(), "kv_step");
  OrtcSession* session = nullptr;
  OrtcStatus* st = ortc_session_create(ctx.c_str(), &session);
  INFO(ortc_status_message(st));
  REQUIRE(st == nullptr);
  for (size_t i = 0; i < ortc_session_output_count(session); ++i)
    CHECK(std::string(ortc_session_output_device(session, i)) == "cuda");
  OrtcTensor* cache = nullptr;
  st = ortc_session_allocate_device(session, "past_key_0", &cache);
  INFO(ortc_status_message(st));
  REQUIRE(st == nullptr);
  CHECK(ortc_tensor_byte_size(cache) == kHeads * kPositions * kHeadDim * sizeof(float));

  // One step with the cache as both the past input and the present output (in place).
  const int64_t ids[1] = {2};
  int64_t mask[kPositions] = {1, 1, 0, 0, 0, 0, 0, 0};
  float logits[kVocab];
  const int64_t ids_shape[2] = {1, 1}, mask_shape[2] = {1, kPositions},
                logits_shape[3] = {1, 1, kVocab};
  const int64_t* cache_shape = ortc_tensor_shape(cache);
  void* cache_data = const_cast<void*>(ortc_tensor_data(cache));
  const char* in_names[] = {"input_ids", "attention_mask", "past_key_0"};
  const OrtcBufferView in[] = {{7, ids_shape, 2, const_cast<int64_t*>(ids), ORTC_MEMORY_CPU},
                               {7, mask_shape, 2, mask, ORTC_MEMORY_CPU},
                               {1, cache_shape, 4, cache_data, ORTC_MEMORY_CUDA}};
  const char* out_names[] = {"logits", "present_key_0"};
  const OrtcBufferView out[] = {{1, logits_shape, 3, logits, ORTC_MEMORY_CPU},
                                {1, cache_shape, 4, cache_data, ORTC_MEMORY_CUDA}};
  Probe().Reset();
  st = ortc_session_run_bound(session, in_names, in, 3, out_names, out, 2);
  INFO(ortc_status_message(st));
  CHECK(st == nullptr);
  CHECK(Probe().Count("bytes:DtoH") == sizeof logits);
  OrtcTensor* host = nullptr;
  st = ortc_session_copy_to_host(session, cache, &host);
  CHECK(st == nullptr);
  CHECK(ortc_tensor_byte_size(host) == ortc_tensor_byte_size(cache));
  CHECK(std::memcmp(ortc_tensor_data(host), cache_data, ortc_tensor_byte_size(host)) == 0);
  // The cache's first float into the host copy's second, device to host at offsets.
  static_cast<float*>(cache_data)[0] = 7.5f;
  st = ortc_session_copy_bytes(session, host, sizeof(float), cache, 0, sizeof(float));
  CHECK(st == nullptr);
  CHECK(static_cast<const float*>(ortc_tensor_data(host))[1] == 7.5f);
  st = ortc_session_copy_bytes(session, host, ortc_tensor_byte_size(host), cache, 0, 1);
  REQUIRE(st != nullptr);
  CHECK_THAT(ortc_status_message(st), Catch::Contains("pass the end"));
  ortc_status_release(st);
  ortc_tensor_release(host);
  ortc_tensor_release(cache);

  const int64_t prompt[1] = {3};
  int64_t tokens[5] = {};
  OrtcGenerationStats stats;
  st = ortc_generate_greedy(session, session, prompt, 1, nullptr, 0, tokens, 5, &stats);
  INFO(ortc_status_message(st));
  CHECK(st == nullptr);
  CHECK(stats.n_tokens == 5);
  CHECK(stats.decode_steps == 4);
  CHECK(stats.kv_cache_on_device == 1);
  // Eight positions: a prompt of one and eight new tokens overflow the cache.
  int64_t many[9] = {};
  st = ortc_generate_greedy(session, session, prompt, 1, nullptr, 0, many, 9, &stats);
  REQUIRE(st != nullptr);
  CHECK_THAT(ortc_status_message(st), Catch::Contains("the context is full"));
  ortc_status_release(st);
  ortc_session_release(session);
}

}  // namespace ortc::test
