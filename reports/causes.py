"""Group failing claims by their likely cause.

A test that takes its expected values through a broken instrument fails
although its own operation is fine: under a ``detach()`` that returns zeros,
clone, ``torch.tensor`` and ``copy_`` claims fail too. Each test declares the
instruments it observes through (``@pytest.mark.observes``, listed in
``conformance/instruments.toml`` with their own claims); this module groups

- under an instrument, every failing claim one of whose failing tests
  observes through that instrument, when one of the instrument's own claims
  failed in the same run (the likely cause: "42 failures, 1 likely cause:
  detach");
- on its own, every other failing claim.

A claim that is itself one of a failing instrument's own claims is listed as
the evidence of that cause, not as explained by it.

Result files written before the rename name the instruments ``oracles``
(document and test records); :func:`reports.results.instruments_of` and
:func:`reports.results.observes_of` read either.
"""

from __future__ import annotations

from reports.results import claim_verdicts, instruments_of, observes_of

__all__ = ["BAD", "failing_claims", "cause_groups", "cause_lines"]

#: Claim verdicts that need a decision.
BAD = ("ERROR", "FAILED", "unexpected pass")


def failing_claims(doc: dict) -> dict[str, list[dict]]:
    """``{claim: [failing test records]}`` over every column. A claim that is
    an ERROR only because its held tests missed a value of its declared
    domain is a defect of the suite, not a behaviour of torch: no cause."""
    out: dict[str, list[dict]] = {}
    for cid, cells in claim_verdicts(doc).items():
        for cell in cells.values():
            if cell["verdict"] in BAD and not cell.get("domain_missing"):
                bad = [t for t in cell["tests"] if t.get("verdict") != "held"]
                out.setdefault(cid, []).extend(bad or cell["tests"])
    return out


def cause_groups(doc: dict) -> dict:
    """``{"groups": [{primitive, description, own_failed, explained}],
    "standalone": [claim], "failing": n}``, groups largest first.

    ``primitive``: the instrument's name; ``own_failed``: its own claims that
    failed (the evidence); ``explained``: other failing claims whose failing
    tests observe through it. A claim observed through several failing
    instruments is listed under each."""
    failing = failing_claims(doc)
    prims = instruments_of(doc)

    def own_claims(p: dict) -> set[str]:
        areas = set(p.get("areas") or ())
        return set(p["claims"]) | {
            c for c in failing if (doc["claims"].get(c) or {}).get("area", c.split(".")[0]) in areas
        }

    candidates = {name: sorted(own_claims(p) & set(failing)) for name, p in prims.items()}
    candidates = {k: v for k, v in candidates.items() if v}

    def relied(cid: str) -> set[str]:
        return {o for t in failing[cid] for o in observes_of(t)}

    # An instrument is a root cause when one of its own failing claims does not
    # itself observe through another broken instrument (autograd.chain-rule-values
    # failing because its test snapshots through a broken detach() says
    # nothing about backward()). Without any such claim, keep them all.
    broken = {
        name: cs
        for name, cs in candidates.items()
        if any(not (relied(c) & (set(candidates) - {name})) for c in cs)
    } or candidates
    own = {c for cs in broken.values() for c in cs}
    groups = {
        name: {"primitive": name, "description": prims[name].get("description", ""),
               "own_failed": cs, "explained": []}
        for name, cs in broken.items()
    }  # fmt: skip
    standalone: list[str] = []
    for cid in sorted(failing):
        if cid in own:
            continue
        causes = sorted(relied(cid) & set(broken))
        for name in causes:
            groups[name]["explained"].append(cid)
        if not causes:
            standalone.append(cid)
    ordered = sorted(
        groups.values(),
        key=lambda g: (-(len(g["explained"]) + len(g["own_failed"])), g["primitive"]),
    )
    return {"groups": ordered, "standalone": standalone, "failing": len(failing)}


def cause_lines(doc: dict) -> list[str]:
    """Plain-text summary lines (terminal, logs)."""
    cg = cause_groups(doc)
    if not cg["failing"]:
        return []
    n_causes = len(cg["groups"]) + len(cg["standalone"])
    lines = [
        f"{cg['failing']} failing claim(s), {n_causes} likely cause(s)"
        + (f": {len(cg['groups'])} broken instrument(s), "
           f"{len(cg['standalone'])} on their own" if cg["groups"] else "")
    ]  # fmt: skip
    for g in cg["groups"]:
        lines.append(
            f"  cause: {g['primitive']} - its own claims {', '.join(g['own_failed'])} FAILED; "
            f"{len(g['explained'])} other failing claim(s) rely on it: " + ", ".join(g["explained"])
        )
    for cid in cg["standalone"]:
        lines.append(f"  on its own: {cid}")
    return lines
