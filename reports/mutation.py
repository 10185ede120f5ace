"""Mutation results in the report: embed ``mutants.json`` into ``results.json``.

``torch-conformance mutate --out DIR`` writes ``DIR/mutants.json``; when
``DIR/results.json`` (from ``torch-conformance run --out DIR``) exists, the
compact form of the mutation document is stored under its ``mutation`` key
and ``DIR/report.html`` is re-rendered with a "detection power" section
(per claim: the mutants that falsified it, survivals, unfalsifiable claims;
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
    from reports.html import embed_section

    return embed_section(out_dir, "mutation", for_report(mutation))
