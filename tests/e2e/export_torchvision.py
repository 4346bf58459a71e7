#!/usr/bin/python3
"""Export a torchvision classification model to ONNX.

    /usr/bin/python3 tests/e2e/export_torchvision.py NAME OUT.onnx [--opset 13]

Builds torchvision.models.NAME(weights=None).eval() (random weights, fixed
seed), traces it with a 1x3x224x224 input and writes OUT.onnx with
torch.onnx.export(opset_version=OPSET, do_constant_folding=True). Eval-mode
export folds BatchNorm into the preceding Conv, so the ONNX parameter count
can differ slightly from torchvision's num_params.
"""

import argparse
import inspect
import json
import os
import sys

SEED = 0
INPUT_SHAPE = (1, 3, 224, 224)


def versions():
    import torch
    import torchvision
    import onnx
    return {"torch": torch.__version__, "torchvision": torchvision.__version__,
            "onnx": onnx.__version__}


def build_model(name):
    import torch
    import torchvision
    torch.manual_seed(SEED)
    ctor = getattr(torchvision.models, name, None)
    if ctor is None or not callable(ctor):
        raise SystemExit(f"export_torchvision: unknown torchvision model {name!r}")
    try:
        model = ctor(weights=None)
    except TypeError:  # torchvision < 0.13
        model = ctor(pretrained=False)
    return model.eval()


def export(name, out, opset=13, dynamic_batch=False):
    """Export NAME to OUT; returns a dict describing the export."""
    import torch
    model = build_model(name)
    torch.manual_seed(SEED)
    x = torch.randn(*INPUT_SHAPE)
    out_dir = os.path.dirname(os.path.abspath(out))
    os.makedirs(out_dir, exist_ok=True)
    tmp = out + ".partial"
    # Deliberately NOT under torch.no_grad(): with grad disabled, torch 1.13's
    # nn.MultiheadAttention takes its fused fast path (aten::_native_multi_
    # head_attention), which has no ONNX symbolic (breaks vit_b_16).
    kwargs = dict(opset_version=opset, do_constant_folding=True,
                  input_names=["input"], output_names=["output"],
                  dynamic_axes=({"input": {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None))
    # torch >= 2.9 exports through dynamo by default; the TorchScript exporter
    # (dynamo=False) writes the graph these tests were written for, where it remains.
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        try:
            torch.onnx.export(model, (x,), tmp, dynamo=False, **kwargs)
        except Exception as e:  # noqa: BLE001 -- the TorchScript exporter removed or failing: dynamo's
            print(f"export_torchvision: TorchScript export failed ({type(e).__name__}: {e}); using dynamo",
                  file=sys.stderr)
            torch.onnx.export(model, (x,), tmp, dynamo=True, **kwargs)
    else:
        torch.onnx.export(model, (x,), tmp, **kwargs)
    os.replace(tmp, out)
    info = dict(versions())
    info.update({"model": name, "opset": opset, "input_shape": list(INPUT_SHAPE),
                 "seed": SEED,
                 "torch_num_params": sum(p.numel() for p in model.parameters())})
    return info


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="torchvision.models function, e.g. resnet50")
    ap.add_argument("out", help="output .onnx path")
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--dynamic-batch", action="store_true",
                    help="leave the batch dim symbolic ('batch'), for batch sweeps")
    args = ap.parse_args(argv)
    info = export(args.name, args.out, args.opset, args.dynamic_batch)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
