"""Spreading one run over several machines: ``run --shard I/N`` and ``merge``.

A shard is a deterministic part of the collected test cases: every machine
of a CI matrix collects the same cases (same suite, torch, devices,
backends, claims), orders them by their recorded duration (the shipped
baseline of the installed release, else the newest one; cases it lacks
count as its median duration) and hands each, longest first, to the shard
with the least time so far (longest-processing-time scheduling). Shard
``I`` of ``N`` runs the cases it was handed; ``merge`` joins the
``results.json`` of all ``N`` shards into one document, after checking
they are the ``N`` parts of one run: a missing, duplicated or foreign shard
is an error, never a silent gap.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

from reports.results import ResultsError

__all__ = ["parse_shard", "assign", "recorded_durations", "merge_docs"]

_SHARD = re.compile(r"([0-9]+)/([0-9]+)")


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N``. Raises ``ValueError``
    (one line) otherwise."""
    m = _SHARD.fullmatch(text.strip())
    if not m:
        raise ValueError(f"--shard: expected I/N (e.g. 1/2), got {text!r}")
    i, n = int(m.group(1)), int(m.group(2))
    if not 1 <= i <= n:
        raise ValueError(f"--shard: I must be between 1 and N, got {text!r}")
    return i, n


def recorded_durations(torch_version: str) -> dict[str, float]:
    """``{nodeid: duration_s}`` from the shipped baseline of
    ``torch_version`` (its release, local tags dropped), else of the newest
    shipped release; empty when none can be read."""
    from reports.baselines import available, load_baseline

    shipped = available()
    if not shipped:
        return {}
    release = torch_version.split("+", 1)[0]
    version = release if release in shipped else list(shipped)[-1]
    try:
        doc = load_baseline(version)
    except ResultsError:
        return {}
    return {t["nodeid"]: float(t.get("duration_s") or 0.0) for t in doc["tests"]}


def assign(nodeids: Sequence[str], total: int, durations: dict[str, float]) -> list[int]:
    """The shard (1-based) of each node id, balanced by ``durations``
    (missing ones count as their median, or 1 s). Deterministic: depends
    only on the set of node ids and the durations."""
    known = [durations[n] for n in nodeids if n in durations]
    default = statistics.median(known) if known else 1.0
    load = [0.0] * total
    out: dict[str, int] = {}
    for n in sorted(set(nodeids), key=lambda n: (-durations.get(n, default), n)):
        k = min(range(total), key=lambda j: (load[j], j))
        load[k] += durations.get(n, default)
        out[n] = k + 1
    return [out[n] for n in nodeids]


#: Environment fields every shard of one run must share.
_SAME = ("torch", "profile", "devices", "backends", "claims_selected", "expectations_file")


def merge_docs(docs: Sequence[dict]) -> dict:
    """One ``results.json`` document from the documents of the ``N`` shards
    of a run. Raises :class:`ResultsError` (one line) when a document is not
    a shard, shards are missing or repeated, they disagree on the run
    (torch, profile, devices, backends, claims, expectations, suite) or two
    shards ran the same test case."""
    if not docs:
        raise ResultsError("merge: no results given")
    shards = []
    for d in docs:
        sh = d.get("environment", {}).get("shard")
        if not sh:
            raise ResultsError(
                "merge: a results.json that is not a shard (run it with --shard I/N)"
            )
        shards.append((sh["index"], sh["total"]))
    totals = {n for _, n in shards}
    if len(totals) != 1:
        raise ResultsError(f"merge: shards of runs split differently: {sorted(totals)}")
    (n,) = totals
    seen = sorted(i for i, _ in shards)
    if seen != list(range(1, n + 1)):
        missing = sorted(set(range(1, n + 1)) - set(seen))
        repeated = sorted({i for i in seen if seen.count(i) > 1})
        what = "; ".join(
            filter(None, [missing and f"missing {missing}", repeated and f"repeated {repeated}"])
        )
        raise ResultsError(f"merge: not the {n} shards of one run: {what}")
    first = docs[0]
    for d in docs[1:]:
        for k in _SAME:
            if d["environment"].get(k) != first["environment"].get(k):
                raise ResultsError(
                    f"merge: shards differ in {k}: {first['environment'].get(k)!r} "
                    f"!= {d['environment'].get(k)!r}"
                )
        mine, theirs = d.get("suite") or {}, first.get("suite") or {}
        if any(mine.get(k) != theirs.get(k) for k in ("version", "commit")):
            raise ResultsError("merge: shards were run by different versions of the suite")
    tests: dict[str, dict] = {}
    for d in docs:
        for t in d["tests"]:
            key = t["nodeid"]
            if key in tests and t.get("verdict") != "suite-error":
                raise ResultsError(f"merge: two shards ran {key}")
            tests[key] = t
    stale_keys = None
    for d in docs:
        keys = {e["key"] for e in d["expectations"]["stale"]}
        stale_keys = keys if stale_keys is None else stale_keys & keys
    merged = {**first}
    env = {k: v for k, v in first["environment"].items() if k != "shard"}
    env["merged_shards"] = n
    env["started"] = min(d["environment"]["started"] for d in docs)
    env["finished"] = max(d["environment"]["finished"] for d in docs)
    env["wall_s"] = max(d["environment"].get("wall_s") or 0.0 for d in docs)
    merged["environment"] = env
    merged["tests"] = [tests[k] for k in sorted(tests)]
    merged["expectations"] = {
        **first["expectations"],
        "stale": [e for e in first["expectations"]["stale"] if e["key"] in (stale_keys or set())],
    }
    merged["measurements"] = [m for d in docs for m in d.get("measurements", [])]
    from reports.causes import cause_groups

    merged["causes"] = cause_groups(merged)
    return merged
