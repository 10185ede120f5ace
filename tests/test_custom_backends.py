"""Self-tests: the compile tier run against backends this suite did not ship.

One ``torch-conformance run`` (module fixture ``toy_run``, from a user's
working directory holding ``mypkg/mod.py``) on five fixed-form compile tests
and these backends at once, each its own ``cpu/<backend>`` column:

- ``mypkg.mod:my_backend`` (defined in the user module, found on ``sys.path``
  through the working directory) and ``tests.toy_backends:ok``: correct
  backends (the FX graph as given); every selected claim must hold;
- the broken toy backends of :mod:`tests.toy_backends`: each must turn the
  claim it breaks FAILED (:data:`BROKEN`);
- ``tests.toy_backends:refuses``, which compiles nothing: each program is
  a failure of ``compile.errors-match-eager``, and the run goes on (exit 1);
- ``tests.toy_backends:outputs_detached_recorded``, broken like
  ``outputs_detached`` but with its deviation recorded in a user
  expectations file (``--expectations``): an expected deviation.

Plus the one-line errors of ``--backends`` names that are no backend, and
the loader's acceptance of any backend name in ``backends = [...]``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, no_shrinking, subprocess_env

TOY = "tests.toy_backends"

#: broken toy backend -> the claim it breaks (and that must turn FAILED)
BROKEN = {
    "outputs_cloned": "compile.output-identity-matches-eager",
    "mutations_dropped": "compile.input-mutations-match-eager",
    "outputs_detached": "compile.output-autograd-metadata-matches-eager",
    "versions_untouched": "compile.version-bumps-match-eager",
    "refuses": "compile.errors-match-eager",
}

#: The compile tests the run selects (small fixed forms: the run stays fast)
#: and the claims they check.
TESTS = (
    "test_output_identity_matches_eager",
    "test_zero_dim_float64_argument_mutation",
    "test_grad_write_into_detached_alias",
    "test_write_through_data",
    "test_copy_after_setitem_is_new_tensor",
)
CLAIMS = tuple(dict.fromkeys(BROKEN.values()))
#: A characterization pin (of aot_eager and inductor): skipped, with its
#: reason, on every backend outside the default three.
PIN_TEST, PIN_CLAIM = "test_data_write_bumps_version_pinned", "compile.data-write-bumps-version"

#: The correct backends: the user module's and the toy one.
CORRECT = ("mypkg.mod:my_backend", f"{TOY}:ok")
RECORDED = f"{TOY}:outputs_detached_recorded"
BACKENDS = (*CORRECT, *(f"{TOY}:{b}" for b in BROKEN), RECORDED)

USER_MODULE = '''
def my_backend(gm, example_inputs):
    """A user's compiler: runs the FX graph module Dynamo captured."""
    return gm
'''


def _user_expectations(dest: Path) -> Path:
    """A copy of the shipped expectations plus ``user.toml``, recording the
    metadata deviation of :data:`RECORDED` on the installed release."""
    import torch
    from packaging.version import Version

    shutil.copytree(
        ROOT / "conformance" / "expectations",
        dest,
        ignore=shutil.ignore_patterns("*.py", "__pycache__"),
    )
    v = Version(torch.__version__)
    (dest / "user.toml").write_text(
        "[[deviation]]\n"
        'claim = "compile.output-autograd-metadata-matches-eager"\n'
        'test = "test_grad_write_into_detached_alias"\n'
        f'backends = ["{RECORDED}"]\n'
        "region = { everywhere = true }\n"
        'exception = "AssertionError"\n'
        'match = "out0.requires_grad = False, eager True"\n'
        f'torch = ">={v.major}.{v.minor},<{v.major}.{v.minor + 1}"\n'
        f'measured = ["{v.public}"]\n'
        'upstream = "none found"\n'
        'reason = "The toy backend detaches every output (a self-test of user expectations)."\n'
    )
    return dest


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    """``(completed process, results.json as a dict, output dir)`` of the run."""
    work = tmp_path_factory.mktemp("user")
    (work / "mypkg").mkdir()
    (work / "mypkg" / "__init__.py").write_text("")
    (work / "mypkg" / "mod.py").write_text(USER_MODULE)
    exp = _user_expectations(work / "expectations")
    out = work / "out"
    cmd = [
        sys.executable, "-m", "reports.cli", "run", "--no-measure", "-n", "0",
        "--devices", "cpu", "--profile", "ci", "--out", str(out),
        "--backends", ",".join(BACKENDS), "--claims", ",".join((*CLAIMS, PIN_CLAIM)),
        "--expectations", str(exp), "--junitxml", str(out / "junit.xml"),
        "--", "-k", " or ".join((*TESTS, PIN_TEST)),
    ]  # fmt: skip
    env = no_shrinking(subprocess_env())
    env["PYTHONPATH"] = str(ROOT)  # the suite and tests.toy_backends; mypkg comes from the cwd
    proc = subprocess.run(cmd, cwd=str(work), env=env, capture_output=True, text=True, timeout=900)
    results = out / "results.json"
    assert results.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc, json.loads(results.read_text()), out


def _cells(doc: dict) -> dict:
    from reports.results import claim_verdicts

    return claim_verdicts(doc)


def test_run_gates_on_the_broken_backends_and_finishes(toy_run):
    """The broken backends fail the gate (exit 1, not a crash: exit 2 or a
    traceback), and every backend ran every selected test."""
    proc, doc, _ = toy_run
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert doc["environment"]["backends"] == list(BACKENDS)
    ran = {(t["name"], t["backend"]) for t in doc["tests"]}
    missing = [(n, b) for n in TESTS for b in BACKENDS if (n, b) not in ran]
    assert not missing, missing


@pytest.mark.parametrize("backend", CORRECT)
def test_correct_custom_backend_passes(toy_run, backend):
    """A backend that runs the graph it is given keeps every claim: each of
    its tests held. (The claims' declared domains - argument layouts x
    output kinds - are drawn by the generated programs, which this run does
    not select: so its cells read ERROR for the domain values never drawn,
    and for nothing else.)"""
    _, doc, _ = toy_run
    tests = [t for t in doc["tests"] if t["backend"] == backend and t["name"] != PIN_TEST]
    assert {t["name"] for t in tests} == set(TESTS)
    assert all(t["verdict"] == "held" for t in tests), [
        (t["name"], t["verdict"], (t.get("failure") or {}).get("signature")) for t in tests
    ]
    cells = _cells(doc)
    for cid in CLAIMS:
        cell = cells[cid][f"cpu/{backend}"]
        if cell["verdict"] != "held":
            assert cell["verdict"] == "ERROR", (cid, cell["verdict"])
            assert all("never checked" in r for r in cell["reasons"]), cell["reasons"]


@pytest.mark.parametrize("backend", sorted(BROKEN))
def test_broken_backend_turns_its_claim_red(toy_run, backend):
    """Each broken backend is caught by the claim it breaks (FAILED: a
    regression, with its falsifying example)."""
    _, doc, _ = toy_run
    claim = BROKEN[backend]
    cell = _cells(doc)[claim][f"cpu/{TOY}:{backend}"]
    assert cell["verdict"] == "FAILED", (claim, cell["verdict"])
    failing = [t for t in cell["tests"] if t["verdict"] == "regression"]
    assert failing and all((t.get("failure") or {}).get("signature") for t in failing)


def test_backend_that_compiles_nothing_is_reported_per_program(toy_run):
    """``refuses`` raises in its compiler: a program eager runs is a failure
    of compile.errors-match-eager naming the compiled call's error (the
    program's form is the falsifying example)."""
    _, doc, _ = toy_run
    tests = [
        t
        for t in doc["tests"]
        if t["backend"] == f"{TOY}:refuses" and t["name"] == "test_copy_after_setitem_is_new_tensor"
    ]
    assert [t["verdict"] for t in tests] == ["regression"]
    assert "compile.errors-match-eager" in tests[0]["failed_claims"]
    failure = tests[0]["failure"]
    assert "compiled raised BackendCompilerFailed" in failure["message"], failure["message"]
    assert "form=" in failure["falsifying_example"], failure["falsifying_example"]


def test_user_expectations_record_a_backends_deviation(toy_run):
    """An entry with ``backends = ["module:callable"]`` in a user expectations
    file explains that backend's failure (and only that backend's)."""
    _, doc, _ = toy_run
    cells = _cells(doc)["compile.output-autograd-metadata-matches-eager"]
    assert cells[f"cpu/{RECORDED}"]["verdict"] == "expected deviation", cells[f"cpu/{RECORDED}"]
    assert cells[f"cpu/{TOY}:outputs_detached"]["verdict"] == "FAILED"


def test_module_backend_ids_are_safe_and_results_carry_the_name(toy_run):
    """Test ids write ``module:callable`` as ``module.callable`` (safe for
    pytest ids, JUnit and file names); results, JUnit and snippets carry
    the name."""
    _, doc, out = toy_run
    by_backend = {t["backend"]: t["nodeid"] for t in doc["tests"]}
    assert by_backend["mypkg.mod:my_backend"].endswith("[mypkg.mod.my_backend-cpu]")
    assert all(":" not in t["nodeid"].split("::")[-1] for t in doc["tests"])
    assert "cpu/mypkg.mod:my_backend" in (out / "junit.xml").read_text()
    from reports.html import snippet_name

    failing = next(t for t in doc["tests"] if t["verdict"] == "regression")
    assert ":" not in snippet_name(failing), snippet_name(failing)


@pytest.mark.parametrize(
    "name, says",
    [
        ("nosuch", "'nosuch' is not a registered torch.compile backend"),
        ("nosuchmod:fn", "cannot import nosuchmod: ModuleNotFoundError"),
    ],
)
def test_unknown_backend_is_one_error_line(cli, tmp_path, name, says):
    """A name that is no backend: exit 2, one ``error:`` line, nothing written."""
    proc = cli("run", "--backends", name, "--out", str(tmp_path / "o"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"torch-conformance: error: --backends {name}: "), lines
    assert says in lines[0], lines[0]
    assert not (tmp_path / "o").exists()


def test_expectations_take_any_backend_name():
    """``backends`` in an entry takes registered names and ``module:callable``,
    and the entry applies to exactly those backends."""
    from conformance.expectations import ExpectationsError, load_expectations

    def entry(backends: str) -> str:
        return (
            "[[deviation]]\n"
            'claim = "compile.outputs-match-eager"\n'
            f"backends = {backends}\n"
            "region = { everywhere = true }\n"
            'exception = "AssertionError"\n'
            'match = "out0 values differ bit for bit"\n'
            'torch = ">=2.13,<2.14"\n'
            'upstream = "none found"\n'
            'reason = "A test entry."\n'
        )

    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "x.toml"
        f.write_text(entry('["aot_eager_decomp_partition", "mypkg.mod:my_backend"]'))
        (e,) = load_expectations(f)
        for b in ("aot_eager_decomp_partition", "mypkg.mod:my_backend"):
            assert e.applies(torch_version="2.13.0", device="cpu", backend=b)
        assert not e.applies(torch_version="2.13.0", device="cpu", backend="aot_eager")
        f.write_text(entry('["no such backend"]'))
        with pytest.raises(ExpectationsError, match="backends must be a list"):
            load_expectations(f)


def test_characterization_pins_are_skipped_with_their_reason(toy_run):
    """A pin states what torch does on eager/aot_eager/inductor: on any other
    backend its test is skipped, saying so (never a silent gap)."""
    _, doc, _ = toy_run
    pins = {t["backend"]: t for t in doc["tests"] if t["name"] == PIN_TEST}
    assert set(pins) == set(BACKENDS)
    for backend, t in pins.items():
        assert t["verdict"] == "skipped", (backend, t["verdict"])
        assert t["skip_reason"] == (
            "characterization claim: pins what torch does on eager, aot_eager, inductor; "
            f"it says nothing of backend {backend}"
        )


def test_parse_backends_rules():
    """``--backends`` parsing: default three, order kept, repeats dropped,
    registered names accepted, names that would share a test id refused."""
    from reports.backends import BACKENDS, parse_backends

    assert parse_backends(None) == list(BACKENDS)
    assert parse_backends("aot_eager_decomp_partition, eager,eager") == [
        "aot_eager_decomp_partition",
        "eager",
    ]
    with pytest.raises(ValueError, match="no backend named"):
        parse_backends(" , ")
    with pytest.raises(ValueError, match="would share the test id tests.toy_backends.ok"):
        parse_backends(f"{TOY}:ok,tests:toy_backends.ok")
