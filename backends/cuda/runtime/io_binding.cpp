// Binding device-resident inputs and outputs into a program (io_binding.h).
#include "io_binding.h"

#include <algorithm>

namespace ortc::cuda_rt {
namespace {

// The buffer a view finally reads: alias_of chased to a buffer of another kind (aliases only
// point at earlier buffers, so this ends).
int RootOf(const fbc::Program& program, int b) {
  const auto& bufs = *program.buffers();
  while (b >= 0 && static_cast<uint32_t>(b) < bufs.size() &&
         bufs.Get(b)->kind() == fbc::BufferKind::Alias && bufs.Get(b)->alias_of() < b)
    b = bufs.Get(b)->alias_of();
  return b;
}

// Every buffer a step reads or writes.
std::vector<int> Touched(const fbc::Step& s) {
  std::vector<int> out;
  if (const auto* l = s.launch()) {
    if (l->args()) out.assign(l->args()->begin(), l->args()->end());
  } else if (const auto* c = s.conv()) {
    out = {c->x(), c->w(), c->bias(), c->z(), c->y()};
  } else if (const auto* g = s.gemm() ? s.gemm() : s.strided_gemm()) {
    out = {g->a(), g->b(), g->c(), g->bias(), g->y()};
  } else if (const auto* cp = s.copy()) {
    out = {cp->src(), cp->dst()};
  }
  return out;
}

// Whether step s reads input buffer `in` element by element to write output buffer `out` in
// place: a launch declaring the pair (KernelLaunch.same_index) on exactly these buffers, with no
// other argument reaching either of them.
bool ReadsInPlace(const fbc::Program& program, const fbc::Step& s, int in, int out) {
  const auto* l = s.launch();
  if (!l || !l->args() || !l->same_index()) return false;
  const auto& args = *l->args();
  const auto& pairs = *l->same_index();
  for (uint32_t k = 0; k + 1 < pairs.size(); k += 2) {
    const int p = pairs.Get(k), q = pairs.Get(k + 1);
    if (p < 0 || q < 0 || static_cast<uint32_t>(p) >= args.size() ||
        static_cast<uint32_t>(q) >= args.size() || args.Get(p) != in || args.Get(q) != out)
      continue;
    bool alone = true;
    for (uint32_t a = 0; a < args.size() && alone; ++a) {
      if (a == static_cast<uint32_t>(p) || a == static_cast<uint32_t>(q)) continue;
      const int root = RootOf(program, args.Get(a));
      alone = root != in && root != out;
    }
    if (alone) return true;
  }
  return false;
}

void Note(int step, int* first, int* last) {
  if (*first < 0) *first = step;
  *last = step;
}

bool Overlap(DeviceAddress a, uint64_t an, DeviceAddress b, uint64_t bn) {
  return a < b + bn && b < a + an;
}

}  // namespace

bool IoBinding::empty() const {
  auto none = [](const std::vector<DeviceAddress>& v) {
    return std::all_of(v.begin(), v.end(), [](DeviceAddress p) { return p == 0; });
  };
  return none(inputs) && none(outputs);
}

IoTouches FindIoTouches(const fbc::Program& program, const std::vector<int>& inputs,
                        const std::vector<int>& outputs) {
  IoTouches t;
  t.input_first.assign(inputs.size(), -1);
  t.input_last.assign(inputs.size(), -1);
  t.output_first.assign(outputs.size(), -1);
  t.output_last.assign(outputs.size(), -1);
  if (!program.steps()) return t;
  for (uint32_t s = 0; s < program.steps()->size(); ++s) {
    const int step = static_cast<int>(s);
    for (int b : Touched(*program.steps()->Get(s))) {
      const int root = RootOf(program, b);
      if (root < 0) continue;
      for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i] == root) Note(step, &t.input_first[i], &t.input_last[i]);
      for (size_t j = 0; j < outputs.size(); ++j)
        if (outputs[j] == root) Note(step, &t.output_first[j], &t.output_last[j]);
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = 0; j < outputs.size(); ++j) {
      const int s = t.input_last[i];
      if (s >= 0 && s == t.output_first[j] &&
          ReadsInPlace(program, *program.steps()->Get(s), inputs[i], outputs[j]))
        t.same_index.emplace_back(static_cast<int>(i), static_cast<int>(j));
    }
  }
  return t;
}

void ChooseBinding(const IoTouches& touches, const IoBinding& offered,
                   const std::vector<uint64_t>& input_bytes,
                   const std::vector<uint64_t>& output_bytes, IoBinding* chosen) {
  IoBinding& b = *chosen;
  b.inputs.assign(offered.inputs.size(), 0);
  b.outputs.assign(offered.outputs.size(), 0);
  for (size_t j = 0; j < offered.outputs.size(); ++j) {
    const DeviceAddress p = offered.outputs[j];
    if (!p || !output_bytes[j]) continue;
    bool clash = false;
    for (size_t k = 0; k < j; ++k)
      clash = clash || (b.outputs[k] && Overlap(p, output_bytes[j], b.outputs[k], output_bytes[k]));
    if (!clash) b.outputs[j] = p;
  }
  for (size_t i = 0; i < offered.inputs.size(); ++i) {
    const DeviceAddress p = offered.inputs[i];
    if (!p || !input_bytes[i]) continue;
    bool safe = true;
    for (size_t j = 0; j < b.outputs.size() && safe; ++j) {
      if (!b.outputs[j] || !Overlap(p, input_bytes[i], b.outputs[j], output_bytes[j])) continue;
      // Shared bytes: every step reading the input must come before the first step touching
      // the output (a step doing both could write an element before reading another).
      safe = touches.input_last[i] < 0 || touches.output_first[j] < 0 ||
             touches.input_last[i] < touches.output_first[j] ||
             (p == b.outputs[j] && input_bytes[i] == output_bytes[j] &&
              std::find(touches.same_index.begin(), touches.same_index.end(),
                        std::make_pair(static_cast<int>(i), static_cast<int>(j))) !=
                  touches.same_index.end());
    }
    if (safe) b.inputs[i] = p;
  }
}

std::vector<DeviceAddress> BoundAddresses(const fbc::Program& program,
                                          const std::vector<DeviceAddress>& addresses,
                                          const std::vector<int>& inputs,
                                          const std::vector<int>& outputs,
                                          const IoBinding& binding) {
  std::vector<DeviceAddress> out = addresses;
  for (size_t i = 0; i < inputs.size() && i < binding.inputs.size(); ++i)
    if (binding.inputs[i]) out[inputs[i]] = binding.inputs[i];
  for (size_t j = 0; j < outputs.size() && j < binding.outputs.size(); ++j)
    if (binding.outputs[j]) out[outputs[j]] = binding.outputs[j];
  const auto& bufs = *program.buffers();
  for (uint32_t i = 0; i < bufs.size() && i < out.size(); ++i) {
    const auto* b = bufs.Get(i);
    if (b->kind() != fbc::BufferKind::Alias || b->alias_of() < 0 ||
        static_cast<uint32_t>(b->alias_of()) >= i)
      continue;
    out[i] = out[b->alias_of()] + b->offset();
  }
  return out;
}

}  // namespace ortc::cuda_rt
