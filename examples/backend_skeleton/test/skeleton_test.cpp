// Standalone test of the npu backend skeleton, through the plugin ABI alone: it builds graph views
// by hand, asks the compile side which nodes it takes and compiles the groups, loads and runs
// the programs through the runtime side, and compares every output with a float reference
// computed here (independently of the plugin's integer kernels). It also checks the version
// gate, corrupt programs, the ABI version refusal and the text buffer rules. No test framework:
// the skeleton must build from the ABI header and the standard library alone.
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include <ortc/ortc_backend_plugin.h>

// The four entry points, as the host finds them with dlsym.
extern "C" {
OrtcPluginStatus ortc_backend_create(uint32_t, const OrtcHostApi*, OrtcBackend**);
void ortc_backend_release(OrtcBackend*);
OrtcPluginStatus ortc_backend_compiler_create(uint32_t, const OrtcHostApi*, OrtcBackendCompiler**);
void ortc_backend_compiler_release(OrtcBackendCompiler*);
}
static_assert(std::is_same_v<decltype(&ortc_backend_create), OrtcBackendCreateFn>);
static_assert(std::is_same_v<decltype(&ortc_backend_release), OrtcBackendReleaseFn>);
static_assert(std::is_same_v<decltype(&ortc_backend_compiler_create), OrtcBackendCompilerCreateFn>);
static_assert(
    std::is_same_v<decltype(&ortc_backend_compiler_release), OrtcBackendCompilerReleaseFn>);

namespace {

// ---------------------------------------------------------------------------------------------
// CHECK: counts, reports and goes on; REQUIRE: the same, then leaves the test function.

int g_checks = 0;
int g_failures = 0;

bool Check(bool ok, const char* what, int line, const std::string& detail = "") {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::fprintf(stderr, "skeleton_test.cpp:%d: CHECK failed: %s%s%s\n", line, what,
                 detail.empty() ? "" : "\n    ", detail.c_str());
  }
  return ok;
}

#define CHECK(cond) Check(static_cast<bool>(cond), #cond, __LINE__)
#define CHECK_MSG(cond, detail) Check(static_cast<bool>(cond), #cond, __LINE__, detail)
#define REQUIRE(cond) \
  if (!Check(static_cast<bool>(cond), #cond, __LINE__)) return

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr int32_t kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6;

// ---------------------------------------------------------------------------------------------
// Graph views built by hand. Every string and array lives in a deque, so the pointers the views
// hold stay put while the graph grows.

struct Attr {
  std::string name;
  int32_t type;
  int64_t i = 0;
  std::vector<int64_t> ints;
  std::string s;
};

Attr Int(const std::string& name, int64_t v) {
  return {name, 2, v, {}, {}};
}
Attr Ints(const std::string& name, std::vector<int64_t> v) {
  return {name, 7, 0, std::move(v), {}};
}
Attr Text(const std::string& name, const std::string& v) {
  return {name, 3, 0, {}, v};
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

class GraphBuilder {
 public:
  int Value(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
            bool graph_input = false) {
    OrtcValueView v{};
    v.name = Keep(name);
    v.dtype = dtype;
    v.rank = static_cast<int32_t>(dims.size());
    dims_.push_back(std::move(dims));
    v.dims = dims_.back().data();
    v.producer = -1;
    v.is_graph_input = graph_input;
    values_.push_back(v);
    return static_cast<int>(values_.size() - 1);
  }
  int Constant(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
               const std::string& bytes) {
    const int v = Value(name, dtype, std::move(dims));
    bytes_.push_back(bytes);
    values_[v].is_constant = 1;
    values_[v].data = bytes_.back().data();
    values_[v].byte_size = bytes.size();
    return v;
  }
  int External(const std::string& name, int32_t dtype, std::vector<int64_t> dims,
               const std::string& file, uint64_t offset, uint64_t size) {
    const int v = Value(name, dtype, std::move(dims));
    values_[v].is_constant = 1;
    values_[v].byte_size = size;
    values_[v].external_file = Keep(file);
    values_[v].external_offset = offset;
    return v;
  }
  int Scale(const std::string& name, float s) {
    return Constant(name, kFloat, {}, Bytes<float>({s}));
  }
  int ZeroPoint(const std::string& name, int32_t dtype, int32_t z) {
    if (dtype == kInt8) return Constant(name, kInt8, {}, Bytes<int8_t>({static_cast<int8_t>(z)}));
    if (dtype == kUint8)
      return Constant(name, kUint8, {1}, Bytes<uint8_t>({static_cast<uint8_t>(z)}));
    return Constant(name, kInt32, {}, Bytes<int32_t>({z}));
  }
  int Node(const std::string& op, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
           const std::vector<Attr>& attrs = {}) {
    OrtcNodeView n{};
    n.name = Keep(op + "_" + std::to_string(nodes_.size()));
    n.op_type = Keep(op);
    n.domain = Keep("");
    n.since_version = 21;
    indices_.push_back(std::move(inputs));
    n.inputs = indices_.back().data();
    n.num_inputs = static_cast<uint32_t>(indices_.back().size());
    indices_.push_back(std::move(outputs));
    n.outputs = indices_.back().data();
    n.num_outputs = static_cast<uint32_t>(indices_.back().size());
    std::vector<OrtcAttributeView> views;
    for (const Attr& a : attrs) {
      OrtcAttributeView view{};
      view.name = Keep(a.name);
      view.type = a.type;
      view.i = a.i;
      if (a.type == 7) {
        ints_.push_back(a.ints);
        view.ints = ints_.back().data();
        view.count = static_cast<uint32_t>(a.ints.size());
      }
      if (a.type == 3) {
        view.s = Keep(a.s);
        view.s_size = a.s.size();
      }
      views.push_back(view);
    }
    attrs_.push_back(std::move(views));
    n.attributes = attrs_.back().data();
    n.num_attributes = static_cast<uint32_t>(attrs_.back().size());
    for (const int32_t out : indices_.back())
      if (out >= 0) values_[out].producer = static_cast<int32_t>(nodes_.size());
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size() - 1);
  }
  void MarkOutput(int v) { values_[v].is_graph_output = 1; }
  OrtcValueView& value(int v) { return values_[v]; }
  const OrtcNodeView& node(int n) const { return nodes_[n]; }
  uint32_t num_nodes() const { return static_cast<uint32_t>(nodes_.size()); }

  OrtcGraphView View() const {
    OrtcGraphView g{};
    g.struct_size = sizeof(OrtcGraphView);
    g.nodes = nodes_.data();
    g.num_nodes = static_cast<uint32_t>(nodes_.size());
    g.values = values_.data();
    g.num_values = static_cast<uint32_t>(values_.size());
    return g;
  }

 private:
  const char* Keep(const std::string& s) {
    strings_.push_back(s);
    return strings_.back().c_str();
  }

  std::deque<std::string> strings_, bytes_;
  std::deque<std::vector<int64_t>> dims_, ints_;
  std::deque<std::vector<int32_t>> indices_;
  std::deque<std::vector<OrtcAttributeView>> attrs_;
  std::vector<OrtcValueView> values_;
  std::vector<OrtcNodeView> nodes_;
};

// ---------------------------------------------------------------------------------------------
// The float reference: dequantize, compute in double, quantize with round-half-to-even (the
// floating-point environment's default rounding, not the plugin's own rounding code) and
// saturate.

struct Quant {
  double scale;
  int32_t zero;
  bool is_signed;
};

int32_t QuantizeRef(double real, const Quant& q) {
  const double lo = q.is_signed ? -128 : 0, hi = q.is_signed ? 127 : 255;
  const double v = std::nearbyint(real / q.scale) + q.zero;
  return static_cast<int32_t>(std::min(hi, std::max(lo, v)));
}

std::vector<int32_t> Ints32(const std::string& bytes, bool is_signed) {
  std::vector<int32_t> out;
  for (const char c : bytes)
    out.push_back(is_signed ? static_cast<int8_t>(c) : static_cast<uint8_t>(c));
  return out;
}

struct ConvSpec {
  int64_t n, c, h, w, m, kh, kw;
  int64_t pads[4] = {0, 0, 0, 0};
  int64_t strides[2] = {1, 1};
  int64_t dilations[2] = {1, 1};
  int64_t oh() const {
    return (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) / strides[0] + 1;
  }
  int64_t ow() const {
    return (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) / strides[1] + 1;
  }
};

std::vector<int32_t> ConvRef(const ConvSpec& s, const std::vector<int32_t>& x, const Quant& qx,
                             const std::vector<int8_t>& w, double sw, const std::vector<int32_t>& b,
                             double sb, const Quant& qy) {
  std::vector<int32_t> y;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t oy = 0; oy < s.oh(); ++oy)
        for (int64_t ox = 0; ox < s.ow(); ++ox) {
          double sum = b.empty() ? 0.0 : b[m] * sb;
          for (int64_t c = 0; c < s.c; ++c)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                const int64_t iy = oy * s.strides[0] - s.pads[0] + ky * s.dilations[0];
                const int64_t ix = ox * s.strides[1] - s.pads[1] + kx * s.dilations[1];
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                const double xf = (x[((n * s.c + c) * s.h + iy) * s.w + ix] - qx.zero) * qx.scale;
                const double wf = w[((m * s.c + c) * s.kh + ky) * s.kw + kx] * sw;
                sum += xf * wf;
              }
          y.push_back(QuantizeRef(sum, qy));
        }
  return y;
}

std::vector<int32_t> MatMulRef(int64_t rows, int64_t k, int64_t cols, const std::vector<int32_t>& a,
                               const Quant& qa, const std::vector<int8_t>& b, double sb,
                               const Quant& qy) {
  std::vector<int32_t> y;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double sum = 0;
      for (int64_t i = 0; i < k; ++i)
        sum += (a[r * k + i] - qa.zero) * qa.scale * (b[i * cols + c] * sb);
      y.push_back(QuantizeRef(sum, qy));
    }
  return y;
}

// Deterministic test data.
uint32_t g_seed = 12345;
int32_t Random(int32_t lo, int32_t hi) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return lo + static_cast<int32_t>((g_seed >> 8) % static_cast<uint32_t>(hi - lo + 1));
}
template <typename T>
std::vector<T> RandomVector(size_t n, int32_t lo, int32_t hi) {
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>(Random(lo, hi));
  return v;
}

// ---------------------------------------------------------------------------------------------
// Sinks that record what the plugin reports.

struct Capability {
  std::vector<int> answers;  // per node: how many answers it got
  std::vector<bool> claimed;
  std::map<uint32_t, std::string> reasons;
};

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

struct TensorDesc {
  std::string name;
  int32_t dtype;
  std::vector<int64_t> dims;
};

struct Weight {
  TensorDesc desc;
  std::string layout;
  uint32_t alignment;
  int32_t kind;
  std::string bytes;
};

struct Compiled {
  std::string program;
  std::vector<TensorDesc> inputs, outputs;
  std::vector<Weight> weights;
  std::map<std::string, int64_t> stats;
  std::map<std::string, std::string> notes, versions;
  std::vector<std::pair<int32_t, int32_t>> progress;
};

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

// ---------------------------------------------------------------------------------------------
// The runtime side, as the host drives it.

OrtcPluginStatus Load(OrtcBackend* b, const Compiled& c, OrtcGraph** graph,
                      const std::string* program = nullptr, size_t num_weights = SIZE_MAX) {
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

uint64_t Elements(const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (const int64_t d : dims) n *= static_cast<uint64_t>(d);
  return n;
}

OrtcTensorRef Ref(const TensorDesc& d, void* data) {
  return {d.dtype,          static_cast<uint32_t>(d.dims.size()),
          d.dims.data(),    data,
          Elements(d.dims), ORTC_MEMORY_HOST};
}

// Runs a loaded graph of one input and one output (both 8-bit).
OrtcPluginStatus RunOne(OrtcBackend* b, OrtcGraph* graph, const Compiled& c,
                        const std::string& input, std::string* output) {
  std::string in = input;
  output->assign(Elements(c.outputs[0].dims), '\0');
  const OrtcTensorRef inputs[] = {Ref(c.inputs[0], &in[0])};
  OrtcTensorRef outputs[] = {Ref(c.outputs[0], &(*output)[0])};
  return b->run_graph(graph, inputs, 1, outputs, 1);
}

// Compares plugin and reference: within one step of the output's quantization everywhere, and
// the outputs are not trivially constant.
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

// ---------------------------------------------------------------------------------------------
// Test graphs.

// The QDQ Conv unit of the brief: x 1x2x5x5 int8, w 3x2x3x3, bias, pads 1, stride 1.
struct ConvGraph {
  GraphBuilder g;
  ConvSpec spec{1, 2, 5, 5, 3, 3, 3, {1, 1, 1, 1}};
  std::vector<int8_t> x, w;
  std::vector<int32_t> b;
  Quant qx{0.05, 3, true}, qy{0.5, -5, true};
  float sw = 0.02f, sb = 0.05f * 0.02f;
  int x_q = -1, y_q = -1, relu = -1;
  std::vector<int32_t> unit;  // node indices
};

struct ConvOptions {
  bool relu_beside = true;       // an unrelated float Relu
  bool relu_on_x = false;        // a Relu also reading the unit's dequantized activation
  std::vector<Attr> attrs;       // Conv attributes (default: pads 1, strides 1)
  bool per_channel_w = false;    // three weight scales
  bool dynamic_x = false;        // x with an unknown dim
  bool external_weight = false;  // w in a file
  std::string file;
};

void BuildConv(ConvGraph& t, const ConvOptions& o) {
  GraphBuilder& g = t.g;
  const ConvSpec& s = t.spec;
  t.x = RandomVector<int8_t>(static_cast<size_t>(s.n * s.c * s.h * s.w), -100, 100);
  t.w = RandomVector<int8_t>(static_cast<size_t>(s.m * s.c * s.kh * s.kw), -127, 127);
  t.b = RandomVector<int32_t>(static_cast<size_t>(s.m), -3000, 3000);
  std::vector<int64_t> x_dims{s.n, s.c, s.h, s.w};
  if (o.dynamic_x) x_dims[2] = -1;
  t.x_q = g.Value("x", kInt8, x_dims, true);
  const int x_f = g.Value("x_f", kFloat, x_dims);
  int w_q;
  if (o.external_weight) {
    std::ofstream(o.file, std::ios::binary) << std::string(16, 'p') << Bytes(t.w);
    w_q = g.External("w", kInt8, {s.m, s.c, s.kh, s.kw}, o.file, 16, t.w.size());
  } else {
    w_q = g.Constant("w", kInt8, {s.m, s.c, s.kh, s.kw}, Bytes(t.w));
  }
  const int w_f = g.Value("w_f", kFloat, {s.m, s.c, s.kh, s.kw});
  const int b_q = g.Constant("b", kInt32, {s.m}, Bytes(t.b));
  const int b_f = g.Value("b_f", kFloat, {s.m});
  const int y_f = g.Value("y_f", kFloat, {s.n, s.m, s.oh(), s.ow()});
  t.y_q = g.Value("y", kInt8, {s.n, s.m, s.oh(), s.ow()});
  g.MarkOutput(t.y_q);
  const int sx = g.Scale("x_scale", static_cast<float>(t.qx.scale));
  const int zx = g.ZeroPoint("x_zero", kInt8, t.qx.zero);
  const int sw = o.per_channel_w
                     ? g.Constant("w_scale", kFloat, {3}, Bytes<float>({t.sw, t.sw, t.sw}))
                     : g.Scale("w_scale", t.sw);
  const int zw = g.ZeroPoint("w_zero", kInt8, 0);
  const int sb = g.Scale("b_scale", t.sb);
  const int sy = g.Scale("y_scale", static_cast<float>(t.qy.scale));
  const int zy = g.ZeroPoint("y_zero", kInt8, t.qy.zero);
  std::vector<Attr> attrs = o.attrs;
  if (attrs.empty())
    attrs = {Ints("pads", {1, 1, 1, 1}), Ints("strides", {1, 1}), Ints("kernel_shape", {3, 3}),
             Int("group", 1)};
  t.unit = {g.Node("DequantizeLinear", {t.x_q, sx, zx}, {x_f}),
            g.Node("DequantizeLinear", {w_q, sw, zw}, {w_f}),
            g.Node("DequantizeLinear", {b_q, sb}, {b_f}),
            g.Node("Conv", {x_f, w_f, b_f}, {y_f}, attrs),
            g.Node("QuantizeLinear", {y_f, sy, zy}, {t.y_q})};
  if (o.relu_beside) {
    const int r_in = g.Value("r_in", kFloat, {4}, true);
    const int r_out = g.Value("r_out", kFloat, {4});
    g.MarkOutput(r_out);
    t.relu = g.Node("Relu", {r_in}, {r_out});
  }
  if (o.relu_on_x) {
    const int r_out = g.Value("x_relu", kFloat, x_dims);
    g.MarkOutput(r_out);
    t.relu = g.Node("Relu", {x_f}, {r_out});
  }
}

// A QDQ MatMul unit a [rows, k] x b [k, cols]; returns the node indices.
struct MatMulUnit {
  std::vector<int8_t> b;
  float sb;
  Quant qa, qy;
  int a_q, y_q;
  std::vector<int32_t> nodes;
};

MatMulUnit AddMatMul(GraphBuilder& g, const std::string& tag, int a_q, Quant qa,
                     std::vector<int64_t> a_dims, int64_t cols, std::vector<int8_t> b, float sb,
                     Quant qy, bool y_zero_point, const std::string& external_file = "") {
  MatMulUnit u{std::move(b), sb, qa, qy, a_q, -1, {}};
  const int64_t k = a_dims.back();
  std::vector<int64_t> y_dims = a_dims;
  y_dims.back() = cols;
  const int a_f = g.Value(tag + "a_f", kFloat, a_dims);
  int b_q, s_b;
  if (!external_file.empty()) {
    // Weight and its scale in an external data file, as large models store them.
    std::ofstream(external_file, std::ios::binary) << Bytes(u.b) << Bytes<float>({sb});
    b_q = g.External(tag + "b", kInt8, {k, cols}, external_file, 0, u.b.size());
    s_b = g.External(tag + "b_scale", kFloat, {1}, external_file, u.b.size(), 4);
  } else {
    b_q = g.Constant(tag + "b", kInt8, {k, cols}, Bytes(u.b));
    s_b = g.Scale(tag + "b_scale", sb);
  }
  const int b_f = g.Value(tag + "b_f", kFloat, {k, cols});
  const int y_f = g.Value(tag + "y_f", kFloat, y_dims);
  u.y_q = g.Value(tag + "y", qy.is_signed ? kInt8 : kUint8, y_dims);
  const int s_a = g.Scale(tag + "a_scale", static_cast<float>(qa.scale));
  const int z_a = g.ZeroPoint(tag + "a_zero", qa.is_signed ? kInt8 : kUint8, qa.zero);
  const int s_y = g.Scale(tag + "y_scale", static_cast<float>(qy.scale));
  std::vector<int32_t> q_inputs{y_f, s_y};
  if (y_zero_point) q_inputs.push_back(g.ZeroPoint(tag + "y_zero", kInt8, qy.zero));
  u.nodes = {g.Node("DequantizeLinear", {a_q, s_a, z_a}, {a_f}),
             g.Node("DequantizeLinear", {b_q, s_b}, {b_f}), g.Node("MatMul", {a_f, b_f}, {y_f}),
             g.Node("QuantizeLinear", q_inputs, {u.y_q})};
  return u;
}

// ---------------------------------------------------------------------------------------------
// The tests.

struct Plugin {
  OrtcBackendCompiler* compiler = nullptr;
  OrtcBackend* backend = nullptr;
};

int g_log_messages = 0;

void TestTables(const Plugin& p) {
  const OrtcBackendCompiler& c = *p.compiler;
  CHECK(c.abi_version == ORTC_BACKEND_ABI_VERSION);
  CHECK(c.struct_size == sizeof(OrtcBackendCompiler));
  CHECK(std::string(c.name) == "npu");
  CHECK(std::string(c.ep_source) == "ortc.npu");
  CHECK(std::string(c.status_line) == "skeleton NPU (host simulation): int8 QDQ Conv and MatMul");
  CHECK(std::string(c.version) == "npu skeleton 0.1");
  CHECK(c.flags == ORTC_COMPILER_CAN_COMPILE);
  CHECK(c.tuning_variants == nullptr);
  const OrtcBackend& b = *p.backend;
  CHECK(b.abi_version == ORTC_BACKEND_ABI_VERSION);
  CHECK(b.struct_size == sizeof(OrtcBackend));
  CHECK(std::string(b.name) == "npu");
  CHECK(b.check_binary != nullptr);
}

void TestAbiMismatch() {
  OrtcBackend* sentinel = reinterpret_cast<OrtcBackend*>(0x1234);
  OrtcBackend* b = sentinel;
  CHECK(ortc_backend_create(ORTC_BACKEND_ABI_VERSION - 1, nullptr, &b) == ORTC_PLUGIN_ABI_MISMATCH);
  CHECK(b == sentinel);
  CHECK(ortc_backend_create(ORTC_BACKEND_ABI_VERSION + 1, nullptr, &b) == ORTC_PLUGIN_ABI_MISMATCH);
  OrtcBackendCompiler* csentinel = reinterpret_cast<OrtcBackendCompiler*>(0x1234);
  OrtcBackendCompiler* c = csentinel;
  CHECK(ortc_backend_compiler_create(ORTC_BACKEND_ABI_VERSION + 1, nullptr, &c) ==
        ORTC_PLUGIN_ABI_MISMATCH);
  CHECK(c == csentinel);
  CHECK(ortc_backend_create(ORTC_BACKEND_ABI_VERSION, nullptr, nullptr) ==
        ORTC_PLUGIN_INVALID_ARGUMENT);
}

void TestOptions(const Plugin& p) {
  OrtcBackendCompiler* c = p.compiler;
  CHECK(c->validate_options(c, nullptr, 0) == ORTC_PLUGIN_OK);
  const OrtcKeyValue opt{"fast", "1"};
  CHECK(c->validate_options(c, &opt, 1) == ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK(std::string(c->last_error(c)) ==
        "npu: unknown option 'fast' (this backend has no options)");
  // last_error is per thread: another thread sees no failure.
  std::string other = "unset";
  std::thread([&] { other = c->last_error(c); }).join();
  CHECK(other.empty());

  struct Identity {
    std::string sdk, arch;
    std::map<std::string, std::string> versions;
    std::vector<std::string> targets;
  } id;
  OrtcIdentitySink sink{};
  sink.user = &id;
  sink.set_sdk_version = [](void* u, const char* v) { static_cast<Identity*>(u)->sdk = v; };
  sink.set_hardware_architecture = [](void* u, const char* v) {
    static_cast<Identity*>(u)->arch = v;
  };
  sink.add_version = [](void* u, const char* k, const char* v) {
    static_cast<Identity*>(u)->versions[k] = v;
  };
  sink.add_hardware_target = [](void* u, const char* t) {
    static_cast<Identity*>(u)->targets.push_back(t);
  };
  sink.add_property = [](void*, const char*, const char*) {};
  CHECK(c->identity(c, nullptr, 0, &sink) == ORTC_PLUGIN_OK);
  CHECK(id.sdk == "1.0");
  CHECK(id.arch == "npu-sim-v1");
  CHECK(id.versions == (std::map<std::string, std::string>{{"npu_sdk", "1.0"}}));
  CHECK(id.targets == std::vector<std::string>{"npu-sim-v1"});
  CHECK(c->identity(c, &opt, 1, &sink) == ORTC_PLUGIN_INVALID_ARGUMENT);
}

void TestConv(const Plugin& p, bool external) {
  ConvGraph t;
  ConvOptions o;
  o.external_weight = external;
  o.file = (std::filesystem::temp_directory_path() /
            ("npu_skeleton_conv_" + std::to_string(::getpid()) + ".bin"))
               .string();
  BuildConv(t, o);
  const Capability cap = AskCapability(p.compiler, t.g);
  for (const int32_t n : t.unit)
    CHECK_MSG(cap.claimed[n], cap.reasons.count(n) ? cap.reasons.at(n) : "");
  REQUIRE(cap.reasons.count(t.relu));
  CHECK_MSG(Contains(cap.reasons.at(t.relu), "Relu"), cap.reasons.at(t.relu));
  CHECK(!cap.claimed[t.relu]);

  Compiled c;
  REQUIRE(Compile(p.compiler, t.g, t.unit, {t.x_q}, {t.y_q}, &c) == ORTC_PLUGIN_OK);
  REQUIRE(c.inputs.size() == 1 && c.outputs.size() == 1 && c.weights.size() == 2);
  CHECK(c.inputs[0].name == "x" && c.inputs[0].dtype == kInt8 &&
        c.inputs[0].dims == (std::vector<int64_t>{1, 2, 5, 5}));
  CHECK(c.outputs[0].name == "y" && c.outputs[0].dtype == kInt8 &&
        c.outputs[0].dims == (std::vector<int64_t>{1, 3, 5, 5}));
  CHECK(c.weights[0].desc.dtype == kInt8 && c.weights[0].layout == "plain" &&
        c.weights[0].alignment == 64 &&
        c.weights[0].desc.dims == (std::vector<int64_t>{3, 2, 3, 3}));
  CHECK(c.weights[0].kind == (external ? ORTC_BYTES_FILE_REGION : ORTC_BYTES_COPY));
  CHECK(c.weights[0].bytes == Bytes(t.w));
  CHECK(c.weights[1].desc.dtype == kInt32 && c.weights[1].bytes == Bytes(t.b));
  CHECK(c.program.substr(0, 4) == "NPUB");
  CHECK(c.stats["npu_qdq_conv"] == 1 && c.stats["npu_qdq_matmul"] == 0);
  CHECK(c.notes["npu_units"] == "1");
  CHECK(c.versions["npu_sdk"] == "1.0");
  CHECK(c.progress == (std::vector<std::pair<int32_t, int32_t>>{{1, 1}}));
  if (external) std::filesystem::remove(o.file);

  OrtcGraph* graph = nullptr;
  REQUIRE(Load(p.backend, c, &graph) == ORTC_PLUGIN_OK);
  std::string y;
  CHECK(RunOne(p.backend, graph, c, Bytes(t.x), &y) == ORTC_PLUGIN_OK);
  const std::vector<int32_t> want =
      ConvRef(t.spec, Ints32(Bytes(t.x), true), t.qx, t.w, t.sw, t.b, t.sb, t.qy);
  CompareOutputs(external ? "conv (external weights)" : "conv", Ints32(y, true), want);

  char text[128];
  size_t length = 0;
  CHECK(p.backend->describe_graph(graph, text, sizeof text, &length) == ORTC_PLUGIN_OK);
  CHECK(std::string(text) == R"({"runs_on":"host simulation","steps":1})");
  CHECK(p.backend->last_run_profile(graph, text, sizeof text, &length) ==
        ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK(std::string(p.backend->last_error(p.backend)) == "npu: profiling not supported");
  p.backend->release_graph(graph);
}

// The tiny case worked out by hand, to prove the reference before trusting it:
//   a = [10, -4] int8, zero point 2, scale 0.5  -> dequantized [4, -3]
//   b = [[3, 1, 127], [5, 1, -128]] int8, scale 0.25
//   y scale 0.5, zero point 1, int8
//   column 0: 4*0.75 + (-3)*1.25 = -0.75; /0.5 = -1.5 -> -2 (half to even); +1 = -1
//   column 1: 4*0.25 + (-3)*0.25 =  0.25; /0.5 =  0.5 ->  0 (half to even, not 1); +1 = 1
//   column 2: 4*31.75 + (-3)*(-32) = 223; /0.5 = 446; +1 = 447 -> saturates to 127
// In integers (what the plugin computes): acc = (10-2)*b0 + (-4-2)*b1 = -6, 2, 1784, times
// 0.5*0.25 = -0.75, 0.25, 223: the same.
void TestHandWorked(const Plugin& p) {
  GraphBuilder g;
  const int a = g.Value("a", kInt8, {1, 2}, true);
  const MatMulUnit u = AddMatMul(g, "", a, {0.5, 2, true}, {1, 2}, 3, {3, 1, 127, 5, 1, -128},
                                 0.25f, {0.5, 1, true}, true);
  g.MarkOutput(u.y_q);
  const std::vector<int32_t> a_values{10, -4};
  const std::vector<int32_t> expected{-1, 1, 127};
  CHECK(MatMulRef(1, 2, 3, a_values, u.qa, u.b, u.sb, u.qy) == expected);

  Compiled c;
  REQUIRE(Compile(p.compiler, g, u.nodes, {a}, {u.y_q}, &c) == ORTC_PLUGIN_OK);
  OrtcGraph* graph = nullptr;
  REQUIRE(Load(p.backend, c, &graph) == ORTC_PLUGIN_OK);
  std::string y;
  CHECK(RunOne(p.backend, graph, c, Bytes<int8_t>({10, -4}), &y) == ORTC_PLUGIN_OK);
  CHECK(Ints32(y, true) == expected);
  p.backend->release_graph(graph);
}

// The QDQ MatMul unit of the brief: a [2,4] uint8 x b [4,3] int8 (in an external file), the
// output uint8 through a QuantizeLinear without zero point.
void TestMatMul(const Plugin& p) {
  GraphBuilder g;
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("npu_skeleton_matmul_" + std::to_string(::getpid()) + ".bin"))
                               .string();
  const int a = g.Value("a", kUint8, {2, 4}, true);
  const MatMulUnit u =
      AddMatMul(g, "", a, {0.02, 128, false}, {2, 4}, 3, RandomVector<int8_t>(12, -40, 127), 0.03f,
                {0.1, 0, false}, false, file);
  g.MarkOutput(u.y_q);
  const Capability cap = AskCapability(p.compiler, g);
  for (const int32_t n : u.nodes) CHECK(cap.claimed[n]);

  Compiled c;
  REQUIRE(Compile(p.compiler, g, u.nodes, {a}, {u.y_q}, &c) == ORTC_PLUGIN_OK);
  std::filesystem::remove(file);
  REQUIRE(c.weights.size() == 1);
  CHECK(c.weights[0].kind == ORTC_BYTES_FILE_REGION);
  CHECK(c.weights[0].bytes == Bytes(u.b));
  CHECK(c.outputs[0].dtype == kUint8);
  CHECK(c.stats["npu_qdq_matmul"] == 1);

  OrtcGraph* graph = nullptr;
  REQUIRE(Load(p.backend, c, &graph) == ORTC_PLUGIN_OK);
  // Mostly above the zero point, with mostly positive weights: mostly positive outputs, which
  // a uint8 output without zero point (0) can represent.
  const std::vector<uint8_t> a_values = RandomVector<uint8_t>(8, 90, 255);
  std::string y;
  CHECK(RunOne(p.backend, graph, c, Bytes(a_values), &y) == ORTC_PLUGIN_OK);
  CompareOutputs("matmul", Ints32(y, false),
                 MatMulRef(2, 4, 3, Ints32(Bytes(a_values), false), u.qa, u.b, u.sb, u.qy));
  p.backend->release_graph(graph);
}

// Two MatMul units chained through a quantized intermediate, compiled as one group.
void TestChain(const Plugin& p) {
  GraphBuilder g;
  const int a = g.Value("a", kInt8, {2, 3, 8}, true);
  const MatMulUnit u1 = AddMatMul(g, "l1_", a, {0.04, -2, true}, {2, 3, 8}, 6,
                                  RandomVector<int8_t>(48, -127, 127), 0.02f, {0.5, 4, true}, true);
  const MatMulUnit u2 =
      AddMatMul(g, "l2_", u1.y_q, u1.qy, {2, 3, 6}, 5, RandomVector<int8_t>(30, -127, 127), 0.03f,
                {2.0, -3, true}, true);
  g.MarkOutput(u2.y_q);
  const Capability cap = AskCapability(p.compiler, g);
  std::vector<int32_t> nodes = u1.nodes;
  nodes.insert(nodes.end(), u2.nodes.begin(), u2.nodes.end());
  for (const int32_t n : nodes) CHECK(cap.claimed[n]);

  Compiled c;
  REQUIRE(Compile(p.compiler, g, nodes, {a}, {u2.y_q}, &c) == ORTC_PLUGIN_OK);
  CHECK(c.weights.size() == 2);
  CHECK(c.notes["npu_units"] == "2");
  CHECK(c.progress == (std::vector<std::pair<int32_t, int32_t>>{{1, 2}, {2, 2}}));
  // Half a group is not a group: the second unit's QuantizeLinear left out.
  Compiled partial;
  CHECK(Compile(p.compiler, g, std::vector<int32_t>(nodes.begin(), nodes.end() - 1), {a}, {u1.y_q},
                &partial) == ORTC_PLUGIN_INVALID_GRAPH);
  CHECK_MSG(Contains(p.compiler->last_error(p.compiler), "outside the group"),
            p.compiler->last_error(p.compiler));

  OrtcGraph* graph = nullptr;
  REQUIRE(Load(p.backend, c, &graph) == ORTC_PLUGIN_OK);
  const std::vector<int8_t> a_values = RandomVector<int8_t>(48, -128, 127);
  std::string y;
  CHECK(RunOne(p.backend, graph, c, Bytes(a_values), &y) == ORTC_PLUGIN_OK);
  const std::vector<int32_t> mid =
      MatMulRef(6, 8, 6, Ints32(Bytes(a_values), true), u1.qa, u1.b, u1.sb, u1.qy);
  CompareOutputs("chained matmuls", Ints32(y, true),
                 MatMulRef(6, 6, 5, mid, u2.qa, u2.b, u2.sb, u2.qy));
  p.backend->release_graph(graph);
}

// Nodes outside the subset, each refused with the condition that failed.
void TestRefusals(const Plugin& p) {
  const auto conv_reason = [&](const ConvOptions& o, int which) {
    ConvGraph t;
    BuildConv(t, o);
    const Capability cap = AskCapability(p.compiler, t.g);
    const int32_t node = which < 0 ? t.relu : t.unit[which];
    CHECK(!cap.claimed[node]);
    return cap.reasons.count(node) ? cap.reasons.at(node) : std::string("(claimed)");
  };
  ConvOptions o;
  o.relu_beside = false;
  o.attrs = {Ints("pads", {1, 1, 1, 1}), Int("group", 2)};
  std::string why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "group 2"), why);
  why = conv_reason(o, 4);  // its QuantizeLinear says which unit it belongs to
  CHECK_MSG(Contains(why, "Conv") && Contains(why, "group 2"), why);

  o.attrs = {Text("auto_pad", "SAME_UPPER")};
  why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "auto_pad 'SAME_UPPER'"), why);

  o.attrs = {};
  o.per_channel_w = true;
  why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "per-channel scales are not supported (scale of 'w' has 3 entries)"),
            why);

  o.per_channel_w = false;
  o.dynamic_x = true;
  why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "npu needs static shapes (value 'x' is [1,2,?,5])"), why);

  o.dynamic_x = false;
  o.relu_on_x = true;
  why = conv_reason(o, 0);
  CHECK_MSG(Contains(why, "its float output is also read by") && Contains(why, "(Relu)"), why);
  why = conv_reason(o, 3);
  CHECK_MSG(Contains(why, "not taken"), why);
  why = conv_reason(o, -1);
  CHECK_MSG(Contains(why, "op Relu is outside the npu subset"), why);

  // A float Conv with no QDQ around it.
  GraphBuilder g;
  const int x = g.Value("x", kFloat, {1, 1, 4, 4}, true);
  const int w = g.Constant("w", kFloat, {1, 1, 1, 1}, Bytes<float>({1.0f}));
  const int y = g.Value("y", kFloat, {1, 1, 4, 4});
  g.MarkOutput(y);
  const int conv = g.Node("Conv", {x, w}, {y});
  Capability cap = AskCapability(p.compiler, g);
  CHECK_MSG(Contains(cap.reasons[conv], "does not come from a DequantizeLinear"),
            cap.reasons[conv]);
  // Compiling a group the backend never claimed fails with a reason.
  Compiled c;
  CHECK(Compile(p.compiler, g, {conv}, {x}, {y}, &c) == ORTC_PLUGIN_INVALID_GRAPH);
  CHECK_MSG(Contains(p.compiler->last_error(p.compiler), "not part of a complete npu unit"),
            p.compiler->last_error(p.compiler));
}

void TestRuntimeErrors(const Plugin& p) {
  ConvGraph t;
  BuildConv(t, {});
  Compiled c;
  REQUIRE(Compile(p.compiler, t.g, t.unit, {t.x_q}, {t.y_q}, &c) == ORTC_PLUGIN_OK);
  OrtcBackend* b = p.backend;
  OrtcGraph* graph = nullptr;
  REQUIRE(Load(b, c, &graph) == ORTC_PLUGIN_OK);

  std::string x = Bytes(t.x), y(Elements(c.outputs[0].dims), '\0');
  OrtcTensorRef in = Ref(c.inputs[0], &x[0]);
  OrtcTensorRef out = Ref(c.outputs[0], &y[0]);
  OrtcTensorRef bad = in;
  bad.dtype = kUint8;
  CHECK(b->run_graph(graph, &bad, 1, &out, 1) == ORTC_PLUGIN_INVALID_ARGUMENT);
  bad = in;
  bad.byte_size -= 1;
  CHECK(b->run_graph(graph, &bad, 1, &out, 1) == ORTC_PLUGIN_INVALID_ARGUMENT);
  bad = in;
  bad.location = ORTC_MEMORY_DEVICE;
  CHECK(b->run_graph(graph, &bad, 1, &out, 1) == ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK_MSG(Contains(b->last_error(b), "npu: inputs must be in host memory"), b->last_error(b));
  CHECK(b->run_graph(graph, &in, 1, &out, 0) == ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK(b->run_graph(graph, &in, 1, &out, 1) == ORTC_PLUGIN_OK);
  b->release_graph(graph);

  // Weights that do not match the program's slots.
  CHECK(Load(b, c, &graph, nullptr, 1) == ORTC_PLUGIN_INVALID_GRAPH);
  Compiled short_bias = c;
  short_bias.weights[1].bytes.pop_back();
  CHECK(Load(b, short_bias, &graph) == ORTC_PLUGIN_INVALID_GRAPH);
  CHECK_MSG(Contains(b->last_error(b), "weight slot 1"), b->last_error(b));

  // Options: this backend has none.
  const OrtcKeyValue opt{"enable_profiling", "1"};
  OrtcGraphLoadInfo info{};
  info.struct_size = sizeof info;
  info.program = c.program.data();
  info.program_size = c.program.size();
  info.options = &opt;
  info.num_options = 1;
  CHECK(b->load_graph(b, &info, &graph) == ORTC_PLUGIN_INVALID_ARGUMENT);
  CHECK_MSG(Contains(b->last_error(b), "unknown option 'enable_profiling'"), b->last_error(b));

  // Corrupt programs: every truncation, an out-of-range tensor index, and every single byte
  // flipped. None may crash; a flipped byte may still load (a changed scale), and then it runs.
  int refused = 0;
  for (size_t n = 0; n < c.program.size(); ++n) {
    const std::string cut = c.program.substr(0, n);
    refused += Load(b, c, &graph, &cut) == ORTC_PLUGIN_INVALID_GRAPH;
  }
  CHECK_MSG(refused == static_cast<int>(c.program.size()),
            std::to_string(refused) + " of " + std::to_string(c.program.size()) + " refused");

  // Walk the documented layout to the first step record; its second field is the input tensor.
  const auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, c.program.data() + at, 4);
    return v;
  };
  size_t at = 28;
  for (uint32_t i = 0; i < u32(8); ++i)
    at += 4 + u32(at) + 8 + 4 + 8 * size_t{u32(at + 4 + u32(at) + 8)};
  at += 4 * (size_t{u32(12)} + u32(16));
  for (uint32_t i = 0; i < u32(20); ++i) at += 8 + 8 * size_t{u32(at + 4)};
  std::string patched = c.program;
  const uint32_t out_of_range = 99;
  std::memcpy(&patched[at + 4], &out_of_range, 4);
  CHECK(Load(b, c, &graph, &patched) == ORTC_PLUGIN_INVALID_GRAPH);
  CHECK_MSG(Contains(b->last_error(b), "out of range"), b->last_error(b));

  int loaded = 0;
  for (size_t n = 0; n < c.program.size(); ++n) {
    std::string flipped = c.program;
    flipped[n] = static_cast<char>(flipped[n] ^ 0xff);
    if (Load(b, c, &graph, &flipped) != ORTC_PLUGIN_OK) continue;
    ++loaded;
    const OrtcPluginStatus s = b->run_graph(graph, &in, 1, &out, 1);
    CHECK(s == ORTC_PLUGIN_OK || s == ORTC_PLUGIN_INVALID_ARGUMENT);
    b->release_graph(graph);
  }
  std::printf("  corrupt programs: %d truncations refused, %d of %zu byte flips still load\n",
              refused, loaded, c.program.size());
}

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

}  // namespace

int main() {
  CHECK(std::fegetround() == FE_TONEAREST);  // the reference rounds half to even through it
  TestAbiMismatch();
  OrtcHostApi host{ORTC_BACKEND_ABI_VERSION, sizeof(OrtcHostApi), nullptr,
                   [](void*, int32_t, const char*) { ++g_log_messages; }};
  Plugin p;
  if (!CHECK(ortc_backend_compiler_create(ORTC_BACKEND_ABI_VERSION, &host, &p.compiler) ==
             ORTC_PLUGIN_OK) ||
      !CHECK(ortc_backend_create(ORTC_BACKEND_ABI_VERSION, &host, &p.backend) == ORTC_PLUGIN_OK)) {
    std::fprintf(stderr, "skeleton_test: cannot create the plugin's tables\n");
    return 1;
  }
  TestTables(p);
  TestOptions(p);
  TestHandWorked(p);
  TestConv(p, false);
  TestConv(p, true);
  TestMatMul(p);
  TestChain(p);
  TestRefusals(p);
  TestRuntimeErrors(p);
  TestDevice(p);
  TestVersionGate(p);
  CHECK(g_log_messages > 0);
  ortc_backend_release(p.backend);
  ortc_backend_compiler_release(p.compiler);

  if (g_failures) {
    std::printf("skeleton_test: %d of %d checks failed\n", g_failures, g_checks);
    return 1;
  }
  std::printf("skeleton_test: %d checks passed\n", g_checks);
  return 0;
}
