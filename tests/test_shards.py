"""Sharded runs: the split is deterministic and balanced, and merging refuses
anything but the N parts of one run."""

from __future__ import annotations

import copy

import pytest

from reports.results import ResultsError
from reports.shards import assign, merge_docs, parse_shard


def test_parse_shard_accepts_i_of_n_only():
    assert parse_shard("1/2") == (1, 2)
    assert parse_shard(" 3/3 ") == (3, 3)
    for bad in ("0/2", "3/2", "1", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)


def test_assign_is_deterministic_complete_and_balanced():
    ids = [f"t{i}" for i in range(40)]
    durations = {f"t{i}": float(i % 7 + 1) for i in range(35)}  # t35..t39 unrecorded
    a = assign(ids, 3, durations)
    assert a == assign(list(reversed(ids)), 3, durations)[::-1]  # order of collection is irrelevant
    assert set(a) == {1, 2, 3}
    load = {k: sum(durations.get(n, 4.0) for n, s in zip(ids, a, strict=True) if s == k)
            for k in (1, 2, 3)}  # fmt: skip
    assert max(load.values()) - min(load.values()) <= 7.0  # within the longest case
    assert assign(ids, 1, durations) == [1] * 40


def _shard(index, total, tests, stale=()):
    return {
        "suite": {"version": "0.1.0", "commit": "abc"},
        "environment": {
            "torch": "2.13.0",
            "profile": "ci",
            "devices": ["cpu"],
            "backends": ["eager"],
            "claims_selected": None,
            "expectations_file": "x",
            "started": f"t{index}",
            "finished": f"u{index}",
            "wall_s": float(index),
            "shard": {"index": index, "total": total},
        },  # fmt: skip
        "claims": {"a.x": {"area": "a"}, "a.y": {"area": "a"}},
        "tests": [
            {
                "nodeid": n,
                "claims": [c],
                "device": "cpu",
                "verdict": "held",
                "examples": 1,
                "observes": [],
            }
            for n, c in tests
        ],  # fmt: skip
        "expectations": {"stale": [{"key": k} for k in stale], "all": []},
        "measurements": [],
        "instruments": {},
    }


def test_merge_joins_tests_and_keeps_only_entries_stale_in_every_shard():
    one = _shard(1, 2, [("m::t1", "a.x")], stale=["e1", "e2"])
    two = _shard(2, 2, [("m::t2", "a.y")], stale=["e2"])
    doc = merge_docs([two, one])
    assert [t["nodeid"] for t in doc["tests"]] == ["m::t1", "m::t2"]
    assert [e["key"] for e in doc["expectations"]["stale"]] == ["e2"]
    assert doc["environment"]["merged_shards"] == 2 and "shard" not in doc["environment"]
    assert doc["environment"]["started"] == "t1" and doc["environment"]["finished"] == "u2"


def test_merge_refuses_missing_repeated_foreign_or_overlapping_shards():
    one = _shard(1, 2, [("m::t1", "a.x")])
    two = _shard(2, 2, [("m::t2", "a.y")])
    with pytest.raises(ResultsError, match=r"missing \[2\]"):
        merge_docs([one])
    with pytest.raises(ResultsError, match=r"repeated \[1\]"):
        merge_docs([one, copy.deepcopy(one)])
    other = copy.deepcopy(two)
    other["environment"]["torch"] = "2.14.0"
    with pytest.raises(ResultsError, match="differ in torch"):
        merge_docs([one, other])
    commit = copy.deepcopy(two)
    commit["suite"]["commit"] = "def"
    with pytest.raises(ResultsError, match="different versions of the suite"):
        merge_docs([one, commit])
    overlap = _shard(2, 2, [("m::t1", "a.x")])
    with pytest.raises(ResultsError, match="two shards ran m::t1"):
        merge_docs([one, overlap])
    unsharded = copy.deepcopy(one)
    del unsharded["environment"]["shard"]
    with pytest.raises(ResultsError, match="not a shard"):
        merge_docs([unsharded, two])
    with pytest.raises(ResultsError, match="split differently"):
        merge_docs([one, _shard(2, 3, [("m::t2", "a.y")])])
