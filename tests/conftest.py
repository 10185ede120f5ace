"""Fixtures for the suite's own tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS_DIR = ROOT.parent / "shared" / "seeds"


def run_cli(*args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run ``torch-conformance ARGS`` in a subprocess; returns the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "reports.cli", *args],
        cwd=str(ROOT),
        env=env or dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def read_results():
    def _read(out_dir: Path) -> dict:
        return json.loads((Path(out_dir) / "results.json").read_text())

    return _read


def cpu_verdicts(doc: dict) -> dict[str, set[str]]:
    """Claim id -> the set of test verdicts recorded for it on CPU (or any device)."""
    out: dict[str, set[str]] = {}
    for t in doc["tests"]:
        if t["device"] in ("cpu", "any"):
            for c in t["claims"]:
                out.setdefault(c, set()).add(t["verdict"])
    return out


def run_gate(cli, tmp_path, *extra, env=None, timeout: int = 600):
    """``torch-conformance run`` on CPU in one process, without timings;
    returns ``(completed process, output dir)``."""
    out = tmp_path / "out"
    proc = cli(
        "run", "--no-measure", "-n", "0", "--devices", "cpu", "--out", str(out), *extra,
        env=env, timeout=timeout,
    )  # fmt: skip
    return proc, out
