"""One-time migration of ``conformance/expectations.toml`` (issue 28).

Kept so that every ``torch`` range and ``measured`` list of the migrated data
can be audited against the data it was derived from. It reads the single file
the suite used up to then and the shipped baselines
(``reports/baseline_data/torch-*.results.json.gz``) and writes
``conformance/expectations/<area>.toml``:

- entries that differed only in their torch specifier (the 2.6/2.7/2.8 copies
  of the 2.5/2.9 entries) are folded into one entry whose range spans the
  minors they covered;
- ``measured`` lists the releases whose shipped baseline shows the entry
  (a test that deviated with it);
- a bug's range ends at the newest measured release (``<2.(m+1)``); an entry
  that no baseline shows and whose range contains a release with a baseline
  was not needed there and is dropped;
- a signature that would match almost any failure of its test (a bare
  ``assert``, ``None``, a compile aspect such as ``backend X differs from
  eager (outputs)``) is replaced by the message the baselines recorded, where
  every measured release recorded the same one;
- ``link`` becomes ``upstream`` (an issue or pull request) or ``doc`` (a
  documentation page); a release-tag page is no upstream record.

Run from the repository root: ``python -m reports.migrate_expectations``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conformance.expectations import render_entries
from reports.measured import STATED

ROOT = Path(__file__).resolve().parent.parent
OLD = ROOT / "conformance" / "expectations.toml"
NEW = ROOT / "conformance" / "expectations"
BASELINES = ROOT / "reports" / "baseline_data"
#: The minors the migration reasons about (the suite's floor to the newest gated).
MINORS = [(2, m) for m in range(1, 16)]

GENERIC = re.compile(
    r"^(assert|None|assert \(None is not None\)|out0|argument holds|"
    r"backend='\S+' raised|backend \S+ differs from eager( \(|( \([a-z-]+\))?))$"
)


def identity(e: dict) -> str:
    """What an entry is about, less its torch range and prose."""
    r = e.get("region")
    if isinstance(r, dict):
        r = [r]
    return json.dumps(
        {
            "claim": e["claim"],
            "test": e.get("test"),
            "devices": sorted(e.get("devices") or []),
            "backends": sorted(e.get("backends") or []),
            "region": r,
        },
        sort_keys=True,
    )


def observations(old: list[dict]) -> dict[int, dict[str, list[str]]]:
    """Old entry index -> {release: [observed signatures]} from the baselines."""
    by_id: dict[str, list[int]] = {}
    for i, e in enumerate(old):
        by_id.setdefault(identity(e) + e["exception"] + e["match"], []).append(i)
    out: dict[int, dict[str, list[str]]] = {}
    for f in sorted(BASELINES.glob("torch-*.results.json.gz")):
        rel = re.search(r"torch-(.+)\.results", f.name).group(1)
        doc = json.loads(gzip.open(f).read())
        for t in doc["tests"]:
            for e, sig in _shown(t):
                hits = [
                    i
                    for i in by_id.get(identity(e) + e["exception"] + e["match"], [])
                    if SpecifierSet(old[i].get("torch") or "").contains(rel)
                ]
                if not hits:
                    sys.exit(f"error: {rel}: {e['key']} matches no entry of {OLD.name}")
                for i in hits:
                    out.setdefault(i, {}).setdefault(rel, []).append(sig)
    return out


def _shown(t: dict):
    """(entry, observed signature) for each deviation a baseline test showed."""
    if t.get("claim_expectations"):
        cf = t.get("claim_failures", {})
        for c, e in t["claim_expectations"].items():
            yield e, (cf.get(c) or t.get("failure") or {}).get("signature")
        return
    if t.get("verdict") != "expected-deviation":
        return
    regs = t.get("regions") or (
        [{"expectation": t["expectation"], "region": t["region"]}] if t.get("region") else []
    )
    if not regs:
        yield t["expectation"], (t.get("failure") or {}).get("signature")
    for r in regs:
        if r["region"] and r["region"].get("inside", 0) > 0:
            ex = r["region"].get("example") or ""
            yield r["expectation"], ex.split("\n-> ", 1)[1] if "\n-> " in ex else None


def minors_of(spec: str | None) -> list[tuple[int, int]]:
    s = SpecifierSet(spec or "")
    return [m for m in MINORS if s.contains(f"{m[0]}.{m[1]}.0") or s.contains(f"{m[0]}.{m[1]}.9")]


def _minor(v: str) -> tuple[int, int]:
    p = Version(v).release
    return (p[0], p[1])


def specific_match(e: dict, seen: dict[str, list[str]]) -> str:
    """The entry's substring, or where it is generic the message every
    release that showed it recorded (their common prefix)."""
    match = e["match"]
    if "region" in e or not seen:
        return match
    if not (GENERIC.match(match) or len(match) < 12 or e.get("test") in STATED):
        return match
    msgs = {s.split(": ", 1)[1] if s and ": " in s else None for v in seen.values() for s in v}
    if None in msgs:
        return match
    if e.get("test") in STATED:
        msgs = {STATED[e["test"]](m) for m in msgs}
    common = os.path.commonprefix(sorted(msgs))[:160].rstrip()
    return common if len(common) > len(match) and not GENERIC.match(common) else match


def ranges(covered: list, measured: list[str], baseline_minors: set, floor_open: bool) -> list[str]:
    """Specifiers for the minors ``covered``: runs of consecutive minors, a gap
    bridged unless a release with a baseline lies in it (that release was
    measured without the behaviour); an open-ended run ends at the newest
    release measured in it."""
    runs: list[list] = []
    for m in covered:
        if runs:
            gap = [g for g in MINORS if runs[-1][-1] < g < m]
            if not any(g in baseline_minors for g in gap):
                runs[-1].append(m)
                continue
        runs.append([m])
    out = []
    for k, run in enumerate(runs):
        lo, top = run[0], run[-1]
        if top == MINORS[-1]:
            seen = [_minor(r) for r in measured if lo <= _minor(r) <= top]
            top = max(seen, default=top)
        hi = f"<{top[0]}.{top[1] + 1}"
        out.append(hi if k == 0 and floor_open else f">={lo[0]}.{lo[1]},{hi}")
    return out


def fold(group: list[tuple[int, dict]], obs: dict, baseline_minors: set) -> dict | None:
    """One new entry for the old entries ``group`` (same identity and signature)."""
    base = dict(group[0][1])
    covered = sorted({m for _, e in group for m in minors_of(e.get("torch"))})
    measured: dict[str, list[str]] = {}
    for i, _ in group:
        for rel, sigs in obs.get(i, {}).items():
            measured.setdefault(rel, []).extend(sigs)
    if not measured and any(m in baseline_minors for m in covered):
        return None  # a release with a baseline did not need it
    exc, match = base["exception"], base["new_match"]
    floor_open = any(
        not any(x.operator in (">=", ">", "==", "~=") for x in SpecifierSet(e.get("torch") or ""))
        for _, e in group
    )
    parts = ranges(covered, list(measured), baseline_minors, floor_open)
    out = {
        "claim": base["claim"],
        **({"test": base["test"]} if base.get("test") else {}),
        **({"backends": base["backends"]} if base.get("backends") else {}),
        **({"devices": base["devices"]} if base.get("devices") else {}),
        **({"python": base["python"]} if base.get("python") else {}),
        **({"region": base["region"]} if "region" in base else {}),
        "exception": exc,
        "match": match,
        "torch": parts[0] if len(parts) == 1 else parts,
        "measured": sorted(measured, key=Version),
    }
    probes = sorted(
        {p for _, e in group for p in re.findall(r"conformance/probes/[a-z0-9_]+\.py", e["reason"])}
    )
    probes = [p for p in probes if (ROOT / p).exists()]
    if probes:
        out["probe"] = probes[0] if len(probes) == 1 else probes
    links = [e["link"] for _, e in group]
    up = next(
        (u for u in links if re.search(r"github\.com/pytorch/pytorch/(issues|pull)/", u)), None
    )
    doc = next((u for u in links if "docs.pytorch.org" in u or "/blob/" in u), None)
    reasons = [e["reason"] for _, e in group]
    original = next((r for r in reasons if not r.startswith("Measured the same")), reasons[0])
    if up:
        out["upstream"] = up
    elif re.search(r"no upstream issue (was )?found|no matching upstream", original, re.I):
        out["upstream"] = "none found"
    else:
        out["upstream"] = "not triaged"
    if doc:
        out["doc"] = doc
    if base.get("pinned_by"):
        out["pinned_by"] = base["pinned_by"]
    out["reason"] = _reason(original)
    return out


def _reason(text: str) -> str:
    """The old reason, less what ``measured`` and ``torch`` now say."""
    t = " ".join(text.split())
    t = re.sub(
        r"^Observed in the torch [^ ]+ release run \(CPU, ci profile\): (.*?)\. "
        r"torch\.compile of this release differs from eager on the same inputs .*$",
        r"torch.compile differs from eager on the same inputs (eager in the same process is "
        r"the oracle): \1. Not yet triaged to an upstream issue.",
        t,
    )
    t = re.sub(
        r"^Observed in the torch [^ ]+ release run \(CPU, ci profile\): (.*?)\.? recorded as a "
        r"real behaviour of this release.*$",
        r"Behaviour of these releases, not yet triaged: \1.",
        t,
    )
    return t


HEADER = (
    "# Known deviations of torch from the {area} claims: one entry per behaviour, sorted by\n"
    "# claim. See conformance/expectations/__init__.py for the fields; `measured` is checked\n"
    "# against reports/baseline_data/ by tests/test_expectations_data.py.\n\n"
)


def main() -> int:
    if not OLD.exists():
        print(f"error: {OLD} is gone: run this at a commit that still has it", file=sys.stderr)
        return 2
    old = tomllib.loads(OLD.read_text(encoding="utf-8"))["deviation"]
    obs = observations(old)
    baseline_minors = {
        _minor(re.search(r"torch-(.+)\.results", f.name).group(1))
        for f in BASELINES.glob("torch-*.results.json.gz")
    }
    groups: dict[str, list[tuple[int, dict]]] = {}
    for i, e in enumerate(old):
        e["new_match"] = specific_match(e, obs.get(i, {}))
        groups.setdefault(identity(e), []).append((i, e))
    new: list[dict] = []
    dropped = []
    for g in groups.values():
        # one identity may hold several behaviours (different signatures on
        # different releases): fold per signature
        by_sig: dict[tuple, list] = {}
        for i, e in g:
            by_sig.setdefault((e["exception"], e["new_match"]), []).append((i, e))
        for sub in by_sig.values():
            f = fold(sub, obs, baseline_minors)
            if f is None:
                dropped.extend(e for _, e in sub)
            else:
                new.append(f)
    NEW.mkdir(exist_ok=True)
    by_area: dict[str, list[dict]] = {}
    for e in new:
        by_area.setdefault(e["claim"].split(".")[0], []).append(e)
    for area, es in sorted(by_area.items()):
        es.sort(key=lambda e: (e["claim"], e.get("test") or "", e.get("backends") or [],
                               e.get("devices") or [], str(e["torch"])))  # fmt: skip
        (NEW / f"{area}.toml").write_text(
            render_entries(es, HEADER.format(area=area)), encoding="utf-8"
        )
    print(
        f"{len(old)} entries -> {len(new)} entries in {len(by_area)} files; dropped {len(dropped)}"
    )
    for e in dropped:
        print(f"  dropped (no baseline shows it): {e['claim']} [{e.get('test')}] {e.get('torch')} "
              f"{e.get('backends', '')} {e['match'][:50]!r}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
