// Times an ONNX model with ONNX Runtime (onnxruntime-node from npm; a bench
// reference only, never a dependency of modelstat): warm-up runs, then timed
// runs of the whole model (median), and optionally ORT's per-node kernel
// times from its profiler (median per node over the timed runs).
//   node bench/ort_time.mjs JSON
//   JSON: {"model": PATH, "inputs": [{"name", "dims", "dtype"?: "int64", "high"?, "fill"?}], "threads": N,
//          "opt": "disabled"|"all",
//          "warmup": N, "iters": N, "profile": true|false, "prefix": PATH}
// Float inputs are N(0,1)-like (fixed pattern), int64 ones a fixed pattern
// below "high" or all "fill"; prints one JSON line.
import { createRequire } from "module";
import { readFileSync, readdirSync, unlinkSync } from "fs";
import { basename, dirname, join } from "path";

const require = createRequire(import.meta.url);
const ort = require("onnxruntime-node");
const spec = JSON.parse(process.argv[2]);
const feeds = {};
for (const input of spec.inputs) {
  const n = input.dims.reduce((a, b) => a * b, 1);
  if (input.dtype === "int64") {  // token ids etc.: i mod high (high 1: all zeros), or all `fill`
    const data = new BigInt64Array(n);
    for (let i = 0; i < n; ++i) data[i] = BigInt(input.fill ?? (i * 7919) % (input.high ?? 1));
    feeds[input.name] = new ort.Tensor("int64", data, input.dims);
    continue;
  }
  const data = new Float32Array(n);
  let s = 12345;
  for (let i = 0; i < n; ++i) {  // a fixed pseudo-random pattern in [-2, 2)
    s = (s * 1103515245 + 12345) >>> 0;
    data[i] = (s / 4294967296) * 4 - 2;
  }
  feeds[input.name] = new ort.Tensor("float32", data, input.dims);
}
const options = { intraOpNumThreads: spec.threads, interOpNumThreads: 1, graphOptimizationLevel: spec.opt };
if (spec.profile) Object.assign(options, { enableProfiling: true, profileFilePrefix: spec.prefix });
const session = await ort.InferenceSession.create(spec.model, options);
for (let i = 0; i < spec.warmup; ++i) await session.run(feeds);
const whole = [];
for (let i = 0; i < spec.iters; ++i) {
  const t0 = process.hrtime.bigint();
  await session.run(feeds);
  whole.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const out = { ort_version: ort.env.versions.common, whole_ms: whole, median_ms: median(whole) };
if (spec.profile) {
  session.endProfiling();  // onnxruntime-node returns no file name: find PREFIX*.json
  const files = readdirSync(dirname(spec.prefix)).filter((f) => f.startsWith(basename(spec.prefix)) && f.endsWith(".json"));
  const events = [];
  for (const f of files) {
    events.push(...JSON.parse(readFileSync(join(dirname(spec.prefix), f), "utf8")));
    unlinkSync(join(dirname(spec.prefix), f));
  }
  const per = {};
  for (const e of events) {
    if (e.cat !== "Node" || !e.name.endsWith("_kernel_time")) continue;
    const name = e.name.slice(0, -"_kernel_time".length);
    (per[name] ??= { op: e.args.op_name, us: [] }).us.push(e.dur);
  }
  // The warm-up runs are profiled too: keep each node's last `iters` samples.
  out.nodes = {};
  for (const [name, v] of Object.entries(per)) out.nodes[name] = { op: v.op, median_ms: median(v.us.slice(-spec.iters)) / 1e3 };
}
console.log(JSON.stringify(out));
