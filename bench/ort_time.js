// Median latency of ONNX Runtime (onnxruntime-node, from ../shared/peers/node_modules) on
// inputs given as .npy files, for shapes the peers' bench_ort.js does not time (batch > 1).
//
//   node bench/ort_time.js --model M.onnx --threads 2 --target-s 2 \
//       --input input_ids=ids.npy --input attention_mask=mask.npy ...
//
// Prints one JSON line: {"peer": "ort", "median_ms": ..., "iters": ...}. Session options
// are the peers' (all graph optimisations, intra-op threads, sequential execution).
'use strict';
const path = require('path');
const PEERS = path.resolve(__dirname, '../../shared/peers');
const ort = require(path.join(PEERS, 'node_modules/onnxruntime-node'));
const { readNpy } = require(path.join(PEERS, 'npy.js'));

function parseArgs() {
  const a = { threads: 2, targetS: 2, inputs: {} };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--model') a.model = argv[++i];
    else if (k === '--threads') a.threads = Number(argv[++i]);
    else if (k === '--target-s') a.targetS = Number(argv[++i]);
    else if (k === '--input') {
      const [name, file] = argv[++i].split('=');
      a.inputs[name] = file;
    } else throw new Error(`unknown argument ${k}`);
  }
  if (!a.model) throw new Error('--model is required');
  return a;
}

async function main() {
  const a = parseArgs();
  const session = await ort.InferenceSession.create(a.model, {
    intraOpNumThreads: a.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential', executionProviders: ['cpu'],
  });
  const feeds = {};
  for (const [name, file] of Object.entries(a.inputs)) {
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.dtype, t.data, t.shape);
  }
  for (let i = 0; i < 3; i++) await session.run(feeds);
  const times = [];
  const start = performance.now();
  while (times.length < 10 || performance.now() - start < a.targetS * 1e3) {
    const t0 = performance.now();
    await session.run(feeds);
    times.push(performance.now() - t0);
  }
  const s = [...times].sort((x, y) => x - y);
  const n = s.length;
  const median = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  console.log(JSON.stringify({ peer: 'ort', median_ms: median, iters: n }));
}

main().catch((e) => { console.error(e); process.exit(1); });
