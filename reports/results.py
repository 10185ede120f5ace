"""The result file: schema, verdicts, loading and aggregation.

``results.json`` (``schema_version`` :data:`SCHEMA_VERSION`) holds::

    {
      "schema_version": 1,
      "suite": {"name", "version", "commit"},
      "environment": {"torch", "torch_cuda", "python", "hypothesis", "numpy",
                      "platform", "profile", "devices", "cuda_available", "started", "finished"},
      "areas": {area: title},
      "claims": {id: {id, area, statement, kind, sources, ...}},
      "tests": [{nodeid, name, claims, observes, device, outcome, verdict, duration_s,
                 examples, skip_reason?, failure?, expectation?}],
      "expectations": {"stale": [...], "applied": [...]},
      "measurements": [...],
      "instruments": {name: {name, description, claims, areas}}
    }

A test's ``observes`` lists the instruments it observes its claims through
(``@pytest.mark.observes``); ``instruments`` describes them
(``conformance/instruments.toml``). Files written before the rename call
them ``oracles`` (both the test key and the document key): read them with
:func:`observes_of` and :func:`instruments_of`, which take the new key
and fall back to the old one.

Test verdicts (:data:`TEST_VERDICTS`): ``held``, ``expected-deviation``,
``not-applicable`` (every example the test ran was one it cannot exercise on
the installed torch - a helper op lacks the dtype, an API or argument form
does not exist yet - with the reasons in ``not_applicable``; not a failure),
``region-not-reached`` (a deviation with a region whose region no example
reached: the claim held on every example drawn, none fell where torch is
known to deviate), ``regression``, ``unexpected-pass``, ``suite-error`` (a
defect of the suite - a Hypothesis health check, a region reading a feature
the test does not report - never a verdict on torch; it fails the gate) and
``skipped``. Claim verdicts per device (:func:`claim_verdicts`): ``ERROR``,
``FAILED``, ``unexpected pass``, ``expected deviation``, ``region not
reached``, ``held``, ``not applicable``, ``skipped``, ``not run``. A test
that held on some examples and was not applicable on others is ``held``
and records the not-applicable counts per reason (``not_applicable``).

A test that checks several claims records ``failed_claims`` (the claims its
failures name; it was re-run with those muted) and ``claim_examples`` (per
claim, the examples that checked it and found it held), so each claim's
verdict rests on its own evidence. A whole-test deviation of such a test
covers its own claim only: ``claim_expectations`` maps the claims whose
failure matched their entry, ``unreached_claims`` the deviating claims that
never failed - "region not reached" (see ``conformance.verdicts.per_claim_deviations``;
each claim's share of a test is read by ``conformance.verdicts.claim_view``).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from conformance.verdicts import cell_verdict, claim_view

SCHEMA_VERSION = 1
TEST_VERDICTS = (
    "held", "expected-deviation", "region-not-reached", "regression", "unexpected-pass",
    "suite-error", "not-applicable", "skipped",
)  # fmt: skip
CLAIM_VERDICTS = (
    "ERROR", "FAILED", "unexpected pass", "expected deviation", "region not reached", "held",
    "not applicable", "skipped", "not run",
)  # fmt: skip
#: Test verdicts that fail the gate.
FAILING_TEST_VERDICTS = ("regression", "unexpected-pass", "suite-error")
#: Overall verdict of claims checked by measurement instead of tests.
MEASURED = "measured"
_REQUIRED = ("schema_version", "suite", "environment", "areas", "claims", "tests")


def instruments_of(doc: dict) -> dict:
    """``{name: {name, description, claims, areas}}``: the document's
    ``instruments``, else its ``oracles`` (a file written before the rename),
    else empty."""
    found = doc.get("instruments")
    if found is None:
        found = doc.get("oracles")
    return found or {}


def observes_of(test: dict) -> list[str]:
    """The instruments a test record observes through: its ``observes``, else
    its ``oracles`` (a file written before the rename), else none."""
    found = test.get("observes")
    if found is None:
        found = test.get("oracles")
    return list(found or ())


class ResultsError(Exception):
    """An unreadable, corrupt or incompatible result file (one-line message)."""


def write_json_atomic(path: Path | str, doc: dict) -> None:
    """Write ``doc`` as JSON to ``path`` via a temporary file and rename, so
    a reader never sees a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, sort_keys=False, default=str)
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: Path | str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load_results(path: Path | str) -> dict:
    """Read and validate a result file.

    Raises :class:`ResultsError` (one line) when the file is missing,
    unreadable, not JSON, of another schema version, or lacks a section.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such result file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ResultsError(f"{path}: cannot read result file: {e}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ResultsError(
            f"{path}: corrupt result file (not JSON: {e.msg} at line {e.lineno})"
        ) from None
    return validate(doc, str(path))


def validate(doc, path: str) -> dict:
    """Check a parsed result document; returns it. Raises :class:`ResultsError`
    (one line naming ``path``) for another schema version or a missing or
    malformed section."""
    if not isinstance(doc, dict):
        raise ResultsError(f"{path}: corrupt result file (top level is not an object)")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise ResultsError(
            f"{path}: schema_version {doc.get('schema_version')!r} is not the supported {SCHEMA_VERSION}"
        )
    missing = [k for k in _REQUIRED if k not in doc]
    if missing:
        raise ResultsError(f"{path}: corrupt result file (missing {', '.join(missing)})")
    if not isinstance(doc["tests"], list) or not isinstance(doc["claims"], dict):
        raise ResultsError(f"{path}: corrupt result file (tests/claims have the wrong type)")
    for t in doc["tests"]:
        if not isinstance(t, dict) or t.get("verdict") not in TEST_VERDICTS:
            raise ResultsError(f"{path}: corrupt result file (a test has no valid verdict)")
    return doc


def column(t: dict) -> str:
    """The verdict column of a test record: its device (``cpu``, ``cuda``,
    ``any``), or ``device/backend`` for a compile-tier test (``cpu/inductor``)."""
    dev = t.get("device", "cpu")
    return f"{dev}/{t['backend']}" if t.get("backend") else dev


def columns(doc: dict) -> list[str]:
    """The verdict columns of a run: its devices, then ``device/backend`` for
    each compile-tier combination that has a test."""
    devices = list(doc["environment"].get("devices", ["cpu"]))
    extra = sorted({column(t) for t in doc["tests"] if t.get("backend")})
    return devices + [c for c in extra if c not in devices]


def claim_verdicts(doc: dict) -> dict[str, dict[str, dict]]:
    """Aggregate test verdicts into ``{claim: {device: {verdict, tests, examples, reasons}}}``.

    Precedence per (claim, device): any suite error -> ``ERROR``; any
    regression -> ``FAILED``; else any
    unexpected pass -> ``unexpected pass``; else any expected deviation ->
    ``expected deviation``; else any region-not-reached -> ``region not
    reached``; else any held -> ``held``; else ``skipped``.
    Device-independent tests (device ``any``) count for every device.
    Devices with no test for a claim are ``not run``. Compile-tier tests
    (with a ``backend``) fill ``device/backend`` columns of their own
    (:func:`column`); a claim has only the columns its tests ran on.
    A ``held`` cell whose tests never drew a value of the claim's declared
    domain is ``ERROR`` (:func:`domain_gaps`); coverage is counted per cell,
    so a compile-tier claim is judged per backend - inductor's tests must
    draw every value themselves, whatever aot_eager's drew.
    """
    devices = list(doc["environment"].get("devices", ["cpu"]))
    out: dict[str, dict[str, dict]] = {}
    for cid in doc["claims"]:
        out[cid] = {
            d: {"verdict": "not run", "tests": [], "examples": 0, "reasons": []} for d in devices
        }
    backend_claims = {c for t in doc["tests"] if t.get("backend") for c in t.get("claims", [])}
    for cid in backend_claims & set(out):
        out[cid] = {}  # compile-tier claims: only device/backend columns
    for t in doc["tests"]:
        targets = devices if t.get("device") == "any" else [column(t)]
        for cid in t.get("claims", []):
            if cid not in doc["claims"]:
                continue  # a co-claim outside the selected claims (--claims)
            view, examples = claim_view(t, cid)
            for d in targets:
                cell = out.setdefault(cid, {}).setdefault(
                    d, {"verdict": "not run", "tests": [], "examples": 0, "reasons": []}
                )
                cell["tests"].append(view)
                cell["examples"] += examples
                if view.get("verdict") == "held":
                    cov = cell.setdefault("coverage", {})
                    for dim, counts in ((t.get("claim_coverage") or {}).get(cid) or {}).items():
                        for value, n in counts.items():
                            cov.setdefault(dim, {})[value] = cov.get(dim, {}).get(value, 0) + n
                na_cov = ((t.get("claim_na_coverage") or {}).get(cid) or {}).items()
                for dim, counts in na_cov:
                    na = cell.setdefault("na_coverage", {})
                    for value, n in counts.items():
                        na.setdefault(dim, {})[value] = na.get(dim, {}).get(value, 0) + n
    sharded = (doc["environment"].get("shard") or {}).get("total", 1) > 1
    for cid, per_dev in out.items():
        for cell in per_dev.values():
            vs = {t["verdict"] for t in cell["tests"]}
            if not vs:
                continue
            cell["verdict"] = cell_verdict(vs)
            if cell["verdict"] == "held":
                # One shard holds part of a claim's tests: the merged document judges.
                missing = (
                    []
                    if sharded
                    else domain_gaps(doc["claims"].get(cid, {}), cell.get("coverage") or {})
                )
                # A value drawn only by examples that were not applicable on
                # this torch (e.g. 0-byte storage sharing before 2.2) is
                # reported as such, not as a value the strategies skipped.
                na = domain_gaps(doc["claims"].get(cid, {}), cell.get("na_coverage") or {})
                unobservable = [m for m in missing if m not in na]
                if unobservable:
                    cell["domain_not_applicable"] = unobservable
                    cell["reasons"] = [
                        f"domain value {m} not applicable on this torch: every example "
                        "that drew it was not applicable (counted with its reason)"
                        for m in unobservable
                    ]
                missing = [m for m in missing if m in na]
                if missing:
                    # "held" means checked over the whole declared domain
                    cell["verdict"] = "ERROR"
                    cell["domain_missing"] = missing
                    cell["reasons"] = [
                        f"domain value {m} never checked: the claim's tests held, but no "
                        "example that checked it drew this value of its declared domain"
                        for m in missing
                    ]
            elif cell["verdict"] == "not applicable":
                cell["reasons"] = sorted(
                    {t.get("skip_reason") or "" for t in cell["tests"]
                     if t["verdict"] == "not-applicable"}
                )  # fmt: skip
            elif cell["verdict"] == "skipped":
                cell["reasons"] = sorted({t.get("skip_reason") or "" for t in cell["tests"]})
    return out


def domain_gaps(claim: dict, coverage: dict[str, dict[str, int]]) -> list[str]:
    """The values of ``claim``'s declared domain (its registry ``domain``, as
    ``results.json`` records it) that no checked example drew, as
    ``dimension=value``; empty when every value was checked (or no domain
    is declared)."""
    from conformance.registry import domain_value

    return [
        f"{dim}={domain_value(v)}"
        for dim, values in (claim.get("domain") or {}).items()
        for v in values
        if not (coverage.get(dim) or {}).get(domain_value(v))
    ]


def claim_overall(per_device: dict[str, dict]) -> str:
    """One verdict for a claim across devices, by the same precedence, ignoring
    devices where it was skipped or not run unless nothing else happened."""
    verdicts = [c["verdict"] for c in per_device.values()]
    for v in CLAIM_VERDICTS:
        if v in verdicts:
            return v
    return "not run"


def overall_verdict(doc: dict, claim_id: str, per_device: dict[str, dict]) -> str:
    """:func:`claim_overall`, or ``measured`` for measurement claims."""
    if doc["claims"].get(claim_id, {}).get("check") == "measurement":
        return MEASURED
    return claim_overall(per_device)


def summarize(doc: dict) -> dict:
    """Totals: tests by verdict, claims by overall verdict, claims by kind."""
    tests: dict[str, int] = {v: 0 for v in TEST_VERDICTS}
    for t in doc["tests"]:
        tests[t["verdict"]] = tests.get(t["verdict"], 0) + 1
    cv = claim_verdicts(doc)
    claims: dict[str, int] = {v: 0 for v in (*CLAIM_VERDICTS, MEASURED)}
    kinds: dict[str, int] = {}
    for cid, per_dev in cv.items():
        claims[overall_verdict(doc, cid, per_dev)] += 1
        kind = doc["claims"].get(cid, {}).get("kind", "?")
        kinds[kind] = kinds.get(kind, 0) + 1
    # A claim ERROR without a failing test: its tests held, but not over its
    # whole declared domain (claim_verdicts' domain check).
    gate_ok = not any(tests.get(v, 0) for v in FAILING_TEST_VERDICTS) and not claims["ERROR"]
    return {
        "tests": tests,
        "claims": claims,
        "kinds": kinds,
        "gate_passed": gate_ok,
        "unmeasured": unmeasured_deviations(doc),
    }


def unmeasured_deviations(doc: dict) -> list[dict]:
    """The entries that explained a failure on a release they were never
    measured on ("expected deviation (not measured on this release)"), one
    per entry key with the claims and tests it explained: the list to review
    before adding this release to each entry's ``measured``."""
    out: dict[str, dict] = {}
    for t in doc["tests"]:
        if t.get("verdict") not in ("expected-deviation", "regression"):
            continue
        used = list((t.get("claim_expectations") or {}).values())
        regions = t.get("regions") or []
        used += [r["expectation"] for r in regions if (r.get("region") or {}).get("inside", 0)]
        if t.get("verdict") == "expected-deviation" and t.get("expectation") and not regions:
            used.append(t["expectation"])
        for e in used:
            if not e.get("unmeasured"):
                continue
            row = out.setdefault(e["key"], {"key": e["key"], "claim": e["claim"],
                                            "torch": e.get("torch"), "file": e.get("file"),
                                            "measured": e.get("measured", []), "tests": []})  # fmt: skip
            if t["nodeid"] not in row["tests"]:
                row["tests"].append(t["nodeid"])
    return sorted(out.values(), key=lambda r: r["key"])
