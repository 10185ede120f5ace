"""Compare two result files claim by claim (typically two torch versions).

A *regression* is a (claim, device) that held or deviated as expected in the
baseline and is now ``FAILED`` or ``unexpected pass``, or whose failure
signature changed. Other differences (newly skipped, newly run, new claims)
are listed as changes, not regressions.
"""

from __future__ import annotations

import re

from reports.results import claim_verdicts

_BAD = ("ERROR", "FAILED", "unexpected pass")


_HEX = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<=[A-Za-z_])\d+")
_RUN_OF_N = re.compile(r"N(?:, N)+")


def normalize_signature(signature: str) -> str:
    """``signature`` without what varies from example to example: addresses
    become ``<address>``, every number ``N`` (tensor names ``t22`` -> ``tN``), and a
    run of numbers ``N, ...`` - so two runs that fail the same way on
    different inputs compare equal, and a different failure does not."""
    s = _HEX.sub("<address>", signature)
    s = _NUMBER.sub("N", s)
    return _RUN_OF_N.sub("N, ...", s)


def _test_signature(t: dict) -> str:
    """The signature a test failed with, as observed and normalized
    (:func:`normalize_signature`): the first line of its failure, or, for a
    deviation counted example by example, of the first example that deviated
    (``region.example``); the recorded signature only where a run kept
    neither (results written before 2026-11)."""
    exp = t.get("expectation")
    if t.get("verdict") not in ("regression", "expected-deviation"):
        return ""  # held, skipped, or not reached (another claim's failure)
    observed = (t.get("failure") or {}).get("signature")
    if observed:
        return normalize_signature(observed)
    example = (t.get("region") or {}).get("example") or ""
    if "\n-> " in example:
        return normalize_signature(example.rsplit("\n-> ", 1)[1])
    if t.get("verdict") == "expected-deviation" and exp:
        where = f" on {exp['region_text']}" if not exp.get("whole_test", True) else ""
        return f"{exp['exception']}: ...{exp['match']}... (as recorded{where})"
    return ""


def _signature(cell: dict) -> str | None:
    sigs = sorted({_test_signature(t) for t in cell.get("tests", [])} - {""})
    return " | ".join(sigs) or None


def _example(cell: dict) -> str | None:
    for t in cell.get("tests", []):
        ex = (t.get("failure") or {}).get("falsifying_example")
        if ex:
            return ex
    return None


def _changed_in(base: dict, new: dict, cid: str, dev: str, verdict: str) -> str | None:
    """The first shipped release between the two runs' torch versions that
    already had the new verdict (see :func:`reports.baselines.changed_in`)."""
    from reports.baselines import changed_in

    b, n = base["environment"].get("torch"), new["environment"].get("torch")
    if not b or not n or b == n:
        return None
    try:
        return changed_in(cid, dev, verdict, b, n)
    except Exception:  # an unreadable baseline must not break a comparison
        return None


def _unobserved_devices(doc: dict) -> dict[str, str]:
    """Devices on which a run observed nothing: never requested (``--devices``)
    or not present on its machine (every test there skipped as unavailable).
    ``{device: reason}``."""
    from reports.html import _unavailable_devices

    devices = {t.get("device") for t in doc.get("tests", []) if t.get("device")}
    out = dict(_unavailable_devices(doc, sorted(devices)))
    for d in ("cpu", "cuda"):
        if d not in devices:
            out[d] = "not requested in this run"
    return out


def compare_docs(base: dict, new: dict) -> dict:
    """Return ``{"regressions": [...], "changes": [...], "same_commit": bool, ...}``.

    Each row: claim, device, base verdict, new verdict, base/new failure
    signature and falsifying example. Regressions come first.
    """
    bv, nv = claim_verdicts(base), claim_verdicts(new)
    # A device one of the two runs never observed has nothing to compare: its
    # cells would all read "skipped -> not run" and bury the real changes.
    b_un, n_un = _unobserved_devices(base), _unobserved_devices(new)
    not_compared = {
        d: f"base: {b_un[d]}" if d in b_un else f"new: {n_un[d]}"
        for d in sorted(set(b_un) | set(n_un))
    }
    rows = []
    for cid in sorted(set(bv) | set(nv)):
        devices = sorted(set(bv.get(cid, {})) | set(nv.get(cid, {})))
        for dev in devices:
            if dev.split("/", 1)[0] in not_compared:
                continue
            b = bv.get(cid, {}).get(dev, {"verdict": "not run", "tests": []})
            n = nv.get(cid, {}).get(dev, {"verdict": "not run", "tests": []})
            bs, ns = _signature(b), _signature(n)
            if b["verdict"] == n["verdict"] and bs == ns:
                continue
            regression = n["verdict"] in _BAD and b["verdict"] not in _BAD
            if b["verdict"] == n["verdict"] == "expected deviation" and bs != ns:
                regression = True
            rows.append(
                {
                    "changed_in": _changed_in(base, new, cid, dev, n["verdict"]),
                    "claim": cid,
                    "device": dev,
                    "base": b["verdict"],
                    "new": n["verdict"],
                    "base_signature": bs,
                    "new_signature": ns,
                    "base_example": _example(b),
                    "new_example": _example(n),
                    "regression": regression,
                }
            )
    rows.sort(key=lambda r: (not r["regression"], r["claim"], r["device"]))
    bc, nc = base.get("suite", {}).get("commit"), new.get("suite", {}).get("commit")
    from reports.causes import cause_groups

    regressed = {r["claim"] for r in rows if r["regression"]}
    causes = cause_groups(new) if regressed else {"groups": [], "standalone": [], "failing": 0}
    groups = []
    for g in causes["groups"]:
        own = [c for c in g["own_failed"] if c in regressed]
        explained = [c for c in g["explained"] if c in regressed]
        if own or explained:
            groups.append({**g, "own_failed": own, "explained": explained})
    grouped = {c for g in groups for c in (*g["own_failed"], *g["explained"])}
    return {
        "causes": {
            "groups": groups,
            "standalone": sorted(regressed - grouped),
            "failing": len(regressed),
        },
        "not_compared": not_compared,
        "base_torch": base["environment"].get("torch"),
        "new_torch": new["environment"].get("torch"),
        "same_commit": bc == nc,
        "base_commit": bc,
        "new_commit": nc,
        "regressions": [r for r in rows if r["regression"]],
        "changes": [r for r in rows if not r["regression"]],
    }
