"""modelstat.profile(..., generate="P:G") (LibTorch, CPU): a Generation record with the CLI's schema, its
exit code 3 when an objective is not met."""
import modelstat
from conftest import sample

QUICK = dict(threads=1, warmup=1, iters=2, max_time=0.3, no_layers=True)


def test_generation_record(cli):
    path = sample("tiny_gpt2_kv.onnx")
    expected = cli.json("profile", path, "--generate", "6:4", "--threads", "1", "--warmup", "1", "--iters", "2",
                        "--max-time", "0.3", "--no-layers")
    r = modelstat.profile(path, generate="6:4", **QUICK)
    assert isinstance(r, modelstat.Generation)
    assert r.kind == "generation"
    assert set(r.record) == set(expected)
    assert [p["context"] for p in r.rows] == [7, 8, 9]
    assert r.totals["ttft"]["count"] >= 2
    assert r.record["tokens"]["prompt"] == expected["tokens"]["prompt"]  # the same fixed seed
    assert r.exit_code == 0


def test_generation_slo_exit_code():
    r = modelstat.profile(sample("tiny_gpt2_kv.onnx"), generate="4:3", slo="ttft=1ns", **QUICK)
    assert r.exit_code == 3
    assert r.record["slo"]["met"] is False
