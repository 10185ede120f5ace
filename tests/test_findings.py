"""The findings registry: valid records, torch-only reproducers, the protocol
the runner reads, the generated page, and a finding that stops reproducing
reported as fixed (news first)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.findings import (
    FINDINGS_FILE,
    KINDS,
    REPRODUCERS_DIR,
    Finding,
    FindingsError,
    dump_findings,
    load_findings,
    news,
    read_outcome,
    record,
    run_reproducer,
)
from conformance.registry import default_registry
from reports.findings import DOC_PATH, for_report, render_doc, summary_lines

#: What a reproducer may import: torch, NumPy and the standard library.
_ALLOWED = {"torch", "numpy"} | set(sys.stdlib_module_names)


@pytest.fixture(scope="module")
def findings():
    return load_findings(FINDINGS_FILE, registry=default_registry())


def test_every_record_is_complete_and_names_registered_claims(findings):
    assert len(findings) >= 35
    assert len({f.id for f in findings}) == len(findings)
    assert {f.kind for f in findings} <= set(KINDS)
    for f in findings:
        assert f.measured, f"{f.id}: no release measured"
        for u in f.upstream:
            assert u.url.startswith("https://"), (f.id, u.ref)


def test_every_reproducer_is_torch_only_and_documented(findings):
    used = {f.reproducer for f in findings}
    on_disk = {p.name for p in REPRODUCERS_DIR.glob("*.py")}
    assert used == on_disk, f"reproducers without a record: {on_disk - used}"
    for f in findings:
        tree = ast.parse(f.path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{f.reproducer}: no docstring"
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                assert n.split(".")[0] in _ALLOWED, f"{f.reproducer} imports {n}"


def test_the_page_is_generated_from_the_registry(findings):
    assert DOC_PATH.read_text(encoding="utf-8") == render_doc(findings), (
        "docs/findings.md is stale: run python -m reports.findings --write"
    )


def test_the_registry_round_trips_through_its_canonical_form(findings, tmp_path):
    path = tmp_path / "findings.toml"
    path.write_text(dump_findings(findings))
    assert load_findings(path) == findings


def test_a_malformed_record_is_refused(tmp_path):
    path = tmp_path / "findings.toml"
    path.write_text(
        textwrap.dedent(
            """
            [[finding]]
            id = "x"
            title = "t"
            kind = "mild surprise"
            reproducer = "x.py"
            expected = "e"
            observed = "o"
            claims = ["no.such-claim"]
            measured = { "2.13.0" = "maybe" }
            """
        )
    )
    with pytest.raises(FindingsError) as e:
        load_findings(path, registry=default_registry())
    text = str(e.value)
    assert "mild surprise" in text and "no.such-claim" in text and "maybe" in text


@pytest.mark.parametrize(
    ("stdout", "rc", "expected"),
    [
        ("noise\nREPRODUCES: got 2.0\n", 1, ("reproduces", "got 2.0")),
        ("FIXED: -2.0 as documented", 0, ("fixed", "-2.0 as documented")),
        ("NOT APPLICABLE: no CUDA\n\n", 3, ("not applicable", "no CUDA")),
        # the word and the exit status must agree
        ("REPRODUCES: got 2.0", 0, ("error", None)),
        ("FIXED: fine", 1, ("error", None)),
        ("Traceback ...\nValueError: boom", 1, ("error", None)),
        ("", -11, ("error", None)),
        ("REPRODUCES: x", None, ("error", "timed out")),
    ],
)
def test_the_runner_reads_only_the_protocol(stdout, rc, expected):
    status, line = read_outcome(stdout, rc)
    assert status == expected[0]
    if expected[1] is not None:
        assert line == expected[1]


def _fake(tmp_path, name: str, body: str, measured=None) -> Finding:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return Finding(
        id=name, title=name, kind="silent wrong value", claims=(), reproducer=str(path),
        expected="e", observed="o", measured=measured or {"2.13.0": "reproduces"},
    )  # fmt: skip


def test_a_crash_outside_the_reproducers_own_child_is_an_error(tmp_path):
    f = _fake(tmp_path, "dies", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    r = run_reproducer(f, timeout=60)
    assert r.status == "error" and "signal" in r.line


def test_a_reproducer_past_its_time_is_an_error(tmp_path):
    f = _fake(tmp_path, "slow", "import time\ntime.sleep(30)\n")
    r = run_reproducer(f, timeout=1)
    assert r.status == "error" and "timed out" in r.line


def test_news_puts_a_finding_that_stopped_reproducing_first(tmp_path):
    a = _fake(tmp_path, "a", "print('REPRODUCES: still'); raise SystemExit(1)\n")
    b = _fake(tmp_path, "b", "print('FIXED: gone'); raise SystemExit(0)\n",
              measured={"2.12.0": "reproduces"})  # fmt: skip
    c = _fake(tmp_path, "c", "print('REPRODUCES: back'); raise SystemExit(1)\n",
              measured={"2.13.0": "fixed"})  # fmt: skip
    results = [run_reproducer(f, timeout=60) for f in (a, b, c)]
    assert [r.status for r in results] == ["reproduces", "fixed", "reproduces"]
    got = news([a, b, c], results, "2.13.0")
    assert got[0] == {"id": "b", "was": "reproduces", "now": "fixed", "on": "2.12.0"}
    assert [n["id"] for n in got] == ["b", "c"]
    section = for_report([a, b, c], results, "2.13.0")
    lines = summary_lines(section)
    assert lines[0].startswith("NEWS b: reproduces on 2.12.0, fixed on 2.13.0")
    assert "1 fixed" in lines[-1] and "2 changed" in lines[-1]
    updated = record([a, b, c], results, "2.13.0")
    assert updated[1].measured == {"2.12.0": "reproduces", "2.13.0": "fixed"}
    assert updated[1].fixed_in() == "2.13.0"


def test_a_torch_that_fixed_a_finding_reports_it_fixed_and_as_news(findings, tmp_path):
    """A torch whose ``is_set_to`` compares storage, offset, sizes and
    strides (as its docstring says; patched in through ``sitecustomize``)
    no longer shows the math-bit finding: its reproducer says ``fixed`` and
    the finding the registry measured as reproducing is the first news."""
    import os

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import torch

            def is_set_to(self, other):
                return (self.untyped_storage().data_ptr() == other.untyped_storage().data_ptr()
                        and self.storage_offset() == other.storage_offset()
                        and self.shape == other.shape and self.stride() == other.stride())

            torch.Tensor.is_set_to = is_set_to
            """
        )
    )
    (f,) = [f for f in findings if f.id == "is-set-to-false-for-math-bit-views"]
    assert f.measured.get("2.13.0") == "reproduces"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    real = run_reproducer(f, timeout=120, env=env)
    assert real.status == "reproduces", real
    fixed = run_reproducer(f, timeout=120, env={**env, "PYTHONPATH": str(site)})
    assert fixed.status == "fixed", fixed
    release = "2.13.0" if "2.13.0" in f.measured else max(f.measured)
    assert news([f], [fixed], release) == [
        {"id": f.id, "was": "reproduces", "now": "fixed", "on": release}
    ]


def test_the_cli_runs_chosen_findings_and_adds_them_to_the_report(tmp_path):
    from tests.test_mutants_catalogue import _results_doc

    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text(json.dumps(_results_doc()))
    fid = "asarray-zero-dim-ndarray-copies"
    proc = subprocess.run(
        [sys.executable, "-m", "reports.cli", "findings", "--only", fid, "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"reproduces  {fid}" in proc.stdout
    section = json.loads((out / "findings.json").read_text())
    assert section["counts"]["reproduces"] == 1 and not section["news"]
    html = (out / "report.html").read_text()
    assert 'id="findings"' in html and fid in html
    bad = subprocess.run(
        [sys.executable, "-m", "reports.cli", "findings", "--only", "no-such-finding"],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "error:" in bad.stderr
