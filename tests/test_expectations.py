"""Known-deviation entries: parsing, validation, ranges and conditions."""

from __future__ import annotations

import pytest

from conformance.expectations import ExpectationsError, load_expectations, newest_measured
from conformance.registry import default_registry

ENTRY = """
[[deviation]]
claim = "detach.metadata-change-raises"
exception = "Failed"
match = "DID NOT RAISE"
torch = ">=1.13,<2.16"
measured = ["2.13.0"]
upstream = "https://github.com/pytorch/pytorch/pull/83590"
reason = "r"
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
        assert d.upstream and d.reason and d.match and d.torch
        assert all(d.in_range(m) for m in d.measured), d.key


def test_shipped_expectations_are_one_file_per_area_sorted_by_claim():
    from conformance.expectations import EXPECTATIONS_DIR

    for f in sorted(EXPECTATIONS_DIR.glob("*.toml")):
        devs = load_expectations(f, default_registry())
        assert {d.claim.split(".")[0] for d in devs} == {f.stem}, f.name
        claims = [d.claim for d in devs]
        assert claims == sorted(claims), f"{f.name}: entries are not sorted by claim"


@pytest.mark.parametrize(
    ("torch_range", "version", "device", "applies"),
    [
        ('">=1.13,<2.16"', "2.13.0+cpu", "cpu", True),
        ('"<1.13"', "2.13.0+cpu", "cpu", False),
        ('">=2.13,<2.16"', "2.14.0.dev20260101+cpu", "cpu", True),
        ('">=2.14,<2.16"', "2.14.0.dev20260101+cpu", "cpu", False),
        ('">=2.14,<2.16"', "2.13.0", "cpu", False),
        ('[">=2.5,<2.10", ">=2.14,<2.16"]', "2.12.0", "cpu", False),
        ('[">=2.5,<2.10", ">=2.14,<2.16"]', "2.9.1", "cpu", True),
        ('[">=2.5,<2.10", ">=2.14,<2.16"]', "2.15.0", "cpu", True),
    ],
)
def test_ranges(tmp_path, torch_range, version, device, applies):
    text = ENTRY.replace('torch = ">=1.13,<2.16"', f"torch = {torch_range}")
    text = text.replace('measured = ["2.13.0"]', "measured = []")
    (d,) = _load(tmp_path, text)
    assert d.applies(torch_version=version, device=device) is applies


@pytest.mark.parametrize(
    ("extra", "device", "applies"),
    [
        ('devices = ["cuda"]', "cpu", False),
        ('devices = ["cuda"]', "cuda", True),
        ('python = "<3"', "cpu", False),
    ],
)
def test_conditions(tmp_path, extra, device, applies):
    (d,) = _load(tmp_path, ENTRY + extra + "\n")
    assert d.applies(torch_version="2.13.0", device=device) is applies


def test_releases_newer_than_the_data_apply_entries_that_reach_the_newest(tmp_path):
    """On a release newer than every release measured, an entry whose range
    holds the newest measured release applies, unmeasured; one that ended
    before it does not."""
    text = ENTRY + ENTRY.replace('match = "DID NOT RAISE"', 'match = "other"').replace(
        'torch = ">=1.13,<2.16"\nmeasured = ["2.13.0"]',
        'torch = ">=2.5,<2.10"\nmeasured = ["2.9.1"]',
    )
    open_, ended = _load(tmp_path, text)
    newest = newest_measured([open_, ended])
    assert newest == "2.13.0"
    assert open_.applies(torch_version="2.17.0", device="cpu", newest=newest)
    assert open_.unmeasured_on("2.17.0") and not open_.unmeasured_on("2.13.0+cpu")
    assert not ended.applies(torch_version="2.17.0", device="cpu", newest=newest)
    assert open_.applies(torch_version="2.14.0", device="cpu", newest=newest)
    assert open_.unmeasured_on("2.14.0")


def test_signature_matching(tmp_path):
    (d,) = _load(tmp_path, ENTRY)
    assert d.matches_failure("Failed", "DID NOT RAISE <class 'RuntimeError'>")
    assert not d.matches_failure("AssertionError", "DID NOT RAISE")
    assert not d.matches_failure("Failed", "something else")


def test_two_entries_differing_only_in_torch_are_refused(tmp_path):
    twin = ENTRY.replace('torch = ">=1.13,<2.16"', 'torch = ">=1.0,<1.13"').replace(
        'measured = ["2.13.0"]', "measured = []"
    )
    with pytest.raises(ExpectationsError, match="only in its torch range"):
        _load(tmp_path, ENTRY + twin)


def test_two_entries_that_could_explain_one_failure_are_refused(tmp_path):
    """A second entry on overlapping releases whose signature contains the
    first's (or is contained in it) and whose region meets it would leave the
    verdict ambiguous; disjoint ranges, regions or scopes are accepted."""
    looser = (
        ENTRY.replace('match = "DID NOT RAISE"', 'match = "DID NOT"')
        .replace('torch = ">=1.13,<2.16"', 'torch = ">=2.10,<2.14"')
        .replace('measured = ["2.13.0"]', "measured = []")
    )
    with pytest.raises(ExpectationsError, match="can both explain one failure on torch 2.10"):
        _load(tmp_path, ENTRY + looser)
    disjoint = looser.replace('torch = ">=2.10,<2.14"', 'torch = ">=1.0,<1.13"')
    assert len(_load(tmp_path, ENTRY + disjoint)) == 2
    other_text = looser.replace('match = "DID NOT"', 'match = "raised instead"')
    assert len(_load(tmp_path, ENTRY + other_text)) == 2


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[[deviation]\n", "malformed TOML"),
        (
            ENTRY.replace('claim = "detach.metadata-change-raises"', 'claim = "no.such"'),
            "unknown claim id",
        ),
        (ENTRY.replace('match = "DID NOT RAISE"\n', ""), "missing or empty 'match'"),
        (ENTRY.replace('">=1.13,<2.16"', '"not a spec"'), "bad specifier"),
        (ENTRY.replace('">=1.13,<2.16"', '">=1.13"'), "open-ended"),
        (ENTRY.replace('"2.13.0"]', '"2.16.0"]'), "outside torch"),
        (
            ENTRY.replace('"https://github.com/pytorch/pytorch/pull/83590"', '"see #1"'),
            "'upstream' must be",
        ),
        (ENTRY.replace('"DID NOT RAISE"', '"assert"'), "any failure of the test could match"),
        (
            ENTRY.replace('"DID NOT RAISE"', '"backend inductor differs from eager (outputs)"'),
            "any failure of the test could match",
        ),
        (
            ENTRY.replace('"DID NOT RAISE"', '"backend eager: "'),
            "any failure of the test could match",
        ),
        (ENTRY.replace('"DID NOT RAISE"', '"[detach.shares-storage] "'), "any failure of the test"),
        (ENTRY + 'probe = "conformance/probes/no_such_probe.py"\n', "does not exist"),
        (ENTRY + 'devices = ["CUDA:0"]\n', "devices must be"),
        (ENTRY + "colour = 1\n", "unknown key"),
        ("surprise = 1\n", "unknown top-level key"),
    ],
)
def test_malformed_entries_are_one_line_errors(tmp_path, text, needle):
    with pytest.raises(ExpectationsError) as e:
        _load(tmp_path, text)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_design_decisions_may_stay_open_ended(tmp_path):
    text = ENTRY.replace('">=1.13,<2.16"', '">=1.13"') + 'design = "PR #83590 allows it"\n'
    (d,) = _load(tmp_path, text)
    assert d.applies(torch_version="3.0.0", device="cpu")


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
        'torch = ">=1.0,<9"\nexception = "ClaimViolation"\nmatch = "differs from eager: x"\n'
        'reason = "self-test"\nupstream = "not triaged"\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/test_compile_programs.py", "--collect-only",
         "-q", "-p", "no:cacheprovider", "--expectations", str(exp)],
        cwd=str(ROOT), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "InternalError" not in proc.stdout + proc.stderr


def test_a_recorded_entry_merged_into_a_broader_one_is_still_recognised(tmp_path):
    """A baseline's recorded entry that no current entry names any more (it
    was merged into a broader one) belongs to the current entry whose scope
    holds its own; while some current entry still names it, only that one."""
    from reports.baselines import same_entry

    narrow = ENTRY.replace(
        'match = "DID NOT RAISE"', 'match = "DID NOT RAISE"\nregion = { op = "set_" }'
    )
    (broad,) = _load(
        tmp_path,
        ENTRY.replace(
            'exception = "Failed"', 'exception = "Failed"\nregion = { op = ["set_", "resize_"] }'
        ),
    )
    (still,) = _load(tmp_path, narrow)
    recorded = {"claim": still.claim, "test": None, "region": {"op": "set_"}}
    assert not same_entry(recorded, broad)
    assert same_entry(recorded, broad, [broad])
    assert not same_entry(recorded, broad, [broad, still])
    assert same_entry(recorded, still, [broad, still])
    outside = {"claim": still.claim, "test": None, "region": {"op": "transpose_"}}
    assert not same_entry(outside, broad, [broad])
