"""Torch-only reproducers (a bug report in one paste) really reproduce.

Under a handful of mutants from different areas, every failing test's
snippet (:mod:`reports.snippet`) is run in a fresh interpreter: with the
mutant installed it must fail with the test's assertion, on real torch it
must exit 0 - and it must not import this suite, pytest or Hypothesis.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.checks import assert_same_bits, shares_storage
from conformance.mutants import get, targeted, write_sitecustomize
from reports.plugin import _Draws
from reports.snippet import SnippetUnavailable, make_snippet
from strategies import TensorSpec, tensor_specs

MUTANTS = (
    "clone-flushes-negative-zero",  # value class
    "detach-copies-noncontig-f64",  # layout x dtype
    "to-kwarg-dtype-copies",  # calling form
    "numpy-detaches-float-requires-grad",  # autograd state x dtype
    "copy-refuses-broadcast",  # argument relation
    "data-copies-views",  # views
    "narrow-copies-integral",  # a view-op table, values drawn with st.data()
    "expand-untracked-alias",  # a table of lambdas
)
_SUITE_IMPORTS = ("import conformance", "from conformance", "import strategies",
                  "from strategies", "import pytest", "import hypothesis", "from hypothesis")  # fmt: skip


def _run(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, cwd="/")  # fmt: skip


def _clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _example_test(device, spec, k, data):
    """A test in the suite's style: a TensorSpec, a plain value and a draw."""
    x = spec.build(device)
    n = data.draw(st.integers(0, 3))
    d = x.detach()
    assert shares_storage(d, x), "detach() copied"
    assert_same_bits(d, spec.build(device), f"detach() changed the values ({k}, {n})")


def test_snippet_of_a_hand_made_example_runs_without_the_suite(tmp_path):
    spec = TensorSpec(dtype=torch.float32, base_shape=(2, 3), storage=(-0.0, 1.0, 2.0, 3.0, 4.0,
                      float("nan")), views=(("permute", (1, 0)),))  # fmt: skip
    code = make_snippet(
        _example_test, {"device": "cpu", "spec": spec, "k": 3, "data": _Draws(None, [])}, [2]
    )
    assert not any(s in code for s in _SUITE_IMPORTS), code
    proc = _run(code, _clean_env())
    assert proc.returncode == 0, proc.stderr


def test_values_without_a_torch_only_form_are_refused():
    with pytest.raises(SnippetUnavailable, match="no torch-only form"):
        make_snippet(
            _example_test, {"device": "cpu", "spec": object(), "k": 1, "data": _Draws(None, [])}, []
        )


@settings(max_examples=30, deadline=None, database=None)
@given(spec=tensor_specs(values="all"))
def test_snippet_inputs_rebuild_the_same_bits(spec):
    code = make_snippet(
        _example_test, {"device": "cpu", "spec": spec, "k": 0, "data": _Draws(None, [])}, [0]
    )
    ns: dict = {}
    exec(code.replace("_example_test(device=", "_unused = dict(device="), ns)  # build only
    built = ns["_Spec_spec"]().build("cpu")
    assert_same_bits(built, spec.build("cpu"), "the snippet's input differs from the spec's")
    assert built.stride() == spec.build("cpu").stride()


@pytest.mark.slow
def test_every_snippet_of_a_mutant_run_fails_there_and_passes_on_real_torch(tmp_path):
    doc = targeted.sweep([get(n) for n in MUTANTS], tmp_path, workers=2, timeout=600)
    assert all(r["status"] == "killed" for r in doc["mutants"]), doc["mutants"]
    checked, unavailable = 0, []
    for name in MUTANTS:
        results = json.loads((tmp_path / "mutants-work" / name / "results.json").read_text())
        site = tmp_path / "site" / name
        write_sitecustomize(name, site)
        mutated = {**_clean_env(), "PYTHONPATH": str(site)}
        for t in results["tests"]:
            if t["verdict"] not in ("regression", "unexpected-pass"):
                continue
            snippet = t["failure"].get("snippet")
            if not snippet:
                unavailable.append((t["nodeid"], t["failure"].get("snippet_unavailable")))
                continue
            assert not any(s in snippet for s in _SUITE_IMPORTS), t["nodeid"]
            bad = _run(snippet, mutated)
            assert bad.returncode != 0, f"{t['nodeid']}: the snippet passed under {name}"
            assert "Error" in bad.stderr, bad.stderr[-2000:]
            good = _run(snippet, _clean_env())
            assert good.returncode == 0, (
                f"{t['nodeid']}: fails on real torch\n{good.stderr[-2000:]}"
            )
            checked += 1
    assert checked >= len(MUTANTS), (checked, unavailable)
    assert not unavailable, unavailable
