"""Running one example of a conformance test under the gate.

:func:`_run_example` wraps each Hypothesis example of a test the plugin
runs (:mod:`reports.plugin`): it opens an evidence frame
(:mod:`conformance.evidence`), records the values the example drew (for the
torch-only snippet), applies the regions and whole-test signatures of the
test's known deviations (an example inside a region must deviate exactly as
recorded; one outside must hold) and keeps the shrinking budget of a
failing test (:func:`shrink_budget`). The state it shares with the plugin
lives in :data:`_RUN` (the running item) and :data:`_count` (its examples).
"""

from __future__ import annotations

import os
import time

import pytest

#: Examples run by the current test and the seconds spent in their bodies.
_count = {"n": 0, "body_s": 0.0}

#: The item whose test is running: its applicable deviations, and its last
#: failing example ``(fn, kwargs, draws, error)`` for the torch-only snippet.
_RUN: dict = {"hits": [], "claims": (), "failing": None, "failed_at": None, "raised": None}


class _Draws:
    """Wraps a Hypothesis data object for one example and records each value
    ``draw()`` returns, so the falsifying example can be replayed without
    Hypothesis (:mod:`reports.snippet`)."""

    def __init__(self, data, record: list):
        self._data = data
        self._record = record

    def draw(self, strategy, label=None):
        value = self._data.draw(strategy, label=label)
        self._record.append(value)
        return value

    def __repr__(self) -> str:
        return repr(self._data)


class DeviationRegionHeld(AssertionError):
    """The claim held on an example inside a recorded deviation region: torch
    no longer deviates there (a fix, or a region recorded too wide)."""


class RegionFeatureMissing(Exception):
    """A deviation region reads a feature the test does not report (a defect
    of the suite or of the expectations file, never a verdict on torch)."""


def _passthrough(e: BaseException) -> bool:
    """Exceptions that are control flow, not a verdict of the example."""
    from hypothesis.errors import HypothesisException

    if isinstance(e, pytest.fail.Exception):
        return False
    return not isinstance(e, Exception) or isinstance(e, HypothesisException)


def _run_example(fn, args: tuple, kwargs: dict):
    """Run one example of a conformance test under an evidence frame.

    Applies the regions of the test's known deviations: inside a region the
    example must fail with the recorded signature (it is then counted and the
    search goes on), outside every region the claim is asserted as usual.
    """
    _count["n"] += 1
    failed_at = _RUN.get("failed_at")
    if failed_at is not None and time.monotonic() - failed_at > shrink_budget():
        raise ShrinkBudgetSpent()
    t_body = time.perf_counter()
    try:
        return _run_example_timed(fn, args, kwargs)
    except BaseException as e:
        if not _passthrough(e):
            # a falsifying example: Hypothesis now shrinks it (each smaller
            # failing example found replaces it)
            _RUN["raised"] = (e, dict(kwargs))
            if failed_at is None:
                _RUN["failed_at"] = time.monotonic()
        raise
    finally:
        _count["body_s"] += time.perf_counter() - t_body


#: Environment variable: seconds a failing test may spend shrinking its
#: falsifying example (per pass of the test), default :data:`SHRINK_BUDGET_S`.
SHRINK_BUDGET_ENV = "TORCH_CONFORMANCE_SHRINK_BUDGET"
#: The default shrinking budget, in seconds per failing test: a report needs
#: one clear falsifying example per claim, not a minimal one at any price
#: (a broken torch fails dozens of tests, each of which would otherwise
#: shrink for up to Hypothesis' own limit of minutes).
SHRINK_BUDGET_S = 5.0


def shrink_budget() -> float:
    """Seconds a failing test may shrink (``TORCH_CONFORMANCE_SHRINK_BUDGET``,
    default :data:`SHRINK_BUDGET_S`); a malformed value falls back to the
    default (the CLI validates it before a run)."""
    try:
        return max(0.0, float(os.environ.get(SHRINK_BUDGET_ENV, SHRINK_BUDGET_S)))
    except ValueError:
        return SHRINK_BUDGET_S


def _program_clock(error: BaseException | None) -> None:
    """The shrinking budget of a test that runs a Hypothesis engine of its
    own (:func:`conformance.evidence.program_started` and
    :func:`~conformance.evidence.program_failed`): ``error`` is a program's
    failure (the first starts the clock), ``None`` a program's start (raises
    :class:`ShrinkBudgetSpent` once the budget is spent)."""
    if error is not None:
        _RUN["raised"] = (error, None)
        if _RUN.get("failed_at") is None:
            _RUN["failed_at"] = time.monotonic()
        return
    failed_at = _RUN.get("failed_at")
    if failed_at is not None and time.monotonic() - failed_at > shrink_budget():
        raise ShrinkBudgetSpent()


class ShrinkBudgetSpent(KeyboardInterrupt):
    """Raised into Hypothesis when a failing test has shrunk for
    :func:`shrink_budget` seconds; the plugin then reports the smallest
    falsifying example found so far.

    A ``KeyboardInterrupt``, Hypothesis' way to stop a run mid-example: its
    engine lets it through without recording the interrupted example (any
    other exception is recorded as the example's end, and an example stopped
    before it drew what the same choices drew before - a state-machine
    program stopped as it starts - is then reported as a flaky strategy).
    The plugin catches it by this class only; a real interruption (a plain
    ``KeyboardInterrupt``) still stops the session."""


def _nested_coverage(counts) -> dict[str, dict[str, int]]:
    """``Counter[(dimension, value)]`` -> ``{dimension: {value: examples}}``."""
    out: dict[str, dict[str, int]] = {}
    for (dim, value), n in sorted(counts.items()):
        out.setdefault(dim, {})[value] = n
    return out


def _budget_failure() -> BaseException:
    """The failure to report when shrinking stopped on the budget: the last
    falsifying example's error (Hypothesis only replaces it by smaller
    ones), with the example and the stop noted."""
    error, kwargs = _RUN["raised"]
    if kwargs is None:  # a program of the test's own engine (a state machine)
        error.add_note(
            "Falsifying example (shrinking stopped at the budget): the program as torch "
            "calls it, in the message"
        )
    else:
        shown = ",\n".join(f"    {k}={v!r}" for k, v in kwargs.items())
        error.add_note(f"Falsifying example (shrinking stopped at the budget):\n(\n{shown},\n)")
    error.add_note(
        f"(shrinking stopped after {shrink_budget():g} s, the suite's budget per failing test "
        f"({SHRINK_BUDGET_ENV}): the smallest falsifying example found by then, not a minimal one)"
    )
    return error


def _run_example_timed(fn, args: tuple, kwargs: dict):
    """The body of :func:`_run_example` (its time is the example's)."""
    from conformance import evidence

    led = evidence.current_ledger()
    regional = [d for d in _RUN["hits"] if not d.whole_test]
    # A whole-test entry of a single-claim test is checked on every example
    # (a test of several claims re-runs with the failed claim muted instead,
    # and compares each later violation with the entry: see
    # _per_claim_deviations).
    whole = [d for d in _RUN["hits"] if d.whole_test] if len(_RUN["claims"]) == 1 else []
    draws: list = []
    call_kwargs = {
        k: _Draws(v, draws) if type(v).__name__ == "DataObject" else v for k, v in kwargs.items()
    }
    kept = _RUN["failing"]  # the last raised failing example
    with evidence.example_frame(evidence.auto_features(kwargs)) as ex:
        try:
            fn(*args, **call_kwargs)
            error = None
        except evidence.NotApplicable as e:
            # Not a verdict: this input cannot exercise the claim on this
            # torch. Counted per reason; it credits and blames no claim.
            if led is not None:
                led.not_applicable[e.reason] += 1
                led.note_not_applicable(ex)
            return None
        except BaseException as e:
            if _passthrough(e):
                if led is not None and ex.checked:
                    led.finish_example(ex, passed=True)  # what it checked before rejecting
                raise
            error = e
            # The last failing example of a test is the one Hypothesis
            # reports (it replays the minimal one last): kept for the snippet
            # (put back where the example deviated as recorded instead).
            _RUN["failing"] = (fn, call_kwargs, list(draws), e)
        if error is not None and whole:
            pairs = [(type(x).__name__, str(x)) for x in _flatten(error)]
            matched = next(
                (d for d in whole if all(d.matches_failure(t, m) for t, m in pairs)), None
            )
            if matched is not None:
                # deviates as recorded: counted, and the search goes on, so
                # every example is compared with the entry (one that fails
                # differently is a regression, raised below and shrunk)
                _count_inside(led, matched, kwargs, pairs)
                _RUN["failing"] = kept
                if led is not None:
                    _note_whole_example(led, ex, deviated=True)
                    led.finish_example(ex, passed=False)
                return None
            error.add_note(
                f"(the recorded whole-test deviation {whole[0].key} is {whole[0].exception}: "
                f"{whole[0].match!r})"
            )
        if error is None and whole and led is not None:
            _note_whole_example(led, ex, deviated=False)
        if not regional:
            if error is not None:
                raise error
            if led is not None:
                led.finish_example(ex, passed=True)
            return None
        inside, missing = [], None
        for d in regional:
            try:
                if d.in_region(ex.features):
                    inside.append(d)
            except KeyError as k:
                missing = missing or k
        if missing is not None and (error is None or not inside):
            k = missing
            if error is not None:
                # The example failed before it reported its features: the
                # failure is not in a known region, so it stands as it is.
                error.add_note(f"(failed before reporting feature {k.args[0]!r} of its region)")
                raise error from None
            raise RegionFeatureMissing(
                f"a deviation region of {regional[0].key} reads feature {k.args[0]!r}, which this "
                f"test does not report (features: {', '.join(sorted(ex.features))})"
            ) from None
        stats = led.region if led is not None else {}
        for d in regional:
            stats.setdefault(d.key, {"inside": 0, "outside": 0})
        if not inside:
            for d in regional:
                stats[d.key]["outside"] += 1
            if error is not None:
                error.add_note(
                    f"(outside the recorded deviation region: {regional[0].region_text})"
                )
                raise error
            if led is not None:
                led.finish_example(ex, passed=True)
            return None
        if error is None and all(d.unmeasured for d in inside):
            # only entries this release was never measured with: they demand
            # nothing, so the claim simply held on this example
            for d in regional:
                stats[d.key]["outside"] += 1
            if led is not None:
                led.finish_example(ex, passed=True)
            return None
        if error is None:
            d = next(d for d in inside if not d.unmeasured)
            raise DeviationRegionHeld(
                f"claim {d.claim} held inside the recorded deviation region of {d.key} "
                f"({d.region_text}): torch no longer deviates there"
            )
        pairs = [(type(e).__name__, str(e)) for e in _flatten(error)]
        matched = next((d for d in inside if all(d.matches_failure(t, m) for t, m in pairs)), None)
        if matched is None:
            d = inside[0]
            error.add_note(
                f"(inside the deviation region of {d.key}, where {d.exception}: {d.match!r} "
                "was recorded)"
            )
            raise error
        # "outside" counts the examples outside every region of the test (the
        # claim was asserted there and held), so one deviation's examples are
        # never counted as another's "held elsewhere".
        _count_inside(led, matched, kwargs, pairs)
        _RUN["failing"] = kept
        if led is not None:
            led.finish_example(ex, passed=False)
        return None


#: The most examples of one test kept for a region proposal (a test runs
#: about 100; a state machine's steps are not examples).
_WHOLE_EXAMPLES_KEPT = 2000


def _note_whole_example(led, ex, *, deviated: bool) -> None:
    """Keep what an example of a test with a whole-test entry reported, and
    whether it deviated as recorded, for the region proposal of the report
    (see :func:`conformance.expectations.propose_region`)."""
    if len(led.whole_examples) < _WHOLE_EXAMPLES_KEPT:
        led.whole_examples.append((deviated, dict(ex.features)))


def _count_inside(led, d, kwargs: dict, pairs: list) -> None:
    """Count one example that deviated as entry ``d`` records; the first
    one is kept (its arguments and the observed signature) for the report."""
    if led is None:
        return
    st = led.region.setdefault(d.key, {"inside": 0, "outside": 0})
    st["inside"] += 1
    if "example" not in st:
        shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        first = pairs[0][1].splitlines()[0] if pairs[0][1] else ""
        st["example"] = f"{shown[:1500]}\n-> {pairs[0][0]}: {first[:300]}"


def _flatten(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        out = []
        for e in exc.exceptions:
            out.extend(_flatten(e))
        return out
    return [exc]
