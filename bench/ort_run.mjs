// Runs an ONNX model with ONNX Runtime (onnxruntime-node from npm, a bench
// reference only, never a dependency of modelstat) on inputs written by
// bench/ort_case.py, and writes the outputs beside them.
//   node bench/ort_run.mjs DIR      (DIR/manifest.json: model, inputs [{name, dtype, dims, file}],
//                                    profile: true to write ORT's profile, with every node's shapes)
// NODE_PATH must name the node_modules folder that holds onnxruntime-node.
import { createRequire } from "module";
import { readFileSync, writeFileSync } from "fs";
import { join } from "path";

const require = createRequire(import.meta.url);
const ort = require("onnxruntime-node");
const dir = process.argv[2];
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const arrays = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array, bool: Uint8Array, float16: Uint16Array };

const feeds = {};
for (const input of manifest.inputs) {
  const bytes = readFileSync(join(dir, input.file));
  const Type = arrays[input.dtype];
  const data = new Type(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  feeds[input.name] = new ort.Tensor(input.dtype, data, input.dims);
}
const options = { intraOpNumThreads: 1 };
// The graph as written (no fusions, no blocked layouts), so each profiled node is a node of the file.
if (manifest.profile)
  Object.assign(options, { enableProfiling: true, profileFilePrefix: join(dir, "ort_profile"), graphOptimizationLevel: "disabled" });
const session = await ort.InferenceSession.create(manifest.model, options);
const results = await session.run(feeds);
if (manifest.profile) session.endProfiling();
const outputs = [];
session.outputNames.forEach((name, k) => {
  const t = results[name];
  const file = `output_${k}.bin`;
  writeFileSync(join(dir, file), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  outputs.push({ name, dtype: t.type, dims: t.dims.map(Number), file });
});
writeFileSync(join(dir, "outputs.json"), JSON.stringify({ ort_version: ort.env.versions.common, outputs }));
