"""Published baselines: the suite's own results for every torch release.

``reports/baseline_data/torch-<version>.results.json.gz`` holds one gzipped
``results.json`` per release (CPU, ``ci`` profile), written by
``nox -s releases`` (see the README). With them a team answers "what changes
if I upgrade from 2.5.1 to 2.13.0?" without installing either torch::

    torch-conformance compare --from 2.5.1 --to 2.13.0
    torch-conformance run --baseline 2.5.1          # this torch vs a release
    torch-conformance matrix --releases -o releases.html

Wherever a result file is expected, a release version that has a shipped
baseline is accepted too (:func:`resolve`).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from packaging.version import InvalidVersion, Version

from reports.results import ResultsError, load_results, validate

BASELINES_DIR = Path(__file__).parent / "baseline_data"
_NAME = re.compile(r"^torch-(?P<version>[0-9][0-9A-Za-z.+_-]*)\.results\.json\.gz$")

__all__ = [
    "BASELINES_DIR",
    "available",
    "load_baseline",
    "resolve",
    "slim",
    "save_baseline",
    "history",
    "changed_in",
]


def _key(version: str):
    try:
        return (0, Version(version))
    except InvalidVersion:
        return (1, version)


def available(directory: Path = BASELINES_DIR) -> dict[str, Path]:
    """``{torch version: file}`` of the shipped baselines, oldest release first."""
    found = {}
    for p in Path(directory).glob("torch-*.results.json.gz"):
        m = _NAME.match(p.name)
        if m:
            found[m.group("version")] = p
    return dict(sorted(found.items(), key=lambda kv: _key(kv[0])))


def load_baseline(version: str, directory: Path = BASELINES_DIR) -> dict:
    """The shipped baseline of torch ``version``. Raises :class:`ResultsError`
    (one line) when there is none or it is corrupt."""
    files = available(directory)
    if version not in files:
        known = ", ".join(files) or "none"
        raise ResultsError(f"no shipped baseline for torch {version} (shipped: {known})")
    path = files[version]
    try:
        doc = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    except (OSError, ValueError, EOFError) as e:
        raise ResultsError(f"{path.name}: corrupt baseline: {e}") from None
    return validate(doc, path.name)


def resolve(spec: str, directory: Path = BASELINES_DIR) -> dict:
    """A result file path, or a torch version with a shipped baseline.

    Raises :class:`ResultsError` (one line) when ``spec`` is neither."""
    p = Path(spec)
    if p.exists():
        return load_results(p)
    if re.fullmatch(r"[0-9]+\.[0-9]+(\.[0-9]+)?([.+-].*)?", spec):
        return load_baseline(spec, directory)
    raise ResultsError(f"{spec}: no such result file, and not a torch version")


#: Failure fields kept in a baseline (the rest - full messages, notes,
#: snippets - belongs to the run's own report).
_KEEP_FAILURE = ("exception", "signature", "falsifying_example", "all_signatures")


def slim(doc: dict) -> dict:
    """A copy of ``doc`` small enough to ship: failures keep their signature
    and (capped) falsifying example; measurements, mutation data and
    snippets are dropped."""
    out = {k: v for k, v in doc.items() if k not in ("mutation", "measurements", "baseline")}
    out["measurements"] = []
    tests = []
    for t in doc["tests"]:
        t = dict(t)
        for key in ("failure",):
            if t.get(key):
                f = {k: t[key][k] for k in _KEEP_FAILURE if k in t[key]}
                if f.get("falsifying_example"):
                    f["falsifying_example"] = f["falsifying_example"][:1500]
                t[key] = f
        if t.get("claim_failures"):
            t["claim_failures"] = {
                c: {k: f[k] for k in _KEEP_FAILURE if k in f}
                for c, f in t["claim_failures"].items()
            }
        tests.append(t)
    out["tests"] = tests
    return out


def save_baseline(doc: dict, directory: Path = BASELINES_DIR) -> Path:
    """Write ``doc`` (a run's results) as the baseline of its torch version."""
    version = doc["environment"]["torch"].split("+", 1)[0]
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"torch-{version}.results.json.gz"
    data = json.dumps(slim(doc), sort_keys=True, separators=(",", ":"), default=str)
    path.write_bytes(gzip.compress(data.encode("utf-8"), compresslevel=9, mtime=0))
    return path


def history(directory: Path = BASELINES_DIR) -> dict[str, dict[str, str]]:
    """``{claim: {version: overall verdict}}`` over the shipped baselines
    (the verdict strip of each claim in the report)."""
    from reports.results import claim_verdicts, overall_verdict

    out: dict[str, dict[str, str]] = {}
    for version in available(directory):
        try:
            doc = load_baseline(version, directory)
        except ResultsError:
            continue
        for cid, per in claim_verdicts(doc).items():
            cells = {k: v for k, v in per.items() if not k.startswith("cuda")}
            out.setdefault(cid, {})[version] = overall_verdict(doc, cid, cells)
    return out


def changed_in(
    claim: str, device: str, new_verdict: str, base_version: str, new_version: str,
    directory: Path = BASELINES_DIR,
) -> str | None:  # fmt: skip
    """The first shipped release after ``base_version`` (up to
    ``new_version``) in which ``claim`` on ``device`` already had
    ``new_verdict``: the release in which the behaviour changed, as far as
    the shipped baselines tell. ``None`` when no baseline in between says."""
    from reports.results import claim_verdicts

    lo, hi = _key(base_version.split("+")[0]), _key(new_version.split("+")[0])
    for version in available(directory):
        if not (lo < _key(version) <= hi):
            continue
        try:
            doc = load_baseline(version, directory)
        except ResultsError:
            continue
        cell = claim_verdicts(doc).get(claim, {}).get(device)
        if cell and cell["verdict"] == new_verdict:
            return version
    return None


def shown_deviations(doc: dict) -> list[tuple[dict, str | None, str]]:
    """Every deviation a result document shows: ``(entry, observed
    signature, nodeid)`` for each test (or claim of a multi-claim test, or
    region of a multi-region test) that deviated with a recorded entry.

    The observed signature is ``Type: first line`` of the failure (for a
    region, of the first example that fell inside it); ``None`` where the
    document kept none.
    """
    out = []
    for t in doc.get("tests", []):
        if t.get("claim_expectations"):
            failures = t.get("claim_failures") or {}
            for claim, e in t["claim_expectations"].items():
                sig = (failures.get(claim) or t.get("failure") or {}).get("signature")
                out.append((e, sig, t["nodeid"]))
            continue
        if t.get("verdict") != "expected-deviation" or not t.get("expectation"):
            continue
        regions = t.get("regions") or (
            [{"expectation": t["expectation"], "region": t["region"]}] if t.get("region") else []
        )
        if not regions:
            out.append((t["expectation"], (t.get("failure") or {}).get("signature"), t["nodeid"]))
        for r in regions:
            if r.get("region") and r["region"].get("inside", 0) > 0:
                example = r["region"].get("example") or ""
                sig = example.split("\n-> ", 1)[1] if "\n-> " in example else None
                out.append((r["expectation"], sig, t["nodeid"]))
    return out


def same_entry(recorded: dict, deviation, entries=None) -> bool:
    """Does an entry as a result document recorded it (``to_dict``) name the
    behaviour of ``deviation``? The same claim, test, devices, backends and
    region; the range and the prose may differ (the document may predate them).

    With ``entries`` (every current entry), a recorded entry that none of them
    names any more - merged into a broader one, since the loader refuses two
    entries that could explain one failure - is ``deviation``'s when its scope
    lies inside ``deviation``'s: its devices and backends among
    ``deviation``'s (empty means all), each alternative of its region inside
    one of ``deviation``'s (a whole-test entry covers every region)."""
    if _recorded_as(recorded, deviation, strict=True):
        return True
    if entries is None or any(_recorded_as(recorded, d, strict=True) for d in entries):
        return False
    return _recorded_as(recorded, deviation, strict=False)


def _recorded_as(recorded: dict, deviation, *, strict: bool) -> bool:
    region = recorded.get("region")
    if isinstance(region, dict):
        region = [region]
    if recorded["claim"] != deviation.claim or recorded.get("test") != deviation.test:
        return False
    devices, backends = recorded.get("devices") or [], recorded.get("backends") or []
    if strict:
        return (
            sorted(devices) == sorted(deviation.devices)
            and sorted(backends) == sorted(deviation.backends)
            and (region or None)
            == ([dict(a) for a in deviation.region] if deviation.region else None)
        )
    return (
        _scope_within(devices, deviation.devices)
        and _scope_within(backends, deviation.backends)
        and _region_within(region or None, deviation.region)
    )


def _scope_within(recorded, scope) -> bool:
    """A recorded device or backend scope inside ``scope`` (empty: all)."""
    if not scope:
        return True
    return bool(recorded) and set(recorded) <= set(scope)


def _values(v) -> set[str]:
    return {repr(x) for x in (v if isinstance(v, list | tuple) else [v])}


def _region_within(recorded, region) -> bool:
    """Every alternative of a recorded region inside some alternative of
    ``region`` (``None``: the whole test)."""
    if region is None:
        return True
    if recorded is None:
        return False
    return all(
        any(
            set(alt) == set(other) and all(_values(alt[k]) <= _values(other[k]) for k in alt)
            for other in region
        )
        for alt in recorded
    )
