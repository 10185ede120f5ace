"""Leave one release out of the deviation data, to measure the gate on a
release "it has never seen" (issue 28, item 6).

``python -m reports.leave_out 2.14.1 --out DIR`` writes to ``DIR`` a copy of
``conformance/expectations/`` as it would read had ``2.14.1`` never been
measured:

- ``2.14.1`` leaves every ``measured`` list;
- an entry (or one range of it) that only that release showed is dropped;
- a range that ended just after that release because of it ends after the
  newest release still measured in it.

Then ``torch-conformance run --expectations DIR`` on torch 2.14.1 shows what
a user upgrading to it would have seen: every failure either reads "expected
deviation (not measured on this release)" (the data predicted it), or is a
behaviour the data could not know (a real change, to triage), or is a false
alarm (a defect of the data). Bad input: one ``error:`` line, exit 2.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance.expectations import EXPECTATIONS_DIR, render_entries


def _minor(v: str) -> tuple[int, int]:
    return Version(v).release[:2]


def without(entries: list[dict], release: str) -> list[dict]:
    """The raw entries of one file as they would read without ``release``."""
    out = []
    left = _minor(release)
    for e in entries:
        measured = [m for m in e.get("measured", []) if Version(m) != Version(release)]
        had = len(measured) != len(e.get("measured", []))
        specs = [e["torch"]] if isinstance(e["torch"], str) else list(e["torch"])
        kept = []
        for spec in specs:
            mine = [m for m in measured if SpecifierSet(spec).contains(m)]
            if had and SpecifierSet(spec).contains(release) and not mine:
                continue  # only the left-out release showed this range
            parts = [p for p in spec.split(",") if p]
            tops = [p for p in parts if p.startswith("<") and not p.startswith("<=")]
            if had and tops and mine and Version(tops[0][1:]).release[:2] == (left[0], left[1] + 1):
                newest = max(_minor(m) for m in mine)
                if newest < left:
                    parts = [p for p in parts if p not in tops] + [f"<{newest[0]}.{newest[1] + 1}"]
            kept.append(",".join(parts))
        if not kept:
            continue
        out.append({**e, "torch": kept[0] if len(kept) == 1 else kept, "measured": measured})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m reports.leave_out", description=__doc__.split("\n")[0]
    )
    ap.add_argument("release", help="the release to leave out, e.g. 2.14.1")
    ap.add_argument("--out", required=True, help="directory to write the reduced data to")
    ap.add_argument("--data", default=str(EXPECTATIONS_DIR), help="the data to reduce")
    args = ap.parse_args(argv)
    try:
        Version(args.release)
    except InvalidVersion:
        print(f"error: {args.release!r} is not a release version", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        print(f"error: {out} exists and is not empty", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    before = after = 0
    for f in sorted(Path(args.data).glob("*.toml")):
        entries = tomllib.loads(f.read_text(encoding="utf-8")).get("deviation", [])
        kept = without(entries, args.release)
        before, after = before + len(entries), after + len(kept)
        (out / f.name).write_text(
            render_entries(kept, f"# {f.name} without release {args.release}\n"), encoding="utf-8"
        )
    print(f"{before} entries -> {after} without {args.release}: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
