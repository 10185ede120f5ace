"""One broken operation reads as one cause, not as dozens of failures.

Each test declares the instruments it observes through
(``@pytest.mark.observes``, ``conformance/instruments.toml``); the report groups
a failing claim under an instrument whose own claims failed in the same run.
"""

from __future__ import annotations

import pytest

from conformance.instruments import default_instruments
from reports.causes import cause_groups, cause_lines
from tests.conftest import run_gate
from tests.mutants import mutant_env


def _t(claims, verdict, observes=(), key="observes"):
    return {"nodeid": f"t::{claims[0]}", "claims": claims, "device": "cpu", "verdict": verdict,
            key: list(observes), "examples": 1}  # fmt: skip


def _doc(tests, key="instruments"):
    claims = {c for t in tests for c in t["claims"]}
    return {
        "environment": {"devices": ["cpu"]},
        "claims": {c: {"area": c.split(".")[0]} for c in claims},
        "tests": tests,
        key: {"detach": {"description": "d", "claims": ["detach.values"]},
              "clone": {"description": "c", "claims": ["clone.values"]}},
    }  # fmt: skip


def _grouped_doc(test_key="observes", doc_key="instruments"):
    return _doc([
        _t(["detach.values"], "regression", key=test_key),
        _t(["copy.a"], "regression", ["detach"], key=test_key),
        _t(["copy.b"], "regression", ["detach", "clone"], key=test_key),
        _t(["copy.c"], "regression", ["clone"], key=test_key),  # clone's own claims held: no cause
        _t(["clone.values"], "held", key=test_key),
        _t(["copy.d"], "held", ["detach"], key=test_key),
    ], key=doc_key)  # fmt: skip


def test_failures_observed_through_a_broken_instrument_are_grouped_under_it():
    doc = _grouped_doc()
    cg = cause_groups(doc)
    assert cg["failing"] == 4
    (g,) = cg["groups"]
    assert g["primitive"] == "detach" and g["own_failed"] == ["detach.values"]
    assert g["explained"] == ["copy.a", "copy.b"]
    assert cg["standalone"] == ["copy.c"]
    lines = cause_lines(doc)
    assert lines[0].startswith("4 failing claim(s), 2 likely cause(s): 1 broken instrument(s)")


def test_a_result_file_written_before_the_rename_groups_the_same():
    """Files written before the rename (the shipped baselines) call the
    instruments ``oracles``, in the document and in each test record."""
    new = cause_groups(_grouped_doc())
    assert cause_groups(_grouped_doc("oracles", "oracles")) == new
    assert cause_groups(_grouped_doc("oracles", "instruments")) == new
    assert cause_groups(_grouped_doc("observes", "oracles")) == new


def test_the_shipped_baselines_are_read_with_their_old_keys():
    """The shipped baselines may predate the rename (``oracles`` keys): read
    as they are, their instruments and each test's observed instruments are
    found."""
    from reports.baselines import available, load_baseline
    from reports.results import instruments_of, observes_of

    version = next(iter(available()))
    doc = load_baseline(version)
    assert {"detach", "clone"} <= set(instruments_of(doc))
    assert any("detach" in observes_of(t) for t in doc["tests"])


def test_every_instrument_names_registered_claims():
    prims = default_instruments()
    assert {"detach", "clone", "tensor", "numpy", "to", "copy_", "backward"} <= set(prims)


@pytest.mark.slow
def test_a_broken_detach_is_one_cause(cli, tmp_path, read_results):
    """Under a detach() that returns zeros, every failing claim outside the
    detach area is grouped under the detach instrument."""
    env = mutant_env("detach-returns-zeros", tmp_path / "site")
    # Which claims fail decides the grouping, not how small or how rare their
    # falsifying examples are: the smoke profile (10 derandomized examples,
    # no shrinking). The compile tier runs on the Dynamo-only eager backend:
    # its tests declare the same instruments on every backend, and inductor's C++
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
