"""Every claim is falsifiable by its own tests: the full targeted sweep.

Each mutant in ``conformance/mutants/`` declares the claims it breaks; the
sweep runs the tests of exactly those claims under it (``torch-conformance
mutate``). Every declared claim must turn FAILED: a claim that keeps its
verdict under a torch that breaks it has tests that would not notice - a
defect of the suite, which this test turns red.
"""

from __future__ import annotations

import json

import pytest

from conformance.mutants import CATALOGUE, targeted


@pytest.mark.slow
def test_no_declared_claim_escapes_its_mutant(tmp_path):
    doc = targeted.sweep(CATALOGUE, tmp_path, workers=2, timeout=600)
    (tmp_path / "mutants.json").write_text(json.dumps(doc))
    problems = [
        f"{r['name']}: {r['status']} - {r['reason']}"
        for r in doc["mutants"]
        if r["status"] != "killed"
    ]
    assert not problems, "\n".join(problems)
    s = doc["score"]
    assert s["claims_falsified"] == s["claims_declared"]
    assert s["partial"] >= 2 * s["total"] / 3
