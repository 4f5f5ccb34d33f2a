// `ortc generate`: greedy generation over a prefill and a decode model with a KV cache (the
// Hugging Face export form; see ortc/generate.h), printing the new token ids, the time to the
// first token and the decode rate.
#include <chrono>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "cli/model_opener.h"
#include "cli/provider_options.h"
#include "cli/report_error.h"
#include "cli/report_records.h"
#include "cli/runtime_commands.h"
#include "ortc/generate.h"
#include "ortc/runtime.h"

namespace ortc::cli {
namespace {

struct GenerateArgs {
  std::string prefill, decode;
  std::string prompt_ids;  // comma-separated
  int max_new_tokens = 32;
  std::vector<int64_t> stop_tokens;
  std::vector<std::string> provider_options;
  int threads = 0;
  bool json = false;
};

Result<std::vector<int64_t>> ParseIds(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 0)
      return InvalidArgument("--prompt-ids: '" + item +
                             "' is not a token id (a non-negative integer); write e.g. 1,2,3");
    ids.push_back(v);
  }
  if (ids.empty()) return InvalidArgument("--prompt-ids: no token id given; write e.g. 1,2,3");
  return ids;
}

int Generate(const GenerateArgs& a) {
  // The models go with every report, failures included.
  nlohmann::json j{{"prefill_model", tools::FileJson(a.prefill)},
                   {"decode_model", tools::FileJson(a.decode)}};
  auto prompt = ParseIds(a.prompt_ids);
  if (!prompt.ok()) return ReportError(a.json, prompt.status(), j, kExitUsage);
  SessionOptions options;
  Status parsed = ParseProviderOptions(a.provider_options, &options.provider_options);
  if (!parsed.ok()) return ReportError(a.json, parsed, j, kExitUsage);
  options.intra_op_threads = a.threads;
  // Each session's load is timed: the decode session of a weight-sharing group finds the
  // binary (and its device weights) already loaded by the prefill session.
  const auto t0 = std::chrono::steady_clock::now();
  auto prefill = OpenModel(a.prefill, options);
  if (!prefill.ok()) return ReportError(a.json, prefill.status(), j);
  const auto t1 = std::chrono::steady_clock::now();
  auto decode = OpenModel(a.decode, options);
  if (!decode.ok()) return ReportError(a.json, decode.status(), j);
  const auto t2 = std::chrono::steady_clock::now();
  auto ms = [](auto d) {
    return tools::RoundMs(std::chrono::duration<double, std::milli>(d).count());
  };
  GenerationOptions g;
  g.max_new_tokens = a.max_new_tokens;
  g.stop_tokens = a.stop_tokens;
  auto r = GenerateGreedy(**prefill, **decode, *prompt, g);
  if (!r.ok()) return ReportError(a.json, r.status(), j);
  const double per_token_ms = r->decode_steps ? r->decode_seconds * 1e3 / r->decode_steps : 0;
  const double tokens_per_s = r->decode_seconds > 0 ? r->decode_steps / r->decode_seconds : 0;
  if (a.json) {
    j.update({{"ok", true},
              {"prompt_tokens", prompt->size()},
              {"tokens", r->tokens},
              {"time_to_first_token_ms", tools::RoundMs(r->prefill_seconds * 1e3)},
              {"decode_steps", r->decode_steps},
              {"decode_ms_per_token", tools::RoundMs(per_token_ms)},
              {"decode_tokens_per_s", tokens_per_s},
              {"kv_cache", r->cache_on_device ? "device" : "host"},
              {"load_ms", {{"prefill", ms(t1 - t0)}, {"decode", ms(t2 - t1)}}}});
    std::cout << ReportText(j) << "\n";
    return kExitOk;
  }
  for (size_t i = 0; i < r->tokens.size(); ++i) std::cout << (i ? "," : "") << r->tokens[i];
  std::cout << "\n"
            << r->tokens.size() << " tokens; time to first token "
            << tools::FormatMs(r->prefill_seconds * 1e3) << " ms; decode "
            << tools::FormatMs(per_token_ms) << " ms/token (" << tokens_per_s << " tokens/s over "
            << r->decode_steps << " steps); KV cache in "
            << (r->cache_on_device ? "device" : "host") << " memory\n";
  return kExitOk;
}

}  // namespace

void AddGenerateCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<GenerateArgs>();
  auto* cmd = app.add_subcommand(
      "generate", "Greedy generation over a prefill and a decode model with a KV cache");
  cmd->add_option("prefill", a->prefill,
                  "prefill model (ctx or plain ONNX): input_ids [, attention_mask, position_ids] "
                  "-> logits, present_* key/values")
      ->required();
  cmd->add_option("decode", a->decode,
                  "decode model: the same inputs plus past_* key/values (the previous step's "
                  "present_* outputs) -> logits, present_*")
      ->required();
  cmd->add_option("--prompt-ids", a->prompt_ids, "the prompt's token ids, comma-separated")
      ->required();
  cmd->add_option("--max-new-tokens", a->max_new_tokens, "tokens to generate (default 32)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--stop-token", a->stop_tokens,
                  "stop after emitting this token id (repeatable; e.g. the end-of-sequence id)");
  cmd->add_option("--threads", a->threads, "threads each run uses inside its ops (0: one per core)")
      ->default_val(0)
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--provider-option", a->provider_options,
                  "backend run-time option, as backend:key=value (repeatable)");
  cmd->add_flag("--json", a->json,
                "print a machine-readable report (tokens, time_to_first_token_ms, "
                "decode_ms_per_token, decode_tokens_per_s, kv_cache, load_ms of each session)");
  cmd->footer(
      std::string("\nExamples:\n"
                  "  ortc compile prefill.onnx decode.onnx --share-weights -o bundle/\n"
                  "  ortc generate bundle/prefill_ctx.onnx bundle/decode_ctx.onnx "
                  "--prompt-ids 1,2,3 --max-new-tokens 64\n"
                  "  ortc generate prefill.onnx decode.onnx --prompt-ids 1,2,3 --json\n"
                  "\nCaches: growing (run-time shapes); fixed-size (past and present of one static "
                  "shape, ONNX\nRuntime GenAI's form); padded (the decode step compiled with a "
                  "past of W rows and a\npresent of W + 1, e.g. --shape-profile "
                  "decode:attention_mask=1x512,... with past_*=1xHx511xD:\none decode graph for "
                  "every step up to W + 1 positions). Static caches of CUDA graphs stay\nin device "
                  "memory from the prefill to the last step.\n\n") +
      kExitCodeHelp);
  cmd->callback([a, exit_code] { *exit_code = Generate(*a); });
}

}  // namespace ortc::cli
