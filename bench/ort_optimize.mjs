// Re-saves an ONNX model as ONNX Runtime's graph optimizer leaves it (fused
// com.microsoft ops), with onnxruntime-node from npm (a bench tool, never a
// dependency of modelstat):
//   NODE_PATH=/tmp/ortnode/node_modules node bench/ort_optimize.mjs IN.onnx OUT.onnx basic|extended|all
import { createRequire } from "module";

const require = createRequire(import.meta.url);
const ort = require("onnxruntime-node");
const [src, dst, level] = process.argv.slice(2);
await ort.InferenceSession.create(src, { graphOptimizationLevel: level, optimizedModelFilePath: dst, intraOpNumThreads: 1 });
