"""Verdicts: the one decision from a test's outcome to its verdict and each claim's.

Pure functions over plain data (no pytest, no torch): the gate plugin
(:mod:`reports.plugin`) hands :func:`decide_test` what a test did - its
outcome, what it raised, the expectation entries that apply to it
(:class:`conformance.expectations.Deviation`), the examples on each side of
their regions, the examples that checked each claim and those that were not
applicable - and applies the :class:`TestVerdict` it returns to the pytest
report; a test of several claims with whole-test entries is then split per
claim by :func:`per_claim_deviations`. The result file
(:mod:`reports.results`) reads each claim's share of a test record with
:func:`claim_view` and ranks a cell's test verdicts with :func:`cell_verdict`.

Test verdicts: ``held``, ``expected-deviation``, ``region-not-reached``,
``not-applicable``, ``regression``, ``unexpected-pass``, ``suite-error``,
``skipped`` (see :mod:`reports.results` for what each means).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Exception types that are defects of the suite, never verdicts on torch.
SUITE_ERRORS = frozenset({
    "FailedHealthCheck", "RegionFeatureMissing", "InvalidArgument", "Unsatisfiable",
    "FlakyStrategyDefinition", "InvalidDefinition",
})  # fmt: skip

#: Claim verdicts of a cell (claim, device), strongest first, each with the
#: test verdict that earns it.
_CELL_PRECEDENCE = (
    ("suite-error", "ERROR"), ("regression", "FAILED"), ("unexpected-pass", "unexpected pass"),
    ("expected-deviation", "expected deviation"), ("region-not-reached", "region not reached"),
    ("held", "held"), ("not-applicable", "not applicable"),
)  # fmt: skip

#: The order of a test record's verdict fields in ``results.json``.
_RECORD_ORDER = (
    "verdict", "outcome", "skip_reason", "failure", "expectation", "changed_failure", "region",
    "regions", "whole_test_split",
)  # fmt: skip


@dataclass(frozen=True)
class Failure:
    """What a failed test raised (exception groups flattened).

    Attributes:
        pairs: ``(type name, message)`` of each exception raised.
        signature: ``"<type>: <first line>"`` of the first one, as
            ``results.json`` records it.
    """

    pairs: tuple[tuple[str, str], ...]
    signature: str

    @property
    def kinds(self) -> frozenset[str]:
        """The type names of the exceptions raised."""
        return frozenset(t for t, _ in self.pairs)


@dataclass(frozen=True)
class TestVerdict:
    """A test's verdict and what the gate does with its pytest report.

    Attributes:
        verdict: one of the test verdicts (module docstring).
        outcome: the ``outcome`` of the test record (``passed``, ``failed``,
            ``skipped``, ``error``).
        report_outcome: what the pytest report's outcome becomes, or ``None``
            to leave it.
        wasxfail: the report's "expected deviation ..." text, or ``None``.
        longrepr: the report's new text (the skip reason when
            ``report_outcome`` is ``skipped``), or ``None`` to leave it.
        section: a ``conformance`` section for the report, or ``None``.
        expectation: the entry that explains the verdict, or ``None``.
        region: what the run saw of that entry's region (:func:`region_record`).
        regions: every region of the test, each ``{"expectation", "region"}``,
            when it has several.
        skip_reason: why the test is skipped or not applicable.
        with_failure: whether the record carries the test's failure.
        changed_failure: the test failed, but not as its entry records.
        whole_test_split: where a test with a whole-test entry deviated and
            where it held (passed through to the record).
    """

    __test__ = False  # not a pytest test class

    verdict: str
    outcome: str
    report_outcome: str | None = None
    wasxfail: str | None = None
    longrepr: str | None = None
    section: str | None = None
    expectation: object | None = None
    region: dict | None = None
    regions: tuple[dict, ...] | None = None
    skip_reason: str | None = None
    with_failure: bool = False
    changed_failure: bool = False
    whole_test_split: dict | None = None

    def record(self, failure: dict | None = None) -> dict:
        """The verdict fields of the test's ``results.json`` record, in the
        order the file has always had them; ``failure`` is the failure
        record, included when :attr:`with_failure`."""
        values = {
            "verdict": self.verdict,
            "outcome": self.outcome,
            "skip_reason": self.skip_reason,
            "failure": failure if self.with_failure else None,
            "expectation": None if self.expectation is None else self.expectation.to_dict(),
            "changed_failure": self.changed_failure or None,
            "region": self.region,
            "regions": None
            if self.regions is None
            else [
                {"expectation": r["expectation"].to_dict(), "region": r["region"]}
                for r in self.regions
            ],  # fmt: skip
            "whole_test_split": self.whole_test_split,
        }
        return {k: values[k] for k in _RECORD_ORDER if values[k] is not None}


def region_record(d, stats: Mapping[str, Mapping]) -> dict:
    """What a run saw of entry ``d``'s region: the examples on each side
    (``stats``: entry key -> ``{inside, outside, example?}``), and the first
    that deviated."""
    st = stats.get(d.key, {})
    return {
        "key": d.key,
        "text": d.region_text,
        "inside": st.get("inside", 0),
        "outside": st.get("outside", 0),
        "example": st.get("example"),
    }


def unmeasured_note(d) -> str:
    """`` (not measured on this release)`` for an entry this release's
    baseline does not show, else nothing."""
    return " (not measured on this release)" if d.unmeasured else ""


def _inside(d, stats: Mapping[str, Mapping]) -> int:
    return stats.get(d.key, {}).get("inside", 0)


def decide_test(
    *,
    phase: str,
    outcome: str,
    skip_reason: str | None = None,
    failure: Failure | None = None,
    hits: Sequence = (),
    region_stats: Mapping[str, Mapping] | None = None,
    claim_examples: Mapping[str, int] | None = None,
    examples: int = 0,
    not_applicable: Mapping[str, int] | None = None,
    claims: int = 1,
    torch_version: str = "",
    whole_test_split: dict | None = None,
) -> TestVerdict | None:
    """The verdict of one test from its outcome and its examples.

    Args:
        phase: the pytest phase, ``setup`` or ``call`` (others have no verdict).
        outcome: ``passed``, ``failed`` (with ``failure``), ``skipped`` (by
            ``pytest.skip``, with ``skip_reason``) or anything else (no verdict).
        skip_reason: the skip's text, ``Skipped: `` prefix allowed.
        failure: what a failed test raised.
        hits: the expectation entries (:class:`~conformance.expectations.Deviation`)
            that apply to the test, in file order.
        region_stats: entry key -> ``{"inside": n, "outside": n, "example"?}``.
        claim_examples: claim -> the examples that checked it and held;
            ``None`` when the test ran without an evidence ledger.
        examples: the examples the test ran.
        not_applicable: reason -> the examples not applicable for it.
        claims: how many claims the test checks.
        torch_version: the installed release, for the not-applicable text.
        whole_test_split: the ledger's split of a whole-test entry's examples.

    Returns:
        The :class:`TestVerdict`, or ``None`` when the phase and outcome give
        no verdict (a passed setup, a teardown).

    The decision, after the plugin's ``pytest_runtest_makereport``: a failed
    setup is a regression; a pass is an expected deviation when a
    single-claim test's whole-test entry matched examples or a region was
    reached, an unexpected pass when a measured whole-test entry matched
    none, region-not-reached when no region was reached, skipped when no
    example checked the claim, not-applicable when every checked example was
    not applicable, else held; a failure is a suite error
    (:data:`SUITE_ERRORS`), an unexpected pass (``DeviationRegionHeld``), an
    expected deviation (every exception matches a whole-test entry) or a
    regression (a changed failure when an entry applies).
    """
    hits = list(hits)
    stats = region_stats or {}
    na = not_applicable or {}
    if outcome == "skipped" and phase in ("setup", "call"):
        return TestVerdict(
            "skipped", "skipped", skip_reason=(skip_reason or "").removeprefix("Skipped: ")
        )
    if phase == "setup":
        if outcome == "failed":
            return TestVerdict("regression", "error", with_failure=True)
        return None
    if phase != "call":
        return None
    if outcome == "passed":
        return _passed(hits, stats, claim_examples, examples, na, claims, torch_version,
                       whole_test_split)  # fmt: skip
    if outcome == "failed" and failure is not None:
        return _failed(hits, stats, failure)
    return None


def _passed(hits, stats, claim_examples, examples, na, claims, torch_version, split):
    # unmeasured entries demand nothing: a pass is not stale for them
    whole = [d for d in hits if d.whole_test and not d.unmeasured]
    regional = [d for d in hits if not d.whole_test and (not d.unmeasured or _inside(d, stats))]
    reached = [d for d in regional if _inside(d, stats) > 0]
    # a single-claim test compared every example with its whole-test entries:
    # those that deviated as recorded
    deviated = [d for d in hits if d.whole_test and _inside(d, stats) > 0]
    if deviated and claims == 1:
        d = deviated[0]
        region = region_record(d, stats)
        held = max((claim_examples or {}).values(), default=0)
        return TestVerdict(
            "expected-deviation",
            "passed",
            report_outcome="skipped",
            wasxfail=f"expected deviation{unmeasured_note(d)} {d.key}: every failing example "
            f"deviates as recorded ({region['inside']} examples; {held} held): {d.reason}",
            expectation=d,
            region=region,
            # where the test deviated and where it held: a whole-test entry
            # whose test also held needs a region
            whole_test_split=split or None,
        )
    if whole:
        d = whole[0]
        return TestVerdict(
            "unexpected-pass",
            "passed",
            report_outcome="failed",
            longrepr=f"UNEXPECTED PASS: claim {d.claim} held, but expectation {d.key} says it "
            f"fails with {d.exception}: {d.match!r} ({d.reason}). The entry is stale: "
            "remove it from the expectations file if the fix is intended.",
            expectation=d,
        )
    if reached:
        d = reached[0]
        region = region_record(d, stats)
        others = "".join(
            f"; {e.key}: "
            + (f"deviates as recorded on {e.region_text} ({r['inside']} examples)"
               if r["inside"] else f"region {e.region_text} not reached")
            for e in regional if e is not d for r in [region_record(e, stats)]
        )  # fmt: skip
        return TestVerdict(
            "expected-deviation",
            "passed",
            report_outcome="skipped",
            wasxfail=f"expected deviation{unmeasured_note(d)} {d.key}: deviates as recorded on "
            f"{d.region_text} ({region['inside']} examples){others}; held elsewhere "
            f"({region['outside']} examples)",
            expectation=d,
            region=region,
            # every region of the test, each with its own counts (the report
            # shows one row per region)
            regions=tuple({"expectation": e, "region": region_record(e, stats)} for e in regional)
            if len(regional) > 1
            else None,
        )
    if regional:
        d = regional[0]
        return TestVerdict(
            "region-not-reached", "passed", expectation=d, region=region_record(d, stats)
        )
    nothing_checked = claim_examples is not None and not any(claim_examples.values())
    if nothing_checked and not sum(na.values()):
        # No example checked the claim (every one was rejected before a
        # check): not evidence, so not "held".
        reason = (
            f"no example checked the claim ({examples} examples ran, each rejected before a check)"
        )
        return TestVerdict(
            "skipped", "skipped", report_outcome="skipped", longrepr=reason, skip_reason=reason
        )
    if nothing_checked:
        # every example that reached the test was not applicable (the others
        # were rejected by ``assume``)
        text = "; ".join(f"{r} ({n} examples)" for r, n in sorted(na.items()))
        reason = f"not applicable on torch {torch_version}: {text}"
        return TestVerdict(
            "not-applicable",
            "skipped",
            report_outcome="skipped",
            longrepr=reason,
            skip_reason=reason,
        )
    return TestVerdict("held", "passed")


def _failed(hits, stats, failure: Failure) -> TestVerdict:
    whole = [d for d in hits if d.whole_test]
    regional = [d for d in hits if not d.whole_test]
    match = next((d for d in whole if all(d.matches_failure(t, m) for t, m in failure.pairs)), None)
    if failure.kinds & SUITE_ERRORS:
        return TestVerdict(
            "suite-error",
            "failed",
            with_failure=True,
            section="SUITE ERROR: a defect of the suite, not a verdict on torch",
        )
    if "DeviationRegionHeld" in failure.kinds:
        d = regional[0] if regional else hits[0]
        return TestVerdict(
            "unexpected-pass",
            "failed",
            with_failure=True,
            expectation=d,
            region=region_record(d, stats),
        )
    if match is not None:
        return TestVerdict(
            "expected-deviation",
            "failed",
            report_outcome="skipped",
            wasxfail=f"expected deviation{unmeasured_note(match)} {match.key}: {match.reason}",
            with_failure=True,
            expectation=match,
        )
    if not hits:
        return TestVerdict("regression", "failed", with_failure=True)
    d = hits[0]
    return TestVerdict(
        "regression",
        "failed",
        with_failure=True,
        expectation=d,
        changed_failure=True,
        region=None if d.whole_test else region_record(d, stats),
        section=f"CHANGED FAILURE: expected {d.exception}: {d.match!r} per {d.key}, "
        f"got {failure.signature}",
    )


@dataclass(frozen=True)
class PerClaim:
    """A test of several claims with whole-test entries, split per claim
    (:func:`per_claim_deviations`).

    Attributes:
        record: the test's new ``results.json`` record.
        failures: claim -> a replacement failure record, for each claim whose
            later violation differs from its entry.
        report_outcome: what the pytest report's outcome becomes, or ``None``.
        wasxfail: the report's "expected deviation ..." text, or ``None``.
        clear_longrepr: whether the report's text is cleared (nothing failed).
        section: a ``conformance`` section for the report, or ``None``.
    """

    record: dict
    failures: dict
    report_outcome: str | None = None
    wasxfail: str | None = None
    clear_longrepr: bool = False
    section: str | None = None


def per_claim_deviations(
    record: Mapping, whole: Sequence, failures: Mapping[str, Mapping], muted: Mapping | None = None
) -> PerClaim:
    """The verdict of a test of several claims that has whole-test deviations.

    Args:
        record: the test's record so far (:meth:`TestVerdict.record`).
        whole: its whole-test entries (:class:`~conformance.expectations.Deviation`).
        failures: claim -> the failure (``exception``, ``message``) first
            attributed to it.
        muted: claim -> the ``[exception, message, count]`` the re-runs
            recorded with the claim muted.

    Each deviation covers its own claim only: a claim whose failure has the
    recorded signature is an expected deviation (``claim_expectations``), and
    any other claim's failure is a regression - one claim's entry never
    explains another claim's failure, even one the same failure text cites.
    Every later violation of an explained claim must have the entry's
    signature too; one that differs is a regression (``changed_violations``).
    A deviating claim that never failed is "region not reached"
    (``unreached_claims``): a whole-test entry names no region, so a run whose
    examples (the state machine's programs) never met the deviating input
    cannot tell a fix from a miss - the claim's single-step tests, whose
    entries have regions, report a fix as an unexpected pass.
    The test's verdict is the worst of these; its other claims keep the
    verdicts their own examples earned (the test was re-run with the failed
    claims muted).
    """
    expected: dict[str, object] = {}
    stale: dict[str, object] = {}
    for d in whole:
        f = failures.get(d.claim)
        if f is None:
            if not d.unmeasured:
                stale.setdefault(d.claim, d)
        elif d.claim not in expected and d.matches_failure(f["exception"], f["message"]):
            expected[d.claim] = d
    changed: dict[str, list] = {}
    replaced: dict[str, dict] = {}
    for c in list(expected):
        own = [e for e in whole if e.claim == c]
        other = [
            v for v in (muted or {}).get(c, [])
            if not any(e.matches_failure(v[0], v[1]) for e in own)
        ]  # fmt: skip
        if other:
            changed[c] = other
            del expected[c]
            first = other[0][1].splitlines()[0] if other[0][1] else ""
            replaced[c] = {
                "exception": other[0][0],
                "message": other[0][1],
                "signature": f"{other[0][0]}: {first}"[:500],
                "falsifying_example": None,
                "reproduce": None,
                "notes": "a later violation of a claim whose first failure matched its entry",
            }
    stale = {c: d for c, d in stale.items() if c not in expected}
    unexplained = [c for c in failures if c not in expected]
    out = {k: v for k, v in record.items() if k not in ("expectation", "changed_failure")}
    section = None
    if changed:
        out["changed_violations"] = changed
        section = "CHANGED FAILURE: " + "; ".join(
            f"{c}: a later violation reads {v[0][0]}: {v[0][1].splitlines()[0][:300]!r}, "
            "not the recorded "
            "signature" for c, v in changed.items()
        )  # fmt: skip
    if expected:
        out["claim_expectations"] = {c: d.to_dict() for c, d in expected.items()}
    if stale:
        out["unreached_claims"] = {c: d.to_dict() for c, d in stale.items()}
    if unexplained:
        out["verdict"] = "regression"
        return PerClaim(out, replaced, report_outcome="failed", section=section)
    if expected:
        out["verdict"] = "expected-deviation"
        out["expectation"] = next(iter(expected.values())).to_dict()
        text = "expected deviation " + ", ".join(x.key for x in expected.values())
        return PerClaim(out, replaced, report_outcome="skipped", wasxfail=text, section=section)
    if stale:
        out["verdict"] = "region-not-reached"
        out["expectation"] = next(iter(stale.values())).to_dict()
        out.pop("failure", None)
        return PerClaim(out, replaced, report_outcome="passed", clear_longrepr=True,
                        section=section)  # fmt: skip
    return PerClaim(out, replaced, section=section)


def _unexercised(t: Mapping) -> str:
    """Why a claim of test ``t`` that no example checked is skipped."""
    return f"no example of this test exercised the claim ({t.get('examples') or 0} examples ran)"


def claim_view(t: dict, cid: str) -> tuple[dict, int]:
    """Claim ``cid``'s share of test record ``t`` (a ``results.json`` test).

    Returns the record as this claim's verdict reads it (``t`` itself when
    the test's verdict is the claim's) and the examples that checked the claim.

    A test of several claims records ``failed_claims`` (it was re-run with
    those muted), ``claim_examples``, ``claim_expectations`` (the claims whose
    failure matched their entry), ``unreached_claims`` and, for regional
    entries, ``regions``: a failed claim keeps its own failure (an expected
    deviation when its entry explains it); a deviating claim that never
    failed is region-not-reached; a region's claim deviates when its region
    was reached; every other claim is held when examples checked it, else
    skipped.
    """
    claims = t.get("claims", [])
    examples = t.get("examples") or 0
    per_claim = t.get("claim_examples")
    if per_claim is not None and len(claims) > 1:
        examples = per_claim.get(cid, 0)
    failed = t.get("failed_claims")
    known = (t.get("claim_expectations") or {}).get(cid)
    stale = (t.get("unreached_claims") or {}).get(cid)
    regions = {}
    if t.get("verdict") in ("expected-deviation", "region-not-reached"):
        regions = {r["expectation"]["claim"]: r for r in t.get("regions") or []}
        if not regions and t.get("region") and t.get("expectation"):
            regions = {t["expectation"]["claim"]: {"expectation": t["expectation"],
                                                   "region": t["region"]}}  # fmt: skip
    view = t
    if failed and cid in failed:
        own = (t.get("claim_failures") or {}).get(cid)
        if own:
            view = {**t, "failure": own}
        if known:  # this claim's failure is its recorded deviation
            view = {**view, "verdict": "expected-deviation", "expectation": known}
        return view, examples
    if stale:
        return {**t, "verdict": "region-not-reached", "expectation": stale,
                "failure": None}, examples  # fmt: skip
    if known:
        return {**t, "verdict": "expected-deviation", "expectation": known}, examples
    if regions and len(claims) > 1:
        # A multi-claim test whose deviations have regions: each region's
        # claim deviates (or its region was not reached); the test's other
        # claims rest on the examples that checked them.
        own = regions.get(cid)
        if own:
            reached = own["region"].get("inside", 0) > 0
            verdict = "expected-deviation" if reached else "region-not-reached"
            return {**t, **own, "verdict": verdict}, examples
        cleared = {"expectation": None, "region": None}
        if examples > 0:
            return {**t, "verdict": "held", "failure": None, **cleared}, examples
        return {**t, "verdict": "skipped", "failure": None, **cleared,
                "skip_reason": _unexercised(t)}, examples  # fmt: skip
    if failed or t.get("claim_expectations") or t.get("unreached_claims") or (
        per_claim is not None and len(claims) > 1 and t.get("verdict") == "held"
    ):  # fmt: skip
        # Another claim of this test failed (the test was re-run with it
        # muted), or the test passed: either way this claim's verdict rests
        # on the examples that checked it.
        if examples > 0:
            return {**t, "verdict": "held", "failure": None}, examples
        return {**t, "verdict": "skipped", "failure": None,
                "skip_reason": _unexercised(t)}, examples  # fmt: skip
    return view, examples


def cell_verdict(test_verdicts: set[str] | frozenset[str]) -> str:
    """The claim verdict of a cell (claim, device) from the verdicts of the
    tests in it (each read through :func:`claim_view`): any suite error ->
    ``ERROR``; any regression -> ``FAILED``; else unexpected pass, expected
    deviation, region not reached, held, not applicable in that order; else
    ``skipped``. ``held`` is before the declared-domain check, which
    :func:`reports.results.claim_verdicts` applies."""
    for test, claim in _CELL_PRECEDENCE:
        if test in test_verdicts:
            return claim
    return "skipped"
