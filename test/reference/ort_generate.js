// Greedy generation with ONNX Runtime (onnxruntime-node) over a prefill and a decode graph in
// the Hugging Face KV-cache form: the reference side of ortc generate's tests.
// Usage: node ort_generate.js PREFILL.onnx DECODE.onnx PROMPT_IDS(1,2,3) MAX_NEW_TOKENS
//        [EMPTY_CACHE_SHAPE(1,2,0,16)] [THREADS]
// PREFILL and DECODE may be one model with past inputs (ONNX Runtime GenAI's form): the prefill
// then gets empty caches of EMPTY_CACHE_SHAPE. Past inputs are fed from the present outputs of
// the same name after the prefix (past_key_0 <- present_key_0, past_key_values.0.key <-
// present.0.key). Prints {"tokens": [...]} (the new tokens, argmax of the last logits each step)
// with time_to_first_token_ms (the prefill run and its argmax) and decode_ms_per_token (the
// mean of the decode steps), timed as `ortc generate` times them. THREADS: intra-op threads
// (default: ONNX Runtime's own choice).
'use strict';
const ort = require('onnxruntime-node');

function int64(values, dims) {
  return new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), dims);
}

function argmaxLast(logits) {
  const vocab = logits.dims[logits.dims.length - 1];
  const data = logits.data;
  const start = data.length - vocab;
  let best = 0;
  for (let i = 1; i < vocab; ++i) if (data[start + i] > data[start + best]) best = i;
  return best;
}

function presentFor(past) {
  if (past.startsWith('past_key_values.')) return 'present.' + past.slice('past_key_values.'.length);
  return past.replace(/^past_/, 'present_');
}

async function main() {
  const [prefillPath, decodePath, promptText, maxText, emptyText, threadsText] = process.argv.slice(2);
  const prompt = promptText.split(',').map(Number);
  const maxNew = Number(maxText);
  const options = threadsText ? { intraOpNumThreads: Number(threadsText), interOpNumThreads: 1 } : {};
  const prefill = await ort.InferenceSession.create(prefillPath, options);
  const decode = await ort.InferenceSession.create(decodePath, options);
  const positions = prompt.map((_, i) => i);
  const first = {
    input_ids: int64(prompt, [1, prompt.length]),
    attention_mask: int64(prompt.map(() => 1), [1, prompt.length]),
    position_ids: int64(positions, [1, prompt.length]),
  };
  for (const name of prefill.inputNames) {
    if (name.startsWith('past')) {
      first[name] = new ort.Tensor('float32', new Float32Array(0), emptyText.split(',').map(Number));
    }
  }
  for (const name of Object.keys(first)) if (!prefill.inputNames.includes(name)) delete first[name];
  const start = process.hrtime.bigint();
  let out = await prefill.run(first);
  const tokens = [argmaxLast(out.logits)];
  const prefilled = process.hrtime.bigint();
  let length = prompt.length;
  while (tokens.length < maxNew) {
    const feeds = {
      input_ids: int64([tokens[tokens.length - 1]], [1, 1]),
      attention_mask: int64(new Array(length + 1).fill(1), [1, length + 1]),
      position_ids: int64([length], [1, 1]),
    };
    for (const name of decode.inputNames) {
      if (name.startsWith('past')) feeds[name] = out[presentFor(name)];
    }
    for (const name of Object.keys(feeds)) if (!decode.inputNames.includes(name)) delete feeds[name];
    out = await decode.run(feeds);
    tokens.push(argmaxLast(out.logits));
    length += 1;
  }
  const done = process.hrtime.bigint();
  const ms = (ns) => Number(ns) / 1e6;
  console.log(JSON.stringify({
    tokens,
    time_to_first_token_ms: ms(prefilled - start),
    decode_ms_per_token: tokens.length > 1 ? ms(done - prefilled) / (tokens.length - 1) : 0,
  }));
}

main().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
