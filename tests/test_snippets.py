"""Torch-only reproducers (a bug report in one paste) really reproduce.

Under a handful of mutants from different areas, every failing test's
snippet (:mod:`reports.snippet`) is run outside the checkout, in an
interpreter that imported only torch and NumPy (a fork of one, per
snippet): with the mutant installed it must fail with the test's assertion,
on real torch it must exit 0 - and it must not import this suite, pytest or
Hypothesis.
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
from conformance.mutants import ROOT, get, targeted
from reports.examples import _Draws
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


#: Runs many snippets cheaply: a server in the clean environment imports
#: only torch and NumPy, then forks one child per JSON job read from stdin
#: (``{"code": ..., "mutant": name or null}``); a child installs the mutant
#: as its sitecustomize would (importing the catalogue from the checkout
#: named by ``argv[1]``, then forgetting the suite's modules again, so that
#: the snippet finds none of them), runs the snippet in a fresh namespace as
#: ``__main__`` and exits as an interpreter would (``sys.exit`` status; 1
#: with the traceback on stderr for an exception). The
#: server replies one JSON line per job: ``{"returncode", "stderr"}``.
_SNIPPET_SERVER = r"""
import json, os, sys, tempfile, traceback
import numpy, torch
for line in sys.stdin:
    job = json.loads(line)
    err = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        os.dup2(err.fileno(), 2)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        rc = 0
        try:
            if job["mutant"]:
                sys.path.insert(0, sys.argv[1])
                from conformance.mutants import get
                get(job["mutant"]).patch()
                sys.path.remove(sys.argv[1])
                for name in [n for n in sys.modules if n.split(".")[0] == "conformance"]:
                    del sys.modules[name]
            exec(compile(job["code"], "<snippet>", "exec"), {"__name__": "__main__"})
        except SystemExit as e:  # sys.exit(): the status an interpreter would exit with
            if e.code is None or isinstance(e.code, int):
                rc = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                rc = 1
        except BaseException:
            traceback.print_exc()
            rc = 1
        sys.stderr.flush()
        os._exit(rc)
    _, status = os.waitpid(pid, 0)
    err.seek(0)
    print(json.dumps({"returncode": os.waitstatus_to_exitcode(status),
                      "stderr": err.read().decode(errors="replace")}), flush=True)
"""


def _run_many(jobs: list[tuple[str, str | None]]) -> list[subprocess.CompletedProcess]:
    """Run each ``(snippet, mutant name or None)`` in a fork of one
    interpreter started in :func:`_clean_env` (outside the checkout, no
    ``PYTHONPATH``) that imported only torch and NumPy: a snippet that needs
    anything of the suite fails as in a fresh interpreter, and the mutant is
    installed after ``import torch``, as its sitecustomize does."""
    lines = "".join(json.dumps({"code": c, "mutant": m}) + "\n" for c, m in jobs)
    proc = subprocess.run([sys.executable, "-c", _SNIPPET_SERVER, str(ROOT)], input=lines, env=_clean_env(),
                          capture_output=True, text=True, timeout=600, cwd="/")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert len(out) == len(jobs), proc.stdout[-2000:] + proc.stderr[-2000:]
    return [subprocess.CompletedProcess([], r["returncode"], "", r["stderr"]) for r in out]


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
    unavailable, cases = [], []
    for name in MUTANTS:
        results = json.loads((tmp_path / "mutants-work" / name / "results.json").read_text())
        for t in results["tests"]:
            if t["verdict"] not in ("regression", "unexpected-pass"):
                continue
            snippet = t["failure"].get("snippet")
            if not snippet:
                unavailable.append((t["nodeid"], t["failure"].get("snippet_unavailable")))
                continue
            assert not any(s in snippet for s in _SUITE_IMPORTS), t["nodeid"]
            cases.append((name, t["nodeid"], snippet))
    # each snippet under its mutant, then on real torch
    runs = _run_many([(c, n) for n, _, c in cases] + [(c, None) for _, _, c in cases])
    for (name, nodeid, _), bad, good in zip(
        cases, runs[: len(cases)], runs[len(cases) :], strict=True
    ):
        assert bad.returncode != 0, f"{nodeid}: the snippet passed under {name}"
        assert "Error" in bad.stderr, bad.stderr[-2000:]
        assert good.returncode == 0, f"{nodeid}: fails on real torch\n{good.stderr[-2000:]}"
    checked = len(cases)
    assert checked >= len(MUTANTS), (checked, unavailable)
    assert not unavailable, unavailable
