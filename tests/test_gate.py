"""The gate trips when it should: verdict transitions, mutants, bad input.

Each case runs ``torch-conformance run`` in a subprocess on a few claims.
"""

from __future__ import annotations

import functools
import json
import os
import re
import textwrap

import pytest

from tests.conftest import cpu_verdicts, no_shrinking, run_gate
from tests.mutants import MUTANTS, mutant_env
from tests.mutants import gate as gate_patches

SHARES = "detach.shares-storage"
STALE = "detach.metadata-change-raises"  # a known deviation on torch >= 1.13


def _expectations(tmp_path, body: str):
    """Write the entries in ``body``, each measured on the installed torch
    where its range holds it (an unmeasured entry only explains failures)."""
    import torch
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    here = Version(torch.__version__).public
    blocks = textwrap.dedent(body).split("[[deviation]]")
    for i, b in enumerate(blocks[1:], 1):
        spec = next((ln.split("=", 1)[1].strip().strip('"') for ln in b.splitlines()
                     if ln.startswith("torch =")), None)  # fmt: skip
        if "measured =" not in b and spec and SpecifierSet(spec).contains(here):
            blocks[i] = b.rstrip("\n") + f'\nmeasured = ["{here}"]\n'
    path = tmp_path / "expectations.toml"
    path.write_text("[[deviation]]".join(blocks))
    return str(path)


def test_held_and_expected_deviation_pass_the_gate(cli, tmp_path, read_results):
    proc, out = run_gate(cli, tmp_path, "--claims", f"{SHARES},{STALE}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = cpu_verdicts(read_results(out))
    assert v[SHARES] == {"held"}
    assert v[STALE] == {"expected-deviation"}
    html = (out / "report.html").read_text()
    assert STALE in html and "expected deviation" in html
    assert "000_1e6242bf72cbab49.txt" in html


def test_new_failure_is_a_regression(cli, tmp_path, read_results):
    exp = _expectations(tmp_path, "# no known deviations\n")
    proc, out = run_gate(cli, tmp_path, "--claims", STALE, "--expectations", exp)
    assert proc.returncode == 1
    doc = read_results(out)
    assert cpu_verdicts(doc)[STALE] == {"regression"}
    failure = next(t["failure"] for t in doc["tests"] if t["verdict"] == "regression")
    assert failure["exception"] == "Failed" and "DID NOT RAISE" in failure["message"]
    # The claim's domain examples run first (issue 29), so the falsifying example
    # may be an explicit one, which needs no @reproduce_failure blob.
    assert re.search(r"Falsifying (explicit )?example", failure["falsifying_example"])
    if "explicit" not in failure["falsifying_example"]:
        assert "@reproduce_failure" in failure["reproduce"]
    assert "FAILED" in proc.stdout


def test_changed_failure_is_a_regression(cli, tmp_path, read_results):
    exp = _expectations(
        tmp_path,
        f"""
        [[deviation]]
        claim = "{STALE}"
        exception = "RuntimeError"
        match = "set_sizes_contiguous is not allowed"
        reason = "the old error"
        upstream = "https://github.com/pytorch/pytorch/pull/83590"
        torch = ">=1.0,<9"
        """,
    )
    proc, out = run_gate(cli, tmp_path, "--claims", STALE, "--expectations", exp)
    assert proc.returncode == 1
    doc = read_results(out)
    reg = [t for t in doc["tests"] if t["verdict"] == "regression"]
    assert reg and reg[0]["changed_failure"] is True


def test_unexpected_pass_fails_the_gate(cli, tmp_path, read_results):
    exp = _expectations(
        tmp_path,
        f"""
        [[deviation]]
        claim = "{SHARES}"
        exception = "AssertionError"
        match = "does not share storage"
        reason = "pretend detach copies"
        upstream = "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.detach.html"
        torch = ">=1.0,<9"
        """,
    )
    proc, out = run_gate(cli, tmp_path, "--claims", SHARES, "--expectations", exp)
    assert proc.returncode == 1
    assert cpu_verdicts(read_results(out))[SHARES] == {"unexpected-pass"}


def test_version_condition_limits_an_expectation(cli, tmp_path, read_results):
    """An entry for torch versions other than the installed one does not apply."""
    exp = _expectations(
        tmp_path,
        f"""
        [[deviation]]
        claim = "{STALE}"
        torch = "<1.13"
        exception = "Failed"
        match = "DID NOT RAISE"
        reason = "only for old torch"
        upstream = "https://github.com/pytorch/pytorch/pull/83590"
        """,
    )
    proc, out = run_gate(cli, tmp_path, "--claims", STALE, "--expectations", exp)
    assert proc.returncode == 1
    assert cpu_verdicts(read_results(out))[STALE] == {"regression"}


@pytest.mark.parametrize(
    ("mutant", "claims", "broken"),
    [
        (
            "detach-copies-noncontig-f64",
            "detach.shares-storage,detach.writes-visible-both-ways,detach.keeps-dtype-and-values",
            {"detach.shares-storage", "detach.writes-visible-both-ways"},
        ),
        ("clone-shares-storage", "clone.new-storage,detach.shares-storage", {"clone.new-storage"}),
    ],
)
def test_mutant_is_caught_and_named(cli, tmp_path, read_results, mutant, claims, broken):
    """A broken torch (installed via sitecustomize) fails the gate and the
    results name exactly the claims it breaks among those run."""
    assert mutant in MUTANTS
    env = no_shrinking(mutant_env(mutant, tmp_path / "mutant"))
    proc, out = run_gate(cli, tmp_path, "--claims", claims, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = read_results(out)
    failed = {c for c, vs in cpu_verdicts(doc).items() if "regression" in vs}
    assert failed == broken
    for t in doc["tests"]:
        if t["verdict"] == "regression":
            assert "TensorSpec(" in t["failure"]["falsifying_example"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("run", "--claims", "no.such-claim"), "unknown claim id"),
        (("run", "--devices", "tpu"), "unknown device"),
        (("report", "/nonexistent/results.json"), "no such result file"),
    ],
)
def test_bad_input_is_one_line_exit_2(cli, args, needle):
    proc = cli(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in proc.stderr


def test_cuda_requested_without_cuda_is_exit_2(cli):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    proc = cli("run", "--devices", "cuda")
    assert proc.returncode == 2
    assert "CUDA is not available" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_malformed_expectations_is_exit_2(cli, tmp_path):
    exp = _expectations(tmp_path, "[[deviation]\nclaim = 'x'\n")
    proc = cli("run", "--expectations", exp, "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "malformed TOML" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_expectation_with_unknown_claim_is_exit_2(cli, tmp_path):
    exp = _expectations(
        tmp_path,
        """
        [[deviation]]
        claim = "no.such-claim"
        exception = "Failed"
        match = "x"
        reason = "r"
        upstream = "https://example.invalid"
        torch = ">=1.0,<9"
        """,
    )
    proc = cli("run", "--expectations", exp)
    assert proc.returncode == 2 and "unknown claim id 'no.such-claim'" in proc.stderr


def test_malformed_claim_file_is_exit_2(cli, tmp_path):
    import os

    d = tmp_path / "claims"
    d.mkdir()
    (d / "bad.toml").write_text(
        'area = "x"\n[[claim]]\nid = "x.y"\nkind = "rumour"\nstatement = "s"\n'
    )
    env = dict(os.environ, TORCH_CONFORMANCE_CLAIMS_DIR=str(d))
    proc = cli("run", "--out", str(tmp_path / "o"), env=env)
    assert (
        proc.returncode == 2 and "bad.toml" in proc.stderr and "kind must be one of" in proc.stderr
    )
    assert not (tmp_path / "o").exists()


def test_corrupt_results_file_is_exit_2(cli, tmp_path):
    bad = tmp_path / "results.json"
    bad.write_text("{not json")
    proc = cli("report", str(bad), "-o", str(tmp_path / "r.html"))
    assert proc.returncode == 2 and "corrupt result file" in proc.stderr
    assert not (tmp_path / "r.html").exists()
    bad.write_text(json.dumps({"schema_version": 99}))
    proc = cli("report", str(bad))
    assert proc.returncode == 2 and "schema_version 99" in proc.stderr


# ---------------------------------------------------------------- regions


def _region_entry(claim: str, region: str, exception: str, match: str) -> str:
    return f"""
        [[deviation]]
        claim = "{claim}"
        exception = "{exception}"
        match = "{match}"
        region = {region}
        reason = "a test region"
        upstream = "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.detach.html"
        torch = ">=1.0,<9"
        """


def _only_test(doc: dict, claim: str) -> dict:
    (t,) = [t for t in doc["tests"] if claim in t["claims"] and t["device"] in ("cpu", "any")]
    return t


def test_region_deviation_runs_the_full_example_count(cli, tmp_path, read_results):
    """A deviation with a region does not stop at its first example: every
    example inside the region deviates as recorded, and the test runs the
    profile's full count (100 in ``ci``)."""
    exp = _expectations(
        tmp_path,
        _region_entry(
            STALE,
            '{ op = ["resize_", "resize_as_", "set_", "transpose_"] }',
            "Failed",
            "DID NOT RAISE",
        ),  # fmt: skip
    )
    proc, out = run_gate(cli, tmp_path, "--claims", STALE, "--expectations", exp)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t = _only_test(read_results(out), STALE)
    assert t["verdict"] == "expected-deviation"
    assert t["region"]["inside"] >= 100 and t["region"]["outside"] == 0
    assert "deviates as recorded" in (out / "report.html").read_text()


def test_region_not_reached_is_not_an_unexpected_pass(cli, tmp_path, read_results):
    """No example inside the region: the verdict says so and the gate passes."""
    exp = _expectations(
        tmp_path, _region_entry(SHARES, '{ dtype = "no-such-dtype" }', "AssertionError", "x")
    )
    proc, out = run_gate(cli, tmp_path, "--claims", SHARES, "--expectations", exp)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t = _only_test(read_results(out), SHARES)
    assert t["verdict"] == "region-not-reached"
    assert t["region"]["inside"] == 0 and t["region"]["outside"] > 0


def test_claim_holding_inside_its_region_is_an_unexpected_pass(cli, tmp_path, read_results):
    """An example inside the region that holds means torch changed there."""
    exp = _expectations(
        tmp_path,
        _region_entry(SHARES, '{ dtype = "float64" }', "AssertionError", "does not share"),
    )
    proc, out = run_gate(cli, tmp_path, "--claims", SHARES, "--expectations", exp)
    assert proc.returncode == 1
    t = _only_test(read_results(out), SHARES)
    assert t["verdict"] == "unexpected-pass"
    assert "DeviationRegionHeld" in t["failure"]["signature"]
    assert "dtype=torch.float64" in t["failure"]["falsifying_example"]


def test_region_reading_an_unreported_feature_is_a_suite_error(cli, tmp_path, read_results):
    exp = _expectations(
        tmp_path, _region_entry(SHARES, "{ no_such_feature = 1 }", "AssertionError", "x")
    )
    proc, out = run_gate(cli, tmp_path, "--claims", SHARES, "--expectations", exp)
    assert proc.returncode == 1
    assert _only_test(read_results(out), SHARES)["verdict"] == "suite-error"


def test_failure_outside_the_region_is_a_regression(cli, tmp_path, read_results):
    """Issue 11's demonstration: a torch whose ``to(dtype, memory_format=)``
    ignores the format whenever the dtype changes breaks
    ``to.memory-format-honoured`` outside its recorded region (no dtype
    change, returned self): the claim itself turns red, not just "expected
    deviation"."""
    claim = "to.memory-format-honoured"
    env = mutant_env("to-dtype-change-ignores-memory-format", tmp_path / "mutant")
    proc, out = run_gate(cli, tmp_path, "--claims", claim, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    t = _only_test(read_results(out), claim)
    assert t["verdict"] == "regression"
    assert "outside the recorded deviation region" in t["failure"]["message"] + (
        t["failure"]["notes"] or ""
    )
    clean, out2 = run_gate(cli, tmp_path / "clean", "--claims", claim)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    t = _only_test(read_results(out2), claim)
    assert t["verdict"] == "expected-deviation" and t["region"]["outside"] > 0


def test_an_unmeasured_entry_explains_only_its_exact_failure(cli, tmp_path, read_results):
    """An entry whose ``measured`` lacks the installed release explains a
    failure with exactly its signature as "expected deviation (not measured
    on this release)", listed for review, and the gate passes; it demands
    nothing, so a claim that holds under it is simply held."""
    exp = tmp_path / "unmeasured.toml"
    exp.write_text(
        "[[deviation]]\n"
        f'claim = "{STALE}"\nexception = "Failed"\nmatch = "DID NOT RAISE"\n'
        'torch = ">=1.0,<9"\nmeasured = []\nupstream = "not triaged"\nreason = "self-test"\n'
        "[[deviation]]\n"
        f'claim = "{SHARES}"\nexception = "AssertionError"\nmatch = "does not share storage"\n'
        'torch = ">=1.0,<9"\nmeasured = []\nupstream = "not triaged"\nreason = "self-test"\n'
    )
    proc, out = run_gate(cli, tmp_path, "--claims", f"{STALE},{SHARES}", "--expectations", str(exp))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = read_results(out)
    v = cpu_verdicts(doc)
    assert v[STALE] == {"expected-deviation"} and v[SHARES] == {"held"}
    (t,) = [t for t in doc["tests"] if t["verdict"] == "expected-deviation"]
    assert t["expectation"]["unmeasured"] is True
    assert "not measured on this release" in proc.stdout


def test_bad_shrink_budget_is_one_line_exit_2(cli, tmp_path):
    env = dict(os.environ, TORCH_CONFORMANCE_SHRINK_BUDGET="soon")
    proc = cli("run", "--claims", "detach.shares-storage", "--out", str(tmp_path / "o"), env=env)
    lines = proc.stderr.strip().splitlines()
    assert (
        proc.returncode == 2 and len(lines) == 1 and "TORCH_CONFORMANCE_SHRINK_BUDGET" in lines[0]
    )
    assert not (tmp_path / "o").exists()


def test_spent_shrink_budget_keeps_the_regression_and_says_so(cli, tmp_path, read_results):
    """Under a detach() that returns zeros and a budget of 0 s, shrinking
    stops at once: the claim still fails, with the example found and a note
    that it is not a minimal one."""
    env = mutant_env("detach-returns-zeros", tmp_path / "site")
    env["TORCH_CONFORMANCE_SHRINK_BUDGET"] = "0"
    proc, out = run_gate(cli, tmp_path, "--claims", "detach.keeps-dtype-and-values", env=env)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = read_results(out)
    (t,) = [t for t in doc["tests"] if t["verdict"] == "regression"]
    assert "shrinking stopped at the budget" in t["failure"]["falsifying_example"]
    assert "spec=TensorSpec(" in t["failure"]["falsifying_example"]
    assert "shrinking stopped after 0 s" in t["failure"]["notes"]


def _gate_under(cli, tmp_path, read_results, patch, claim: str, exp: str, test: str):
    """Run the gate on ``claim`` with the expectations ``exp`` under a torch
    patched by ``patch`` (a function of ``tests.mutants.gate``, its arguments
    bound); returns the process and the CPU record of ``test``."""
    from conformance.mutants import Mutant

    mutant = Mutant(name="self-test", description="self-test", claims=(claim,),
                    patch=patch, witness=lambda: None)  # fmt: skip
    env = mutant_env(mutant, tmp_path / "mutant")
    proc, out = run_gate(cli, tmp_path, "--claims", claim, "--expectations", exp, env=env)
    (t,) = [t for t in read_results(out)["tests"] if t["name"] == test and t["device"] == "cpu"]
    return proc, t


@pytest.mark.parametrize("refuse_int64", [False, True])
def test_a_whole_test_entry_checks_every_example(cli, tmp_path, read_results, refuse_int64):
    """A whole-test entry of a single-claim test is compared with every
    example, not with the first failing one (issue 28, item 2): with
    detach() copying float64 tensors recorded as the test's deviation, the
    test runs its full example count, every float64 example deviates as
    recorded and the others hold; a torch that also breaks int64 detach in a
    way of its own fails the gate, however many float64 examples came first
    (the entry once switched shrinking off and read the first failure)."""
    patch = functools.partial(gate_patches.detach_copies_float64, refuse_int64)
    exp = _expectations(
        tmp_path,
        f"""
        [[deviation]]
        claim = "{SHARES}"
        test = "test_detach_shares_storage"
        exception = "AssertionError"
        match = "detach() result does not share storage with its input"
        reason = "pretend detach copies float64 tensors"
        upstream = "not triaged"
        torch = ">=1.0,<9"
        """,
    )
    proc, t = _gate_under(cli, tmp_path, read_results, patch, SHARES, exp,
                          "test_detach_shares_storage")  # fmt: skip
    if refuse_int64:
        assert proc.returncode == 1, proc.stdout[-2000:]
        assert t["verdict"] == "regression", t["verdict"]
        assert "refused for int64" in t["failure"]["message"]
    else:
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert t["verdict"] == "expected-deviation", t["verdict"]
        assert t["region"]["inside"] >= 2, t["region"]
        assert t["example_counts"]["checked"] >= 50, t["example_counts"]


@pytest.mark.parametrize("rebind_int64", [False, True])
def test_later_violations_of_an_explained_claim_must_match_its_entry(
    cli, tmp_path, read_results, rebind_int64
):
    """In a test of several claims, a claim whose failure a whole-test entry
    explains is re-run muted, and each of its later violations must have the
    entry's signature (issue 28, item 2): with copy_() returning a clone for
    float64 recorded as a deviation of copy.returns-self, the gate passes and
    copy.copies-values holds; a torch that also rebinds int64 destinations
    to new storage (copy.returns-self's other check) fails the gate, even
    when the recorded failure was met first."""
    claim = "copy.returns-self"
    patch = functools.partial(gate_patches.copy_returns_clone_float64, rebind_int64)
    exp = _expectations(
        tmp_path,
        f"""
        [[deviation]]
        claim = "{claim}"
        test = "test_copy_returns_self_and_copies_values"
        exception = "ClaimViolation"
        match = "copy_() did not return self"
        reason = "pretend copy_ returns a clone for float64"
        upstream = "not triaged"
        torch = ">=1.0,<9"
        """,
    )
    proc, t = _gate_under(cli, tmp_path, read_results, patch, claim, exp,
                          "test_copy_returns_self_and_copies_values")  # fmt: skip
    if rebind_int64:
        assert proc.returncode == 1, proc.stdout[-2000:]
        assert t["verdict"] == "regression", t["verdict"]
        changed = t.get("changed_violations", {}).get(claim) or [
            [t["claim_failures"][claim]["exception"], t["claim_failures"][claim]["message"]]
        ]
        assert any("changed dst's storage" in v[1] for v in changed), changed
    else:
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert t["verdict"] == "expected-deviation", t["verdict"]
        assert claim in t["claim_expectations"]
        assert t["claim_examples"].get("copy.copies-values", 0) >= 50, t["claim_examples"]
