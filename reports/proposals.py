"""``--update-expectations``: propose expectation entries for a reviewer.

The proposal keeps every existing entry that still matched a collected test
and did not turn into an unexpected pass, and adds one entry per failing test
with its observed signature (exception type and the first line of the
message). A reviewer trims the ``match`` to a stable substring, writes the
``reason`` and ``link``, and commits it as ``conformance/expectations.toml``.
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
    if d.get("torch"):
        lines.append(f"torch = {_q(d['torch'])}")
    if d.get("devices"):
        lines.append(f"devices = [{', '.join(_q(x) for x in d['devices'])}]")
    if d.get("python"):
        lines.append(f"python = {_q(d['python'])}")
    for key in ("exception", "match", "reason", "link"):
        lines.append(f"{key} = {_q(d[key])}")
    return "\n".join(lines)


def propose(doc: dict) -> str:
    """TOML text of the proposed expectations file for result document ``doc``."""
    stale = {d["key"] for d in doc.get("expectations", {}).get("stale", [])}
    unexpected = {
        (t.get("expectation") or {}).get("key")
        for t in doc["tests"]
        if t["verdict"] == "unexpected-pass"
    }
    keep = [
        d for d in doc.get("expectations", {}).get("all", [])
        if d["key"] not in stale and d["key"] not in unexpected
    ]  # fmt: skip
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
            "torch": f"=={v.major}.{v.minor}.*",
            "devices": [t["device"]] if t["device"] != "any" else [],
            "exception": f["exception"],
            "match": (first[0] if first else "")[:120],
            "reason": "TODO: why this torch deviates (and since which version)",
            "link": "TODO: PyTorch issue, PR or docs page",
        }
        key = (
            entry["claim"],
            entry["test"],
            tuple(entry["devices"]),
            entry["exception"],
            entry["match"],
        )
        if key not in seen:
            seen.add(key)
            new.append(entry)
    header = (
        "# Proposed by `torch-conformance run --update-expectations` for torch "
        f"{doc['environment']['torch']}.\n# Review every entry: trim `match` to a stable "
        "substring, fill `reason` and `link`, then commit as conformance/expectations.toml.\n"
    )
    body = [_entry(d) for d in keep] + [
        "# --- new failures (review) ---\n" + _entry(d) if i == 0 else _entry(d)
        for i, d in enumerate(new)
    ]
    return header + "\n" + "\n\n".join(body) + "\n"
