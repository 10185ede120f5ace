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
import torch

from conformance.mutants import CATALOGUE, targeted


@pytest.mark.slow
def test_no_declared_claim_escapes_its_mutant(tmp_path):
    doc = targeted.sweep(CATALOGUE, tmp_path, workers=2, timeout=600)
    (tmp_path / "mutants.json").write_text(json.dumps(doc))
    # A mutant that needs a device this machine lacks (CUDA-only claims) is
    # "not judged here": listed, never counted as killed.
    skipped_for_device = [r["name"] for r in doc["mutants"] if r["status"] == "not judged here"]
    if torch.cuda.is_available():
        assert not skipped_for_device, skipped_for_device
    problems = [
        f"{r['name']}: {r['status']} - {r['reason']}"
        for r in doc["mutants"]
        if r["status"] not in ("killed", "not judged here")
    ]
    assert not problems, "\n".join(problems)
    assert targeted.gate_ok(doc)
    cov = targeted.coverage(doc)
    assert not cov["uncovered"], f"claims no mutant falsified: {cov['uncovered']}"
    s = doc["score"]
    assert s["partial"] >= 2 * s["total"] / 3
