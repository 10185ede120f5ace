"""pytest plugin for mutation runs: likely killers first, no shrinking.

``torch-conformance mutate`` loads it with ``-p conformance.mutants.order``.

- ``TORCH_CONFORMANCE_FIRST_CLAIMS`` (comma-separated, most likely killer
  first: a mutant's target claims, then the claims that killed it in the
  previous sweep of the same output directory): the tests of these claims
  run first, the quickest first among equals (the durations of the
  shipped baseline). Only the order changes (stable sort); every test
  still runs, so a survivor is a survivor of the whole suite.
- ``TORCH_CONFORMANCE_NO_SHRINK=1``: Hypothesis tests keep the profile's
  examples (explicit, then the derandomized ``ci`` draws) but skip the
  shrink and explain phases, as the conformance plugin already does for
  known deviations. Whether a mutant is killed is decided by the first
  failing example, so this only shortens the time to kill; the recorded
  falsifying example is the unshrunk one.
- ``TORCH_CONFORMANCE_STOP_WHEN_FALSIFIED=1`` (the targeted sweep): the
  quickest tests first (as above), and stop
  the session as soon as every claim of ``--claims`` has failed (a test of
  it ended as a regression or an unexpected pass that names it, and no
  recorded deviation excuses it). The sweep asks only whether each
  declared claim turned ``FAILED``; the claim's remaining tests would only
  confirm it. The stop can never make a claim look falsified: the sweep
  still reads each verdict from the results (:func:`reports.results.claim_verdicts`),
  so a wrong early stop shows as a surviving claim. What the sweep no longer sees
  is a suite error in a test that would have run after the claim failed;
  suite errors are the business of the run on real torch (the conformance
  tier of the README test command), not of a mutant's run.
"""

from __future__ import annotations

import json
import os

import pytest

ENV = "TORCH_CONFORMANCE_FIRST_CLAIMS"
NO_SHRINK_ENV = "TORCH_CONFORMANCE_NO_SHRINK"
STOP_ENV = "TORCH_CONFORMANCE_STOP_WHEN_FALSIFIED"
#: Verdicts of a test record that falsify the claims it names.
_FALSIFYING = ("regression", "unexpected-pass")


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session) -> None:
    """Before the test modules are imported (and ``@given`` binds its
    settings), derive a profile from the loaded one without shrinking."""
    if not os.environ.get(NO_SHRINK_ENV):
        return
    from hypothesis import Phase, settings

    phases = [p for p in settings.default.phases if p not in (Phase.shrink, Phase.explain)]
    settings.register_profile("mutation-no-shrink", parent=settings.default, phases=phases)
    settings.load_profile("mutation-no-shrink")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    first = [c.strip() for c in os.environ.get(ENV, "").split(",") if c.strip()]
    if not first and not os.environ.get(STOP_ENV):
        return
    rank = {c: i for i, c in enumerate(dict.fromkeys(first))}
    last = len(rank)
    durations = _recorded_durations()

    def key(item) -> tuple[int, float]:
        claims = [c for m in item.iter_markers("claim") for c in m.args]
        return min((rank[c] for c in claims if c in rank), default=last), durations.get(
            item.nodeid, 0.0
        )

    items.sort(key=key)


def _recorded_durations() -> dict[str, float]:
    """``{nodeid: seconds}`` of the shipped baseline of this torch (or the
    newest one): among the tests of equally likely killers the quick ones
    run first, so a claim an explicit example falsifies in a second is not
    first put through the state machine's hundred programs; empty (catalogue
    order) when no baseline can be read."""
    import torch

    from reports.shards import recorded_durations

    return recorded_durations(torch.__version__)


def falsified_claims(record: dict) -> set[str]:
    """The claims one test record of the conformance plugin falsifies: for a
    regression or unexpected pass, its ``failed_claims`` (a test of several
    claims names the ones that failed) or else all its claims, minus those
    whose failure is their own recorded deviation (``claim_expectations``)
    - the same reading :func:`reports.results.claim_verdicts` makes."""
    if record.get("verdict") not in _FALSIFYING:
        return set()
    failed = record.get("failed_claims")
    named = failed if failed is not None else record.get("claims", [])
    excused = record.get("claim_expectations") or {}
    return {c for c in named if c not in excused}


_SESSION: dict = {}


def pytest_configure(config) -> None:
    wanted = config.getoption("claims", None) if os.environ.get(STOP_ENV) else None
    config._stop_when_falsified = (  # type: ignore[attr-defined]
        {"wanted": {c.strip() for c in wanted.split(",") if c.strip()}, "falsified": set()}
        if wanted
        else None
    )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session) -> None:
    _SESSION["session"] = session


def pytest_runtest_logreport(report) -> None:
    session = _SESSION.get("session")
    state = getattr(session.config, "_stop_when_falsified", None) if session else None
    if state is None:
        return
    for key, value in report.user_properties:
        if key == "conformance":
            state["falsified"] |= falsified_claims(json.loads(value)) & state["wanted"]
    if state["falsified"] >= state["wanted"] and not session.shouldfail:
        # as -x does: the session ends after this test, exit status 1
        session.shouldfail = "every claim asked for (--claims) has failed: " + ", ".join(
            sorted(state["wanted"])
        )
