"""One broken operation reads as one cause, not as dozens of failures.

Each test declares the oracle primitives it observes through
(``@pytest.mark.oracle``, ``conformance/oracles.toml``); the report groups a
failing claim under a primitive whose own claims failed in the same run.
"""

from __future__ import annotations

import pytest

from conformance.oracles import default_oracles
from reports.causes import cause_groups, cause_lines
from tests.conftest import run_gate
from tests.mutants import mutant_env


def _t(claims, verdict, oracles=()):
    return {"nodeid": f"t::{claims[0]}", "claims": claims, "device": "cpu", "verdict": verdict,
            "oracles": list(oracles), "examples": 1}  # fmt: skip


def _doc(tests):
    claims = {c for t in tests for c in t["claims"]}
    return {
        "environment": {"devices": ["cpu"]},
        "claims": {c: {"area": c.split(".")[0]} for c in claims},
        "tests": tests,
        "oracles": {"detach": {"description": "d", "claims": ["detach.values"]},
                    "clone": {"description": "c", "claims": ["clone.values"]}},
    }  # fmt: skip


def test_failures_relying_on_a_broken_primitive_are_grouped_under_it():
    doc = _doc([
        _t(["detach.values"], "regression"),
        _t(["copy.a"], "regression", ["detach"]),
        _t(["copy.b"], "regression", ["detach", "clone"]),
        _t(["copy.c"], "regression", ["clone"]),  # clone's own claims held: no cause
        _t(["clone.values"], "held"),
        _t(["copy.d"], "held", ["detach"]),
    ])  # fmt: skip
    cg = cause_groups(doc)
    assert cg["failing"] == 4
    (g,) = cg["groups"]
    assert g["primitive"] == "detach" and g["own_failed"] == ["detach.values"]
    assert g["explained"] == ["copy.a", "copy.b"]
    assert cg["standalone"] == ["copy.c"]
    lines = cause_lines(doc)
    assert lines[0].startswith("4 failing claim(s), 2 likely cause(s)")


def test_every_primitive_names_registered_claims():
    prims = default_oracles()
    assert {"detach", "clone", "tensor", "numpy", "to", "copy_", "backward"} <= set(prims)


@pytest.mark.slow
def test_a_broken_detach_is_one_cause(cli, tmp_path, read_results):
    """Under a detach() that returns zeros, every failing claim outside the
    detach area is grouped under the detach primitive."""
    env = mutant_env("detach-returns-zeros", tmp_path / "site")
    # Which claims fail decides the grouping, not how small or how rare their
    # falsifying examples are: the smoke profile (10 derandomized examples,
    # no shrinking). The compile tier runs on the Dynamo-only eager backend:
    # its tests declare the same oracles on every backend, and inductor's C++
    # compiles would triple the time of this one-process run.
    proc, out = run_gate(
        cli, tmp_path, "--backends", "eager", "--profile", "smoke", env=env, timeout=1800
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = read_results(out)
    cg = doc["causes"]
    groups = {g["primitive"]: g for g in cg["groups"]}
    assert "detach" in groups, cg
    explained = set(groups["detach"]["explained"]) | set(groups["detach"]["own_failed"])
    outside = {c for c in explained | set(cg["standalone"]) if not c.startswith("detach.")}
    assert outside, "the mutant broke nothing outside the detach area"
    assert not [c for c in cg["standalone"] if not c.startswith("detach.")], cg["standalone"]
    assert outside <= explained
    assert "likely cause" in (out / "report.html").read_text()
    assert "rely on it" in proc.stdout
