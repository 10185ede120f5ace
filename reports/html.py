"""Render a result file as one self-contained HTML page (Jinja2, inline CSS/JS)."""

from __future__ import annotations

import html
from importlib import resources

from jinja2 import Environment, StrictUndefined

from reports.results import CLAIM_VERDICTS, MEASURED, claim_verdicts, overall_verdict, summarize

_CSS_CLASS = {
    "held": "v-held",
    "expected deviation": "v-dev",
    "region not reached": "v-skip",
    "ERROR": "v-fail",
    "FAILED": "v-fail",
    "unexpected pass": "v-unexp",
    "not applicable": "v-na",
    "skipped": "v-skip",
    "not run": "v-skip",
    "measured": "v-meas",
}


def _env() -> Environment:
    env = Environment(
        autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    env.filters["vclass"] = lambda v: _CSS_CLASS.get(v, "v-skip")
    return env


def _template_text(name: str) -> str:
    return resources.files("reports.templates").joinpath(name).read_text(encoding="utf-8")


def reproducer(test: dict) -> str:
    """A copy-paste command that re-runs one test, plus Hypothesis' decorator line."""
    lines = [f"python -m pytest {test['nodeid']!r} -p reports.plugin --hypothesis-profile=ci"]
    rep = (test.get("failure") or {}).get("reproduce")
    if rep:
        for ln in rep.strip().splitlines():
            if "@reproduce_failure" in ln:
                start = ln.index("@reproduce_failure")
                end = ln.index(")", start) + 1
                lines.append("# add to the test function:")
                lines.append(ln[start:end])
    return "\n".join(lines)


_SOURCE_KEYS = ("doc", "url", "seed", "quote")
_TEST_KEYS = (
    "skip_reason", "expectation", "changed_failure", "failure", "region", "tallies",
    "failed_claims", "claim_examples", "muted_violations", "not_applicable",
)  # fmt: skip
#: CSS class of a test verdict.
TEST_CLASS = {
    "held": "v-held", "expected-deviation": "v-dev", "region-not-reached": "v-skip",
    "regression": "v-fail", "unexpected-pass": "v-unexp", "suite-error": "v-fail",
    "not-applicable": "v-na", "skipped": "v-skip",
}  # fmt: skip
_FAILURE_KEYS = ("signature", "message", "falsifying_example", "notes", "reproduce")


def _normalized(doc: dict) -> dict:
    """A copy of ``doc`` with every optional key present (``None``), so the
    template can use strict undefined checking."""
    claims = {}
    for cid, c in doc["claims"].items():
        c = {"note": None, "check": "property", **c}
        c["sources"] = [{**dict.fromkeys(_SOURCE_KEYS), **s} for s in c.get("sources", [])]
        claims[cid] = c
    tests = []
    for t in doc["tests"]:
        t = {**dict.fromkeys(_TEST_KEYS), "examples": 0, "duration_s": 0, **t}
        if t["failure"]:
            t["failure"] = {**dict.fromkeys(_FAILURE_KEYS), **t["failure"]}
        tests.append(t)
    return {**doc, "claims": claims, "tests": tests}


def render_report(doc: dict, title: str | None = None) -> str:
    """The HTML text of the report for ``doc`` (a loaded ``results.json``)."""
    doc = _normalized(doc)
    cv = claim_verdicts(doc)
    devices = list(doc["environment"].get("devices", ["cpu"]))
    areas: dict[str, list[dict]] = {}
    for cid, claim in sorted(doc["claims"].items()):
        per_dev = cv.get(cid, {})
        measured = claim.get("check") == "measurement"
        overall = overall_verdict(doc, cid, per_dev)
        tests = []
        seen = set()
        for d in devices:
            for t in per_dev.get(d, {}).get("tests", []):
                if t["nodeid"] not in seen:
                    seen.add(t["nodeid"])
                    tests.append({**t, "reproducer": reproducer(t)})
        areas.setdefault(claim["area"], []).append(
            {
                **claim,
                "overall": overall,
                "cells": {
                    d: per_dev.get(
                        d,
                        {
                            "verdict": "measured" if measured else "not run",
                            "examples": 0,
                            "reasons": [],
                        },
                    )
                    for d in devices
                },
                "tests": tests,
                "measurements": [m for m in doc.get("measurements", []) if m.get("claim") == cid],
            }
        )
    deviations = [
        t for t in doc["tests"] if t["verdict"] in ("expected-deviation", "region-not-reached")
    ]
    tpl = _env().from_string(_template_text("report.html.j2"))
    return tpl.render(
        title=title or f"torch {doc['environment'].get('torch')} conformance",
        doc=doc,
        env=doc["environment"],
        suite=doc.get("suite", {}),
        devices=devices,
        areas=dict(sorted(areas.items())),
        area_titles=doc.get("areas", {}),
        summary=summarize(doc),
        verdicts=[*CLAIM_VERDICTS, MEASURED],
        deviations=deviations,
        stale=doc.get("expectations", {}).get("stale", []),
        measurements=doc.get("measurements", []),
        baseline=doc.get("baseline"),
        out_of_scope=doc.get("out_of_scope", []),
        doc_drift=doc.get("doc_drift", []),
        escape=html.escape,
        mutation=doc.get("mutation"),
        test_class=TEST_CLASS,
        tolerances=doc.get("tolerances", {}),
    )


def render_compare(diff: dict, title: str = "Conformance comparison") -> str:
    """HTML page for :func:`reports.compare.compare_docs` output."""
    tpl = _env().from_string(_template_text("compare.html.j2"))
    return tpl.render(title=title, mode="compare", diff=diff, matrix=None)


def render_matrix(matrix: dict, title: str = "Conformance matrix") -> str:
    """HTML page for :func:`reports.matrix.build_matrix` output."""
    tpl = _env().from_string(_template_text("compare.html.j2"))
    return tpl.render(title=title, mode="matrix", diff=None, matrix=matrix)
