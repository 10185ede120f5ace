"""Findings: run the reproducers, show the news, write ``docs/findings.md``.

``torch-conformance findings`` runs every reproducer of
``conformance/findings.toml`` against the installed torch, each in a fresh
interpreter (:func:`conformance.findings.run_reproducer`), and prints per
finding ``reproduces`` / ``fixed`` / ``not applicable`` (or ``error``: a
defect of the reproducer). A finding the registry measured as reproducing
that now says ``fixed`` is listed first: that is the news a reviewer wants.

``python -m reports.findings --write`` regenerates ``docs/findings.md`` from
the registry (``tests/test_findings.py`` fails when it is stale);
``--check`` exits 1 when it is stale.
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata
from pathlib import Path

from conformance.findings import (
    FINDINGS_FILE,
    KINDS,
    SEVERITIES,
    Finding,
    ReproducerResult,
    load_findings,
    news,
)

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "findings.md"


def installed_release() -> str:
    """The installed torch's release (``2.13.0`` for ``2.13.0+cpu``), read
    from the package metadata without importing torch."""
    from packaging.version import Version

    return Version(metadata.version("torch")).public


def for_report(findings: list[Finding], results: list[ReproducerResult], release: str) -> dict:
    """The ``findings`` section of ``results.json`` (rendered by the report)."""
    by_id = {f.id: f for f in findings}
    return {
        "torch": release,
        "news": news(findings, results, release),
        "results": [
            {
                **r.to_dict(),
                "title": by_id[r.id].title,
                "kind": by_id[r.id].kind,
                "severity": by_id[r.id].severity,
                "claims": list(by_id[r.id].claims),
                "reported": by_id[r.id].reported,
            }  # fmt: skip
            for r in results
        ],
        "counts": {
            s: sum(r.status == s for r in results)
            for s in ("reproduces", "fixed", "not applicable", "error")
        },  # fmt: skip
    }


def summary_lines(section: dict) -> list[str]:
    """Terminal lines: the news first, then one line per finding, then the counts."""
    lines = []
    for n in section["news"]:
        lines.append(f"NEWS {n['id']}: {n['was']} on {n['on']}, {n['now']} on {section['torch']}")
    for r in section["results"]:
        lines.append(f"{r['status']:>15}  {r['id']}  ({r['kind']}) - {r['line'][:150]}")
    c = section["counts"]
    lines.append(
        f"findings on torch {section['torch']}: {c['reproduces']} reproduce, {c['fixed']} fixed, "
        f"{c['not applicable']} not applicable, {c['error']} errors; {len(section['news'])} changed "
        "since the registry's measurements"
    )
    return lines


# ---------------------------------------------------------------- the page


def _releases(f: Finding) -> str:
    from packaging.version import Version

    if not f.measured:
        return "not measured"
    parts = [f"{rel}: {f.measured[rel]}" for rel in sorted(f.measured, key=Version)]
    fixed = f.fixed_in()
    return "; ".join(parts) + (f" (fixed in {fixed})" if fixed else "")


def _source(f: Finding) -> str:
    """The reproducer without its module docstring (the page states the
    expected and observed behaviour next to it)."""
    import ast

    text = f.path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):  # fmt: skip
        lines = text.splitlines()
        text = "\n".join(lines[first.end_lineno :])
    return text.strip()


def _issue_text(f: Finding) -> str:
    """A ready-to-paste report in the layout of PyTorch's bug template."""
    versions = ", ".join(f"{r} ({s})" for r, s in sorted(f.measured.items()))
    return "\n".join([
        f"**Title:** {f.title}",
        "",
        "### 🐛 Describe the bug",
        "",
        f.observed,
        "",
        "```python",
        _source(f),
        "```",
        "",
        f"Expected: {f.expected}",
        "",
        "### Versions",
        "",
        f"torch {versions or 'see above'}, {f.device.upper()}"
        + (f", torch.compile backends {', '.join(f.backends)}" if f.backends else "")
        + ". Found by torch-semantics-conformance.",
    ])  # fmt: skip


def render_doc(findings: list[Finding]) -> str:
    """``docs/findings.md``: the findings grouped by severity, each with its
    minimal reproducer, the expected behaviour, the releases measured and
    its upstream record, and for those not reported a ready-to-paste issue."""
    total = len(findings)
    reported = sum(f.reported for f in findings)
    out = [
        "# Findings",
        "",
        "<!-- Generated from conformance/findings.toml by `python -m reports.findings --write`;",
        "     edit the registry, not this page. -->",
        "",
        f"Every torch behaviour this suite has found that contradicts the documentation, eager "
        f"semantics (under `torch.compile`) or an earlier release: **{total} findings**, "
        f"{reported} with a public upstream record of that exact behaviour, {total - reported} "
        "without one (each of those ends with a ready-to-paste report). Each has a torch-only "
        "reproducer in `conformance/probes/findings/`; `torch-conformance findings` runs them all "
        "against the installed torch (exit status 1 = reproduces, 0 = fixed, 3 = not applicable).",
        "",
        "| severity | kinds |",
        "|---|---|",
    ]
    for sev in SEVERITIES:
        out.append(f"| {sev} | {', '.join(k for k, s in KINDS.items() if s == sev)} |")
    out.append("")
    for sev in SEVERITIES:
        group = [f for f in findings if f.severity == sev]
        if not group:
            continue
        out += [f"## Severity {sev} ({len(group)})", ""]
        order = list(KINDS)
        for f in sorted(group, key=lambda f: (order.index(f.kind), f.id)):
            out += [f"### {f.title}", "", f"`{f.id}` - {f.kind}"
                    + (f", `torch.compile` backends {', '.join(f.backends)}" if f.backends else "")
                    + (f", {f.device.upper()} only" if f.device != "cpu" else ""), ""]  # fmt: skip
            out += [f"- **Expected:** {f.expected}", f"- **Observed:** {f.observed}",
                    f"- **Releases measured:** {_releases(f)}"]  # fmt: skip
            if f.releases_note:
                out.append(f"- **Suite records:** {f.releases_note}")
            if f.claims:
                out.append("- **Pinned by:** " + ", ".join(f"`{c}`" for c in f.claims))
            if f.upstream:
                out.append("- **Upstream:** " + "; ".join(
                    f"[{u.ref}]({u.url}) ({u.state}): {u.covers}" for u in f.upstream))  # fmt: skip
            else:
                out.append("- **Upstream:** not reported (no matching issue found)")
            out += ["", f"Reproducer: `conformance/probes/findings/{f.reproducer}`", ""]
            if f.reported:
                out += ["```python", _source(f), "```", ""]
            else:  # the report carries the reproducer: shown once, ready to paste
                fixed = f.fixed_in()
                summary = "Ready-to-paste upstream report" + (
                    f" (fixed in {fixed}: for the releases before it)" if fixed else ""
                )
                # a four-backtick fence: the report (with its own code fence) is
                # copied verbatim, and its headings stay out of this page's outline
                out += [f"<details open><summary>{summary}</summary>", "", "````markdown",
                        _issue_text(f), "````", "", "</details>", ""]  # fmt: skip
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m reports.findings", description=__doc__.split("\n\n")[0]
    )
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true", help=f"regenerate {DOC_PATH.name}")
    g.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = p.parse_args(argv)
    from conformance.registry import default_registry

    page = render_doc(load_findings(FINDINGS_FILE, registry=default_registry()))
    if args.check:
        current = DOC_PATH.read_text(encoding="utf-8") if DOC_PATH.exists() else ""
        if current != page:
            print(f"{DOC_PATH} is stale: run python -m reports.findings --write", file=sys.stderr)
            return 1
        return 0
    DOC_PATH.write_text(page, encoding="utf-8")
    print(f"wrote {DOC_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
