"""pytest plugin for mutation runs: likely killers first, no shrinking.

``torch-conformance mutate`` loads it with ``-p conformance.mutants.order``.

- ``TORCH_CONFORMANCE_FIRST_CLAIMS`` (comma-separated, most likely killer
  first: a mutant's target claims, then the claims that killed it in the
  previous sweep of the same output directory): the tests of these claims
  run first. Only the order changes (stable sort); every test still runs,
  so a survivor is a survivor of the whole suite.
- ``TORCH_CONFORMANCE_NO_SHRINK=1``: Hypothesis tests keep the profile's
  examples (explicit, then the derandomized ``ci`` draws) but skip the
  shrink and explain phases, as the conformance plugin already does for
  known deviations. Whether a mutant is killed is decided by the first
  failing example, so this only shortens the time to kill; the recorded
  falsifying example is the unshrunk one.
"""

from __future__ import annotations

import os

import pytest

ENV = "TORCH_CONFORMANCE_FIRST_CLAIMS"
NO_SHRINK_ENV = "TORCH_CONFORMANCE_NO_SHRINK"


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
    if not first:
        return
    rank = {c: i for i, c in enumerate(dict.fromkeys(first))}
    last = len(rank)

    def key(item) -> int:
        claims = [c for m in item.iter_markers("claim") for c in m.args]
        return min((rank[c] for c in claims if c in rank), default=last)

    items.sort(key=key)
