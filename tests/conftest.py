"""Fixtures for the suite's own tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEEDS_DIR = ROOT.parent / "shared" / "seeds"


#: One bytecode cache for every process the self-tests spawn (outside the
#: checkout). Each such process imports torch, Hypothesis and the suite and
#: has pytest rewrite the asserts of ~100 modules (Hypothesis' among them, as
#: a pytest plugin): where PYTHONDONTWRITEBYTECODE is set (as on this
#: project's machines) that is 3-4 s of compiling, redone by every process.
PYCACHE = Path(tempfile.gettempdir()) / f"torch-conformance-selftests-pycache-{os.getuid()}"


def subprocess_env(env: dict | None = None) -> dict[str, str]:
    """``env`` (default ``os.environ``) with bytecode cached under :data:`PYCACHE`."""
    out = dict(env if env is not None else os.environ)
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    out.setdefault("PYTHONPYCACHEPREFIX", str(PYCACHE))
    return out


def run_cli(*args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run ``torch-conformance ARGS`` in a subprocess; returns the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "reports.cli", *args],
        cwd=str(ROOT),
        env=subprocess_env(env),
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


def no_shrinking(env: dict) -> dict:
    """``env`` with the suite's shrinking budget at 0 s
    (``TORCH_CONFORMANCE_SHRINK_BUDGET``): for self-tests that ask which
    claims a broken torch fails, not how small its falsifying example is
    (the example found first is reported, with a note that it is not minimal)."""
    from reports.examples import SHRINK_BUDGET_ENV

    return {**env, SHRINK_BUDGET_ENV: "0"}


def run_gate(cli, tmp_path, *extra, env=None, timeout: int = 600):
    """``torch-conformance run`` on CPU in one process, without timings;
    returns ``(completed process, output dir)``."""
    out = tmp_path / "out"
    proc = cli(
        "run", "--no-measure", "-n", "0", "--devices", "cpu", "--out", str(out), *extra,
        env=env, timeout=timeout,
    )  # fmt: skip
    return proc, out
