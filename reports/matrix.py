"""Cross-version matrix: claims as rows, (torch version x device) as columns."""

from __future__ import annotations

from reports.results import claim_verdicts
from reports.results import columns as result_columns

_BAD = ("ERROR", "FAILED", "unexpected pass")


def build_matrix(docs: list[dict]) -> dict:
    """Combine result files into ``{"columns": [...], "rows": [...]}``.

    Columns are ``(torch, device)`` pairs in the order of ``docs``; a cell is
    flagged ``regression`` when it is FAILED/unexpected pass while the first
    column that ran the claim on that device had it held or deviating as
    expected.
    """
    columns, verdicts = [], []
    for doc in docs:
        cv = claim_verdicts(doc)
        for dev in result_columns(doc):
            columns.append({"torch": doc["environment"].get("torch"), "device": dev,
                            "commit": (doc.get("suite") or {}).get("commit")})  # fmt: skip
            verdicts.append(
                {cid: per.get(dev, {}).get("verdict", "not run") for cid, per in cv.items()}
            )
    claims: dict[str, dict] = {}
    for doc in docs:
        claims.update(doc["claims"])
    rows = []
    for cid in sorted(claims):
        cells = []
        first: dict[str, str] = {}
        for col, vs in zip(columns, verdicts, strict=True):
            v = vs.get(cid, "not run")
            base = first.setdefault(col["device"], v) if v != "not run" else None
            cells.append(
                {"verdict": v, "regression": v in _BAD and base is not None and base not in _BAD}
            )
        rows.append({"claim": cid, "area": claims[cid].get("area"), "statement": claims[cid].get("statement"),
                     "cells": cells, "any_regression": any(c["regression"] for c in cells)})  # fmt: skip
    rows.sort(key=lambda r: (not r["any_regression"], r["claim"]))
    return {"columns": columns, "rows": rows}
