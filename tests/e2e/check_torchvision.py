#!/usr/bin/python3
"""End-to-end check of modelstat against torchvision's published figures.

    /usr/bin/python3 tests/e2e/check_torchvision.py --modelstat BIN --workdir DIR \
        --models resnet18 mobilenet_v2 ... [--opset 13] [--dry-run]

For each model:
  1. export torchvision.models.NAME(weights=None) to DIR/NAME.opsetN.onnx via
     export_torchvision.py (reused when DIR/NAME.opsetN.onnx.json records the
     same torch/torchvision/onnx versions, opset and seed);
  2. reference params: tools/count_initializers.py on that file;
  3. run `BIN analyze FILE --format json` and read totals.params / totals.macs;
  4. pass if |macs/1e9 - published_GOPS| <= 0.5% of published_GOPS and
     totals.params == reference params.

--dry-run does steps 1-2 only and prints the reference numbers, plus an
informational MAC count computed here in Python (Conv/ConvTranspose/Gemm/
MatMul only, from ONNX shape inference) against the published figure.

Exit status: 0 all passed, 1 any check failed, 2 bad usage / export failure.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
sys.path.insert(0, HERE)

import count_initializers  # noqa: E402  (tools/count_initializers.py)
import export_torchvision  # noqa: E402

# Published compute of the ImageNet-1K classification weights, in GFLOPS as
# torchvision labels it; the numbers are multiply-accumulates (the well-known
# "4.1 G" of ResNet-50 is GMACs). Source: the `_ops` field of each
# `*_Weights.IMAGENET1K_V1.meta` in pytorch/vision torchvision/models/*.py
# (resnet.py, mobilenetv2.py, efficientnet.py, alexnet.py, vgg.py,
# vision_transformer.py), shown as "GFLOPS" on
# https://pytorch.org/vision/stable/models/generated/torchvision.models.<name>.html
# (e.g. resnet50: 4.09, vgg16: 15.47, vit_b_16: 17.56, efficientnet_b0: 0.39).
# Debian's torchvision 0.14 predates the `_ops` field, hence this table; a
# newer torchvision's own meta["_ops"] takes precedence when present.
PUBLISHED_GOPS = {
    "alexnet": 0.714,
    "resnet18": 1.814,
    "resnet34": 3.664,
    "resnet50": 4.089,
    "mobilenet_v2": 0.301,
    "efficientnet_b0": 0.386,
    "vgg16": 15.47,
    "vit_b_16": 17.564,
}

TOLERANCE = 0.005  # relative to the published value


def published_gops(name):
    """(value, source) for NAME, or (None, reason)."""
    try:
        import torchvision
        weights_enum = torchvision.models.get_model_weights(name)
        meta = weights_enum.DEFAULT.meta
        if "_ops" in meta:
            return float(meta["_ops"]), "torchvision meta"
    except Exception:  # older torchvision, or no weights registered
        pass
    if name in PUBLISHED_GOPS:
        return PUBLISHED_GOPS[name], "table"
    return None, "no published figure"


# ---------------------------------------------------------------------------
# export with cache
# ---------------------------------------------------------------------------

def cached_export(name, workdir, opset):
    path = os.path.join(workdir, f"{name}.opset{opset}.onnx")
    meta_path = path + ".json"
    want = dict(export_torchvision.versions())
    want.update({"model": name, "opset": opset, "seed": export_torchvision.SEED})
    if os.path.exists(path) and os.path.exists(meta_path):
        try:
            with open(meta_path) as fh:
                have = json.load(fh)
            if all(have.get(k) == v for k, v in want.items()):
                return path, have, True
        except (OSError, ValueError):
            pass
    # Fresh export in a child process, so its memory is returned afterwards.
    cmd = [sys.executable, os.path.join(HERE, "export_torchvision.py"), name, path,
           "--opset", str(opset)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"export of {name} failed (rc {proc.returncode}):\n{tail}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    with open(meta_path, "w") as fh:
        json.dump(info, fh, indent=1, sort_keys=True)
    return path, info, False


# ---------------------------------------------------------------------------
# informational Python MAC count
# ---------------------------------------------------------------------------

def python_macs(path):
    """Contraction MACs (Conv, ConvTranspose, Gemm, MatMul) from shape inference."""
    import onnx
    from onnx import shape_inference
    model = onnx.load(path, load_external_data=False)
    model = shape_inference.infer_shapes(model)
    g = model.graph
    shapes = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[vi.name] = [d.dim_value for d in dims]
    for t in g.initializer:
        shapes[t.name] = list(t.dims)

    def prod(xs):
        p = 1
        for x in xs:
            p *= x
        return p

    total = 0
    for n in g.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        out = shapes.get(n.output[0]) if n.output else None
        if n.op_type in ("Conv", "ConvTranspose"):
            w = shapes.get(n.input[1])
            x = shapes.get(n.input[0])
            if out is None or w is None or x is None:
                continue
            if n.op_type == "Conv":
                total += prod(out) * w[1] * prod(w[2:])
            else:  # each input element scatters into Cout/group * k outputs
                total += prod(x) * w[1] * prod(w[2:])
        elif n.op_type == "Gemm":
            a = shapes.get(n.input[0])
            if out is None or a is None:
                continue
            k = a[0] if attrs.get("transA", 0) else a[1]
            total += prod(out) * k
        elif n.op_type == "MatMul":
            a = shapes.get(n.input[0])
            if out is None or a is None:
                continue
            total += prod(out) * a[-1]
    return total


# ---------------------------------------------------------------------------
# modelstat
# ---------------------------------------------------------------------------

def _get_int(obj, *keys):
    for k in keys:
        if isinstance(obj, dict) and k in obj:
            v = obj[k]
            if isinstance(v, bool):
                return None
            if isinstance(v, int):
                return v
            if isinstance(v, float) and v.is_integer():
                return int(v)
            if isinstance(v, str):
                try:
                    return int(v)
                except ValueError:
                    return None
    return None


def run_modelstat(binary, path, timeout):
    """Returns (totals dict or None, error text or None, seconds)."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run([binary, "analyze", path, "--format", "json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"could not run modelstat: {e}", time.monotonic() - t0
    dt = time.monotonic() - t0
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        return None, f"modelstat exited {proc.returncode}: {err[-500:]}", dt
    try:
        doc = json.loads(out)
    except ValueError as e:
        snippet = out[:200].replace("\n", " ")
        return None, f"output is not JSON ({e}); stdout starts: {snippet!r}", dt
    totals = doc.get("totals") if isinstance(doc, dict) else None
    if not isinstance(totals, dict):
        keys = list(doc)[:10] if isinstance(doc, dict) else type(doc).__name__
        return None, f"no 'totals' object in JSON (top level: {keys})", dt
    return totals, None, dt


# ---------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modelstat", help="path to the modelstat binary")
    ap.add_argument("--workdir", required=True, help="where exported models are cached")
    ap.add_argument("--models", nargs="+", required=True)
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--dry-run", action="store_true",
                    help="only export and print the reference numbers")
    ap.add_argument("--no-python-macs", action="store_true",
                    help="skip the informational Python MAC count in --dry-run")
    ap.add_argument("--timeout", type=float, default=600, help="per modelstat run, seconds")
    args = ap.parse_args(argv)
    if not args.dry_run and not args.modelstat:
        ap.error("--modelstat is required unless --dry-run")
    if args.modelstat and not args.dry_run and not os.access(args.modelstat, os.X_OK):
        print(f"check_torchvision: {args.modelstat} is not an executable file", file=sys.stderr)
        return 2
    os.makedirs(args.workdir, exist_ok=True)

    rows, failures, errors = [], 0, 0
    for name in args.models:
        pub, pub_src = published_gops(name)
        try:
            path, info, cached = cached_export(name, args.workdir, args.opset)
        except (RuntimeError, ValueError) as e:
            print(f"[{name}] EXPORT FAILED: {e}", file=sys.stderr)
            rows.append({"model": name, "status": "EXPORT-FAIL"})
            errors += 1
            continue
        ref = count_initializers.count_file(path)
        row = {"model": name, "file_mb": os.path.getsize(path) / 1e6, "pub": pub,
               "ref_params": ref["params"], "torch_params": info.get("torch_num_params"),
               "cached": cached}
        print(f"[{name}] {'cached' if cached else 'exported'} {path} "
              f"({row['file_mb']:.1f} MB); reference params {ref['params']} "
              f"(initializers {ref['initializer_params']}, constants {ref['constant_params']}; "
              f"torch num_params {row['torch_params']}); published GOPS "
              f"{pub if pub is not None else '-'} ({pub_src})")

        if args.dry_run:
            if not args.no_python_macs:
                pm = python_macs(path)
                row["py_gmacs"] = pm / 1e9
                if pub:
                    rel = (pm / 1e9 - pub) / pub
                    row["py_rel"] = rel
                    print(f"[{name}] python contraction MACs {pm} = {pm/1e9:.4f} G "
                          f"({rel*100:+.3f}% vs published)")
            row["status"] = "DRY-RUN"
            rows.append(row)
            continue

        totals, err, secs = run_modelstat(args.modelstat, path, args.timeout)
        row["secs"] = secs
        if err:
            print(f"[{name}] FAIL: {err}")
            row["status"] = "FAIL"
            failures += 1
            rows.append(row)
            continue
        print(f"[{name}] modelstat totals: {json.dumps(totals, sort_keys=True)}")
        macs = _get_int(totals, "macs")
        params = _get_int(totals, "params")
        row["macs"], row["params"] = macs, params
        problems = []
        if macs is None:
            problems.append("totals.macs missing or not an integer")
        elif pub is None:
            problems.append(f"no published figure for {name}")
        else:
            row["rel"] = (macs / 1e9 - pub) / pub
            if abs(macs / 1e9 - pub) > TOLERANCE * pub:
                problems.append(f"GMACs {macs/1e9:.4f} vs published {pub} "
                                f"({row['rel']*100:+.3f}%, limit {TOLERANCE*100:.1f}%)")
        if params is None:
            problems.append("totals.params missing or not an integer")
        elif params != ref["params"]:
            problems.append(f"params {params} != reference {ref['params']} "
                            f"(diff {params - ref['params']:+d})")
        if problems:
            print(f"[{name}] FAIL: " + "; ".join(problems))
            row["status"] = "FAIL"
            failures += 1
        else:
            row["status"] = "ok"
        rows.append(row)

    # -- table
    def fmt(v, spec):
        if v is not None:
            return format(v, spec)
        width = "".join(ch for ch in spec.split(".")[0] if ch.isdigit())
        return "-".rjust(int(width) if width else 1)
    print()
    if args.dry_run:
        print(f"| {'model':<16} | {'file MB':>8} | {'published G':>11} | {'python GMACs':>12} | "
              f"{'rel':>8} | {'ref params':>11} | {'torch params':>12} |")
        print("|" + "|".join("-" * w for w in (18, 10, 13, 14, 10, 13, 14)) + "|")
        for r in rows:
            rel = r.get("py_rel")
            print(f"| {r['model']:<16} | {fmt(r.get('file_mb'), '8.1f')} | {fmt(r.get('pub'), '11.3f')} | "
                  f"{fmt(r.get('py_gmacs'), '12.4f')} | "
                  f"{(format(rel*100, '+7.3f') + '%') if rel is not None else '-':>8} | "
                  f"{fmt(r.get('ref_params'), '11d')} | {fmt(r.get('torch_params'), '12d')} |")
    else:
        print(f"| {'model':<16} | {'published G':>11} | {'modelstat GMACs':>15} | {'rel':>8} | "
              f"{'params':>11} | {'ref params':>11} | {'secs':>6} | status |")
        print("|" + "|".join("-" * w for w in (18, 13, 17, 10, 13, 13, 8, 8)) + "|")
        for r in rows:
            rel = r.get("rel")
            gm = r["macs"] / 1e9 if r.get("macs") is not None else None
            print(f"| {r['model']:<16} | {fmt(r.get('pub'), '11.3f')} | {fmt(gm, '15.4f')} | "
                  f"{(format(rel*100, '+7.3f') + '%') if rel is not None else '-':>8} | "
                  f"{fmt(r.get('params'), '11d')} | {fmt(r.get('ref_params'), '11d')} | "
                  f"{fmt(r.get('secs'), '6.2f')} | {r['status']} |")
    if errors:
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
