"""``--update-expectations``: propose expectation entries for a reviewer.

The proposal keeps every existing entry that still matched a collected test
and did not turn into an unexpected pass, and adds one entry per failing test
with its observed signature (exception type and the first line of the
message), its range (this minor release) and ``measured`` (this release).
Entries that explained a failure on a release they were never measured on
(*not measured on this release*) are listed to confirm: a reviewer adds the
release to their ``measured`` (and widens their range). A reviewer trims each
new ``match`` to the behaviour's own message, gives a region where torch
deviates only in part of the test, writes ``reason`` and ``upstream``, and
moves the entry into ``conformance/expectations/<area>.toml``.
"""

from __future__ import annotations

import json

from packaging.version import Version


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a valid TOML basic string


def _entry(d: dict) -> str:
    lines = ["[[deviation]]", f"claim = {_q(d['claim'])}"]
    if d.get("test"):
        lines.append(f"test = {_q(d['test'])}")
    for key in ("backends", "devices"):
        if d.get(key):
            lines.append(f"{key} = [{', '.join(_q(x) for x in d[key])}]")
    if d.get("python"):
        lines.append(f"python = {_q(d['python'])}")
    for key in ("exception", "match", "torch"):
        lines.append(f"{key} = {_q(d[key])}")
    lines.append(f"measured = [{', '.join(_q(x) for x in d['measured'])}]")
    for key in ("upstream", "reason"):
        lines.append(f"{key} = {_q(d[key])}")
    return "\n".join(lines)


def region_proposals(doc: dict) -> list[str]:
    """Comment lines for each whole-test entry whose test also held on some
    examples: torch does not deviate everywhere there, so the entry needs a
    region; the regions that separate the two sides, when a feature does."""
    out = []
    for t in doc["tests"]:
        split = t.get("whole_test_split")
        if t.get("verdict") != "expected-deviation" or not split or not split.get("held"):
            continue
        key = t["expectation"]["key"]
        regions = split.get("regions") or []
        shown = "; ".join(_region_toml(r) for r in regions) or "no single feature separates them"
        out.append(
            f"# narrow: {key} on {t['nodeid']}: {split['deviated']} examples deviated, "
            f"{split['held']} held: region = {shown}"
        )
    return out


def _region_toml(region: dict) -> str:
    def val(v):
        if isinstance(v, dict):
            ((k, vs),) = v.items()
            return "{ " + k + " = [" + ", ".join(val(x) for x in vs) + "] }"
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return json.dumps(v)

    return "{ " + ", ".join(f"{k} = {val(v)}" for k, v in region.items()) + " }"


def propose(doc: dict) -> str:
    """TOML text proposing entries for the new failures of result document
    ``doc``, and the unmeasured entries to confirm, for a reviewer."""
    from reports.results import unmeasured_deviations

    v = Version(doc["environment"]["torch"])
    new = []
    seen = set()
    for t in doc["tests"]:
        if t["verdict"] != "regression" or not t.get("failure"):
            continue
        f = t["failure"]
        first = (f.get("message") or "").strip().splitlines()
        entry = {
            "claim": t["claims"][0],
            "test": t["name"],
            "backends": [t["backend"]] if t.get("backend") else [],
            "devices": [t["device"]] if t["device"] != "any" else [],
            "exception": f["exception"],
            "match": (first[0] if first else "")[:160],
            "torch": f">={v.major}.{v.minor},<{v.major}.{v.minor + 1}",
            "measured": [v.public],
            "upstream": "not triaged",
            "reason": "TODO: one sentence - what torch does instead, and since which release",
        }
        key = (entry["claim"], entry["test"], tuple(entry["backends"]), tuple(entry["devices"]),
               entry["exception"], entry["match"])  # fmt: skip
        if key not in seen:
            seen.add(key)
            new.append(entry)
    header = (
        "# Proposed by `torch-conformance run --update-expectations` for torch "
        f"{doc['environment']['torch']}.\n# Review every entry: name the behaviour in `match` "
        "(or give a region), fill `reason` and `upstream`,\n# then move it into "
        "conformance/expectations/<area>.toml (sorted by claim).\n"
    )
    confirm = [
        f"# confirm: {r['key']} ({r['file']}) explained {len(r['tests'])} test(s) on this release: "
        f'add "{v.public}" to its measured (measured on {", ".join(r["measured"]) or "none"})'
        for r in unmeasured_deviations(doc)
    ]
    body = [_entry(d) for d in new]
    parts = [header]
    if confirm:
        parts.append("\n".join(confirm))
    narrow = region_proposals(doc)
    if narrow:
        parts.append("\n".join(narrow))
    parts.append("\n\n".join(body) if body else "# no new failures")
    return "\n".join(parts) + "\n"
