"""modelstat.profile and modelstat.report (LibTorch, CPU): the records have the CLI's schema and the
static half equals the CLI's analysis; errors as the CLI's; the GIL is released while measuring."""
import re
import threading
import time

import pytest

import modelstat
from conftest import sample

# A short measurement: enough for the records' shape, not for timings (never asserted).
QUICK = dict(threads=1, warmup=1, warmup_time=0, iters=3, min_time=0, max_time=0.5)


def test_profile_record(cli):
    path = sample("tiny_cnn.onnx")
    expected = cli.json("profile", path, "--threads", "1", "--warmup", "1", "--warmup-time", "0", "--iters", "3",
                        "--min-time", "0", "--max-time", "0.5")
    r = modelstat.profile(path, **QUICK)
    assert isinstance(r, modelstat.Profile)
    assert r.kind == "profile"
    assert set(r.record) == set(expected)  # one schema: the same keys as the CLI's document
    assert r.record["schema_version"] == expected["schema_version"]
    assert [l["name"] for l in r.rows] == [l["name"] for l in expected["layers"]]
    assert r.totals["count"] >= 3 and r.totals["median_s"] > 0
    # The analysis nested in the profile is the CLI's analysis of the same file.
    assert r.record["analysis"]["totals"] == cli.json(path)["totals"]
    text = str(r)
    assert path in text.splitlines()[0]


def test_profile_batch_sweep_list():
    # tiny_bert's batch dim is symbolic, so it can be swept.
    r = modelstat.profile(sample("tiny_bert.onnx"), dims={"seq": 8}, batch_sweep=[1, 2], **QUICK)
    assert [p["batch"] for p in r.record["batch_sweep"]] == [1, 2]


def test_profile_usage_error_is_the_cli_message(cli):
    path = sample("tiny_cnn.onnx")
    p = cli.run("profile", path, "--device", "tpu")
    assert p.returncode == 2
    with pytest.raises(modelstat.UsageError) as info:
        modelstat.profile(path, device="tpu")
    assert str(info.value).splitlines()[0] in p.stderr


def test_profile_of_an_unrunnable_model_is_the_cli_error(cli):
    path = sample("custom_model.onnx")
    # batch 2^20 of a 3x224x224 input: beyond any free host memory, refused up front (exit 2).
    p = cli.run("profile", path, "--dim", "batch=1048576")
    assert p.returncode == 2
    with pytest.raises(modelstat.Error) as info:
        modelstat.profile(path, dims={"batch": 1048576})
    assert info.value.exit_code == 2
    # The message names the free memory, which moves between the two runs.
    def masked(text):
        return re.sub(r"[0-9.]+ (GiB|MiB|KiB)", "N", text)
    assert masked("modelstat: error: " + str(info.value)) == masked(p.stderr.strip())


def test_report_record_and_files(cli, tmp_path):
    path = sample("tiny_cnn.onnx")
    html = tmp_path / "r.html"
    r = modelstat.report(path, html=str(html), **QUICK)
    assert isinstance(r, modelstat.Report)
    assert r.kind == "report"
    analysis = cli.json(path)
    assert [n["name"] for n in r.rows] == [n["name"] for n in analysis["nodes"]]
    assert r.record["profile"]["analysis"]["totals"] == analysis["totals"]
    assert html.read_text().lstrip().lower().startswith("<!doctype html")
    assert "Hotspots" in str(r) or "hotspots" in str(r)


def test_compare_two_profiles_from_python():
    path = sample("tiny_cnn.onnx")
    a = modelstat.profile(path, **QUICK)
    b = modelstat.profile(path, **QUICK)
    c = modelstat.compare(a, b, threshold="50%")
    assert c.record["kind"] == "compare"
    assert c.totals["verdict"] in ("regression", "improvement", "unchanged")


def test_gil_released_while_measuring():
    """The main thread keeps running Python while another thread profiles: with the GIL held
    through the measurement (about a second of C++), it would stall for that long."""
    done = threading.Event()
    errors = []

    def measure():
        try:
            modelstat.profile(sample("tiny_cnn.onnx"), threads=1, warmup=1, warmup_time=0, iters=3,
                              min_time=1.0, max_time=1.5, no_layers=True)
        except Exception as e:  # reported below
            errors.append(e)
        finally:
            done.set()

    worker = threading.Thread(target=measure)
    start = time.perf_counter()
    worker.start()
    last, longest_gap = time.perf_counter(), 0.0
    while not done.is_set():
        now = time.perf_counter()
        longest_gap = max(longest_gap, now - last)
        last = now
        time.sleep(0.001)
    worker.join()
    elapsed = time.perf_counter() - start
    assert not errors, errors
    assert elapsed >= 1.0  # it did measure for its minimum time
    assert longest_gap < 0.5, "the main thread stalled %.2f s of %.2f s" % (longest_gap, elapsed)
