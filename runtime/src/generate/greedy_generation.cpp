// Greedy generation: the prefill run, then one decode run per new token with the previous
// step's present_* outputs passed back as past_* inputs. A cache of static shape that backend
// graphs alone read and write stays in device memory for the whole generation: only the token,
// mask and positions go in and the logits come out. Three cache forms:
// - growing (run-time shapes): the present fed back whole as the next past;
// - fixed-size (ONNX Runtime GenAI's shared buffer): past and present of one shape, the mask
//   zero after the valid rows;
// - padded (the Hugging Face form compiled at static shapes): a past of W rows, the valid ones
//   first and the rest masked; the graph appends the new token after all W rows, and the
//   runtime moves that row to the first free one.
#include <algorithm>
#include <chrono>
#include <map>

#include "base/shape_text.h"
#include "ortc/generate.h"

namespace ortc {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool HasInput(const Session& s, const std::string& name) {
  const auto& in = s.inputs();
  return std::any_of(in.begin(), in.end(), [&](const TensorInfo& i) { return i.name == name; });
}

bool IsPast(const TensorInfo& in) {
  return in.name.rfind("past", 0) == 0;
}

// A cache input of no rows yet: batch 1, every other run-time size 0 (the cache's length); a
// fixed-size cache (every size static) is zeros, its rows marked invalid by the mask.
using io::DimsText;

Result<Tensor> EmptyCache(const TensorInfo& in) {
  std::vector<int64_t> shape = in.shape;
  int dynamic = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] >= 0) continue;
    shape[i] = i == 0 ? 1 : 0;
    dynamic += i != 0;
  }
  if (dynamic > 1 || in.dtype == DataType::kUndefined)
    return InvalidArgument("the prefill model's cache input '" + in.name +
                           "' has more than one run-time size besides the batch; give a prefill "
                           "model without past inputs");
  return Tensor::Allocate(in.dtype, shape);
}

Tensor Int64Row(const std::vector<int64_t>& values) {
  return Tensor::FromBytes(DataType::kInt64, {1, static_cast<int64_t>(values.size())},
                           values.data(), values.size() * sizeof(int64_t));
}

// The static length of a model's attention mask ([1, M]: a fixed-size cache of M positions), or
// -1 when it is decided at run time.
int64_t FixedMaskLength(const Session& s) {
  for (const auto& in : s.inputs())
    if (in.name == "attention_mask" && in.shape.size() == 2 && in.shape[1] > 0) return in.shape[1];
  return -1;
}

// The feeds every step has: the new tokens, the mask over every position so far (ones, then
// zeros up to a fixed-size cache's length), their positions.
// A fixed-size cache's mask is zero after the valid positions; a padded cache's is zero
// between its valid rows and the new tokens, which the graph appends after its whole past.
Result<std::vector<std::pair<std::string, Tensor>>> TokenFeeds(const Session& s,
                                                               const std::vector<int64_t>& tokens,
                                                               int64_t first_position,
                                                               bool padded) {
  std::vector<std::pair<std::string, Tensor>> feeds = {{"input_ids", Int64Row(tokens)}};
  const int64_t total = first_position + static_cast<int64_t>(tokens.size());
  for (const auto& in : s.inputs())
    if (in.name == "input_ids" && in.shape.size() == 2 && in.shape[1] > 0 &&
        in.shape[1] != static_cast<int64_t>(tokens.size()))
      return InvalidArgument("the model was compiled for " + std::to_string(in.shape[1]) +
                             " input tokens a run and this step has " +
                             std::to_string(tokens.size()) +
                             "; compile the prefill model at the prompt's length");
  const int64_t fixed = FixedMaskLength(s);
  if (fixed > 0 && total > fixed)
    return InvalidArgument("the context is full: the model's cache holds " + std::to_string(fixed) +
                           " positions; ask for fewer new tokens or "
                           "compile with a longer attention_mask and cache");
  if (HasInput(s, "attention_mask")) {
    std::vector<int64_t> mask(static_cast<size_t>(fixed > 0 ? fixed : total), 0);
    if (padded) {  // the cache's valid rows, then masked free rows, then the new tokens
      std::fill(mask.begin(), mask.begin() + first_position, 1);
      std::fill(mask.end() - static_cast<int64_t>(tokens.size()), mask.end(), 1);
    } else {
      std::fill(mask.begin(), mask.begin() + total, 1);
    }
    feeds.emplace_back("attention_mask", Int64Row(mask));
  }
  if (HasInput(s, "position_ids")) {
    std::vector<int64_t> positions(tokens.size());
    for (size_t i = 0; i < positions.size(); ++i)
      positions[i] = first_position + static_cast<int64_t>(i);
    feeds.emplace_back("position_ids", Int64Row(positions));
  }
  return feeds;
}

// The index of the largest of the last `vocab` logits (the last position's).
Result<int64_t> ArgmaxLast(const Tensor& logits) {
  if (logits.dtype() != DataType::kFloat || logits.rank() < 1 || logits.shape().back() <= 0)
    return InvalidArgument("logits must be a float32 tensor of at least one element");
  const int64_t vocab = logits.shape().back();
  const float* last = logits.data<float>() + (logits.elements() - vocab);
  return static_cast<int64_t>(std::max_element(last, last + vocab) - last);
}

const TensorInfo* Find(const std::vector<TensorInfo>& list, const std::string& name) {
  for (const auto& i : list)
    if (i.name == name) return &i;
  return nullptr;
}

bool StaticShape(const TensorInfo& i) {
  return std::all_of(i.shape.begin(), i.shape.end(), [](int64_t d) { return d >= 0; });
}

// Whether a cache can live in device memory from step to step: a backend graph alone reads the
// decode step's past input and writes both sessions' present outputs of it, all of one static
// shape and type (a fixed-size cache).
bool DeviceResident(const Session& prefill, const Session& decode, const std::string& past,
                    const std::string& present_prefill, const std::string& present_decode) {
  const TensorInfo* in = Find(decode.inputs(), past);
  const TensorInfo* a = Find(prefill.outputs(), present_prefill);
  const TensorInfo* b = Find(decode.outputs(), present_decode);
  if (!in || !a || !b || in->device.empty() || !StaticShape(*in)) return false;
  for (const TensorInfo* o : {a, b})
    if (o->device != in->device || o->shape != in->shape || o->dtype != in->dtype) return false;
  return true;
}

// The axis along which a decode step's present grows its past by one row, when both have
// static shapes that differ there alone (the Hugging Face form compiled at static shapes: a
// padded cache); -1 otherwise.
int PaddedAxis(const TensorInfo& past, const TensorInfo& present) {
  if (!StaticShape(past) || !StaticShape(present) || past.shape.size() != present.shape.size() ||
      past.dtype != present.dtype)
    return -1;
  int axis = -1;
  for (size_t i = 0; i < past.shape.size(); ++i) {
    if (past.shape[i] == present.shape[i]) continue;
    if (axis >= 0 || present.shape[i] != past.shape[i] + 1) return -1;
    axis = static_cast<int>(i);
  }
  return axis;
}

// One cache (a past input and the present outputs that feed it). A device-resident cache has
// one device buffer, updated in place when the graph that reads the past writes the present
// too (the graph reads its inputs first), else two that take turns. A padded cache keeps its
// valid rows first in the past buffer: after each step the present's new rows move after them.
struct CacheSlot {
  Tensor feed;                  // what the next step reads as its past input
  std::vector<Tensor> buffers;  // device memory; empty for a host cache
  bool in_place = false;
  int padded_axis = -1;                    // >= 0: a padded cache, its rows along this axis
  Tensor prefill_present, decode_present;  // its bound present buffers (unset: host outputs)

  // The device buffer a step writes the present into.
  const Tensor& Target() const {
    if (in_place || buffers.size() == 1 || feed.raw() != buffers[0].raw()) return buffers[0];
    return buffers[1];
  }
};

using Caches = std::map<std::string, CacheSlot>;  // by past input name

// Stores a step's new rows of a padded cache (the last `rows` of `present` along `axis`) in
// the past buffer after its `valid` rows, where the next step reads them; rows past the
// buffer's end are dropped (the context is then full and the next step refused). One copy per
// block of the dimensions before the axis (each head's rows are contiguous).
Status StoreNewRows(const Session& s, const Tensor& present, int64_t rows, Tensor* past,
                    int64_t valid, int axis) {
  const auto& from = present.shape();
  const auto& to = past->shape();
  bool same = from.size() == to.size() && present.dtype() == past->dtype() && rows <= from[axis];
  for (size_t i = 0; same && i < to.size(); ++i)
    same = static_cast<int>(i) == axis || from[i] == to[i];
  if (!same)
    return InvalidArgument("a present output of shape " + DimsText(from) +
                           " does not match the decode graph's past of shape " + DimsText(to));
  const int64_t n = std::min(rows, to[axis] - valid);
  if (n <= 0) return Status::Ok();
  int64_t outer = 1, row_bytes = static_cast<int64_t>(ElementSize(past->dtype()));
  for (int i = 0; i < axis; ++i) outer *= to[i];
  for (size_t i = axis + 1; i < to.size(); ++i) row_bytes *= to[i];
  // One strided copy: the n new rows of every outer index (batch x heads), each block at the
  // end of its present slice, to the first free rows of its past slice.
  return s.CopyRows(past, static_cast<size_t>(valid * row_bytes),
                    static_cast<size_t>(to[axis] * row_bytes), present,
                    static_cast<size_t>((from[axis] - rows) * row_bytes),
                    static_cast<size_t>(from[axis] * row_bytes), static_cast<size_t>(n * row_bytes),
                    static_cast<size_t>(outer));
}

// Runs a step: the past inputs the session has, present outputs of device caches written into
// their device buffers, host ones kept as the next past (padded caches: their new rows stored);
// returns the logits (host memory).
// `valid` and `rows`: the cache rows before the step and the step's new ones (the tokens).
Result<Tensor> Step(const Session& s, const Session& decode, bool is_prefill, int64_t valid,
                    int64_t rows, std::vector<std::pair<std::string, Tensor>> feeds,
                    Caches* caches) {
  for (const auto& [name, slot] : *caches)
    if (Find(s.inputs(), name)) feeds.emplace_back(name, slot.feed);
  std::vector<std::pair<std::string, Tensor>> bound;
  for (const auto& o : s.outputs()) {
    auto it = caches->find(PastInputFor(o.name));
    if (it == caches->end()) continue;
    const CacheSlot& slot = it->second;
    if (slot.padded_axis >= 0) {
      const Tensor& target = is_prefill ? slot.prefill_present : slot.decode_present;
      if (!target.empty()) bound.emplace_back(o.name, target);
    } else if (!slot.buffers.empty()) {
      bound.emplace_back(o.name, slot.Target());
    }
  }
  auto out = s.RunBound(feeds, bound);
  if (!out.ok()) return out.status();
  Tensor logits;
  bool have_logits = false;
  for (size_t i = 0; i < s.outputs().size(); ++i) {
    const std::string& name = s.outputs()[i].name;
    if (name == "logits") {
      logits = (*out)[i];
      have_logits = true;
    } else if (std::string past = PastInputFor(name); !past.empty()) {
      CacheSlot& slot = (*caches)[past];
      if (slot.padded_axis >= 0)
        ORTC_RETURN_IF_ERROR(
            StoreNewRows(decode, (*out)[i], rows, &slot.feed, valid, slot.padded_axis));
      else
        slot.feed = (*out)[i];
    }
  }
  if (!have_logits) return InvalidArgument("the model has no output named 'logits'");
  if (logits.location() != MemoryLocation::kHost)
    return InvalidArgument("the logits are in device memory");
  return logits;
}

// The present output of `s` that feeds `past`, or "".
std::string PresentFor(const Session& s, const std::string& past) {
  for (const auto& o : s.outputs())
    if (PastInputFor(o.name) == past) return o.name;
  return "";
}

// A padded cache's buffers: the past zero-filled (its free rows are masked),
// in device memory where a backend graph alone reads it, and the present outputs bound to
// device buffers where backend graphs alone write them at static shapes.
Status MakePadded(const Session& prefill, const Session& decode, const TensorInfo& past,
                  const std::string& present_prefill, const TensorInfo& present_decode,
                  CacheSlot* slot) {
  if (past.device.empty()) {
    slot->feed = Tensor::Allocate(past.dtype, past.shape);
  } else {
    auto buffer = decode.AllocateDevice(past.name);
    if (!buffer.ok()) return buffer.status();
    slot->feed = *buffer;
  }
  if (!present_decode.device.empty()) {
    auto buffer = decode.AllocateDevice(present_decode.name);
    if (!buffer.ok()) return buffer.status();
    slot->decode_present = *buffer;
  }
  const TensorInfo* pp = Find(prefill.outputs(), present_prefill);
  if (pp && !pp->device.empty() && StaticShape(*pp)) {
    auto buffer = prefill.AllocateDevice(present_prefill);
    if (!buffer.ok()) return buffer.status();
    slot->prefill_present = *buffer;
  }
  return Status::Ok();
}

// Every cache of the decode graph: device buffers where DeviceResident allows, the prefill's
// starting value (empty caches) where the prefill takes past inputs.
Result<Caches> MakeCaches(const Session& prefill, const Session& decode, bool* all_on_device) {
  Caches caches;
  *all_on_device = true;
  for (const auto& in : decode.inputs()) {
    if (!IsPast(in)) continue;
    CacheSlot slot;
    const std::string present_p = PresentFor(prefill, in.name);
    const std::string present_d = PresentFor(decode, in.name);
    const TensorInfo* present_info = Find(decode.outputs(), present_d);
    slot.padded_axis = present_info ? PaddedAxis(in, *present_info) : -1;
    if (slot.padded_axis >= 0) {
      ORTC_RETURN_IF_ERROR(MakePadded(prefill, decode, in, present_p, *present_info, &slot));
      *all_on_device = *all_on_device && slot.feed.location() != MemoryLocation::kHost &&
                       !slot.decode_present.empty() && !slot.prefill_present.empty();
    } else if (DeviceResident(prefill, decode, in.name, present_p, present_d)) {
      const TensorInfo* pd = Find(decode.outputs(), present_d);
      const TensorInfo* pp = Find(prefill.outputs(), present_p);
      const TensorInfo* prefill_past = Find(prefill.inputs(), in.name);
      slot.in_place = pd->device_graph == in.device_graph &&
                      (!prefill_past || prefill_past->device_graph == pp->device_graph);
      auto buffer = decode.AllocateDevice(in.name);
      if (!buffer.ok()) return buffer.status();
      slot.buffers.push_back(*buffer);
      if (!slot.in_place) {
        buffer = decode.AllocateDevice(in.name);
        if (!buffer.ok()) return buffer.status();
        slot.buffers.push_back(*buffer);
      }
    } else {
      *all_on_device = false;
    }
    caches[in.name] = std::move(slot);
  }
  // A prefill model with past inputs (one model for both steps, as ONNX Runtime GenAI exports
  // it) starts from empty caches: the zeroed device buffer where the prefill's graph reads it
  // from the device, else host zeros.
  for (const auto& in : prefill.inputs()) {
    if (!IsPast(in)) continue;
    CacheSlot& slot = caches[in.name];
    if (slot.padded_axis >= 0)
      return InvalidArgument("the decode model's cache '" + in.name +
                             "' is padded (its present has one row more than its past, at static "
                             "shapes); give a prefill model without past inputs");
    if (!slot.buffers.empty() && !in.device.empty() && in.shape == slot.buffers[0].shape()) {
      slot.feed = slot.buffers.back();  // zero-filled by AllocateDevice
      continue;
    }
    auto empty = EmptyCache(in);
    if (!empty.ok()) return empty.status();
    slot.feed = *empty;
  }
  return caches;
}

}  // namespace

std::string PastInputFor(const std::string& output) {
  if (output.rfind("present_", 0) == 0) return "past_" + output.substr(8);
  if (output.rfind("present.", 0) == 0) return "past_key_values." + output.substr(8);
  return "";
}

Result<GenerationResult> GenerateGreedy(const Session& prefill, const Session& decode,
                                        const std::vector<int64_t>& prompt,
                                        const GenerationOptions& options) {
  if (prompt.empty()) return InvalidArgument("the prompt has no token");
  if (options.max_new_tokens < 1) return InvalidArgument("max_new_tokens must be at least 1");
  for (const Session* s : {&prefill, &decode})
    if (!HasInput(*s, "input_ids"))
      return InvalidArgument("a model has no input named 'input_ids'");
  const auto& decode_inputs = decode.inputs();
  if (std::none_of(decode_inputs.begin(), decode_inputs.end(), IsPast))
    return InvalidArgument(
        "the decode model has no past_* input: give the model without past inputs first (or one "
        "model with past inputs for both steps), the decode model second");
  // Every past input of the decode graph must be fed by a present output of both graphs.
  for (const Session* s : {&prefill, &decode}) {
    std::vector<std::string> fed;
    for (const auto& o : s->outputs())
      if (std::string past = PastInputFor(o.name); !past.empty()) fed.push_back(past);
    for (const auto& in : decode.inputs()) {
      const bool is_past = in.name.rfind("past", 0) == 0;
      if (is_past && std::find(fed.begin(), fed.end(), in.name) == fed.end())
        return InvalidArgument(
            std::string("the decode input '") + in.name + "' has no present output " +
            (s == &prefill ? "in the prefill model" : "in the decode model") + " to feed it");
    }
  }
  GenerationResult r;
  auto made = MakeCaches(prefill, decode, &r.cache_on_device);
  if (!made.ok()) return made.status();
  Caches cache = std::move(made).value();
  const bool padded = std::any_of(cache.begin(), cache.end(),
                                  [](const auto& c) { return c.second.padded_axis >= 0; });
  if (padded && !std::all_of(cache.begin(), cache.end(),
                             [](const auto& c) { return c.second.padded_axis >= 0; }))
    return InvalidArgument(
        "some caches of the decode model are padded (a present of one row more than the past, "
        "at static shapes) and some are not; compile every cache the same way");
  auto start = Clock::now();
  auto first_feeds = TokenFeeds(prefill, prompt, 0, padded);
  if (!first_feeds.ok()) return first_feeds.status();
  auto logits = Step(prefill, decode, true, 0, static_cast<int64_t>(prompt.size()),
                     std::move(*first_feeds), &cache);
  if (!logits.ok()) return Status(logits.status().code(), "prefill: " + logits.status().message());
  auto token = ArgmaxLast(*logits);
  if (!token.ok()) return token.status();
  r.prefill_seconds = Since(start);
  r.tokens.push_back(*token);
  auto stop = [&](int64_t t) {
    return std::find(options.stop_tokens.begin(), options.stop_tokens.end(), t) !=
           options.stop_tokens.end();
  };
  int64_t length = static_cast<int64_t>(prompt.size());
  start = Clock::now();
  while (static_cast<int>(r.tokens.size()) < options.max_new_tokens && !stop(r.tokens.back())) {
    auto feeds = TokenFeeds(decode, {r.tokens.back()}, length, padded);
    if (!feeds.ok()) return feeds.status();
    logits = Step(decode, decode, false, length, 1, std::move(*feeds), &cache);
    if (!logits.ok())
      return Status(logits.status().code(), "decode step " + std::to_string(r.decode_steps + 1) +
                                                ": " + logits.status().message());
    token = ArgmaxLast(*logits);
    if (!token.ok()) return token.status();
    r.tokens.push_back(*token);
    ++r.decode_steps;
    ++length;
  }
  r.decode_seconds = Since(start);
  return r;
}

}  // namespace ortc
