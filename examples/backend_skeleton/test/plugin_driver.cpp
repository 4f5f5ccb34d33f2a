// The host's side of the plugin ABI for the tests: capability and compile sinks that record
// what the plugin reports, and load/run helpers over the runtime table.
#include "plugin_driver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <utility>

#include "test_support.h"

namespace npu_test {
namespace {

void Claim(void* user, uint32_t node) {
  auto* c = static_cast<Capability*>(user);
  if (node >= c->answers.size()) return;
  ++c->answers[node];
  c->claimed[node] = true;
}

void Refuse(void* user, uint32_t node, const char* reason) {
  auto* c = static_cast<Capability*>(user);
  if (node >= c->answers.size()) return;
  ++c->answers[node];
  c->reasons[node] = reason ? reason : "";
}

Compiled& Rec(void* user) {
  return *static_cast<Compiled*>(user);
}

TensorDesc Copy(const OrtcTensorDesc* d) {
  return {d->name, d->dtype, std::vector<int64_t>(d->dims, d->dims + d->rank)};
}

// The host's side of add_weight: copies the bytes, or streams the file region.
void AddWeight(void* user, const OrtcWeightDesc* d, const OrtcBytes* b) {
  Weight w{{"", d->dtype, std::vector<int64_t>(d->dims, d->dims + d->rank)},
           d->layout ? d->layout : "",
           d->alignment,
           b->kind,
           {}};
  if (b->kind == ORTC_BYTES_FILE_REGION) {
    std::ifstream file(b->file, std::ios::binary);
    w.bytes.assign(b->size, '\0');
    file.seekg(static_cast<std::streamoff>(b->offset));
    file.read(&w.bytes[0], static_cast<std::streamsize>(b->size));
    if (!file) w.bytes = "unreadable";
  } else {
    w.bytes.assign(static_cast<const char*>(b->data), b->size);
  }
  Rec(user).weights.push_back(std::move(w));
}

OrtcCompileSink RecordingSink(Compiled* c) {
  OrtcCompileSink s{};
  s.user = c;
  s.set_program = [](void* u, const void* d, uint64_t n) {
    Rec(u).program.assign(static_cast<const char*>(d), n);
  };
  s.add_input = [](void* u, const OrtcTensorDesc* d) { Rec(u).inputs.push_back(Copy(d)); };
  s.add_output = [](void* u, const OrtcTensorDesc* d) { Rec(u).outputs.push_back(Copy(d)); };
  s.add_weight = &AddWeight;
  s.set_arena_bytes = [](void*, uint64_t) {};
  s.add_artefact = [](void*, const char*, const void*, uint64_t) {};
  s.add_note = [](void* u, const char* k, const char* v) { Rec(u).notes[k] = v; };
  s.add_binary_version = [](void* u, const char* k, const char* v) { Rec(u).versions[k] = v; };
  s.add_stat = [](void* u, const char* k, int64_t n) { Rec(u).stats[k] = n; };
  s.add_choice = [](void*, const OrtcTunableChoice*) {};
  s.progress = [](void* u, const char*, int32_t done, int32_t total) {
    Rec(u).progress.emplace_back(done, total);
  };
  return s;
}

}  // namespace

Capability AskCapability(OrtcBackendCompiler* compiler, const GraphBuilder& g) {
  Capability c;
  c.answers.assign(g.num_nodes(), 0);
  c.claimed.assign(g.num_nodes(), false);
  const OrtcGraphView view = g.View();
  const OrtcCapabilitySink sink{&c, &Claim, &Refuse};
  CHECK(compiler->get_capability(compiler, &view, &sink) == ORTC_PLUGIN_OK);
  for (uint32_t n = 0; n < g.num_nodes(); ++n)
    CHECK_MSG(c.answers[n] == 1,
              "node " + std::to_string(n) + " got " + std::to_string(c.answers[n]) + " answers");
  return c;
}

OrtcPluginStatus Compile(OrtcBackendCompiler* compiler, const GraphBuilder& g,
                         std::vector<int32_t> nodes, std::vector<int32_t> inputs,
                         std::vector<int32_t> outputs, Compiled* out) {
  const OrtcGraphView view = g.View();
  const OrtcSubgraphRef ref{"npu_graph_0",
                            nodes.data(),
                            static_cast<uint32_t>(nodes.size()),
                            inputs.data(),
                            static_cast<uint32_t>(inputs.size()),
                            outputs.data(),
                            static_cast<uint32_t>(outputs.size())};
  const OrtcCompileSink sink = RecordingSink(out);
  return compiler->compile(compiler, &view, &ref, nullptr, 0, &sink);
}

OrtcPluginStatus Load(OrtcBackend* b, const Compiled& c, OrtcGraph** graph,
                      const std::string* program, size_t num_weights) {
  std::vector<OrtcBlob> blobs;
  for (size_t i = 0; i < c.weights.size() && i < num_weights; ++i)
    blobs.push_back(
        {nullptr, static_cast<uint32_t>(i), c.weights[i].bytes.data(), c.weights[i].bytes.size()});
  const std::string& p = program ? *program : c.program;
  OrtcGraphLoadInfo info{};
  info.struct_size = sizeof(info);
  info.graph_name = "npu_graph_0";
  info.content_id = "test";
  info.program = p.data();
  info.program_size = p.size();
  info.weights = blobs.data();
  info.num_weights = static_cast<uint32_t>(blobs.size());
  return b->load_graph(b, &info, graph);
}

OrtcTensorRef Ref(const TensorDesc& d, void* data) {
  return {d.dtype,          static_cast<uint32_t>(d.dims.size()),
          d.dims.data(),    data,
          Elements(d.dims), ORTC_MEMORY_HOST};
}

OrtcPluginStatus RunOne(OrtcBackend* b, OrtcGraph* graph, const Compiled& c,
                        const std::string& input, std::string* output) {
  std::string in = input;
  output->assign(Elements(c.outputs[0].dims), '\0');
  const OrtcTensorRef inputs[] = {Ref(c.inputs[0], &in[0])};
  OrtcTensorRef outputs[] = {Ref(c.outputs[0], &(*output)[0])};
  return b->run_graph(graph, inputs, 1, outputs, 1);
}

void CompareOutputs(const char* what, const std::vector<int32_t>& got,
                    const std::vector<int32_t>& want) {
  REQUIRE(got.size() == want.size());
  int max_diff = 0;
  for (size_t i = 0; i < got.size(); ++i) max_diff = std::max(max_diff, std::abs(got[i] - want[i]));
  const auto [lo, hi] = std::minmax_element(got.begin(), got.end());
  const bool any_nonzero = std::any_of(got.begin(), got.end(), [](int32_t v) { return v != 0; });
  CHECK_MSG(max_diff <= 1, std::string(what) + ": max difference " + std::to_string(max_diff));
  CHECK_MSG(any_nonzero && *hi - *lo >= 8, std::string(what) + ": outputs span only [" +
                                               std::to_string(*lo) + ", " + std::to_string(*hi) +
                                               "]");
  std::printf("  %s: %zu outputs in [%d, %d], max difference to the reference %d\n", what,
              got.size(), *lo, *hi, max_diff);
}

}  // namespace npu_test
