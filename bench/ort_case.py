#!/usr/bin/python3
"""A `modelstat verify` case folder whose expected outputs are ONNX Runtime's:
random inputs of the given shapes, the model run by ONNX Runtime 1.30
(onnxruntime-node from npm, through bench/ort_run.mjs), then model.onnx +
test_data_set_0/{input,output}_K.pb.

    npm install --prefix /tmp/ortnode --ignore-scripts onnxruntime-node   (ONNXRUNTIME_NODE_INSTALL=skip)
    /usr/bin/python3 bench/ort_case.py MODEL CASE_DIR SEED NAME=DIMS|NAME=iVALUE ... [--ort /tmp/ortnode/node_modules]
    build/tools/modelstat verify CASE_DIR

NAME=DIMS feeds N(0,1) floats of that shape, in the dtype the model declares
for that input (float32, or float16: drawn in float32, then rounded);
NAME=iVALUE an int64 scalar. float16 outputs are kept as float16.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    ort_modules = "/tmp/ortnode/node_modules"
    profile = "--profile" in argv  # keep ONNX Runtime's profile (bench/ort_macs.py reads it)
    if profile:
        argv.remove("--profile")
    if "--ort" in argv:
        k = argv.index("--ort")
        ort_modules = argv[k + 1]
        del argv[k:k + 2]
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    model, case, seed, specs = argv[0], argv[1], int(argv[2]), argv[3:]
    rng = np.random.default_rng(seed)
    shutil.rmtree(case, ignore_errors=True)
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data)
    shutil.copy(model, os.path.join(case, "model.onnx"))
    declared = {i.name: i.type.tensor_type.elem_type for i in onnx.load(model, load_external_data=False).graph.input}
    graph_inputs = list(declared)
    by_name = {}
    for spec in specs:
        name, value = spec.split("=", 1)
        if value.startswith("i"):
            by_name[name] = np.array(int(value[1:]), dtype=np.int64)
        else:
            floats = rng.standard_normal([int(d) for d in value.split("x")]).astype(np.float32)
            by_name[name] = floats.astype(np.float16) if declared.get(name) == onnx.TensorProto.FLOAT16 else floats
    manifest = {"model": os.path.abspath(model), "inputs": [], "profile": profile}
    k = 0
    for name in graph_inputs:
        if name not in by_name:
            continue  # an initializer listed as an input
        array = by_name[name]
        with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())
        array.tofile(os.path.join(case, f"in_{k}.bin"))
        manifest["inputs"].append({"name": name, "dtype": {"float32": "float32", "float16": "float16",
                                                           "int64": "int64"}[str(array.dtype)],
                                   "dims": list(array.shape), "file": f"in_{k}.bin"})
        k += 1
    with open(os.path.join(case, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    env = dict(os.environ, NODE_PATH=ort_modules)
    subprocess.run(["node", os.path.join(HERE, "ort_run.mjs"), case], check=True, env=env)
    with open(os.path.join(case, "outputs.json")) as f:
        result = json.load(f)
    types = {"float32": np.float32, "float16": np.float16, "int64": np.int64, "int32": np.int32, "bool": np.bool_}
    for k, out in enumerate(result["outputs"]):
        array = np.fromfile(os.path.join(case, out["file"]), dtype=types[out["dtype"]]).reshape(out["dims"])
        with open(os.path.join(data, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, out["name"]).SerializeToString())
    for name in os.listdir(case):
        if name.endswith(".bin") or (name.endswith(".json") and not name.startswith("ort_profile")):
            os.remove(os.path.join(case, name))
    print(f"{case}: {len(manifest['inputs'])} inputs, {len(result['outputs'])} outputs from ONNX Runtime "
          f"{result['ort_version']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
