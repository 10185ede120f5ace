"""The mutant catalogue is sound: every mutant changes observable behaviour
(its witness), real torch passes every witness (no false kills), and the
runner's bookkeeping (ordering, kill attribution, report) is right."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys

import pytest

from conformance.mutants import (
    CATALOGUE,
    CONTROL,
    FAMILIES,
    MUTANTS,
    Mutant,
    all_mutants,
    get,
    mutant_env,
    runner,
    write_sitecustomize,
)
from tests.conftest import ROOT

NAME = re.compile(r"^[a-z0-9_]+(-[a-z0-9_]+)*$")


def test_catalogue_has_both_kinds_and_every_family():
    assert len(CATALOGUE) >= 40
    names = [m.name for m in CATALOGUE]
    assert len(set(names)) == len(names), "duplicate mutant names"
    assert all(NAME.match(n) for n in names), [n for n in names if not NAME.match(n)]
    kinds = {k: [m for m in CATALOGUE if m.kind == k] for k in ("always", "partial")}
    assert len(kinds["always"]) >= 10 and len(kinds["partial"]) >= 20
    # Real regressions rarely break every input: most mutants are input-dependent.
    assert len(kinds["partial"]) >= 2 * len(CATALOGUE) / 3, (
        f"only {len(kinds['partial'])}/{len(CATALOGUE)} mutants are input-dependent"
    )
    assert all(m.region for m in kinds["partial"])
    families = {m.family for m in kinds["partial"]}
    # A partial mutant is wrong for one layout, dtype family, autograd state,
    # calling convention, argument relation or tensor subclass.
    for family in ("layout", "dtype", "autograd", "convention", "relation", "subclass"):
        assert family in families, f"no partial mutant for the {family} family"
    assert families <= set(FAMILIES)


@pytest.mark.parametrize("mutant", CATALOGUE, ids=lambda m: m.name)
def test_mutant_is_documented_and_compiles(mutant: Mutant):
    from conformance.registry import default_registry

    assert mutant.description and mutant.claims
    registry = default_registry()
    unknown = [c for c in mutant.claims if c not in registry]
    assert not unknown, f"{mutant.name}: declares unregistered claims {unknown}"
    assert len(set(mutant.claims)) == len(mutant.claims), f"{mutant.name}: a claim declared twice"
    measured = [c for c in mutant.claims if registry[c].check == "measurement"]
    assert not measured, f"{mutant.name}: declares measured (ungated) claims {measured}"
    from conformance.mutants.targeted import claim_modules

    for c in mutant.claims:
        assert claim_modules([c]), f"{mutant.name}: no conformance module tests {c}"
    for fn in (mutant.patch, mutant.witness):
        assert callable(fn), f"{mutant.name}: patch and witness are functions"
        required = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        assert not required, f"{mutant.name}: {fn} needs arguments {required}"
    assert mutant.source.strip(), f"{mutant.name}: no readable patch source"


def _run_python(code: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_importing_the_catalogue_imports_no_torch_and_patches_nothing():
    """A mutant names functions; building the records resolves no target."""
    proc = _run_python(
        "import sys\n"
        "import conformance.mutants as m\n"
        "assert len(m.CATALOGUE) > 900\n"
        "heavy = sorted(n for n in sys.modules if n.split('.')[0] in ('torch', 'numpy'))\n"
        "assert not heavy, heavy\n"
    )
    assert proc.returncode == 0, proc.stderr


def test_the_catalogue_gives_hypothesis_no_constants():
    """After :func:`conformance.mutants.install`, Hypothesis' pool of local
    constants holds none of the numbers only the catalogue's modules spell
    (a patch's thresholds must not steer the suite's draws)."""
    proc = _run_python(
        "import sys\n"
        "from hypothesis.internal.conjecture import providers\n"
        "from hypothesis.internal.constants_ast import constants_from_module, is_local_module_file\n"
        "import conformance.mutants as m\n"
        "m.install('control')\n"
        "hidden = [sys.modules[n] for n in m.AREA_MODULES.values()]\n"
        "hidden += [sys.modules['conformance.mutants.patching'], sys.modules['conformance.mutants._tensor_domain']]\n"
        "ids = {id(x) for x in hidden}\n"
        "mine = set().union(*(set(constants_from_module(x, limit=False).integers)\n"
        "                   | set(constants_from_module(x, limit=False).floats) for x in hidden))\n"
        "others = set()\n"
        "for x in list(sys.modules.values()):\n"
        "    f = getattr(x, '__file__', None)\n"
        "    if f and id(x) not in ids and is_local_module_file(f):\n"
        "        c = constants_from_module(x)\n"
        "        others |= set(c.integers) | set(c.floats)\n"
        "assert mine - others, 'the catalogue spells no number of its own: nothing to check'\n"
        "pool = providers._get_local_constants()\n"
        "leaked = (set(pool.integers) | set(pool.floats)) & (mine - others)\n"
        "assert not leaked, sorted(leaked)\n"
    )
    assert proc.returncode == 0, proc.stderr


#: Child program of the calling-form check: imports torch and the catalogue
#: once, then per mutant forks a child that applies the patch and reports
#: which attributes of ``torch.Tensor`` and of ``torch`` it rebound.
_PATCHED_NAMES_SERVER = r"""
import json, os, sys
import torch
from conformance.mutants import get

def patched(name):
    tensor, module = dict(vars(torch.Tensor)), dict(vars(torch))
    get(name).patch()
    changed = lambda new, old: sorted(k for k, v in new.items() if old.get(k, object()) is not v)
    return {"tensor": changed(vars(torch.Tensor), tensor),
            "torch": changed(vars(torch), module),
            "callable": sorted(k for k, v in module.items() if callable(v))}

out = {}
for name in json.load(sys.stdin):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = patched(name)
        except BaseException as e:
            res = {"error": repr(e)}
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 1 << 16)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    os.waitpid(pid, 0)
    out[name] = json.loads(b"".join(chunks) or b'{"error": "child died"}')
print("PATCHED " + json.dumps(out))
"""


#: Function forms torch has without documenting them (no docstring; the
#: suite never calls them): the in-place ops a mutant wraps in a loop over
#: ``Tensor`` methods (``zero_``, ``fill_``) need not patch them.
_UNDOCUMENTED_FUNCTION_FORMS = {"zero_", "fill_"}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks one child per mutant")
def test_method_and_function_forms_are_patched_together():
    """A mutant of ``Tensor.X`` also patches ``torch.X`` where torch has one,
    unless it is deliberately wrong for one calling convention only. Read
    from what each patch really rebinds (applied in a fork), not from its text."""
    names = [m.name for m in CATALOGUE if m.family != "convention"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.run([sys.executable, "-c", _PATCHED_NAMES_SERVER], input=json.dumps(names),
                          cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("PATCHED ")), None)
    assert line is not None, proc.stderr[-2000:]
    results = json.loads(line.removeprefix("PATCHED "))
    errors = {n: r["error"] for n, r in results.items() if "error" in r}
    assert not errors, f"patches that failed to apply: {errors}"
    missing = [
        f"{n} patches Tensor.{x} but not torch.{x}"
        for n, r in results.items()
        for x in r["tensor"]
        if not x.startswith("__")
        and x in r["callable"]
        and x not in r["torch"]
        and x not in _UNDOCUMENTED_FUNCTION_FORMS
    ]
    assert not missing, missing


def test_every_witness_holds_on_real_torch_and_fails_under_its_mutant():
    """The self-check of the catalogue: each witness passes on real torch (no
    false kill) and fails with an AssertionError under its mutant (the
    mutant changes observable behaviour), and no mutant breaks the
    strategies the suite builds its inputs with."""
    import torch

    # A mutant of a device-only path (CUDA) can only be witnessed on that device.
    judged = [m for m in CATALOGUE if "cuda" not in m.devices or torch.cuda.is_available()]
    results = runner.check_witnesses(judged)
    assert set(results) == {m.name for m in judged}
    real_fail = {n: r["real"] for n, r in results.items() if r["real"]["status"] != "pass"}
    assert not real_fail, f"witnesses failing on real torch: {real_fail}"
    unseen = {n: r["mutated"] for n, r in results.items() if r["mutated"]["status"] != "assertion"}
    assert not unseen, f"mutants whose witness did not catch them: {unseen}"


@pytest.mark.parametrize("name", ["detach-copies-noncontig-f64", "numpy-no-grad-refuses"])
def test_witness_through_sitecustomize(name):
    """The real installation path (a sitecustomize on PYTHONPATH, fresh
    interpreter) agrees with the witness check: control passes, mutant fails."""
    m = get(name)
    real = runner.run_witness(m, mutated=False)
    assert real.returncode == 0, real.stderr
    mutated = runner.run_witness(m, mutated=True)
    assert mutated.returncode != 0 and "AssertionError" in mutated.stderr, mutated.stderr


def test_control_mutant_leaves_torch_alone(tmp_path):
    env = runner.mutated_env(CONTROL, tmp_path / "site")
    code = (
        "import sitecustomize, torch\n"
        "assert \"install('control')\" in open(sitecustomize.__file__).read()\n"
        "assert torch.Tensor.clone is torch._C.TensorBase.clone\n"
        "assert torch.Tensor.data is torch._C.TensorBase.data\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_legacy_interface(tmp_path):
    """``tests.mutants`` keeps MUTANTS / write_sitecustomize / mutant_env."""
    import tests.mutants as legacy

    assert {m.name for m in CATALOGUE} <= set(legacy.MUTANTS)
    assert set(MUTANTS) == {m.name for m in CATALOGUE}
    description, source = legacy.MUTANTS["clone-shares-storage"]
    assert "alias" in description and "torch.clone" in source
    path = legacy.write_sitecustomize("clone-shares-storage", tmp_path / "a")
    assert path.name == "sitecustomize.py" and "install('clone-shares-storage')" in path.read_text()
    env = legacy.mutant_env("detach-copies", tmp_path / "b")
    assert env["PYTHONPATH"].split(":")[0] == str(tmp_path / "b")
    env2 = mutant_env("detach-copies", tmp_path / "c")
    assert (tmp_path / "c" / "sitecustomize.py").exists() and env2["PYTHONPATH"]
    assert write_sitecustomize(get("detach-copies"), tmp_path / "d").exists()
    with pytest.raises(KeyError):
        legacy.write_sitecustomize("no-such-mutant", tmp_path / "e")
    adhoc = Mutant("x", "d", ("clone.new-storage",), lambda: None, lambda: None)
    with pytest.raises(ValueError, match="module-level function"):
        write_sitecustomize(adhoc, tmp_path / "f")  # a lambda cannot be imported by name
    with pytest.raises(KeyError):
        get("no-such-mutant")
    assert {m.name for m in all_mutants()} == {m.name for m in CATALOGUE}


def test_cli_lists_the_catalogue_and_rejects_unknown_names(cli):
    proc = cli("mutate", "--list")
    assert proc.returncode == 0, proc.stderr
    listed = proc.stdout.split()
    assert listed == [m.name for m in all_mutants()]
    proc = cli("mutate", "--mutants", "detach-copies,no-such-mutant")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no-such-mutant" in lines[0]


def test_target_modules_run_first_and_every_module_runs():
    mods = runner.module_areas()
    m = Mutant("x", "d", ("clone.new-storage", "detach.is-leaf"), lambda: None, lambda: None)
    order = runner.ordered_modules(m)
    assert sorted(order) == sorted(mods), "every conformance module runs exactly once"
    assert "clone" in mods[order[0]]
    cmd = runner.pytest_command(m, ROOT / "r.json")
    assert "-x" in cmd and cmd[cmd.index("--hypothesis-profile") + 1] == "ci"
    listed = [a for a in cmd if a.startswith("conformance/")]
    assert listed == [str(p.relative_to(ROOT)) for p in order]


def test_order_plugin_runs_target_claims_first(tmp_path):
    """Only the order changes: the target claim's test first, every test kept."""
    from conformance.mutants.order import ENV

    mods = ["conformance/test_clone.py", "conformance/test_detach.py"]
    base = [sys.executable, "-m", "pytest", *mods, "--collect-only", "-q", "-p", "no:cacheprovider",
            "--devices", "cpu", "-p", "conformance.mutants.order"]  # fmt: skip

    def collect(first: str) -> list[str]:
        env = runner.mutated_env(CONTROL, tmp_path / "site")
        env[ENV] = first
        out = subprocess.run(base, cwd=str(ROOT), env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        return [ln for ln in out.stdout.splitlines() if "::" in ln]

    plain = collect("")
    ordered = collect("detach.is-leaf,clone.own-version-counter")
    assert sorted(plain) == sorted(ordered) and plain[0].startswith("conformance/test_clone.py")
    assert "test_detach_never_requires_grad_and_is_leaf" in ordered[0]
    # then clone.own-version-counter's tests, the quickest first (the shipped
    # baseline's durations)
    import torch

    from reports.shards import recorded_durations

    durations = recorded_durations(torch.__version__)
    own = ["conformance/test_clone.py::test_clone_own_version_counter[cpu]",
           "conformance/test_clone.py::test_clone_inplace_leaves_input_version[cpu]"]  # fmt: skip
    assert ordered[1:3] == sorted(own, key=lambda n: durations.get(n, 0.0)), ordered[:3]


def _test(nodeid, claims, verdict):
    return {"nodeid": nodeid, "claims": claims, "verdict": verdict, "duration_s": 0.5}


def test_kill_attribution_and_score():
    areas = {"clone.new-storage": "clone", "detach.shares-storage": "detach"}
    doc = {
        "tests": [
            _test("conformance/test_detach.py::t[cpu]", ["detach.shares-storage"], "held"),
            _test("conformance/test_clone.py::t[cpu]", ["clone.new-storage"], "regression"),
        ]
    }
    facts = runner.analyse(doc, ["clone", "detach", "views"], areas)
    assert facts["claims"] == ["clone.new-storage"]
    assert facts["areas"] == {"clone": "killed", "detach": "held", "views": "not run"}
    assert facts["tests_run"] == 2
    machine = {"tests": [{**_test("conformance/test_s.py::m[cpu]", ["s.a", "s.b"], "regression"),
                          "failure": {"signature": "AssertionError: [s.b] t1 is not t0"}}]}  # fmt: skip
    assert runner.analyse(machine, ["s"], {})["claims"] == ["s.b"], "the cited claim caught it"
    survived = runner.analyse({"tests": [doc["tests"][0]]}, ["detach"], areas)
    assert survived["killed_by"] == [] and survived["areas"] == {"detach": "held"}

    def rec(name, kind, status, t):
        return {"name": name, "kind": kind, "status": status, "time_s": t}

    s = runner.score(
        [rec("a", "always", "killed", 4.0), rec("b", "partial", "killed", 8.0),
         rec("c", "partial", "survived", 100.0)]
    )  # fmt: skip
    assert (s["killed"], s["survived"], s["total"]) == (2, 1, 3)
    assert s["median_time_to_kill_s"] == 6.0 and s["percent"] == 66.7
    assert s["by_kind"]["partial"] == {"total": 2, "killed": 1}


def test_kill_by_a_test_failing_without_mutant_is_not_a_kill():
    control = {"killed_by": [{"nodeid": "conformance/test_x.py::broken[cpu]"}]}
    recs = [
        {"status": "killed", "reason": "", "killed_by": [{"nodeid": "conformance/test_x.py::broken[cpu]"}]},
        {"status": "killed", "reason": "", "killed_by": [{"nodeid": "conformance/test_y.py::ok[cpu]"}]},
    ]  # fmt: skip
    runner.discount_false_kills(recs, control)
    assert recs[0]["status"] == "error" and "without a mutant" in recs[0]["reason"]
    assert recs[1]["status"] == "killed"


def _results_doc() -> dict:
    return {
        "schema_version": 1,
        "suite": {"name": "s", "version": "0", "commit": "c", "dirty": False},
        "environment": {
            "torch": "2.13.0",
            "torch_cuda": None,
            "python": "3.11",
            "hypothesis": "h",
            "numpy": "n",
            "profile": "ci",
            "devices": ["cpu"],
            "started": "s",
            "finished": "f",
            "wall_s": 1.0,
            "cuda_device": None,
        },  # fmt: skip
        "areas": {"clone": "Clone"},
        "claims": {
            "clone.new-storage": {
                "id": "clone.new-storage",
                "area": "clone",
                "statement": "s",
                "kind": "characterization",
                "note": "n",
                "sources": [],
            },  # fmt: skip
        },
        "tests": [_test("conformance/test_clone.py::t[cpu]", ["clone.new-storage"], "held")],
        "expectations": {"stale": [], "all": []},
        "measurements": [],
        "doc_drift": [],
    }


def _mutation_doc() -> dict:
    """A targeted-sweep document: one mutant killed, one with a surviving claim."""
    from conformance.mutants import targeted

    def rec(name, state, verdict):
        return {**get(name).to_dict(), "status": "killed" if state == "falsified" else state,
                "time_s": 1.5, "rc": 1, "reason": "" if state == "falsified" else "claims survived",
                "claims": {"clone.new-storage": {"verdict": verdict, "state": state,
                                                 "examples": 3, "signature": None}}}  # fmt: skip

    doc = {
        "schema": 2, "mode": "targeted", "torch": "2.13.0", "profile": "ci", "devices": "cpu",
        "workers": 2, "started": "s", "wall_s": 6.0,
        "mutants": [rec("clone-shares-storage", "falsified", "FAILED"),
                    rec("clone-shares-0d", "survived", "held")],
    }  # fmt: skip
    doc["by_claim"] = targeted.by_claim(doc)
    doc["score"] = targeted.score(doc)
    return doc


def test_report_has_detection_power_section_only_with_mutation(tmp_path):
    import json

    from conformance.mutants import targeted
    from reports.html import render_report
    from reports.mutation import embed_mutation

    plain = render_report(_results_doc())
    assert "Detection power" not in plain
    mutation = _mutation_doc()
    assert targeted.gate_ok(mutation) is False
    assert any("SURVIVED" in ln and "clone.new-storage" in ln
               for ln in targeted.summary_lines(mutation))  # fmt: skip
    assert mutation["by_claim"]["clone.new-storage"]["survived"][0]["mutant"] == "clone-shares-0d"
    assert embed_mutation(tmp_path, mutation) is None  # no results.json there
    (tmp_path / "results.json").write_text(json.dumps(_results_doc()))
    report = embed_mutation(tmp_path, mutation)
    html = report.read_text()
    assert "Detection power" in html and "clone-shares-0d" in html and "survived" in html
    assert "1 with a surviving claim" in html and "escaped" not in html
    assert "1/2 mutants had every declared claim falsified" in html
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["mutation"]["score"]["killed"] == 1


def _renamed_back(doc: dict) -> dict:
    """``doc`` as a sweep written before the rename stored it: ``escaped``
    for ``survived`` (status, claim state, by-claim cells, score)."""
    import json

    text = json.dumps(doc).replace('"survived"', '"escaped"')
    return json.loads(text.replace('"claims_survived"', '"claims_escaped"'))


def test_a_sweep_written_before_the_rename_reads_as_survived():
    from conformance.mutants import targeted
    from reports.html import render_report

    new = _mutation_doc()
    old = _renamed_back(new)
    assert old["mutants"][1]["status"] == "escaped" and "escaped" in old["score"]
    assert targeted.upgrade(old) == new
    assert targeted.upgrade(new) == new
    assert targeted.by_claim(old) == new["by_claim"]
    assert targeted.score(old) == new["score"]
    assert targeted.gate_ok(old) is False
    assert targeted.summary_lines(old) == targeted.summary_lines(new)
    html = render_report({**_results_doc(), "mutation": targeted.for_report(old)})
    assert "1 with a surviving claim" in html and "escaped" not in html


def test_sweep_tables_render():
    from rich.console import Console

    from conformance.mutants import targeted

    console = Console(width=200, record=True)
    console.print(targeted.sweep_table(_mutation_doc()))
    console.print(targeted.by_claim_table(_mutation_doc()))
    text = console.export_text()
    assert "clone-shares-storage" in text and "killed" in text and "SURVIVED" in text


def test_a_mutant_run_stops_only_on_claims_it_falsified():
    """The sweep's early stop (``TORCH_CONFORMANCE_STOP_WHEN_FALSIFIED``)
    counts a claim as falsified exactly as ``claim_verdicts`` reads a test
    record: a regression or unexpected pass names it (``failed_claims`` for
    a test of several claims), and no recorded deviation excuses it."""
    from conformance.mutants.order import falsified_claims

    assert falsified_claims({"verdict": "regression", "claims": ["a.x"]}) == {"a.x"}
    assert falsified_claims({"verdict": "unexpected-pass", "claims": ["a.x"]}) == {"a.x"}
    for verdict in ("held", "expected-deviation", "region-not-reached", "suite-error"):
        assert falsified_claims({"verdict": verdict, "claims": ["a.x"]}) == set()
    several = {"verdict": "regression", "claims": ["a.x", "a.y", "a.z"], "failed_claims": ["a.y"]}
    assert falsified_claims(several) == {"a.y"}
    excused = {**several, "failed_claims": ["a.x", "a.y"], "claim_expectations": {"a.x": {}}}
    assert falsified_claims(excused) == {"a.y"}


def test_every_falsifiable_claim_is_declared_by_a_mutant():
    """Static half of the targeted sweep's coverage, checked on every run
    (the README test command judges a rotating half of the mutants): every
    registered claim that is not a measurement or marked unfalsifiable is
    declared by at least one mutant of the catalogue."""
    from conformance.mutants import targeted

    cov = targeted.coverage()
    assert not cov["uncovered"], f"claims no mutant declares: {cov['uncovered']}"
    assert len(cov["falsifiable"]) >= 400
