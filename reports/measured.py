"""Refresh every entry's ``measured`` from the shipped baselines.

``python -m reports.measured`` rewrites ``conformance/expectations/*.toml`` so
that each entry's ``measured`` lists exactly the releases whose baseline in
``reports/baseline_data/`` shows it (the test deviated with that entry's
identity and signature), and widens a range whose top a newly measured
release has passed (``<2.16`` becomes ``<2.17`` once a 2.16 baseline shows
the entry). This is how a reviewed "expected deviation (not measured on this
release)" is confirmed: save the release's baseline
(``torch-conformance baseline save``), then run this. ``--check`` writes
nothing and exits 1 when a file would change (what CI's
``tests/test_expectations_data.py`` enforces). Bad input: one ``error:``
line, exit 2.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

from packaging.version import Version

from conformance.expectations import (
    EXPECTATIONS_DIR,
    ExpectationsError,
    load_expectations,
    render_entries,
)
from conformance.registry import default_registry
from reports.baselines import BASELINES_DIR, available, load_baseline, same_entry, shown_deviations


def _stated_error(m: str) -> str:
    """What ``expect_pinned_error`` now says where the old bare assertion
    printed ``None`` (nothing raised) or the error record."""
    if m == "None":
        return "compiled call raised nothing (pinned: "
    got = re.match(r"\{'type': <class '[\w.]+'>, 'name': '(\w+)', 'first': ['\"](.*)", m)
    if got:
        first = re.split(r"['\"], 'text': ", got.group(2))[0].removesuffix("...")
        return f"compiled call raised {got.group(1)}: {first}"
    return m


#: Pinned tests whose bare assertions now state their message (issue 28): the old observed message -> the message the test now gives.
STATED = {
    "test_inplace_on_grad_leaf_view_fails_pinned": _stated_error,
    "test_issue_198095_pinned": _stated_error,
    "test_issue_94773_pinned": _stated_error,
    "test_clone_of_aliased_input_aliases_pinned": lambda m: (
        "the clone shares storage with nothing (pinned: the aliased arguments)" if m == "()" else m
    ),
}


def signature_matches(deviation, signature: str | None) -> bool:
    """Is an observed ``Type: first line`` signature the entry's own? A
    baseline recorded before a pinned test stated its assertion message
    (:data:`STATED`) is read as the message the
    test now gives."""
    if signature is None:
        return False
    exc, _, msg = signature.partition(": ")
    if deviation.test in STATED and deviation.match not in msg:
        msg = STATED[deviation.test](msg)
    return exc == deviation.exception and deviation.match in msg


def shows(deviation, recorded: dict, signature: str | None, entries=None) -> bool:
    """Does a baseline's deviation (entry as recorded, observed signature)
    show ``deviation``? ``entries``: every current entry (see
    :func:`reports.baselines.same_entry`)."""
    return same_entry(recorded, deviation, entries) and signature_matches(deviation, signature)


def _in(spec: str, release: str) -> bool:
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(spec).contains(Version(release))


def _widen(spec: str, release: str) -> str:
    """``spec`` with its upper bound raised to hold ``release``."""
    v = Version(release).release
    parts = [p for p in spec.split(",") if not p.startswith("<")]
    return ",".join([*parts, f"<{v[0]}.{v[1] + 1}"])


def refresh(data: Path = EXPECTATIONS_DIR, baselines: Path = BASELINES_DIR) -> dict[str, str]:
    """New text of each data file whose ``measured`` lists change."""
    registry = default_registry()
    seen = {v: shown_deviations(load_baseline(v, baselines)) for v in available(baselines)}
    every = load_expectations(data, registry)
    changed = {}
    for f in sorted(Path(data).glob("*.toml")):
        raw = tomllib.loads(f.read_text(encoding="utf-8")).get("deviation", [])
        devs = load_expectations(f, registry)
        out = []
        for e, d in zip(raw, devs, strict=True):
            measured = [
                v for v, rows in seen.items() if any(shows(d, r, s, every) for r, s, _ in rows)
            ]
            specs = [e["torch"]] if isinstance(e["torch"], str) else list(e["torch"])
            newest = max((Version(x) for x in d.measured), default=None)
            for m in measured:
                if d.in_range(m):
                    continue
                # a release past the range that shows the entry, with no
                # release between them whose baseline does not: widen
                between = [v for v in seen if newest and newest < Version(v) < Version(m)]
                if newest and Version(m) > newest and not [v for v in between if v not in measured]:
                    specs[-1] = _widen(specs[-1], m)
                else:
                    print(f"note: {d.key} ({f.name}): the {m} baseline shows it outside its "
                          "range; record that range by hand", file=sys.stderr)  # fmt: skip
            e = dict(e, torch=specs[0] if len(specs) == 1 else specs)
            e["measured"] = sorted(
                (m for m in measured if any(_in(s, m) for s in specs)), key=Version
            )
            out.append(e)
        header = f.read_text(encoding="utf-8").split("[[deviation]]", 1)[0]
        text = render_entries(out, header.rstrip("\n") + "\n")
        if text != f.read_text(encoding="utf-8"):
            changed[str(f)] = text
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m reports.measured", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file would change"
    )
    args = ap.parse_args(argv)
    try:
        changed = refresh()
    except ExpectationsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for path, text in changed.items():
        print(f"{'would change' if args.check else 'updated'}: {path}")
        if not args.check:
            Path(path).write_text(text, encoding="utf-8")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
