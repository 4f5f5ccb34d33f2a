// Greedy text generation over a prefill and a decode session in the Hugging Face KV-cache form:
// the prefill graph takes input_ids (and attention_mask, position_ids when it has them) and
// returns logits and present_* key/value tensors; the decode graph takes one new token and the
// past_* tensors, which are the previous step's present_* outputs of the same name after the
// prefix ("past_key_0" <- "present_key_0", "past_key_values.0.key" <- "present.0.key").
// One model with past inputs may serve as both (ONNX Runtime GenAI's form): the prefill then
// starts from empty caches (batch 1, length 0). A model compiled with a static attention_mask
// [1, M] and caches of M rows (a fixed-size cache, one compiled graph for every step) gets the
// mask padded with zeros to M and its caches passed back whole. A decode model compiled at
// static shapes whose present has one row more than its past ([1, H, W, D] -> [1, H, W + 1, D],
// the Hugging Face form with the cache concatenated inside the graph) has a padded cache: the
// past's valid rows come first and the rest are masked (attention_mask [1, W + 1]: ones for the
// valid rows and the new token, zeros between), and after each step the row the graph appended
// is moved to the first free row. That needs the model's causal rule over cache slots (key
// slot <= the query's slot, past length + i, as transformers builds it from cache_position),
// not over position_ids, and attention_mask honoured for every key. Where a backend graph alone
// reads the decode step's past input and writes the present outputs of both graphs (a
// fixed-size cache compiled for CUDA), the cache lives in device memory (Session::AllocateDevice)
// from the prefill to the last step, updated in place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ortc/runtime.h"

namespace ortc {

struct GenerationOptions {
  int max_new_tokens = 32;
  std::vector<int64_t> stop_tokens;  // generation ends after emitting one of these
};

struct GenerationResult {
  std::vector<int64_t> tokens;  // the new tokens, in order (the prompt is not repeated)
  double prefill_seconds = 0;   // the prefill run: time to the first token
  double decode_seconds = 0;    // every decode step together
  int decode_steps = 0;
  // Every cache stayed in device memory between steps (fixed-size caches that compiled graphs
  // alone read and write); false when they went through host memory.
  bool cache_on_device = false;
};

// The past input a present output feeds, or "" when `output` is not a present_* output.
std::string PastInputFor(const std::string& output);

// Runs the prompt through `prefill`, then `decode` one token at a time, each step picking the
// token of the largest logit (the first on ties). Fails with a message naming the input or
// output when the sessions do not have the form above.
Result<GenerationResult> GenerateGreedy(const Session& prefill, const Session& decode,
                                        const std::vector<int64_t>& prompt,
                                        const GenerationOptions& options = {});

}  // namespace ortc
