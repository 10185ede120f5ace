"""Every claim is falsifiable by its own tests: the targeted sweep.

Each mutant in ``conformance/mutants/`` declares the claims it breaks; the
sweep runs the tests of exactly those claims under it (``torch-conformance
mutate``). Every declared claim must turn FAILED: a claim that keeps its
verdict under a torch that breaks it has tests that would not notice - a
defect of the suite, which this test turns red.

The README test command judges a rotating third of the catalogue (the third
chosen by the commit, :func:`conformance.mutants.targeted.sweep_share`);
``TORCH_CONFORMANCE_SWEEP_SHARE=all`` (the nightly job) judges every mutant.
That every claim has a mutant at all is checked statically, on every run,
in ``tests/test_mutants_catalogue.py``.
"""

from __future__ import annotations

import json

import pytest
import torch

from conformance.mutants import CATALOGUE, targeted


@pytest.mark.slow
def test_no_declared_claim_survives_its_mutant(tmp_path):
    index, count, why = targeted.sweep_share()
    chosen = targeted.share(CATALOGUE, index, count)
    doc = targeted.sweep(chosen, tmp_path, workers=2, timeout=600)
    doc["share"] = {"index": index, "count": count, "why": why}
    (tmp_path / "mutants.json").write_text(json.dumps(doc))
    judged = f"share {index}/{count} ({why}): {len(chosen)} of {len(CATALOGUE)} mutants"
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
    assert not problems, judged + "\n" + "\n".join(problems)
    assert targeted.gate_ok(doc), judged
    # Every claim a mutant of this share declares was falsified by one of them.
    declared = {c for m in chosen for c in m.claims}
    proven = {c for c, v in doc["by_claim"].items() if v["falsified_by"] or v["not_judged"]}
    assert declared <= proven, f"{judged}: claims not falsified: {sorted(declared - proven)}"
    if count == 1:
        cov = targeted.coverage(doc)
        assert not cov["uncovered"], f"claims no mutant falsified: {cov['uncovered']}"


def test_the_shares_partition_the_catalogue_and_balance_its_cost():
    """Every mutant is in exactly one share; each share gets its part of the
    compile-tier and state-machine mutants (the slow ones)."""
    for count in (1, 2, 3):
        shares = [targeted.share(CATALOGUE, i, count) for i in range(1, count + 1)]
        names = [m.name for s in shares for m in s]
        assert sorted(names) == sorted(m.name for m in CATALOGUE)
        costs = [sum(targeted._expected_cost(m) for m in s) for s in shares]
        assert max(costs) - min(costs) <= 4, costs
        sizes = [len(s) for s in shares]
        assert max(sizes) - min(sizes) <= 1, sizes
    with pytest.raises(ValueError):
        targeted.share(CATALOGUE, 3, 2)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("all", (1, 1)), ("2/3", (2, 3)), ("1/1", (1, 1))],
)
def test_the_share_comes_from_the_environment(value, expected):
    i, n, why = targeted.sweep_share({targeted.SHARE_ENV: value})
    assert (i, n) == expected and targeted.SHARE_ENV in why


@pytest.mark.parametrize("value", ["0/2", "3/2", "x", "1/", "/2"])
def test_a_malformed_share_is_refused(value):
    with pytest.raises(ValueError, match="I/N"):
        targeted.sweep_share({targeted.SHARE_ENV: value})


def test_unset_the_share_rotates_with_the_commit():
    i, n, why = targeted.sweep_share({})
    assert n == targeted.ROTATION and 1 <= i <= n
    assert "rotating" in why
