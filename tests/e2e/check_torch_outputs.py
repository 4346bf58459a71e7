#!/usr/bin/python3
"""End-to-end numerical check: modelstat's executor against PyTorch on whole models.

    /usr/bin/python3 tests/e2e/check_torch_outputs.py --modelstat BIN --workdir DIR \
        --models resnet18 mobilenet_v2 [--rtol 1e-4] [--atol 1e-5]

For each model:
  1. torch.manual_seed(0); torchvision.models.NAME(weights=None).eval(): random
     but fixed weights (no download);
  2. input torch.randn(1, 3, 224, 224) from its own seeded generator;
  3. export to DIR/NAME/model.onnx (opset 13, do_constant_folding=True, input
     name "input") and compute PyTorch's output in float32 under
     torch.inference_mode();
  4. write DIR/NAME/test_data_set_0/{input_0,output_0}.pb (onnx TensorProto),
     i.e. an ONNX backend-test-style case folder;
  5. run `BIN verify DIR/NAME --rtol RTOL --atol A` with A = ATOL * min(1,
     max|expected|) (see DEFAULT_ATOL); the model passes when it exits 0
     (elementwise |actual - expected| <= A + RTOL*|expected|) and the report's
     norm-wise relative error ||actual - expected|| / ||expected|| <= RTOL.

Prints the verify report of each model and a table (model, atol used, max abs
diff, max rel diff, norm rel err, status) with the numbers read from that report.

Exit status: 0 all passed, 1 any model failed, 2 bad usage / export failure.
"""

import argparse
import os
import re
import subprocess
import sys

INPUT_SEED = 1234  # the input's own generator; the weights come from torch.manual_seed(0)

# Default tolerances. rtol 1e-4 is the acceptance bound. atol: with random
# weights resnet18's logits are of order 1e-2..1 (|y| 1e-3..6 here), so
# rtol*|expected| is 1e-7..1e-4; an element that happens to be near zero has
# no relative scale, and fp32 accumulation over 1e3..1e4-term dot products
# (different summation order in ATen's kernels and in PyTorch's eager run)
# leaves ~1e-6 absolute noise there, so 1e-5 absolute guards those elements
# without loosening the others.
# That reasoning assumes outputs of order 1. mobilenet_v2's random init
# (kaiming fan_out on depthwise convs, each shrinking the signal) gives logits
# of order 1e-9, where a fixed atol of 1e-5 would accept anything, all zeros
# included. So atol is scaled with the output: ATOL * min(1, max|expected|),
# i.e. exactly ATOL for outputs of order 1 and proportionally less below.
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


def effective_atol(atol, expected):
    """ATOL scaled down for outputs smaller than order 1 (see above)."""
    import numpy as np
    return atol * min(1.0, float(np.max(np.abs(expected))))


def build_case(name, case_dir):
    """Exports NAME and writes its test data set; returns the PyTorch output (numpy)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    gen = torch.Generator().manual_seed(INPUT_SEED)
    x = torch.randn(1, 3, 224, 224, generator=gen, dtype=torch.float32)

    os.makedirs(os.path.join(case_dir, "test_data_set_0"), exist_ok=True)
    model_path = os.path.join(case_dir, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (x,), model_path, opset_version=13, do_constant_folding=True,
                          input_names=["input"], output_names=["output"])
    onnx.checker.check_model(onnx.load(model_path))

    with torch.inference_mode():
        y = model(x)
    y = y.detach().to(torch.float32).numpy()
    data = os.path.join(case_dir, "test_data_set_0")
    for fname, arr in (("input_0.pb", x.numpy()), ("output_0.pb", y)):
        with open(os.path.join(data, fname), "wb") as f:
            f.write(numpy_helper.from_array(np.ascontiguousarray(arr, dtype=np.float32)).SerializeToString())
    return y


# "test_data_set_0 output 0 'output': pass: 0 of 1000 elements outside ...; max abs diff X, max rel diff Y,
#  norm rel err Z"
LINE_RE = re.compile(r"max abs diff (\S+), max rel diff (\S+), norm rel err (\S+)")


def parse_report(text):
    """(max abs diff, max rel diff, norm rel err) of the worst output in a verify report, or Nones."""
    rows = [tuple(float(v) for v in m.groups()) for m in LINE_RE.finditer(text)]
    if not rows:
        return None, None, None
    return tuple(max(r[i] for r in rows) for i in range(3))


def fmt(v):
    return "-" if v is None else f"{v:.3e}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modelstat", required=True, help="modelstat binary")
    ap.add_argument("--workdir", required=True, help="folder for the exported cases")
    ap.add_argument("--models", nargs="+", default=["resnet18", "mobilenet_v2"])
    ap.add_argument("--rtol", type=float, default=DEFAULT_RTOL)
    ap.add_argument("--atol", type=float, default=DEFAULT_ATOL)
    args = ap.parse_args()

    if not os.access(args.modelstat, os.X_OK):
        print(f"error: {args.modelstat} is not an executable", file=sys.stderr)
        return 2
    os.makedirs(args.workdir, exist_ok=True)

    results = []
    for name in args.models:
        case_dir = os.path.join(args.workdir, name)
        try:
            expected = build_case(name, case_dir)
        except Exception as e:  # noqa: BLE001 - report and stop: the case does not exist
            print(f"error: exporting {name}: {type(e).__name__}: {e}", file=sys.stderr)
            return 2
        atol = effective_atol(args.atol, expected)
        cmd = [args.modelstat, "verify", case_dir, "--rtol", repr(args.rtol), "--atol", repr(atol)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(f"== {name}: {' '.join(cmd)} (exit {proc.returncode})")
        print(proc.stdout.rstrip())
        abs_d, rel_d, norm_rel = parse_report(proc.stdout)
        # Pass: verify's elementwise allclose (exit 0) and, scale-free, the
        # norm-wise relative error within rtol as well.
        if proc.returncode != 0:
            status = f"FAIL (verify exit {proc.returncode})"
        elif norm_rel is None:
            status = "FAIL (no figures in the report)"
        elif not norm_rel <= args.rtol:
            status = f"FAIL (norm rel err > {args.rtol:g})"
        else:
            status = "pass"
        if norm_rel is not None:
            print(f"{name}: norm-wise relative error ||a-b||/||b|| = {norm_rel:.3e}")
        results.append((name, atol, abs_d, rel_d, norm_rel, status))

    print()
    print(f"rtol {args.rtol:g}, atol {args.atol:g} * min(1, max|b|); pass = `modelstat verify` exit 0 "
          "(elementwise |a-b| <= atol + rtol*|b|) and norm rel err <= rtol")
    header = ("model", "atol used", "max abs diff", "max rel diff", "norm rel err", "status")
    rows = [(n, fmt(at), fmt(a), fmt(r), fmt(nr), s) for n, at, a, r, nr, s in results]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for row in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    return 0 if all(r[-1] == "pass" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
