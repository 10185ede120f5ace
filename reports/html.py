"""Render a result file as one self-contained HTML page (Jinja2, inline CSS/JS)."""

from __future__ import annotations

import html
from importlib import resources
from pathlib import Path

from jinja2 import Environment, StrictUndefined

from reports.results import (
    CLAIM_VERDICTS,
    MEASURED,
    claim_verdicts,
    load_results,
    observes_of,
    overall_verdict,
    summarize,
    write_json_atomic,
    write_text_atomic,
)

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


#: A torch-only snippet longer than this many lines is linked from the report
#: (``snippets/<name>``, written beside it by ``run`` and ``merge``) instead of
#: inlined: with 70+ failing claims the inlined snippets alone took a quarter MB.
SNIPPET_INLINE_LINES = 40


def snippet_name(t: dict) -> str:
    """The file name of test ``t``'s torch-only snippet under ``OUT/snippets/``."""
    base = t.get("name") or t["nodeid"].rsplit("::", 1)[-1]
    col = t.get("device", "any") + (f"-{t['backend']}" if t.get("backend") else "")
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{base}-{col}") + ".py"


def _strip_runs(history: dict[str, str], releases: list[str]) -> list[dict]:
    """A claim's verdicts on the shipped releases as runs of equal verdicts
    (``{"verdict", "first", "last", "n"}``, oldest first): one box per run
    keeps the strip of 477 claims x 11 releases small."""
    runs: list[dict] = []
    for r in releases:
        v = history.get(r, "not run")
        if runs and runs[-1]["verdict"] == v:
            runs[-1].update(last=r, n=runs[-1]["n"] + 1)
        else:
            runs.append({"verdict": v, "first": r, "last": r, "n": 1})
    return runs


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
    "failed_claims", "claim_examples", "muted_violations", "not_applicable", "observes",
    "snippet",
)  # fmt: skip
#: CSS class of a test verdict.
TEST_CLASS = {
    "held": "v-held", "expected-deviation": "v-dev", "region-not-reached": "v-skip",
    "regression": "v-fail", "unexpected-pass": "v-unexp", "suite-error": "v-fail",
    "not-applicable": "v-na", "skipped": "v-skip",
}  # fmt: skip
_ENV_KEYS = (
    "torch", "torch_cuda", "cuda_device", "python", "hypothesis", "numpy", "profile",
    "started", "finished", "wall_s",
)  # fmt: skip
_FAILURE_KEYS = (
    "signature", "message", "falsifying_example", "notes", "reproduce", "snippet",
    "snippet_unavailable",
)  # fmt: skip


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
        t["observes"] = observes_of(t)  # ``oracles`` in a file written before the rename
        if t["failure"]:
            t["failure"] = {**dict.fromkeys(_FAILURE_KEYS), **t["failure"]}
        if t.get("claim_failures"):
            t["claim_failures"] = {
                c: {**dict.fromkeys(_FAILURE_KEYS), **f} for c, f in t["claim_failures"].items()
            }
        tests.append(t)
    env = {**dict.fromkeys(_ENV_KEYS), **doc.get("environment", {})}
    suite = {"version": None, "commit": None, "dirty": False, **(doc.get("suite") or {})}
    return {**doc, "claims": claims, "tests": tests, "environment": env, "suite": suite}


def _release_key(version: str):
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


def _unavailable_devices(doc: dict, devices: list[str]) -> dict[str, str]:
    """Devices none of whose tests ran because the device does not exist on
    the machine (every test on it skipped): ``{device: reason}``. The report
    folds them into one note instead of a column of "skipped" cells."""
    out: dict[str, str] = {}
    for d in devices:
        on = [t for t in doc["tests"] if t.get("device") == d]
        if on and all(t["verdict"] == "skipped" for t in on):
            reasons = {t.get("skip_reason") or "" for t in on}
            if d == "cuda" and not doc["environment"].get("cuda_available", False):
                out[d] = (
                    f"CUDA was not available on this machine: its {len(on)} test cases were skipped"
                )
            elif len(reasons) == 1:
                out[d] = f"{next(iter(reasons))}: its {len(on)} test cases were skipped"
    return out


def _test_view(t: dict, snippet_dir: str | None) -> dict:
    """Test record ``t`` as the template shows it: its reproducer, and the
    link to its snippet file when that replaces the inlined snippet."""
    snippet = (t.get("failure") or {}).get("snippet") or ""
    linked = (
        snippet_dir is not None
        and t["verdict"] in ("regression", "unexpected-pass")
        and snippet.count("\n") > SNIPPET_INLINE_LINES
    )
    return {
        **t,
        "reproducer": reproducer(t),
        "snippet_link": f"{snippet_dir}/{snippet_name(t)}" if linked else None,
    }


def _decision(
    doc: dict, cid: str, claim: dict, per_col: dict, cols: list[str], snippet_dir: str | None
) -> dict:
    """One claim that needs a decision, with its failing tests expanded."""
    tests, seen = [], set()
    for col in cols:
        for t in per_col.get(col, {}).get("tests", []):
            if (
                t["verdict"] in ("regression", "unexpected-pass", "suite-error")
                and t["nodeid"] not in seen
            ):
                seen.add(t["nodeid"])
                tests.append(_test_view(t, snippet_dir))
    verdicts = {col: per_col[col]["verdict"] for col in cols if col in per_col}
    return {**claim, "id": cid, "verdicts": verdicts, "tests": tests,
            "changed": any(t.get("changed_failure") for t in tests)}  # fmt: skip


def _domain_rows(claim: dict, per_dev: dict[str, dict]) -> list[dict]:
    """One row per value of the claim's declared domain: ``{dimension,
    value, counts: {column: checked examples}}`` over the columns where the
    claim's tests ran (issue 29's coverage table)."""
    from conformance.registry import domain_value

    cols = [c for c, cell in per_dev.items() if cell.get("tests")]
    return [
        {
            "dimension": dim,
            "value": domain_value(v),
            "counts": {
                c: ((per_dev[c].get("coverage") or {}).get(dim) or {}).get(domain_value(v), 0)
                for c in cols
            },
        }
        for dim, values in (claim.get("domain") or {}).items()
        for v in values
    ]


def render_report(doc: dict, title: str | None = None, *, snippet_dir: str | None = None) -> str:
    """The HTML text of the report for ``doc`` (a loaded ``results.json``).

    Layout: what needs a decision first (regressions, unexpected passes,
    changed failures and suite errors, grouped by likely cause and expanded),
    then expected deviations, a comparison with a baseline, and the full
    claim table by area (collapsed test details, filters); devices that were
    never available are one note, not a column. Every claim has the anchor
    ``#claim-<id>``.

    ``snippet_dir``: where the run wrote each failing test's torch-only
    snippet (``snippets``, relative to the report); a snippet longer than
    :data:`SNIPPET_INLINE_LINES` lines is then linked, not inlined. Without
    it every snippet is inlined (a report rendered away from its run's files).
    A failing test's message, example and reproducer are shown once, under
    "Needs a decision"; its claim's row links there.
    """
    from reports.causes import BAD, cause_groups
    from reports.results import columns

    doc = _normalized(doc)
    cv = claim_verdicts(doc)
    devices = list(doc["environment"].get("devices", ["cpu"]))
    unavailable = _unavailable_devices(doc, devices)
    cols = [c for c in columns(doc) if c.split("/", 1)[0] not in unavailable]
    areas: dict[str, list[dict]] = {}
    area_cols: dict[str, list[str]] = {}
    decisions: list[dict] = []
    for cid, claim in sorted(doc["claims"].items()):
        per_dev = cv.get(cid, {})
        measured = claim.get("check") == "measurement"
        shown = {c: per_dev[c] for c in cols if c in per_dev}
        overall = overall_verdict(doc, cid, shown or per_dev)
        tests = []
        seen = set()
        for d in per_dev:
            for t in per_dev.get(d, {}).get("tests", []):
                if t["nodeid"] not in seen:
                    seen.add(t["nodeid"])
                    tests.append(_test_view(t, snippet_dir))
        empty = {"verdict": "measured" if measured else "not run", "examples": 0, "reasons": []}
        my_cols = [c for c in cols if c in per_dev] or [c for c in cols if "/" not in c]
        ac = area_cols.setdefault(claim["area"], [])
        ac.extend(c for c in my_cols if c not in ac)
        areas.setdefault(claim["area"], []).append(
            {
                **claim,
                "overall": overall,
                "cells": {d: per_dev.get(d, empty) for d in cols},
                # a failed claim's coverage is no verdict: its examples failed
                "domain_rows": [] if overall == "FAILED" else _domain_rows(claim, per_dev),
                "tests": tests,
                "measurements": [m for m in doc.get("measurements", []) if m.get("claim") == cid],
            }
        )
        if overall in BAD:
            decisions.append(_decision(doc, cid, claim, per_dev, cols, snippet_dir))
    deviations = [  # one row per region of a test with several
        {**t, **extra} if extra else t
        for t in doc["tests"]
        if t["verdict"] in ("expected-deviation", "region-not-reached")
        for extra in t.get("regions") or [None]
    ]
    from reports.baselines import history

    try:
        strips = history()  # {claim: {release: verdict}} from the shipped baselines
    except Exception:  # a damaged baseline must not stop the report
        strips = {}
    causes = cause_groups(doc)  # recomputed: a stored one may predate the instrument markers
    explained = {c for g in causes["groups"] for c in g["explained"]}
    own = {c: g["primitive"] for g in causes["groups"] for c in g["own_failed"]}
    # The evidence of each cause first, then failures no cause explains, then
    # the ones that may follow from a broken instrument.
    decisions.sort(key=lambda d: (0 if d["id"] in own else 2 if d["id"] in explained else 1,
                                  d["id"]))  # fmt: skip
    releases = sorted({v for h in strips.values() for v in h}, key=_release_key)
    tpl = _env().from_string(_template_text("report.html.j2"))
    return tpl.render(
        title=title or f"torch {doc['environment'].get('torch')} conformance",
        doc=doc,
        env=doc["environment"],
        suite=doc.get("suite", {}),
        devices=devices,
        columns=cols,
        area_columns=area_cols,
        unavailable=unavailable,
        areas=dict(sorted(areas.items())),
        area_titles=doc.get("areas", {}),
        summary=summarize(doc),
        verdicts=[*CLAIM_VERDICTS, MEASURED],
        decisions=decisions,
        causes=causes,
        strips={c: _strip_runs(h, releases) for c, h in strips.items()},
        releases=releases,
        explained=explained,
        own_failed=own,
        bad_verdicts=BAD,
        deviations=deviations,
        stale=doc.get("expectations", {}).get("stale", []),
        measurements=doc.get("measurements", []),
        baseline=doc.get("baseline"),
        out_of_scope=doc.get("out_of_scope", []),
        doc_drift=doc.get("doc_drift", []),
        escape=html.escape,
        mutation=_mutation_section(doc.get("mutation")),
        findings=doc.get("findings"),
        test_class=TEST_CLASS,
        tolerances=doc.get("tolerances", {}),
    )


def _mutation_section(section: dict | None) -> dict | None:
    """The ``mutation`` section with the names of a file written before the
    rename (``escaped``) read as today's (``survived``)."""
    if not section:
        return section
    from conformance.mutants.targeted import upgrade

    return upgrade(section)


def render_compare(diff: dict, title: str = "Conformance comparison") -> str:
    """HTML page for :func:`reports.compare.compare_docs` output."""
    tpl = _env().from_string(_template_text("compare.html.j2"))
    return tpl.render(title=title, mode="compare", diff=diff, matrix=None)


def render_matrix(matrix: dict, title: str = "Conformance matrix") -> str:
    """HTML page for :func:`reports.matrix.build_matrix` output."""
    tpl = _env().from_string(_template_text("compare.html.j2"))
    return tpl.render(title=title, mode="matrix", diff=None, matrix=matrix)


def embed_section(out_dir: Path | str, key: str, section: dict) -> Path | None:
    """Add ``section`` as ``doc[key]`` to ``OUT/results.json`` and re-render
    ``OUT/report.html`` (e.g. the findings of ``torch-conformance findings``).

    Returns the report path, or ``None`` when there is no result file.
    Raises :class:`reports.results.ResultsError` for a corrupt one."""
    out_dir = Path(out_dir)
    results = out_dir / "results.json"
    if not results.exists():
        return None
    doc = load_results(results)
    doc[key] = section
    page = render_report(doc)
    write_json_atomic(results, doc)
    write_text_atomic(out_dir / "report.html", page)
    return out_dir / "report.html"
