"""CI's fast mutation subset: input-dependent mutants the suite must kill.

Each mutant below is wrong on part of the input space only (one dtype family,
one layout, one autograd state, one calling convention or one subclass), so
it survives a suite whose strategies do not reach that part. The whole
conformance suite runs under each (``ci`` profile, stopping at the first
failure, target areas first), exactly as ``torch-conformance mutate`` does;
the tests that killed them are then re-run on real torch, which must pass
(no false kills). The full catalogue is swept by ``torch-conformance mutate``.
"""

from __future__ import annotations

import pytest

from conformance.mutants import CONTROL, get, runner

#: (mutant, the claim expected among those that catch it)
SUBSET = (
    ("detach-copies-bool", "detach.shares-storage"),  # one dtype family
    ("clone-shares-expanded", "clone.new-storage"),  # one layout (stride 0)
    ("detach-keeps-grad-nonleaf", "detach.never-requires-grad"),  # one autograd state
    ("to-kwarg-dtype-copies", "to.same-dtype-device-returns-self"),  # one calling convention
    ("detach-copies-parameter", "detach.parameter-sees-optimizer-step"),  # one subclass
)


@pytest.mark.slow
def test_input_dependent_mutants_are_killed_and_control_passes(tmp_path):
    mutants = [get(name) for name, _ in SUBSET]
    assert all(m.kind == "partial" for m in mutants)
    assert len({m.family for m in mutants}) >= 4, "the subset spans several input families"
    doc = runner.sweep(mutants, tmp_path, workers=2, control=False, timeout=300)
    by_name = {r["name"]: r for r in doc["mutants"]}
    problems = []
    for name, claim in SUBSET:
        rec = by_name[name]
        if rec["status"] != "killed":
            problems.append(f"{name}: {rec['status']} {rec['reason']}".strip())
        elif claim not in rec["claims"]:
            problems.append(f"{name}: killed by {rec['claims']}, expected {claim}")
    assert not problems, "; ".join(problems)
    killers = sorted({k["nodeid"] for r in doc["mutants"] for k in r["killed_by"]})
    control = runner.run_mutant(CONTROL, tmp_path / "control", only=killers, stop_first=False)
    assert control["status"] == "survived", (
        f"tests that killed mutants fail on real torch: {control['claims']} {control['reason']}"
    )
    assert control["tests_run"] == len(killers)
