"""Autograd mutants are caught by the generated-graph properties, and the
results name exactly the claims each breaks (like test_gate's mutant test).

Each case runs ``torch-conformance run`` in a subprocess whose torch is
patched at start-up (see :mod:`conformance.mutants.graphs`).
"""

from __future__ import annotations

import pytest

from tests.conftest import cpu_verdicts, no_shrinking, run_gate
from tests.mutants import MUTANTS, mutant_env

#: A claim no mutant here touches: it must keep holding (the gate names
#: exactly the broken claims, not everything it ran).
CONTROL = "graphs.requires-grad-propagation"


@pytest.mark.parametrize(
    ("mutant", "claims", "broken"),
    [
        (
            "data-shares-version-counter",
            "graphs.data-mutation-untracked,graphs.data-silent-wrong-gradient",
            {"graphs.data-mutation-untracked", "graphs.data-silent-wrong-gradient"},
        ),
        (
            "detach-own-version-counter",
            "graphs.version-error-predicted",
            {"graphs.version-error-predicted"},
        ),
        (
            "backward-overwrites-grad",
            "graphs.retain-graph-accumulates,graphs.second-backward-raises-iff-saved",
            {"graphs.retain-graph-accumulates"},
        ),
        (
            "sigmoid-backward-reads-input",
            "graphs.data-silent-wrong-gradient",
            {"graphs.data-silent-wrong-gradient"},
        ),
        (
            "view-grad-fn-eager",
            "graphs.lazy-view-grad-fn",
            {"graphs.lazy-view-grad-fn"},
        ),
    ],
)
def test_graph_mutant_is_caught_and_named(cli, tmp_path, read_results, mutant, claims, broken):
    """A broken autograd (installed via sitecustomize) fails the gate and the
    results name exactly the claims it breaks among those run; the falsifying
    example is a graph."""
    assert mutant in MUTANTS
    env = no_shrinking(mutant_env(mutant, tmp_path / "mutant"))
    proc, out = run_gate(cli, tmp_path, "--claims", f"{claims},{CONTROL}", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = read_results(out)
    verdicts = cpu_verdicts(doc)
    failed = {c for c, vs in verdicts.items() if "regression" in vs}
    assert failed == broken
    assert verdicts[CONTROL] == {"held"}
    for t in doc["tests"]:
        if t["verdict"] == "regression":
            assert "Graph(" in t["failure"]["falsifying_example"]
