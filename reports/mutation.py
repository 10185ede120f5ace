"""Mutation results in the report: embed ``mutants.json`` into ``results.json``.

``torch-conformance mutate --out DIR`` writes ``DIR/mutants.json``; when
``DIR/results.json`` (from ``torch-conformance run --out DIR``) exists, the
compact form of the mutation document is stored under its ``mutation`` key
and ``DIR/report.html`` is re-rendered with a "detection power" section
(per claim: the mutants that falsified it, escapes, unfalsifiable claims;
per area: the share of claims proven falsifiable).
"""

from __future__ import annotations

from pathlib import Path


def embed_mutation(out_dir: Path | str, mutation: dict) -> Path | None:
    """Add ``mutation`` to ``OUT/results.json`` and re-render ``OUT/report.html``.

    Returns the report path, or ``None`` when there is no result file to
    embed into. Raises :class:`reports.results.ResultsError` for a corrupt one.
    """
    from conformance.mutants.targeted import for_report

    return embed_section(out_dir, "mutation", for_report(mutation))


def embed_section(out_dir: Path | str, key: str, section: dict) -> Path | None:
    """Add ``section`` as ``doc[key]`` to ``OUT/results.json`` and re-render
    ``OUT/report.html`` (e.g. the findings of ``torch-conformance findings``).

    Returns the report path, or ``None`` when there is no result file.
    Raises :class:`reports.results.ResultsError` for a corrupt one."""
    from reports.html import render_report
    from reports.results import load_results, write_json_atomic, write_text_atomic

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
