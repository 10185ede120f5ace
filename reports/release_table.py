"""The release table: ``docs/releases.md``, generated from the shipped baselines.

Every row is read from one ``reports/baseline_data/torch-<version>.results.json.gz``
(:mod:`reports.baselines`) and judged with :func:`reports.results.summarize`, so
the page says what the baselines say and cannot drift from them.

``python -m reports.release_table --write`` regenerates ``docs/releases.md``
(``tests/test_docs.py`` fails when it is stale); ``--check`` exits 1 when it
is stale. The narrative of each release run (how it was run, what it found)
is history, kept by hand in ``docs/release-log.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reports.baselines import BASELINES_DIR, available, load_baseline
from reports.results import claim_verdicts, overall_verdict, summarize

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "releases.md"

#: The claim verdicts of the table, in column order.
COLUMNS = ("held", "expected deviation", "region not reached", "not applicable", "skipped")

#: Verdicts that fail the gate, named in the gate cell when a baseline has any.
_FAILING = ("FAILED", "unexpected pass", "ERROR")


def whole_test_only(doc: dict) -> int:
    """How many claims of ``doc`` deviate as expected only through whole-test
    entries: every test of the claim that deviated matched an entry without a
    region, so the run cannot say where in the input space torch deviates.

    ``doc`` is a validated ``results.json`` document (a baseline)."""
    count = 0
    for cid, per_device in claim_verdicts(doc).items():
        if overall_verdict(doc, cid, per_device) != "expected deviation":
            continue
        deviated = [
            t
            for cell in per_device.values()
            for t in cell["tests"]
            if t.get("verdict") == "expected-deviation"
        ]
        if deviated and all((t.get("expectation") or {}).get("whole_test") for t in deviated):
            count += 1
    return count


def release_rows(directory: Path = BASELINES_DIR) -> list[dict]:
    """One row per shipped baseline, oldest release first: ``version``, the
    run's ``environment``, ``suite`` commit, :func:`summarize`'s ``summary``,
    ``whole_test_only`` and ``deviations_by_area`` (``{area: claims with an
    expected deviation}``).

    Raises :class:`reports.results.ResultsError` (one line) for a corrupt
    baseline: a shipped file that cannot be read is a defect, not a gap."""
    rows = []
    for version in available(directory):
        doc = load_baseline(version, directory)
        by_area: dict[str, int] = {}
        for cid, per_device in claim_verdicts(doc).items():
            if overall_verdict(doc, cid, per_device) == "expected deviation":
                area = doc["claims"][cid].get("area", cid.split(".", 1)[0])
                by_area[area] = by_area.get(area, 0) + 1
        rows.append(
            {
                "version": version,
                "environment": doc["environment"],
                "suite": doc.get("suite") or {},
                "summary": summarize(doc),
                "claims": len(doc["claims"]),
                "whole_test_only": whole_test_only(doc),
                "deviations_by_area": by_area,
            }
        )
    return rows


def _gate(summary: dict) -> str:
    if summary["gate_passed"]:
        return "PASSED"
    bad = [f"{summary['claims'].get(v, 0)} {v}" for v in _FAILING if summary["claims"].get(v)]
    return "FAILED" + (f" ({', '.join(bad)})" if bad else "")


def render_doc(rows: list[dict]) -> str:
    """``docs/releases.md`` from :func:`release_rows`: the claims per release,
    how each baseline was run, and the expected deviations per area."""
    out = [
        "# Releases",
        "",
        "<!-- Generated from reports/baseline_data/ by `python -m reports.release_table --write`;",
        "     refresh the baselines (`nox -s releases`), not this page. -->",
        "",
        "What the gate gives on every torch release that ships a baseline "
        "(`reports/baseline_data/torch-<version>.results.json.gz`: CPU, `ci` profile, written "
        "by `nox -s releases` when the gate passed), judged by this revision's verdict code. "
        "How each release was run and what each run found is history, in the "
        '[release log](release-log.md); the README\'s "Every release from 2.1 to 2.15" says '
        "how to compare releases without installing them. A release that was gate-run but "
        "ships no baseline is in the release log only.",
        "",
        "## Claims per release",
        "",
        "| torch | gate | claims | " + " | ".join(COLUMNS) + " | measured | whole-test only |",
        "|---|---|---:|" + "---:|" * (len(COLUMNS) + 2),
    ]
    for r in reversed(rows):  # newest release first
        s = r["summary"]
        counts = " | ".join(str(s["claims"].get(v, 0)) for v in COLUMNS)
        out.append(
            f"| {r['version']} | {_gate(s)} | {r['claims']} | {counts} | "
            f"{s['claims'].get('measured', 0)} | {r['whole_test_only']} |"
        )
    out += [
        "",
        "*measured*: measurement claims (speed folklore), outside the gate. *whole-test only*: "
        "claims with an expected deviation whose every deviating test matched an entry "
        "without a region (the data does not yet say where in the input space torch deviates).",
        "",
        "## How each baseline was run",
        "",
        "| torch | finished (UTC) | wall time | NumPy | Hypothesis | Python | suite commit "
        "| entries not measured on this release |",
        "|---|---|---:|---|---|---|---|---:|",
    ]
    for r in reversed(rows):
        env, suite = r["environment"], r["suite"]
        commit = (suite.get("commit") or "?")[:7] + (" (dirty)" if suite.get("dirty") else "")
        out.append(
            f"| {env.get('torch', r['version'])} | {(env.get('finished') or '?')[:16]} | "
            f"{round(env.get('wall_s') or 0)} s | {env.get('numpy', '?')} | "
            f"{env.get('hypothesis', '?')} | {env.get('python', '?')} | {commit} | "
            f"{len(r['summary']['unmeasured'])} |"
        )
    out += [
        "",
        "*entries not measured on this release*: expectation entries that explained a failure "
        'on a release missing from their `measured` (read as "expected deviation (not measured '
        'on this release)"), as the data stood when the baseline was written.',
        "",
        "## Claims with an expected deviation, per area",
        "",
    ]
    areas = sorted({a for r in rows for a in r["deviations_by_area"]})
    out += [
        "| area | " + " | ".join(r["version"] for r in rows) + " |",
        "|---|" + "---:|" * len(rows),
    ]
    for area in areas:
        cells = " | ".join(str(r["deviations_by_area"].get(area, 0)) for r in rows)
        out.append(f"| {area} | {cells} |")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """``--write`` regenerates ``docs/releases.md``; ``--check`` exits 1 when it is stale."""
    p = argparse.ArgumentParser(
        prog="python -m reports.release_table", description=__doc__.split("\n\n")[0]
    )
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true", help=f"regenerate {DOC_PATH.name}")
    g.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = p.parse_args(argv)
    page = render_doc(release_rows())
    if args.check:
        current = DOC_PATH.read_text(encoding="utf-8") if DOC_PATH.exists() else ""
        if current != page:
            print(
                f"{DOC_PATH} is stale: run python -m reports.release_table --write",
                file=sys.stderr,
            )
            return 1
        return 0
    DOC_PATH.write_text(page, encoding="utf-8")
    print(f"wrote {DOC_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
