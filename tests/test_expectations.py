"""Known-deviation entries: parsing, validation and conditions."""

from __future__ import annotations

import pytest

from conformance.expectations import ExpectationsError, load_expectations
from conformance.registry import default_registry

ENTRY = """
[[deviation]]
claim = "detach.metadata-change-raises"
exception = "Failed"
match = "DID NOT RAISE"
reason = "r"
link = "https://github.com/pytorch/pytorch/pull/83590"
"""


def _load(tmp_path, text):
    p = tmp_path / "e.toml"
    p.write_text(text)
    return load_expectations(p, default_registry())


def test_shipped_expectations_load_and_name_registered_claims():
    devs = load_expectations(registry=default_registry())
    assert devs, "the stale resize_ seed claim must be recorded"
    assert any(d.claim == "detach.metadata-change-raises" for d in devs)
    for d in devs:
        assert d.link.startswith("http") and d.reason and d.match


@pytest.mark.parametrize(
    ("extra", "version", "device", "applies"),
    [
        ("", "2.13.0+cpu", "cpu", True),
        ('torch = ">=1.13"', "2.13.0+cpu", "cpu", True),
        ('torch = "<1.13"', "2.13.0+cpu", "cpu", False),
        ('torch = ">=2.13"', "2.14.0.dev20260101+cpu", "cpu", True),
        ('torch = ">=2.14"', "2.14.0.dev20260101+cpu", "cpu", False),
        ('devices = ["cuda"]', "2.13.0", "cpu", False),
        ('devices = ["cuda"]', "2.13.0", "cuda", True),
        ('python = "<3"', "2.13.0", "cpu", False),
    ],
)
def test_conditions(tmp_path, extra, version, device, applies):
    (d,) = _load(tmp_path, ENTRY + extra + "\n")
    assert d.applies(torch_version=version, device=device) is applies


def test_signature_matching(tmp_path):
    (d,) = _load(tmp_path, ENTRY)
    assert d.matches_failure("Failed", "DID NOT RAISE <class 'RuntimeError'>")
    assert not d.matches_failure("AssertionError", "DID NOT RAISE")
    assert not d.matches_failure("Failed", "something else")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[[deviation]\n", "malformed TOML"),
        (
            ENTRY.replace('claim = "detach.metadata-change-raises"', 'claim = "no.such"'),
            "unknown claim id",
        ),
        (ENTRY.replace('match = "DID NOT RAISE"\n', ""), "missing or empty 'match'"),
        (ENTRY + 'torch = "not a spec"\n', "bad torch specifier"),
        (ENTRY + 'devices = ["tpu"]\n', "devices must be"),
        (ENTRY + "colour = 1\n", "unknown key"),
        ("surprise = 1\n", "unknown top-level key"),
    ],
)
def test_malformed_entries_are_one_line_errors(tmp_path, text, needle):
    with pytest.raises(ExpectationsError) as e:
        _load(tmp_path, text)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_every_applicable_deviation_has_a_region_and_a_pinning_claim():
    """Every deviation of the installed torch carves out a region (so its test
    runs the full example count and the claim is asserted outside it) and
    names the characterization claim(s) pinning what torch does instead,
    each carried by a test of the suite."""
    import torch

    from conformance.expectations import load_expectations

    registry = default_registry()
    tested = _tested_claims()
    for d in load_expectations(registry=registry):
        if not d.applies(torch_version=torch.__version__, device="cpu"):
            continue
        assert d.region is not None, f"{d.key}: whole-test deviation (give it a region)"
        assert d.pinned_by, f"{d.key}: no characterization claim pins today's behaviour"
        for c in d.pinned_by:
            assert c in tested, f"{d.key}: pinning claim {c} has no test"


def _tested_claims() -> set[str]:
    """Claim ids carried by a ``@pytest.mark.claim`` of some conformance test."""
    import importlib
    from pathlib import Path

    out: set[str] = set()
    for path in (Path(__file__).resolve().parent.parent / "conformance").glob("test_*.py"):
        module = importlib.import_module(f"conformance.{path.stem}")
        for name, fn in vars(module).items():
            if name.startswith("test_"):
                for mark in getattr(fn, "pytestmark", []):
                    if mark.name == "claim":
                        out.update(mark.args)
    return out


def test_whole_test_deviation_on_a_test_with_its_own_settings_collects(tmp_path):
    """A whole-test deviation (no region) of a test decorated with its own
    ``@settings`` must not break collection (Hypothesis refuses a second
    settings decorator; the plugin then leaves the test as it is). Found on
    the torch 2.1.2 release run, whose expectations name such a test."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    exp = tmp_path / "e.toml"
    exp.write_text(
        '[[deviation]]\nclaim = "compile.version-bumps-match-eager"\n'
        'test = "test_generated_programs_keep_eager_semantics_inductor"\n'
        'torch = ">=1.0"\nexception = "ClaimViolation"\nmatch = "differs"\n'
        'reason = "self-test"\nlink = "https://example.invalid"\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/test_compile_programs.py", "--collect-only",
         "-q", "-p", "no:cacheprovider", "--expectations", str(exp)],
        cwd=str(ROOT), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "InternalError" not in proc.stdout + proc.stderr
