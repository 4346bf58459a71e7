"""modelstat.analyze: the record equals the CLI's JSON, str() its table, errors its messages."""
import json
import os
import subprocess
import sys

import pytest

import modelstat
from conftest import SOURCE_DIR, sample, without_timing_lines

# The analysis document minus what varies between two runs of the same analysis.
VOLATILE = ("analysis_seconds",)


def stable(record):
    return {k: v for k, v in record.items() if k not in VOLATILE}


@pytest.mark.parametrize("name,dims", [
    ("tiny_cnn.onnx", {}),
    ("tiny_bert.onnx", {"batch": 2, "seq": 16}),
    ("custom_model.onnx", {"batch": 32}),  # skeleton: weights absent
    ("control_flow.onnx", {}),
])
def test_record_is_the_cli_json(cli, name, dims):
    path = sample(name)
    dim_args = [a for k, v in dims.items() for a in ("--dim", "%s=%d" % (k, v))]
    expected = cli.json(path, *dim_args)
    r = modelstat.analyze(path, dims=dims)
    assert isinstance(r, modelstat.Analysis)
    assert stable(r.record) == stable(expected)
    assert r.totals == expected["totals"]
    assert r.exit_code == 0


def test_str_is_the_cli_table(cli):
    path = sample("tiny_cnn.onnx")
    p = cli.run(path, "--top", "3")
    assert p.returncode == 0
    r = modelstat.analyze(path, top=3)
    assert without_timing_lines(str(r)) == without_timing_lines(p.stdout)


def test_flags_as_keywords(cli):
    path = sample("tiny_gpt2.onnx")
    expected = cli.json(path, "--dim", "seq=16", "--group-by", "block", "--default-batch", "3")
    r = modelstat.analyze(path, dims={"seq": 16}, group_by="block", default_batch=3)
    assert r.record["groups"] == expected["groups"]
    assert r.totals == expected["totals"]


def test_inputs_as_shapes(cli):
    path = sample("tiny_bert.onnx")
    expected = cli.json(path, "--input", "input_ids:4x8")
    assert modelstat.analyze(path, inputs={"input_ids": (4, 8)}).totals == expected["totals"]
    assert modelstat.analyze(path, inputs={"input_ids": "4x8"}).totals == expected["totals"]


def test_bytes_equal_path():
    path = sample("tiny_yolo.onnx")
    with open(path, "rb") as f:
        data = f.read()
    assert modelstat.analyze(data).totals == modelstat.analyze(path).totals
    assert modelstat.analyze(bytearray(data)).totals == modelstat.analyze(path).totals


def test_rows_and_pandas():
    pandas = pytest.importorskip("pandas")  # Debian python3-pandas, installed by tools/dev.sh
    r = modelstat.analyze(sample("tiny_cnn.onnx"))
    frame = r.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) == r.totals["nodes"] == len(r.rows)
    # A model without control flow: the node rows add up to the totals.
    assert int(frame["macs"].sum()) == r.totals["macs"]
    assert int(frame["flops"].sum()) == r.totals["flops"]
    assert list(frame["name"]) == [n["name"] for n in r.record["nodes"]]


def test_to_pandas_without_pandas_gives_dicts(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    r = modelstat.analyze(sample("tiny_cnn.onnx"))
    rows = r.to_pandas()
    assert isinstance(rows, list) and all(isinstance(row, dict) for row in rows)
    assert rows == r.record["nodes"]


def test_to_json_round_trips():
    r = modelstat.analyze(sample("tied_weights.onnx"))
    assert json.loads(r.to_json()) == r.record


def cli_error(cli, *args):
    p = cli.run(*args)
    prefix = "modelstat: error: "
    assert p.stderr.startswith(prefix), p.stderr
    return p.returncode, p.stderr[len(prefix):].strip()


BAD = os.path.join(SOURCE_DIR, "tests", "data", "bad")


@pytest.mark.parametrize("model,flags,kwargs,cls", [
    ("no/such/model.onnx", [], {}, modelstat.InputError),
    (os.path.join(BAD, "cycle.onnx"), [], {}, modelstat.InputError),
    (os.path.join(BAD, "negative_dim.onnx"), [], {}, modelstat.InputError),
    (sample("tiny_cnn.onnx"), ["--dim", "nosuchdim"], {"dim": "nosuchdim"}, modelstat.UsageError),
    (sample("tiny_cnn.onnx"), ["--group-by", "re:("], {"group_by": "re:("}, modelstat.UsageError),
])
def test_errors_carry_the_cli_message_and_exit_code(cli, model, flags, kwargs, cls):
    code, message = cli_error(cli, model, *flags)
    with pytest.raises(cls) as info:
        modelstat.analyze(model, **kwargs)
    assert str(info.value) == message
    assert info.value.exit_code == code
    assert isinstance(info.value, modelstat.Error)


def test_unknown_keyword_is_a_usage_error(cli):
    p = cli.run(sample("tiny_cnn.onnx"), "--no-such-flag")
    assert p.returncode == 2
    with pytest.raises(modelstat.UsageError) as info:
        modelstat.analyze(sample("tiny_cnn.onnx"), no_such_flag=True)
    assert "--no-such-flag" in str(info.value)
    assert info.value.exit_code == 2


def test_output_keywords_are_refused():
    with pytest.raises(modelstat.UsageError):
        modelstat.analyze(sample("tiny_cnn.onnx"), format="csv")


def test_import_does_not_load_libtorch():
    code = ("import modelstat, sys; modelstat.analyze(sys.argv[1]); "
            "maps = open('/proc/self/maps').read(); print('libtorch' in maps)")
    out = subprocess.run([sys.executable, "-c", code, sample("tiny_cnn.onnx")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_help_keyword_points_to_the_docs():
    with pytest.raises(modelstat.UsageError) as info:
        modelstat.analyze(sample("tiny_cnn.onnx"), help=True)
    assert "help(modelstat.analyze)" in str(info.value)
