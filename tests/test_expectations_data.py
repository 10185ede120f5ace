"""The shipped deviations, audited against the shipped baselines, offline.

Every entry of ``conformance/expectations/`` is checked on every release it
claims to have been measured on without installing that release: its
baseline (``reports/baseline_data/``) must show the entry with the entry's
own signature, and no baseline may show a deviation that no entry explains.
"""

from __future__ import annotations

import pytest
from packaging.version import Version

from conformance.expectations import GENERIC_MATCH, load_expectations
from conformance.registry import default_registry
from reports.baselines import available, load_baseline, same_entry, shown_deviations
from reports.measured import refresh, signature_matches

DEVIATIONS = load_expectations(registry=default_registry())
BASELINES = available()


def _observed(version: str) -> list[tuple[dict, str | None, str]]:
    return shown_deviations(load_baseline(version))


@pytest.fixture(scope="module")
def observed() -> dict[str, list]:
    return {v: _observed(v) for v in BASELINES}


def test_every_measured_release_has_a_baseline():
    for d in DEVIATIONS:
        for m in d.measured:
            assert m in BASELINES, f"{d.key} ({d.file}): measured on {m}, which has no baseline"


def test_every_measured_release_shows_the_entry_with_its_signature(observed):
    """``measured`` is what the baselines show, signature included."""
    for d in DEVIATIONS:
        for m in d.measured:
            rows = [(e, sig) for e, sig, _ in observed[m] if same_entry(e, d, DEVIATIONS)]
            assert rows, f"{d.key} ({d.file}): the {m} baseline shows no deviation of this entry"
            assert any(signature_matches(d, sig) for _, sig in rows), (
                f"{d.key} ({d.file}): on {m} the baseline recorded "
                f"{sorted({str(s) for _, s in rows})}, not {d.exception}: {d.match!r}"
            )


def test_no_baseline_shows_a_deviation_no_entry_explains(observed):
    """Each deviation a shipped baseline shows is an entry measured there."""
    for version, rows in observed.items():
        for e, sig, nodeid in rows:
            ok = [
                d
                for d in DEVIATIONS
                if same_entry(e, d, DEVIATIONS)
                and version in d.measured
                and signature_matches(d, sig)
            ]
            assert ok, (
                f"{version} baseline: {nodeid} deviated with {e.get('key')} ({sig}), which no "
                "entry measured on that release explains"
            )


def test_measured_lists_every_baseline_that_shows_the_entry(observed):
    """An entry whose range holds a release with a baseline that shows it
    lists that release in ``measured`` (nothing measured is left out)."""
    for d in DEVIATIONS:
        for version, rows in observed.items():
            if version in d.measured or not d.in_range(version):
                continue
            shown = [
                sig
                for e, sig, _ in rows
                if same_entry(e, d, DEVIATIONS) and signature_matches(d, sig)
            ]
            assert not shown, f"{d.key}: the {version} baseline shows it, measured omits it"


def test_whole_test_entries_name_their_behaviour():
    for d in DEVIATIONS:
        if d.whole_test:
            assert not GENERIC_MATCH.match(d.match), f"{d.key}: signature {d.match!r} is generic"


def test_ranges_end_at_the_newest_release_measured():
    """A bug's range does not run past the newest release the data measured
    (a newer release reads "not measured on this release" instead)."""
    newest = max((Version(v) for v in BASELINES), default=None)
    assert newest is not None
    for d in DEVIATIONS:
        if d.design:
            continue
        beyond = f"{newest.major}.{newest.minor + 1}.0"
        assert not d.in_range(beyond), f"{d.key}: torch {d.torch_text} runs past {newest}"


def test_measured_is_what_reports_measured_would_write():
    """``python -m reports.measured --check`` has nothing to change."""
    assert refresh() == {}, "run python -m reports.measured"
