"""Terminal summary of a result file with ``rich``: one row per area."""

from __future__ import annotations

from reports.results import claim_verdicts, overall_verdict, summarize

_STYLE = {
    "held": "green",
    "not applicable": "cyan",
    "expected deviation": "yellow",
    "region not reached": "dim yellow",
    "ERROR": "bold red",
    "FAILED": "bold red",
    "unexpected pass": "bold magenta",
    "skipped": "dim",
    "not run": "dim",
    "measured": "cyan",
}


def print_summary(doc: dict, console) -> None:
    """Print per-area claim counts by verdict, then every failing claim."""
    from rich.table import Table

    cv = claim_verdicts(doc)
    cols = [
        "held",
        "expected deviation",
        "region not reached",
        "ERROR",
        "FAILED",
        "unexpected pass",
        "not applicable",
        "skipped",
        "not run",
        "measured",
    ]
    table = Table(title=f"torch {doc['environment'].get('torch')} - claims by area")
    table.add_column("area")
    for c in cols:
        table.add_column(c, justify="right", style=_STYLE[c])
    by_area: dict[str, dict[str, int]] = {}
    for cid, per_dev in cv.items():
        area = doc["claims"].get(cid, {}).get("area", "?")
        row = by_area.setdefault(area, dict.fromkeys(cols, 0))
        row[overall_verdict(doc, cid, per_dev)] += 1
    for area in sorted(by_area):
        table.add_row(area, *(str(by_area[area][c] or "") for c in cols))
    console.print(table)
    s = summarize(doc)
    for cid, per_dev in sorted(cv.items()):
        for dev, cell in per_dev.items():
            if cell["verdict"] in ("ERROR", "FAILED", "unexpected pass"):
                console.print(f"[bold red]{cell['verdict']}[/] {cid} on {dev}")
    from reports.causes import cause_lines

    for line in cause_lines(doc):
        console.print(line, markup=False)
    unmeasured = s["unmeasured"]
    for row in unmeasured:
        console.print(
            f"not measured on this release: {row['key']} ({row['file']}; measured on "
            f"{', '.join(row['measured']) or 'no release'}) explained {len(row['tests'])} test(s)",
            markup=False,
        )
    gate = "[green]PASSED[/]" if s["gate_passed"] else "[bold red]FAILED[/]"
    counts = []
    for k, v in s["claims"].items():
        if v and k == "expected deviation" and unmeasured:
            n = len({r["claim"] for r in unmeasured})
            counts.append(f"{v} {k} ({n} not measured on this release)")
        elif v:
            counts.append(f"{v} {k}")
    console.print(f"gate {gate}: {sum(s['claims'].values())} claims, " + ", ".join(counts))
