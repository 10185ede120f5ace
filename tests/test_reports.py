"""Result files load and validate; reports render; compare finds regressions."""

from __future__ import annotations

import copy
import json

import pytest

from reports.compare import compare_docs
from reports.html import render_report, reproducer
from reports.results import ResultsError, claim_verdicts, load_results, summarize


def _doc() -> dict:
    def test(nodeid, claims, device, verdict, **kw):
        return {"nodeid": nodeid, "name": nodeid.split("::")[1].split("[")[0], "claims": claims,
                "device": device, "outcome": "passed", "verdict": verdict, "duration_s": 0.1,
                "examples": 100, **kw}  # fmt: skip

    failure = {
        "exception": "AssertionError",
        "message": "detach() result does not share storage with its input",
        "signature": "AssertionError: detach() result does not share storage with its input",
        "falsifying_example": "Falsifying example: test_x(\n    device='cpu',\n    spec=TensorSpec(dtype=torch.float64, base_shape=(2, 2), storage=(0.0, 0.0, 0.0, 0.0), views=(('permute', (1, 0)),), channels_last=False),\n)",
        "reproduce": "You can reproduce this example by temporarily adding @reproduce_failure('6.155.2', b'AXicY2BkYGBgZGBgAAAAFQAC') as a decorator on your test case",
        "notes": None,
    }
    return {
        "schema_version": 1,
        "suite": {
            "name": "torch-semantics-conformance",
            "version": "0.1.0",
            "commit": "abc",
            "dirty": False,
        },
        "environment": {
            "torch": "2.13.0+cpu",
            "torch_cuda": None,
            "python": "3.11.7",
            "hypothesis": "6.155.2",
            "numpy": "2.4.6",
            "profile": "ci",
            "devices": ["cpu", "cuda"],
            "started": "s",
            "finished": "f",
            "wall_s": 1.0,
            "cuda_device": None,
        },  # fmt: skip
        "areas": {"a": "Area A", "b": "Area <B>"},
        "claims": {
            "a.held": {
                "id": "a.held",
                "area": "a",
                "statement": "holds",
                "kind": "documented",
                "sources": [{"doc": "torch.clone", "url": "https://x", "quote": "Returns a copy"}],
            },
            "a.dev": {
                "id": "a.dev",
                "area": "a",
                "statement": "deviates",
                "kind": "folklore",
                "sources": [{"seed": "004_a7d3c10075143ae8.txt"}],
            },
            "b.fail": {
                "id": "b.fail",
                "area": "b",
                "statement": "breaks <script>",
                "kind": "characterization",
                "note": "why",
                "sources": [{"url": "https://y"}],
            },
            "b.measured": {
                "id": "b.measured",
                "area": "b",
                "statement": "fast",
                "kind": "folklore",
                "check": "measurement",
                "sources": [{"seed": "001_7607ef73017ad62c.txt"}],
            },
        },  # fmt: skip
        "tests": [
            test("conformance/test_a.py::test_held[cpu]", ["a.held"], "cpu", "held"),
            test(
                "conformance/test_a.py::test_held[cuda]",
                ["a.held"],
                "cuda",
                "skipped",
                skip_reason="CUDA not available on this machine",
            ),  # fmt: skip
            test(
                "conformance/test_a.py::test_dev[cpu]",
                ["a.dev"],
                "cpu",
                "expected-deviation",
                failure=dict(failure, exception="Failed", signature="Failed: DID NOT RAISE"),
                expectation={
                    "key": "a.dev",
                    "reason": "stale",
                    "link": "https://z",
                    "exception": "Failed",
                    "match": "DID NOT RAISE",
                },
            ),  # fmt: skip
            test(
                "conformance/test_b.py::test_fail[cpu]",
                ["b.fail"],
                "cpu",
                "regression",
                failure=failure,
            ),
        ],
        "expectations": {"stale": [], "all": []},
        "measurements": [],
    }


def test_verdict_aggregation():
    cv = claim_verdicts(_doc())
    assert cv["a.held"]["cpu"]["verdict"] == "held"
    assert cv["a.held"]["cuda"]["verdict"] == "skipped"
    assert cv["a.dev"]["cpu"]["verdict"] == "expected deviation"
    assert cv["b.fail"]["cpu"]["verdict"] == "FAILED"
    assert cv["b.measured"]["cpu"]["verdict"] == "not run"
    s = summarize(_doc())
    assert not s["gate_passed"]
    assert s["claims"]["FAILED"] == 1 and s["claims"]["measured"] == 1
    assert s["kinds"] == {"documented": 1, "folklore": 2, "characterization": 1}


def test_report_renders_everything_a_reviewer_needs():
    page = render_report(_doc())
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    for needle in ("a.held", "b.fail", "Area &lt;B&gt;", "gate FAILED", "004_a7d3c10075143ae8.txt",
                   "DID NOT RAISE", "TensorSpec(dtype=torch.float64", "@reproduce_failure(",
                   "CUDA not available on this machine", 'id="f-area"', 'id="f-verdict"'):  # fmt: skip
        assert needle in page, needle
    assert "<script>" not in page.replace("<script>\n(function", "")  # statement text is escaped
    assert "<link" not in page and "src=" not in page  # self-contained


def test_reproducer_is_copy_pasteable():
    t = _doc()["tests"][3]
    rep = reproducer(t)
    assert rep.splitlines()[0].startswith(
        "python -m pytest 'conformance/test_b.py::test_fail[cpu]'"
    )
    assert "@reproduce_failure('6.155.2', b'AXicY2BkYGBgZGBgAAAAFQAC')" in rep


def test_load_results_roundtrip_and_errors(tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps(_doc()))
    assert load_results(p)["schema_version"] == 1
    cases = {
        "missing": (None, "no such result file"),
        "notjson": ("{", "not JSON"),
        "array": ("[]", "top level is not an object"),
        "schema": (json.dumps({**_doc(), "schema_version": 2}), "schema_version 2"),
        "section": (json.dumps({k: v for k, v in _doc().items() if k != "tests"}), "missing tests"),
        "verdict": (json.dumps({**_doc(), "tests": [{"verdict": "maybe"}]}), "no valid verdict"),
    }
    for name, (text, needle) in cases.items():
        q = tmp_path / f"{name}.json"
        if text is not None:
            q.write_text(text)
        with pytest.raises(ResultsError) as e:
            load_results(q)
        assert needle in str(e.value) and "\n" not in str(e.value)


def test_compare_lists_regressions_first_with_examples():
    base = _doc()
    base["tests"][3] = {**base["tests"][3], "verdict": "held", "failure": None}
    new = _doc()
    diff = compare_docs(base, new)
    assert [r["claim"] for r in diff["regressions"]] == ["b.fail"]
    assert diff["regressions"][0]["new_example"].startswith("Falsifying example")
    assert compare_docs(new, copy.deepcopy(new))["regressions"] == []


def test_compare_flags_changed_deviation_signature():
    """An expected deviation whose observed failure changed is listed, even
    when the new failure still matches the recorded entry (issue 28: compare
    the observed signature, not the recorded one)."""
    base, new = _doc(), _doc()
    new["tests"][2]["failure"] = dict(
        new["tests"][2]["failure"], signature="Failed: DID NOT RAISE <class 'RuntimeError'>"
    )
    diff = compare_docs(base, new)
    assert [r["claim"] for r in diff["regressions"]] == ["a.dev"]


def test_compare_reads_a_counted_deviation_from_its_first_example():
    """A deviation counted example by example keeps no failure: its observed
    signature is that of the first example that deviated; an entry whose
    recorded text changed while torch's failure did not is no change."""
    base, new = _doc(), _doc()
    for doc, sig in ((base, "Failed: DID NOT RAISE"), (new, "Failed: DID NOT RAISE")):
        t = doc["tests"][2]
        t.pop("failure")
        t["expectation"] = dict(t["expectation"], claim="a.dev", whole_test=True)
        t["region"] = {"inside": 3, "outside": 0, "example": f"spec=...\n-> {sig}"}
    new["tests"][2]["expectation"] = dict(new["tests"][2]["expectation"], match="DID NOT")
    assert compare_docs(base, new)["regressions"] == []
    new["tests"][2]["region"]["example"] = "spec=...\n-> AssertionError: other"
    assert [r["claim"] for r in compare_docs(base, new)["regressions"]] == ["a.dev"]


def test_compare_cli_exit_codes_and_diff_page(cli, tmp_path):
    base = _doc()
    base["tests"][3] = {**base["tests"][3], "verdict": "held", "failure": None}
    b, n = tmp_path / "base.json", tmp_path / "new.json"
    b.write_text(json.dumps(base))
    n.write_text(json.dumps(_doc()))
    proc = cli("compare", str(b), str(n), "-o", str(tmp_path / "diff.html"))
    assert proc.returncode == 1 and "REGRESSION" in proc.stdout and "b.fail" in proc.stdout
    page = (tmp_path / "diff.html").read_text()
    assert "b.fail" in page and "TensorSpec(dtype=torch.float64" in page
    assert cli("compare", str(n), str(n)).returncode == 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**_doc(), "schema_version": 0}))
    proc = cli("compare", str(bad), str(n))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_compare_flags_different_suite_commits():
    base, new = _doc(), _doc()
    new["suite"]["commit"] = "def"
    assert compare_docs(base, new)["same_commit"] is False


def test_matrix_marks_regressions_against_the_first_run(cli, tmp_path):
    from reports.matrix import build_matrix

    base = _doc()
    base["tests"][3] = {**base["tests"][3], "verdict": "held", "failure": None}
    base["environment"] = dict(base["environment"], torch="2.12.0")
    m = build_matrix([base, _doc()])
    assert [c["torch"] for c in m["columns"]] == ["2.12.0", "2.12.0", "2.13.0+cpu", "2.13.0+cpu"]
    row = next(r for r in m["rows"] if r["claim"] == "b.fail")
    assert row["any_regression"] and m["rows"][0]["claim"] == "b.fail"
    b, n = tmp_path / "b.json", tmp_path / "n.json"
    b.write_text(json.dumps(base))
    n.write_text(json.dumps(_doc()))
    proc = cli("matrix", str(b), str(n), "-o", str(tmp_path / "m.html"))
    assert proc.returncode == 1 and "b.fail" in (tmp_path / "m.html").read_text()


def test_proposed_expectations_parse_and_cover_failures(tmp_path):
    from conformance.expectations import load_expectations
    from reports.proposals import propose

    doc = _doc()
    doc["claims"] = {"detach.metadata-change-raises": doc["claims"]["b.fail"]}
    doc["tests"][3]["claims"] = ["detach.metadata-change-raises"]
    text = propose(doc)
    p = tmp_path / "e.toml"
    p.write_text(text)
    (entry,) = load_expectations(p)
    assert entry.claim == "detach.metadata-change-raises" and entry.test == "test_fail"
    assert entry.exception == "AssertionError" and entry.torch == (">=2.13,<2.14",)
    assert entry.measured == ("2.13.0",) and entry.upstream == "not triaged"
    assert entry.matches_failure("AssertionError", doc["tests"][3]["failure"]["message"])


def test_doc_drift_finds_present_and_vanished_quotes():
    from reports.docdrift import check_docs, normalize

    assert normalize("Returns a copy of :attr:`input`.\n  ``x``") == "Returns a copy of input. x"
    claims = {
        "a.present": {
            "sources": [{"doc": "torch.clone", "quote": "Returns a copy of :attr:`input`."}]
        },
        "a.gone": {
            "sources": [{"doc": "torch.Tensor.detach", "quote": "will instead trigger an error"}]
        },
        "a.nowhere": {"sources": [{"doc": "torch.no_such_function", "quote": "x"}]},
        "a.url": {"sources": [{"url": "https://x", "quote": "not checkable"}]},
    }
    status = {r["claim"]: r["status"] for r in check_docs(claims)}
    assert status == {"a.present": "present", "a.gone": "missing", "a.nowhere": "unresolvable"}


def test_multi_claim_failure_counts_only_for_the_cited_claims():
    """A multi-claim test's failure counts for the claims it names; its other
    claims get verdicts from their own evidence (the examples that checked
    them in the re-run with the failed claims muted), never "not reached"."""
    doc = _doc()
    doc["tests"][3] = {
        **doc["tests"][3],
        "claims": ["b.fail", "a.held"],
        "failed_claims": ["b.fail"],
        "claim_examples": {"a.held": 7},
    }
    doc["tests"] = [doc["tests"][3]]
    cv = claim_verdicts(doc)
    assert cv["b.fail"]["cpu"]["verdict"] == "FAILED"
    assert cv["a.held"]["cpu"]["verdict"] == "held"
    assert cv["a.held"]["cpu"]["examples"] == 7
    doc["tests"][0]["claim_examples"] = {}
    cv = claim_verdicts(doc)
    assert cv["a.held"]["cpu"]["verdict"] == "skipped"
    assert "no example of this test exercised" in cv["a.held"]["cpu"]["reasons"][0]


def test_report_states_the_gradient_tolerance_rule_per_dtype():
    """Tolerances are part of a verdict: the report states them per dtype."""
    from conformance.tolerances import RULES

    page = render_report({**_doc(), "tolerances": {"graphs.gradient-values": dict(RULES)}})
    assert 'id="tolerances"' in page
    for dtype in ("float64", "float32", "float16", "bfloat16"):
        assert f"<code>{dtype}</code>" in page
    assert "eps = 1.19e-07" in page  # float32's epsilon, in the float32 rule


def _small_doc(claims: tuple[str, ...], tests: list[dict]) -> dict:
    """A minimal results document: one area ``s`` holding ``claims``, and ``tests``."""
    return {
        "schema_version": 1,
        "suite": {"name": "s", "version": "0", "commit": "c"},
        "environment": {"torch": "2.13.0", "torch_cuda": None, "python": "3.11",
                        "hypothesis": "h", "numpy": "n", "profile": "ci", "devices": ["cpu"],
                        "started": "s", "finished": "f", "wall_s": 1.0, "cuda_device": None},
        "areas": {"s": "S"},
        "claims": {c: {"id": c, "area": "s", "statement": "x", "kind": "characterization",
                       "note": "n", "sources": []} for c in claims},
        "tests": tests,
        "expectations": {"stale": [], "all": []},
    }  # fmt: skip


def test_report_renders_per_claim_failures_of_a_multi_claim_test():
    """A test whose failure was attributed to one of its claims (the state
    machine, re-run with it muted) stores that claim's failure on its own;
    the report must render it among the decisions (regression: a missing
    optional key of such a failure crashed the renderer)."""
    from reports.html import render_report

    doc = _small_doc(("s.a", "s.b"), [
        {"nodeid": "t::m[cpu]", "name": "m", "claims": ["s.a", "s.b"], "device": "cpu",
         "verdict": "regression", "outcome": "failed", "examples": 3,
         "failed_claims": ["s.a"], "claim_examples": {"s.b": 3},
         "failure": {"signature": "AssertionError: [s.a] x", "message": "m"},
         "claim_failures": {"s.a": {"signature": "AssertionError: [s.a] x"}}}])  # fmt: skip
    page = render_report(doc)
    assert 'id="decision-s.a"' in page and "AssertionError: [s.a] x" in page


def test_each_region_of_a_multi_region_test_has_its_own_verdict_and_row():
    """A test of three claims with two regional deviations (one per claim,
    as test_view_of_non_contiguous_intermediate on 2.13): each region's claim
    is an expected deviation with its own counts, the third claim is held on
    its own examples (not "expected deviation"), and the report has one row
    per region naming that region's claim."""
    from reports.html import render_report

    def entry(claim, form, inside):
        exp = {"key": f"{claim}[m]", "claim": claim, "region_text": f"form in {{{form}}}",
               "whole_test": False, "exception": "ClaimViolation", "match": "differs",
               "reason": "r", "link": None, "test": "m", "torch": ">=2.13"}  # fmt: skip
        return {"expectation": exp, "region": {"key": exp["key"], "text": exp["region_text"],
                                               "inside": inside, "outside": 2, "example": None}}  # fmt: skip

    regions = [entry("s.a", "x", 1), entry("s.b", "y", 1)]
    doc = _small_doc(("s.a", "s.b", "s.c"), [
        {"nodeid": "t::m[cpu]", "name": "m", "claims": ["s.a", "s.b", "s.c"],
         "device": "cpu", "verdict": "expected-deviation", "outcome": "passed",
         "examples": 4, "claim_examples": {"s.a": 2, "s.b": 2, "s.c": 2},
         **regions[0], "regions": regions}])  # fmt: skip
    cv = claim_verdicts(doc)
    assert cv["s.a"]["cpu"]["verdict"] == "expected deviation"
    assert cv["s.b"]["cpu"]["verdict"] == "expected deviation"
    assert cv["s.c"]["cpu"]["verdict"] == "held"
    assert cv["s.b"]["cpu"]["tests"][0]["region"]["text"] == "form in {y}"
    page = render_report(doc)
    assert "form in {x}" in page and "form in {y}" in page
    assert 'href="#claim-s.b">s.b</a>' in page
