"""Each claim's own tests would have failed had torch broken that claim.

Issue 11's demonstrations: under each of these mutants of
``conformance/mutants/`` the gate must turn the very claim the mutant breaks
red ("FAILED"), not just some other claim whose test happens to use the
broken operation as its oracle; and on unmutated torch the same claim holds.
"""

from __future__ import annotations

import pytest

from reports.results import claim_verdicts
from tests.conftest import no_shrinking, run_gate
from tests.mutants import MUTANTS, mutant_env

CASES = [
    # (mutant, the claim it breaks, the verdict of that claim on real torch 2.13)
    ("clone-flushes-negative-zero", "clone.same-values-dtype-shape-device", "held"),
    ("detach-returns-zeros", "detach.keeps-dtype-and-values", "held"),
    ("numpy-detaches-float-requires-grad", "numpy.numpy-refuses-grad-conj-dtype", "held"),
    ("to-dtype-change-ignores-memory-format", "to.memory-format-honoured", "expected deviation"),
]


def _verdict(doc: dict, claim: str) -> dict:
    return claim_verdicts(doc)[claim]["cpu"]


@pytest.mark.parametrize(("mutant", "claim", "clean"), CASES, ids=[c[0] for c in CASES])
def test_mutant_turns_its_own_claim_red(cli, tmp_path, read_results, mutant, claim, clean):
    assert mutant in MUTANTS
    env = no_shrinking(mutant_env(mutant, tmp_path / "env"))
    proc, out = run_gate(cli, tmp_path / "mutant", "--claims", claim, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    cell = _verdict(read_results(out), claim)
    assert cell["verdict"] == "FAILED", cell

    proc, out = run_gate(cli, tmp_path / "clean", "--claims", claim)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cell = _verdict(read_results(out), claim)
    assert cell["verdict"] == clean, cell
    assert cell["examples"] > 0
