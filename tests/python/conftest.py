"""Fixtures of the Python module's tests (ctest python.*, which put the build's
python/ folder on PYTHONPATH and name the built CLI in MODELSTAT_BINARY)."""
import json
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get("MODELSTAT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLES = os.path.join(SOURCE_DIR, "sample_models")


def sample(name):
    return os.path.join(SAMPLES, name)


class Cli:
    """The built `modelstat` binary: the reference every Python result is checked against."""

    def __init__(self, binary):
        self.binary = binary

    def run(self, *args, env=None):
        return subprocess.run([self.binary, *args], capture_output=True, text=True, env=env)

    def json(self, *args, expect_code=0):
        p = self.run(*args, "-f", "json")
        assert p.returncode == expect_code, p.stderr
        return json.loads(p.stdout)


@pytest.fixture(scope="session")
def cli():
    binary = os.environ.get("MODELSTAT_BINARY")
    if not binary:
        pytest.fail("MODELSTAT_BINARY is not set: run these tests through ctest")
    return Cli(binary)


@pytest.fixture(autouse=True)
def private_ceilings_dir(tmp_path, monkeypatch):
    # report/fit look for saved ceilings; keep each test away from the user's.
    monkeypatch.setenv("MODELSTAT_CEILINGS_DIR", str(tmp_path / "ceilings"))


def without_timing_lines(table):
    """A table with the lines that carry the wall-clock time of the run left out."""
    return [line for line in table.splitlines() if not line.startswith("analysis time:")]
