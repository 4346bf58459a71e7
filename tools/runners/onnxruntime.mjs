// ONNX Runtime as a suite runtime (docs/suites.md, "Runtimes"): the example
// external runner. It is not part of modelstat and modelstat does not depend
// on it: it needs Node.js and onnxruntime-node (npm), found by Node's require
// (NODE_PATH=/path/to/node_modules, or installed beside this file).
//
//   runners:
//     ort:
//       command: [node, "{suite_dir}/tools/runners/onnxruntime.mjs", "{model}", "{inputs}", "{threads}",
//                 "{requests}", "{warmup}", "{warmup_time}", "{iters}", "{min_time}", "{max_time}"]
//
// Arguments as modelstat fills them: the model, its graph inputs as bound
// (JSON: [{name, dtype, dims}]), intra-op threads, requests in flight (1: sync),
// then the stopping rule: warm-up runs and seconds (at least both), measured
// runs and seconds (at least both), seconds after which it stops. Inputs are a
// fixed pattern, never zeros: floats in [-2, 2), token ids below 100, masks 1,
// token type ids 0. It prints one JSON object (the runner form):
//   {"runtime": "onnxruntime", "version": "1.20.1", "samples_s": [...],
//    "async": {"requests": N, "throughput_requests_per_s": R, "latency_samples_s": [...]},   (requests > 1)
//    "notes": [...]}
// and anything else on standard error.
import { createRequire } from "module";

const require = createRequire(import.meta.url);
let ort;
try {
  ort = require("onnxruntime-node");
} catch (e) {
  console.error("modelstat: error: onnxruntime-node is not installed where Node finds it (npm install onnxruntime-node, " +
                "or NODE_PATH=/path/to/node_modules): " + e.message);
  process.exit(2);
}

const [model, inputsJson, threads, requests, warmup, warmupTime, iters, minTime, maxTime] = process.argv.slice(2);
const inputs = JSON.parse(inputsJson);

function tensor(input) {
  const n = input.dims.reduce((a, b) => a * b, 1);
  if (input.dtype === "int64" || input.dtype === "int32") {
    const data = input.dtype === "int64" ? new BigInt64Array(n) : new Int32Array(n);
    const value = (i) => /mask/i.test(input.name) ? 1 : /type/i.test(input.name) ? 0 : (i * 7919) % 100;
    for (let i = 0; i < n; ++i) data[i] = input.dtype === "int64" ? BigInt(value(i)) : value(i);
    return new ort.Tensor(input.dtype, data, input.dims);
  }
  const data = new Float32Array(n);
  let s = 12345;
  for (let i = 0; i < n; ++i) {
    s = (s * 1103515245 + 12345) >>> 0;
    data[i] = (s / 4294967296) * 4 - 2;
  }
  return new ort.Tensor("float32", data, input.dims);
}

const feeds = {};
for (const input of inputs) feeds[input.name] = tensor(input);
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: Number(threads), interOpNumThreads: 1, graphOptimizationLevel: "all",
});
const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

// Warm-up: at least `warmup` runs and `warmupTime` seconds.
const w0 = process.hrtime.bigint();
for (let i = 0; i < Number(warmup) || seconds(w0) < Number(warmupTime); ++i) await session.run(feeds);

// Sync: one request at a time, each timed.
const samples = [];
const m0 = process.hrtime.bigint();
while (samples.length === 0 || ((samples.length < Number(iters) || seconds(m0) < Number(minTime)) && seconds(m0) < Number(maxTime))) {
  const t0 = process.hrtime.bigint();
  await session.run(feeds);
  samples.push(seconds(t0));
}
const out = { runtime: "onnxruntime", version: ort.env.versions.common, samples_s: samples,
              notes: ["onnxruntime-node, graph optimisation all, " + threads + " intra-op threads"] };

// Async: N requests in flight on the one session for the same time.
const n = Number(requests);
if (n > 1) {
  const latency = [];
  let done = 0;
  const a0 = process.hrtime.bigint();
  const worker = async () => {
    while ((latency.length < Number(iters) || seconds(a0) < Number(minTime)) && seconds(a0) < Number(maxTime)) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      latency.push(seconds(t0));
      ++done;
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
  out.async = { requests: n, throughput_requests_per_s: done / seconds(a0), latency_samples_s: latency };
}
console.log(JSON.stringify(out));
