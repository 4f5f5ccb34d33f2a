// Runs an ONNX model in ONNX Runtime (onnxruntime-node) on .npy inputs and writes each output
// as <out_dir>/<name>.npy. The reference side of ortc's comparison tests and benchmarks.
// Usage: node ort_run.js MODEL.onnx OUT_DIR name=file.npy ... [--threads N] [--bench N]
//        [--warmup N]   (untimed runs before the timed ones)
// With --bench, prints JSON with session creation time and latency percentiles.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const [type, Ctor] = NPY_TYPES[descr];
  const data = buf.subarray(start + headerLen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  const arr = new Ctor(copy.buffer, 0, data.length / Ctor.BYTES_PER_ELEMENT);
  return new ort.Tensor(type, type === 'bool' ? Uint8Array.from(arr) : arr, shape);
}

function writeNpy(file, tensor) {
  const descr = { float32: '<f4', float64: '<f8', int64: '<i8', int32: '<i4', uint8: '|u1', int8: '|i1', bool: '|b1' }[tensor.type];
  const dims = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const args = process.argv.slice(2);
  const [model, outDir] = args;
  let threads = 1;
  let bench = 0;
  let warmup = 0;
  const feeds = {};
  for (let i = 2; i < args.length; i++) {
    if (args[i] === '--threads') threads = Number(args[++i]);
    else if (args[i] === '--bench') bench = Number(args[++i]);
    else if (args[i] === '--warmup') warmup = Number(args[++i]);
    else {
      const eq = args[i].indexOf('=');
      feeds[args[i].slice(0, eq)] = readNpy(args[i].slice(eq + 1));
    }
  }
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const t1 = process.hrtime.bigint();
  const results = await session.run(feeds);
  const firstMs = Number(process.hrtime.bigint() - t1) / 1e6;
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, tensor] of Object.entries(results)) writeNpy(path.join(outDir, name.replace(/[/\\]/g, '_') + '.npy'), tensor);
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const lat = [];
  for (let i = 0; i < bench; i++) {
    const s = process.hrtime.bigint();
    await session.run(feeds);
    lat.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  lat.sort((a, b) => a - b);
  const pct = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : null);
  console.log(JSON.stringify({ version: ort.env.versions.common, create_ms: createMs, first_run_ms: firstMs,
    latency_ms: { p50: pct(0.5), p90: pct(0.9), p99: pct(0.99), runs: lat.length } }));
}
main().catch((e) => { console.error(String(e)); process.exit(1); });
