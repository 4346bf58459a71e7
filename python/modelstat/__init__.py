"""modelstat from Python: what a neural network costs, and where its time goes.

    import modelstat
    r = modelstat.analyze("model.onnx", dims={"batch": 8})
    print(r)                  # the table `modelstat analyze` prints
    r.totals["macs"]          # the JSON document's figures (r.record is the whole document)
    r.to_pandas()             # one row per node (a list of dicts without pandas)

    modelstat.from_torch(torchvision.models.resnet18(), torch.randn(1, 3, 224, 224))

Each function mirrors a subcommand and takes its flags as keyword arguments
(``--max-time 3`` is ``max_time=3``, a flag is ``True``, a repeatable option a
list); ``dims`` and ``inputs`` are ``--dim`` and ``--input``. They return the
record the subcommand's ``-f json`` writes (``result.record``, the one schema of
docs/*.md), with ``str(result)`` its ``-f table`` text. The work runs in C++
with the GIL released. Errors raise :class:`modelstat.Error` subclasses with the
command line's message and exit code. ``profile`` and ``report`` load LibTorch
on first use; nothing else does.
"""

import json
import os
import tempfile

from . import _core
from ._errors import CannotRunError, Error, InputError, RuntimeFailure, UsageError

__version__ = _core.version
__all__ = [
    "analyze", "profile", "report", "fit", "compare", "from_torch",
    "Result", "Analysis", "Profile", "Report", "Generation", "Fit", "Comparison",
    "Error", "UsageError", "InputError", "CannotRunError", "RuntimeFailure",
]


class Result:
    """A subcommand's record: ``record`` (the ``-f json`` document as dicts and
    lists), ``str()`` (the ``-f table`` text), ``exit_code`` (what the command
    line would exit with: fit 3 over a budget, compare 1 on a regression),
    ``totals`` and per-node ``rows``."""

    _rows_key = "nodes"
    _totals_key = "totals"

    def __init__(self, record, table, exit_code):
        self.record = record
        self.table = table
        self.exit_code = exit_code

    @property
    def kind(self):
        return self.record.get("kind", type(self).__name__.lower())

    @property
    def totals(self):
        """Whole-model figures."""
        return self.record[self._totals_key]

    @property
    def rows(self):
        """One dict per node (a copy of the record's list)."""
        return list(self.record.get(self._rows_key, []))

    def to_pandas(self):
        """The per-node rows as a pandas DataFrame (nested fields flattened to
        ``a.b`` columns); the plain list of dicts when pandas is not installed."""
        try:
            import pandas
        except ImportError:
            return self.rows
        return pandas.json_normalize(self.rows)

    def to_json(self, **kwargs):
        """The record as JSON text (``json.dumps`` keyword arguments apply)."""
        return json.dumps(self.record, **kwargs)

    def __str__(self):
        return self.table

    def __repr__(self):
        return "<modelstat.%s: %d rows>" % (type(self).__name__, len(self.record.get(self._rows_key, [])))


class Analysis(Result):
    """``modelstat analyze`` (docs/json-schema.md): ``totals``, ``rows`` = ``nodes``."""


class Profile(Result):
    """``modelstat profile`` (docs/profile-json.md): ``totals`` = ``whole`` (timing), ``rows`` = ``layers``."""

    _rows_key = "layers"
    _totals_key = "whole"


class Report(Result):
    """``modelstat report`` (docs/report-json.md): ``totals`` = ``whole``, ``rows`` = ``nodes``."""

    _totals_key = "whole"


class Generation(Result):
    """``modelstat profile|report --generate P:G`` (docs/generation.md): ``totals`` = TTFT, TPOT, ITL and end to
    end (timing summaries), ``rows`` = ``step_curve`` (decode step time against context); ``exit_code`` is 3
    when an objective of ``slo=`` is not met."""

    _rows_key = "step_curve"

    @property
    def totals(self):
        return {k: self.record[k] for k in ("ttft", "tpot", "itl", "end_to_end")}


class Fit(Result):
    """``modelstat fit`` (docs/FIT.md): ``totals`` = memory, latency and verdict; ``rows`` = ``nodes``."""

    @property
    def totals(self):
        return {k: self.record[k] for k in ("memory", "latency", "verdict")}


class Comparison(Result):
    """``modelstat compare`` (docs/compare-json.md): ``totals`` = ``whole``, ``rows`` = ``nodes``."""

    _totals_key = "whole"

    @property
    def gate_failed(self):
        """True when the command line would exit 1 (a significant slowdown)."""
        return bool(self.record["gate"]["failed"])


# --- arguments -------------------------------------------------------------

def _flag_args(options):
    """Keyword arguments -> the subcommand's flags, in the command line's syntax."""
    args = []
    for key, value in options.items():
        if key in ("format", "output", "f", "o"):
            raise UsageError(
                "%s=: the Python functions return the record (result.record, str(result), result.to_json()); "
                "write it yourself, or use report's html=/json=/csv=/md=/trace= FILE" % key)
        flag = ("-" if len(key) == 1 else "--") + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
            continue
        if key == "batch_sweep" and isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        for v in value if isinstance(value, (list, tuple)) else [value]:
            args += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
    return args


def _shape_text(shape):
    if isinstance(shape, str):
        return shape
    return "x".join(str(int(d)) for d in shape)


def _model_args(dims, inputs):
    args = []
    for name, value in (dims or {}).items():
        args += ["--dim", "%s=%d" % (name, int(value))]
    for name, shape in (inputs or {}).items():
        args += ["--input", "%s:%s" % (name, _shape_text(shape))]
    return args


class _ModelPath:
    """A path for a model given as a path or as bytes (written to a temporary file,
    removed afterwards; the record's paths then name that file)."""

    def __init__(self, model):
        self._model = model
        self._tmp = None

    def __enter__(self):
        if isinstance(self._model, (bytes, bytearray, memoryview)):
            self._tmp = tempfile.TemporaryDirectory(prefix="modelstat-")
            path = os.path.join(self._tmp.name, "model.onnx")
            with open(path, "wb") as f:
                f.write(self._model)
            return path
        if isinstance(self._model, (str, os.PathLike)):
            return os.fspath(self._model)
        raise UsageError("model: expected a path or the bytes of an ONNX file, got %s" % type(self._model).__name__)

    def __exit__(self, *exc):
        if self._tmp is not None:
            self._tmp.cleanup()


def _run(module, subcommand, positional, options, result_type):
    text, table, exit_code = module.run([subcommand] + positional + _flag_args(options))
    record = json.loads(text)
    if record.get("kind") == "generation":  # profile / report with generate="P:G"
        result_type = Generation
    return result_type(record, table, exit_code)


def _profiler_module():
    try:
        from . import _profiler
    except ImportError as e:
        raise CannotRunError("profile and report need the LibTorch half of the module (modelstat._profiler), "
                             "which this installation lacks: %s" % e) from None
    return _profiler


# --- the subcommands -------------------------------------------------------

def analyze(model, dims=None, inputs=None, **options):
    """Static analysis (``modelstat analyze``): params, MACs, FLOPs, bytes, memory, per node and in total.

    model: a path or the bytes of an ONNX file. dims: ``{"batch": 8}`` (``--dim``); inputs:
    ``{"x": (8, 3, 224, 224)}`` or ``{"x": "8x3x224x224"}`` (``--input``). Other flags as keywords:
    ``default_batch=4``, ``group_by="block"``, ``context=1024``, ``top=5``, ``allow_custom_domains=True``.
    """
    with _ModelPath(model) as path:
        return _run(_core, "analyze", [path] + _model_args(dims, inputs), options, Analysis)


def profile(model, dims=None, inputs=None, **options):
    """Measured latency (``modelstat profile``), whole model and per layer, with LibTorch.

    Flags as keywords: ``device="cpu"``, ``threads=1``, ``max_time=3``, ``iters=20``, ``batch_sweep=[1, 2, 4]``,
    ``memory=True``, ``train_step=True``, ``no_layers=True``, ... ``generate="128:128"`` runs a decoder's
    generation loop instead and returns a ``Generation`` (``slo="ttft=500ms,tpot=30ms"``).
    """
    module = _profiler_module()
    with _ModelPath(model) as path:
        return _run(module, "profile", [path] + _model_args(dims, inputs), options, Profile)


def report(model, dims=None, inputs=None, **options):
    """Profile joined with the static cost on the device's roofline (``modelstat report``).

    Flags as keywords, those of profile plus ``ceilings=FILE``, ``datasheet=NAME`` and the files
    ``html=``, ``json=``, ``csv=``, ``md=``, ``trace=`` written from the same run.
    """
    module = _profiler_module()
    with _ModelPath(model) as path:
        return _run(module, "report", [path] + _model_args(dims, inputs), options, Report)


def fit(model, dims=None, inputs=None, **options):
    """Memory and latency forecast against budgets (``modelstat fit``), nothing run.

    Flags as keywords: ``memory="8GiB"``, ``latency_budget="10ms"``, ``batch=8``, ``train=True``,
    ``optimizer="adam"``, ``ceilings=FILE`` or ``datasheet="h100-sxm"``, ``context=1024``, ...
    ``exit_code`` is 3 when a budget is predicted to be exceeded.
    """
    with _ModelPath(model) as path:
        return _run(_core, "fit", [path] + _model_args(dims, inputs), options, Fit)


def compare(base, new, **options):
    """Significance test of two profile runs (``modelstat compare``): whole model and per node.

    base, new: a profile or report JSON file, a :class:`Profile` or :class:`Report`, or such a record (dict).
    Flags as keywords: ``threshold="5%"``, ``alpha=0.05``, ``per_node_gate=True``, ``top=10``.
    ``gate_failed`` / ``exit_code`` say whether the command line would exit 1.
    """
    with tempfile.TemporaryDirectory(prefix="modelstat-") as tmp:
        paths = []
        for side, run in (("base", base), ("new", new)):
            if isinstance(run, Result):
                run = run.record
            if isinstance(run, dict):
                path = os.path.join(tmp, side + ".json")
                with open(path, "w") as f:
                    json.dump(run, f)
                run = path
            if not isinstance(run, (str, os.PathLike)):
                raise UsageError("%s: expected a JSON file, a Profile or Report, or its record, got %s"
                                 % (side, type(run).__name__))
            paths.append(os.fspath(run))
        return _run(_core, "compare", paths, options, Comparison)


def _dim_bindings(args, export_kwargs):
    """The dims that the export's dynamic axes name, bound to the example inputs' sizes.
    Inputs are matched by ``input_names`` (an output's axes follow from the inputs)."""
    names = list(export_kwargs.get("input_names") or [])[:len(args)]
    dims = {}
    for name, axes in (export_kwargs.get("dynamic_axes") or {}).items():
        if name in names:
            tensor = args[names.index(name)]
            for axis, dim_name in axes.items():
                dims.setdefault(dim_name, int(tensor.shape[axis]))
    return dims


def from_torch(module, example_inputs, dims=None, inputs=None, analyze_options=None, **export_kwargs):
    """Exports a ``torch.nn.Module`` to ONNX in memory and analyses it, as torchinfo/thop do.

    example_inputs: a tensor or a tuple of tensors (``torch.onnx.export``'s ``args``). export_kwargs go to
    ``torch.onnx.export`` (``input_names``, ``dynamic_axes``, ``opset_version``, ...). Each dynamic axis of an
    input named in ``input_names`` is bound, through ``dims``, to the example input's size on that axis, so the
    totals are those of the example batch; ``dims`` given here override them. A dynamic axis given as a list (``{"x": [0]}``) is named
    ``x_dim0``. analyze_options: more keywords for :func:`analyze`.
    """
    import io

    import torch

    args = (example_inputs,) if isinstance(example_inputs, torch.Tensor) else tuple(example_inputs)
    if export_kwargs.get("dynamic_axes"):
        export_kwargs["dynamic_axes"] = {
            name: dict(axes) if isinstance(axes, dict) else {int(a): "%s_dim%d" % (name, int(a)) for a in axes}
            for name, axes in export_kwargs["dynamic_axes"].items()}
    bound = _dim_bindings(args, export_kwargs)
    bound.update(dims or {})
    buffer = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, args, buffer, **export_kwargs)
    return analyze(buffer.getvalue(), dims=bound, inputs=inputs, **(analyze_options or {}))
