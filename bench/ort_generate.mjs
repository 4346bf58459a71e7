// The greedy generation loop of `modelstat profile --generate` in ONNX Runtime
// (onnxruntime-node from npm; a bench reference only, never a dependency of
// modelstat): the same prompt, a prefill, then G - 1 decode steps feeding the
// present KV tensors back as the next past, attention_mask / position_ids
// grown as the model asks, the next token the argmax of the last position's
// logits. Times each step on the host clock (process.hrtime) around
// session.run and the argmax, as modelstat times a step.
//   NODE_PATH=/tmp/ortnode/node_modules node bench/ort_generate.mjs SPEC_JSON
//   SPEC: {"model": PATH, "prompt": [[ids...], ...] (one row per sequence), "generate": G,
//          "threads": N, "warmup": N, "iters": N, "opt": "all"|"extended"|"basic"|"disabled",
//          "cache": [{"past": NAME, "present": NAME, "dims": [B, H, 0, D], "axis": 2}, ...],
//          "shared": true|false  (GenAI's shared buffer: one buffer of P + G rows per tensor,
//                                 fed as past and bound as present, so GroupQueryAttention
//                                 writes in place)}
// Prints one JSON line: per generation the step times (ms), and the tokens of the first.
import { createRequire } from "module";

const require = createRequire(import.meta.url);
const ort = require("onnxruntime-node");
const spec = JSON.parse(process.argv[2]);
const batch = spec.prompt.length, P = spec.prompt[0].length, G = spec.generate;
const session = await ort.InferenceSession.create(spec.model, {
  intraOpNumThreads: spec.threads, interOpNumThreads: 1, graphOptimizationLevel: spec.opt ?? "all",
});
const inputs = session.inputNames, outputs = session.outputNames;
const pastNames = new Set(spec.cache.map((c) => c.past));
const role = (name) => (pastNames.has(name) ? "past" : /input_ids/.test(name) ? "ids"
  : /mask/.test(name) ? "mask" : /position/.test(name) ? "positions" : "unknown");
for (const name of inputs)
  if (role(name) === "unknown") throw new Error(`input ${name}: not fed by this loop`);
const logitsName = outputs.includes("logits") ? "logits" : outputs.find((o) => !spec.cache.some((c) => c.present === o));

const int64 = (values, dims) => new ort.Tensor("int64", BigInt64Array.from(values, (v) => BigInt(v)), dims);
function cacheTensor(c, rows) {
  const dims = [...c.dims];
  dims[c.axis] = rows;
  return new ort.Tensor("float32", new Float32Array(dims.reduce((a, b) => a * b, 1)), dims);
}
// argmax over the last position of logits [B, S, V] (or [B, V]).
function argmaxLast(t) {
  const V = t.dims[t.dims.length - 1], S = t.dims.length === 3 ? t.dims[1] : 1, d = t.data, out = [];
  for (let b = 0; b < batch; ++b) {
    const base = (b * S + S - 1) * V;
    let best = 0;
    for (let v = 1; v < V; ++v) if (d[base + v] > d[base + best]) best = v;
    out.push(best);
  }
  return out;
}

async function generation() {
  const steps = [], tokens = [];
  let past = spec.cache.map((c) => cacheTensor(c, spec.shared ? P + G : 0));
  let pastLength = 0, fed = spec.prompt;
  for (let k = 0; k < G; ++k) {
    const t0 = process.hrtime.bigint();
    const S = fed[0].length, context = pastLength + S;
    const feeds = {};
    for (const name of inputs) {
      const r = role(name);
      if (r === "ids") feeds[name] = int64(fed.flat(), [batch, S]);
      else if (r === "mask") feeds[name] = int64(new Array(batch * context).fill(1), [batch, context]);
      else if (r === "positions") {
        const row = Array.from({ length: S }, (_, i) => pastLength + i);
        feeds[name] = int64(Array.from({ length: batch }, () => row).flat(), [batch, S]);
      }
    }
    spec.cache.forEach((c, i) => { feeds[c.past] = past[i]; });
    let fetches;
    if (spec.shared) {  // present bound to the past buffer: ONNX Runtime writes the new rows in place
      fetches = { [logitsName]: null };
      spec.cache.forEach((c, i) => { fetches[c.present] = past[i]; });
    }
    const out = fetches ? await session.run(feeds, fetches) : await session.run(feeds);
    if (!spec.shared) past = spec.cache.map((c) => out[c.present]);
    const next = argmaxLast(out[logitsName]);
    steps.push(Number(process.hrtime.bigint() - t0) / 1e6);
    tokens.push(next);
    pastLength = context;
    fed = next.map((t) => [t]);
  }
  return { steps, tokens };
}

for (let i = 0; i < spec.warmup; ++i) await generation();
const runs = [];
let first;
for (let i = 0; i < spec.iters; ++i) {
  const g = await generation();
  if (i === 0) first = g.tokens;
  runs.push(g.steps);
}
console.log(JSON.stringify({ ort_version: ort.env.versions.common, steps_ms: runs,
                             tokens: first[0] ? first.map((t) => t[0]) : [] }));
