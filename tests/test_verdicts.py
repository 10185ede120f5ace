"""The verdict function, one row per situation (:mod:`conformance.verdicts`).

Each row gives a test's outcome and examples as the gate plugin hands them
over, and the verdict, record outcome, report changes and message the gate
must produce; the texts are those the reports, baselines and ``compare`` read.
"""

from __future__ import annotations

import pytest

from conformance.expectations import Deviation
from conformance.verdicts import (
    Failure,
    TestVerdict,
    cell_verdict,
    claim_view,
    decide_test,
    per_claim_deviations,
)


def _entry(region=None, *, claim="a.x", unmeasured=False, ordinal=0, match="boom") -> Deviation:
    return Deviation(
        index=0, claim=claim, exception="RuntimeError", match=match, reason="why",
        upstream="none found", test="test_x", torch=(">=2.1",), region=region,
        measured=("2.13.0",), unmeasured=unmeasured, ordinal=ordinal,
    )  # fmt: skip


WHOLE = _entry()
WHOLE_KEY = "a.x[test_x]@torch>=2.1"
OPS = _entry(({"op": ["add", "sub"]},))
VIEW = _entry(({"view": True},), ordinal=2)
BOOM = Failure((("RuntimeError", "boom: the recorded failure"),), "RuntimeError: boom: ...")
OTHER = Failure((("AssertionError", "values differ"),), "AssertionError: values differ")

#: (situation, decide_test arguments, expected fields of the TestVerdict)
ROWS = [
    ("held with checked examples",
     dict(claim_examples={"a.x": 5}, examples=5),
     dict(verdict="held", outcome="passed", report_outcome=None, wasxfail=None)),
    ("held with some examples not applicable",
     dict(claim_examples={"a.x": 5}, examples=9, not_applicable={"no kernel": 4}),
     dict(verdict="held", outcome="passed")),
    ("held with zero checked is not held",
     dict(claim_examples={"a.x": 0}, examples=7),
     dict(verdict="skipped", outcome="skipped", report_outcome="skipped",
          longrepr="no example checked the claim (7 examples ran, each rejected before a check)",
          skip_reason="no example checked the claim (7 examples ran, each rejected before a "
          "check)")),
    ("all not applicable",
     dict(claim_examples={"a.x": 0}, examples=6, torch_version="2.13.0",
          not_applicable={"old api": 2, "no kernel": 3}),
     dict(verdict="not-applicable", outcome="skipped", report_outcome="skipped",
          skip_reason="not applicable on torch 2.13.0: no kernel (3 examples); old api "
          "(2 examples)")),
    ("a test run without a ledger passed",
     dict(claim_examples=None, examples=0),
     dict(verdict="held", outcome="passed")),
    ("whole-test deviation matched the failure",
     dict(outcome="failed", failure=BOOM, hits=[WHOLE]),
     dict(verdict="expected-deviation", outcome="failed", report_outcome="skipped",
          wasxfail=f"expected deviation {WHOLE_KEY}: why", expectation=WHOLE,
          with_failure=True)),
    ("whole-test deviation, every failing example deviated as recorded",
     dict(hits=[WHOLE], region_stats={WHOLE_KEY: {"inside": 3, "outside": 0}},
          claim_examples={"a.x": 4}, whole_test_split={"deviated": 3, "held": 4}),
     dict(verdict="expected-deviation", outcome="passed", report_outcome="skipped",
          wasxfail=f"expected deviation {WHOLE_KEY}: every failing example deviates as "
          "recorded (3 examples; 4 held): why",
          whole_test_split={"deviated": 3, "held": 4})),
    ("whole-test entry but passed: unexpected pass",
     dict(hits=[WHOLE], claim_examples={"a.x": 5}),
     dict(verdict="unexpected-pass", outcome="passed", report_outcome="failed",
          longrepr=f"UNEXPECTED PASS: claim a.x held, but expectation {WHOLE_KEY} says it "
          "fails with RuntimeError: 'boom' (why). The entry is stale: remove it from the "
          "expectations file if the fix is intended.", expectation=WHOLE)),
    ("unmeasured whole-test entry passed: held",
     dict(hits=[_entry(unmeasured=True)], claim_examples={"a.x": 5}),
     dict(verdict="held", outcome="passed", expectation=None)),
    ("unmeasured whole-test entry matched: noted as not measured",
     dict(outcome="failed", failure=BOOM, hits=[_entry(unmeasured=True)]),
     dict(verdict="expected-deviation", wasxfail="expected deviation (not measured on this "
          f"release) {WHOLE_KEY}: why")),
    ("regional deviation reached",
     dict(hits=[OPS], claim_examples={"a.x": 5},
          region_stats={WHOLE_KEY: {"inside": 2, "outside": 5, "example": "x=1\n-> E: m"}}),
     dict(verdict="expected-deviation", outcome="passed", report_outcome="skipped",
          wasxfail=f"expected deviation {WHOLE_KEY}: deviates as recorded on op in {{add, sub}} "
          "(2 examples); held elsewhere (5 examples)", expectation=OPS, regions=None,
          region={"key": WHOLE_KEY, "text": "op in {add, sub}", "inside": 2, "outside": 5,
                  "example": "x=1\n-> E: m"})),
    ("two regions, one reached",
     dict(hits=[OPS, VIEW], claim_examples={"a.x": 5},
          region_stats={WHOLE_KEY: {"inside": 2, "outside": 5},
                        WHOLE_KEY + "#2": {"inside": 0, "outside": 5}}),
     dict(verdict="expected-deviation",
          wasxfail=f"expected deviation {WHOLE_KEY}: deviates as recorded on op in {{add, sub}} "
          f"(2 examples); {WHOLE_KEY}#2: region view = True not reached; held elsewhere "
          "(5 examples)")),
    ("regional deviation not reached",
     dict(hits=[OPS], claim_examples={"a.x": 5},
          region_stats={WHOLE_KEY: {"inside": 0, "outside": 5}}),
     dict(verdict="region-not-reached", outcome="passed", report_outcome=None, wasxfail=None,
          expectation=OPS,
          region={"key": WHOLE_KEY, "text": "op in {add, sub}", "inside": 0, "outside": 5,
                  "example": None})),
    ("unmeasured regional entry not reached: held",
     dict(hits=[_entry(({"op": "add"},), unmeasured=True)], claim_examples={"a.x": 5}),
     dict(verdict="held", expectation=None)),
    ("regional held inside: DeviationRegionHeld",
     dict(outcome="failed", hits=[OPS],
          failure=Failure((("DeviationRegionHeld", "claim a.x held inside"),), "D: c"),
          region_stats={WHOLE_KEY: {"inside": 0, "outside": 3}}),
     dict(verdict="unexpected-pass", outcome="failed", report_outcome=None, expectation=OPS,
          with_failure=True)),
    ("regional held inside beside a whole-test entry: the regional entry explains",
     dict(outcome="failed", hits=[WHOLE, OPS],
          failure=Failure((("DeviationRegionHeld", "claim a.x held inside"),), "D: c"),
          region_stats={WHOLE_KEY: {"inside": 0, "outside": 3}}),
     dict(verdict="unexpected-pass", expectation=OPS)),
    ("failure outside the regions: regression (changed failure)",
     dict(outcome="failed", failure=OTHER, hits=[OPS],
          region_stats={WHOLE_KEY: {"inside": 0, "outside": 3}}),
     dict(verdict="regression", outcome="failed", report_outcome=None, changed_failure=True,
          expectation=OPS, with_failure=True,
          section=f"CHANGED FAILURE: expected RuntimeError: 'boom' per {WHOLE_KEY}, got "
          "AssertionError: values differ")),
    ("whole-test entry, another failure: regression without a region",
     dict(outcome="failed", failure=OTHER, hits=[WHOLE]),
     dict(verdict="regression", changed_failure=True, region=None, expectation=WHOLE)),
    ("new failure without an entry: regression",
     dict(outcome="failed", failure=OTHER),
     dict(verdict="regression", outcome="failed", changed_failure=False, expectation=None,
          section=None, with_failure=True)),
    ("suite error",
     dict(outcome="failed", hits=[WHOLE],
          failure=Failure((("FailedHealthCheck", "too slow"),), "FailedHealthCheck: too slow")),
     dict(verdict="suite-error", outcome="failed", report_outcome=None, expectation=None,
          section="SUITE ERROR: a defect of the suite, not a verdict on torch",
          with_failure=True)),
    ("a failure beside a suite error is still a suite error",
     dict(outcome="failed", hits=[WHOLE], failure=Failure(
         (("RuntimeError", "boom"), ("RegionFeatureMissing", "reads op")), "RuntimeError: boom")),
     dict(verdict="suite-error")),
    ("skipped by pytest.skip",
     dict(outcome="skipped", skip_reason="Skipped: needs a cuda device"),
     dict(verdict="skipped", outcome="skipped", report_outcome=None,
          skip_reason="needs a cuda device")),
    ("skipped in setup",
     dict(phase="setup", outcome="skipped", skip_reason="no such backend"),
     dict(verdict="skipped", outcome="skipped", skip_reason="no such backend")),
    ("setup failed: regression",
     dict(phase="setup", outcome="failed", failure=OTHER),
     dict(verdict="regression", outcome="error", with_failure=True, expectation=None)),
    ("multi-claim test with a whole-test entry that deviated: decided per claim",
     dict(hits=[WHOLE], claims=2, region_stats={WHOLE_KEY: {"inside": 3, "outside": 0}},
          claim_examples={"a.x": 0, "a.y": 5}),
     dict(verdict="unexpected-pass", outcome="passed", expectation=WHOLE)),
    ("multi-claim test held",
     dict(claims=3, claim_examples={"a.x": 2, "a.y": 0, "a.z": 1}),
     dict(verdict="held", outcome="passed")),
]  # fmt: skip


@pytest.mark.parametrize(("args", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_verdict_table(args, expected):
    v = decide_test(**{"phase": "call", "outcome": "passed", **args})
    assert isinstance(v, TestVerdict)
    got = {k: getattr(v, k) for k in expected}
    assert got == expected


@pytest.mark.parametrize(
    ("phase", "outcome"),
    [("setup", "passed"), ("teardown", "passed"), ("teardown", "failed"), ("call", "xfailed")],
)
def test_no_verdict(phase, outcome):
    assert decide_test(phase=phase, outcome=outcome, failure=OTHER) is None


def test_record_keeps_the_field_order_of_results_json():
    v = decide_test(
        phase="call", outcome="failed", failure=OTHER, hits=[OPS],
        region_stats={WHOLE_KEY: {"inside": 0, "outside": 3}},
    )  # fmt: skip
    rec = v.record({"exception": "AssertionError"})
    assert list(rec) == ["verdict", "outcome", "failure", "expectation", "changed_failure",
                         "region"]  # fmt: skip
    assert rec["expectation"] == OPS.to_dict() and rec["changed_failure"] is True
    assert rec["region"] == {"key": WHOLE_KEY, "text": "op in {add, sub}", "inside": 0,
                             "outside": 3, "example": None}  # fmt: skip
    two = decide_test(
        phase="call", outcome="passed", hits=[OPS, VIEW], claim_examples={"a.x": 1},
        region_stats={WHOLE_KEY: {"inside": 1}},
    ).record()  # fmt: skip
    assert list(two) == ["verdict", "outcome", "expectation", "region", "regions"]
    assert [r["region"]["key"] for r in two["regions"]] == [WHOLE_KEY, WHOLE_KEY + "#2"]
    assert two["regions"][1]["expectation"] == VIEW.to_dict()
    assert list(decide_test(phase="call", outcome="passed").record()) == ["verdict", "outcome"]


A, B = _entry(claim="a.x"), _entry(claim="a.y", match="bang")
FAILS = {"exception": "RuntimeError", "message": "boom: first"}

#: (situation, per_claim_deviations arguments, expected record fields, report changes)
PER_CLAIM = [
    ("claim's failure matches its entry, the other claim held",
     dict(whole=[A], failures={"a.x": FAILS}),
     {"verdict": "expected-deviation", "claim_expectations": {"a.x": A.to_dict()},
      "expectation": A.to_dict()},
     dict(report_outcome="skipped", wasxfail=f"expected deviation {WHOLE_KEY}",
          clear_longrepr=False, section=None)),
    ("one claim's entry never explains another claim's failure",
     dict(whole=[A], failures={"a.x": FAILS, "a.y": FAILS}),
     {"verdict": "regression", "claim_expectations": {"a.x": A.to_dict()}},
     dict(report_outcome="failed", wasxfail=None)),
    ("a deviating claim that never failed: region not reached",
     dict(whole=[A, B], failures={"a.x": FAILS}),
     {"verdict": "expected-deviation", "unreached_claims": {"a.y": B.to_dict()}},
     dict(report_outcome="skipped")),
    ("no failure at all: region not reached, the failure text cleared",
     dict(whole=[A], failures={}),
     {"verdict": "region-not-reached", "unreached_claims": {"a.x": A.to_dict()},
      "expectation": A.to_dict()},
     dict(report_outcome="passed", clear_longrepr=True)),
    ("an unmeasured entry whose claim never failed demands nothing",
     dict(whole=[_entry(claim="a.x", unmeasured=True)], failures={}),
     {"verdict": "unexpected-pass", "unreached_claims": None, "expectation": None},
     dict(report_outcome=None, wasxfail=None, clear_longrepr=False)),
    ("a later violation differs from the entry: regression",
     dict(whole=[A], failures={"a.x": FAILS},
          muted={"a.x": [["RuntimeError", "boom again", 2], ["ValueError", "other\nmore", 1]]}),
     {"verdict": "regression", "changed_violations": {"a.x": [["ValueError", "other\nmore", 1]]}},
     dict(report_outcome="failed",
          section="CHANGED FAILURE: a.x: a later violation reads ValueError: 'other', not the "
          "recorded signature")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "fields", "report"), [r[1:] for r in PER_CLAIM], ids=[r[0] for r in PER_CLAIM]
)
def test_per_claim_table(args, fields, report):
    base = {"verdict": "unexpected-pass", "outcome": "passed", "failure": {"x": 1},
            "expectation": {"key": "old"}, "changed_failure": True}  # fmt: skip
    split = per_claim_deviations(base, **args)
    assert {k: split.record.get(k) for k in fields} == fields
    assert {k: getattr(split, k) for k in report} == report
    assert "changed_failure" in base  # the record passed in is left as it was
    if fields["verdict"] == "region-not-reached":
        assert "failure" not in split.record
    if "changed_violations" in fields:
        assert split.failures["a.x"]["signature"] == "ValueError: other"
    else:
        assert split.failures == {}


def _test(**kw) -> dict:
    return {"nodeid": "t", "claims": ["a.x", "a.y"], "examples": 9, "verdict": "held", **kw}


REGION = {"key": WHOLE_KEY, "inside": 2, "outside": 3}
#: (situation, test record, claim, expected verdict, expected examples)
VIEWS = [
    ("single-claim test: the test's verdict", dict(claims=["a.x"], verdict="regression"),
     "a.x", "regression", 9),
    ("multi-claim test held: the claim's own examples", dict(claim_examples={"a.x": 4}),
     "a.x", "held", 4),
    ("multi-claim test, a claim no example checked", dict(claim_examples={"a.x": 4}),
     "a.y", "skipped", 0),
    ("failed claim explained by its entry",
     dict(verdict="regression", failed_claims=["a.x", "a.y"], claim_expectations={"a.x": {"claim": "a.x"}},
          claim_failures={"a.x": {"m": 1}}, claim_examples={}), "a.x", "expected-deviation", 0),
    ("failed claim without an entry", dict(verdict="regression", failed_claims=["a.y"],
     claim_examples={"a.x": 3}), "a.y", "regression", 0),
    ("another claim failed: this one held on its examples",
     dict(verdict="regression", failed_claims=["a.y"], claim_examples={"a.x": 3}), "a.x", "held",
     3),
    ("unreached whole-test claim", dict(verdict="expected-deviation",
     unreached_claims={"a.y": {"claim": "a.y"}}, claim_examples={"a.y": 2}), "a.y",
     "region-not-reached", 2),
    ("multi-claim test not applicable: the test's verdict",
     dict(verdict="not-applicable", claim_examples={"a.x": 0, "a.y": 0}), "a.x",
     "not-applicable", 0),
    ("region's claim reached",
     dict(verdict="expected-deviation", expectation={"claim": "a.x"}, region=REGION,
          claim_examples={"a.x": 0, "a.y": 5}), "a.x", "expected-deviation", 0),
    ("region's claim not reached",
     dict(verdict="region-not-reached", expectation={"claim": "a.x"},
          region={**REGION, "inside": 0}, claim_examples={"a.x": 0, "a.y": 5}), "a.x",
     "region-not-reached", 0),
    ("the other claim of a regional test held",
     dict(verdict="expected-deviation", expectation={"claim": "a.x"}, region=REGION,
          claim_examples={"a.x": 0, "a.y": 5}), "a.y", "held", 5),
    ("the other claim of a regional test unexercised",
     dict(verdict="expected-deviation", expectation={"claim": "a.x"}, region=REGION,
          claim_examples={"a.x": 1, "a.y": 0}), "a.y", "skipped", 0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("record", "cid", "verdict", "examples"), [r[1:] for r in VIEWS], ids=[r[0] for r in VIEWS]
)
def test_claim_view_table(record, cid, verdict, examples):
    t = _test(**record)
    view, n = claim_view(t, cid)
    assert (view["verdict"], n) == (verdict, examples)
    if verdict == "skipped":
        assert view["skip_reason"] == "no example of this test exercised the claim (9 examples ran)"
    if view is not t:
        assert t == _test(**record)  # the test record is not changed


def test_claim_view_of_a_failed_claim_carries_its_own_failure():
    t = _test(verdict="regression", failed_claims=["a.x"], claim_failures={"a.x": {"m": 1}},
              failure={"m": 0}, claim_examples={"a.y": 2})  # fmt: skip
    assert claim_view(t, "a.x")[0]["failure"] == {"m": 1}
    assert claim_view(t, "a.y")[0]["failure"] is None
    unreached = _test(verdict="regression", failed_claims=["a.x"], failure={"m": 0},
                      unreached_claims={"a.y": {"claim": "a.y"}}, claim_examples={})  # fmt: skip
    view = claim_view(unreached, "a.y")[0]
    assert (view["verdict"], view["failure"]) == ("region-not-reached", None)
    assert view["expectation"] == {"claim": "a.y"}


@pytest.mark.parametrize(
    ("verdicts", "claim"),
    [
        ({"held", "suite-error", "regression"}, "ERROR"),
        ({"held", "regression", "unexpected-pass"}, "FAILED"),
        ({"unexpected-pass", "expected-deviation"}, "unexpected pass"),
        ({"expected-deviation", "region-not-reached", "held"}, "expected deviation"),
        ({"region-not-reached", "held"}, "region not reached"),
        ({"held", "not-applicable", "skipped"}, "held"),
        ({"not-applicable", "skipped"}, "not applicable"),
        ({"skipped"}, "skipped"),
    ],
)
def test_cell_verdict_precedence(verdicts, claim):
    assert cell_verdict(verdicts) == claim
