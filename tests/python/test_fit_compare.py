"""modelstat.fit and modelstat.compare: the records equal the CLI's JSON, exit codes included."""
import json

import pytest

import modelstat
from conftest import sample


def test_fit_record_is_the_cli_json(cli):
    path = sample("custom_model.onnx")
    args = ["fit", path, "--datasheet", "h100-sxm", "--batch", "8", "--memory", "8GiB", "--latency-budget", "10ms"]
    p = cli.run(*args, "-f", "json")
    expected = json.loads(p.stdout)
    r = modelstat.fit(path, datasheet="h100-sxm", batch=8, memory="8GiB", latency_budget="10ms")
    assert isinstance(r, modelstat.Fit)
    assert r.record == expected
    assert r.exit_code == p.returncode
    assert r.totals["memory"] == expected["memory"]
    assert r.rows == expected["nodes"]


def test_fit_over_budget_exit_code(cli):
    path = sample("tiny_cnn.onnx")
    p = cli.run("fit", path, "--datasheet", "h100-sxm", "--memory", "1KiB")
    assert p.returncode == 3
    r = modelstat.fit(path, datasheet="h100-sxm", memory="1KiB")
    assert r.exit_code == 3
    assert r.totals["verdict"]["fits_memory"] is False


def test_fit_training(cli):
    path = sample("tiny_bert.onnx")
    expected = cli.json("fit", path, "--dim", "seq=32", "--datasheet", "a100-sxm", "--train", "--optimizer", "sgd")
    r = modelstat.fit(path, dims={"seq": 32}, datasheet="a100-sxm", train=True, optimizer="sgd")
    assert r.record == expected


def test_fit_without_ceilings_asks_for_them(cli):
    # No saved ceilings in this test's MODELSTAT_CEILINGS_DIR. The CLI measures quick ones with
    # modelstat-profiler (tested in fit_test.cc); the module links no LibTorch to measure with, so it
    # says what to pass, as the CLI's error form has it.
    path = sample("tiny_cnn.onnx")
    with pytest.raises(modelstat.UsageError) as info:
        modelstat.fit(path)
    message = str(info.value)
    assert "no saved cpu ceilings" in message and "--ceilings FILE or --datasheet NAME" in message


def test_fit_bad_budget_is_a_usage_error(cli):
    p = cli.run("fit", sample("tiny_cnn.onnx"), "--datasheet", "h100-sxm", "--memory", "lots")
    assert p.returncode == 2
    with pytest.raises(modelstat.UsageError) as info:
        modelstat.fit(sample("tiny_cnn.onnx"), datasheet="h100-sxm", memory="lots")
    assert "lots" in str(info.value)


def test_compare_record_is_the_cli_json(cli, tmp_path):
    # Two profiles of the same model by the CLI, compared by the CLI and by the module.
    model = sample("tiny_cnn.onnx")
    files = []
    for i in range(2):
        f = tmp_path / ("run%d.json" % i)
        p = cli.run("profile", model, "--threads", "1", "--warmup", "1", "--warmup-time", "0", "--iters", "5",
                    "--min-time", "0", "--max-time", "0.5", "-f", "json", "-o", str(f))
        assert p.returncode == 0, p.stderr
        files.append(str(f))
    p = cli.run("compare", *files, "--threshold", "5%", "-f", "json")
    expected = json.loads(p.stdout)
    r = modelstat.compare(files[0], files[1], threshold="5%")
    assert isinstance(r, modelstat.Comparison)
    assert r.record == expected
    assert r.exit_code == p.returncode
    assert r.gate_failed == (p.returncode == 1)
    # The same runs given as records: the same test, the same figures.
    records = [json.load(open(f)) for f in files]
    r2 = modelstat.compare(records[0], records[1], threshold="5%")
    assert r2.record["whole"] == expected["whole"]
    assert r2.rows == expected["nodes"]


def test_compare_bad_input_is_the_cli_error(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"tool": "modelstat", "kind": "analysis"}')
    p = cli.run("compare", str(bad), str(bad))
    assert p.returncode == 2
    with pytest.raises(modelstat.Error) as info:
        modelstat.compare(str(bad), str(bad))
    assert info.value.exit_code == 2
    assert "modelstat: error: " + str(info.value) == p.stderr.strip()
