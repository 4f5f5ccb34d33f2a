// Loads an ONNX model in ONNX Runtime (onnxruntime-node) and prints {"ok": bool, "error": msg}
// as JSON. Used by tests to check that ORT accepts ortc's EPContext models structurally.
// Usage: node ort_load.js MODEL.onnx
'use strict';
const ort = require('onnxruntime-node');

async function main() {
  const model = process.argv[2];
  try {
    await ort.InferenceSession.create(model, { executionProviders: ['cpu'] });
    console.log(JSON.stringify({ ok: true, version: ort.env.versions.common }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, error: String(e.message || e), version: ort.env.versions.common }));
  }
}
main();
