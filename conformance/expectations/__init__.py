"""Known deviations: where torch is expected to break a claim, and the evidence.

``conformance/expectations/<area>.toml`` holds one ``[[deviation]]`` table
per behaviour, sorted by claim::

    [[deviation]]
    claim = "numpy.from-numpy-documented-dtypes"   # registered claim id
    test = "test_from_numpy_accepts_exactly_the_documented_dtypes"  # optional
    backends = ["inductor"]          # optional (compile tier): default every backend
    devices = ["cpu"]                # optional: default every device
    python = ">=3.10"                # optional: packaging specifier
    region = { dt = ["uint16", "uint32", "uint64"] }   # where torch deviates
    exception = "AssertionError"     # the failure signature: exception type name
    match = "outside its documented dtype list"        # ... and an exact substring
    torch = ">=2.3,<2.16"            # the releases it is believed to span
    measured = ["2.5.1", "2.13.0"]   # releases whose shipped baseline shows it
    probe = "conformance/probes/x.py"   # optional: the torch-only probe showing it
    upstream = "https://github.com/pytorch/pytorch/issues/1"  # or "none found" / "not triaged"
    doc = "https://docs.pytorch.org/..."   # optional: the page whose sentence it breaks
    pinned_by = ["numpy.from-numpy-dtype-set"]   # claims pinning what torch does instead
    design = "..."                   # optional: why the range may stay open-ended
    reason = "One sentence: what torch does instead and why."

**Ranges and evidence.** ``torch`` is a specifier (or a list of them, any of
which may hold, for a behaviour that stopped and came back). A bug's range
ends at the newest release measured (``<2.16`` after measuring 2.15); only an
entry with ``design`` (a documented design decision) may be open-ended.
``measured`` lists the releases whose baseline in ``reports/baseline_data/``
shows the entry (checked offline by ``tests/test_expectations_data.py``); each
lies in ``torch``. On a release in ``torch`` but not in ``measured``, or newer
than the entry's range, a failure that matches the entry exactly reads
*expected deviation (not measured on this release)*: it does not fail the
gate and is listed for review (:meth:`Deviation.unmeasured_on`).

**Signatures.** An entry without ``region`` covers the whole test, so its
``match`` must name the behaviour: a bare ``assert``, ``None`` or a compile
aspect alone (``backend X differs from eager (outputs)``) could absorb a
different failure and is refused. Two entries that differ only in ``torch``
are refused: one behaviour is one entry with one range. So are two entries
that could both explain one failure (one signature inside the other, on
releases, scopes and regions that meet): each failure has one entry.

**Regions.** ``region`` names the part of the input space where torch
deviates, as a predicate over the *features* of a generated example (see
:mod:`conformance.evidence`: ``dtype``, ``layout``, ``ndim``, the test's own
arguments, and what the test declares with ``evidence.features``). It is a
table (every key must match) or an array of tables (any table may match).
A key's value is a scalar (the feature equals it, or - for a set-valued
feature such as ``layout`` - contains it), an array (any of these), or a
table ``{ not = [...] }`` (none of these) / ``{ all = [...] }`` (a set-valued
feature contains all of these). Inside the region every example must fail
with the recorded signature (an example that holds there is a change,
reported as an unexpected pass); outside it the claim itself is asserted
(a failure there is a regression). The test runs its full example count
either way, and the verdict says how many examples fell on each side.
An entry without ``region`` covers the whole test and is flagged in the
report as a *whole-test deviation*; the test still runs its full example
count, and every failing example (every later violation, in a test of
several claims) must have the entry's signature.

A test of that claim that fails with exactly this signature is an *expected
deviation*; one that fails differently is a *regression* (changed failure);
one that passes is an *unexpected pass* (the entry is stale). Loading raises
only :class:`ExpectationsError`, with a one-line message.
"""

from __future__ import annotations

import platform
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance.registry import Registry

#: The shipped data: one TOML file per area in this package's directory.
EXPECTATIONS_DIR = Path(__file__).parent
#: Kept for callers that name the default location.
EXPECTATIONS_FILE = EXPECTATIONS_DIR
_ROOT = EXPECTATIONS_DIR.parent.parent
_KEYS = {
    "claim", "test", "torch", "devices", "backends", "python", "exception", "match", "reason",
    "region", "pinned_by", "measured", "probe", "upstream", "doc", "design",
}  # fmt: skip
_REQUIRED = ("claim", "exception", "match", "torch", "upstream", "reason")
_SCALARS = (str, bool, int)
#: ``upstream`` values that are not a link: searched and nothing found, or
#: not yet searched (a compile-tier behaviour recorded from a release run).
UPSTREAM_NONE = ("none found", "not triaged")
#: Signatures that say nothing of the behaviour: any failure of a test whose
#: assertion has no message, or any difference in one compile aspect.
GENERIC_MATCH = re.compile(
    r"^\s*(assert|None|assert \(None is not None\)|out0|argument holds|"
    r"backend='?[\w.:]+'? raised:?|backend [\w.:]+:|\[[\w.-]+\]|"
    r"(\[[\w.-]+\] )?backend [\w.:]+ differs from eager( \(|( \([a-z-]+\))?:?)?)\s*$"
)


#: A ``backends`` item: a name registered with Dynamo or a ``module:callable``
#: (as ``--backends`` takes them; whether it exists is the run's business).
_BACKEND_NAME = re.compile(r"[A-Za-z_]\w*|[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


#: A ``devices`` item: a torch device type as ``--devices`` takes it
#: (``cpu``, ``cuda``, ``xpu``, ``mps``, a PrivateUse1 backend's renamed type).
_DEVICE_NAME = re.compile(r"[a-z_][a-z0-9_]*")


class ExpectationsError(Exception):
    """Malformed expectations data or an entry naming an unknown claim."""


@dataclass(frozen=True)
class Deviation:
    """One known deviation: where, with which signature, on which releases,
    and the evidence for it (see the module docstring for the fields)."""

    index: int
    claim: str
    exception: str
    match: str
    reason: str
    upstream: str
    test: str | None = None
    #: Specifiers, any of which may hold (usually one).
    torch: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    #: torch.compile backends (compile tier) the entry applies to; empty: all.
    backends: tuple[str, ...] = ()
    python: str | None = None
    #: Alternatives (any may match) of conjunctions (every key must match);
    #: ``None`` for a whole-test deviation.
    region: tuple[dict, ...] | None = None
    #: Characterization claims pinning what torch does instead.
    pinned_by: tuple[str, ...] = ()
    #: Releases whose shipped baseline shows this deviation.
    measured: tuple[str, ...] = ()
    #: Torch-only probes (paths from the repository root) that show it.
    probe: tuple[str, ...] = ()
    doc: str | None = None
    #: Why the range may stay open-ended (a documented design decision).
    design: str | None = None
    #: The data file it came from (``compile.toml``).
    file: str = ""
    #: Set by the run: this release is not among ``measured`` (or is newer
    #: than the entry's range), so the entry explains an exactly matching
    #: failure but demands nothing.
    unmeasured: bool = False
    #: 1, 2, ... among entries sharing claim, test, torch, devices and
    #: backends (which differ by region or signature): keeps :attr:`key` unique.
    ordinal: int = 0

    @property
    def link(self) -> str:
        """The upstream record when there is one, else the documentation page."""
        if self.upstream.startswith("http"):
            return self.upstream
        return self.doc or ""

    @property
    def whole_test(self) -> bool:
        """True for an entry without a region (it covers every example)."""
        return self.region is None

    def region_keys(self) -> set[str]:
        """The feature names the region reads."""
        return {k for alt in self.region or () for k in alt}

    def in_region(self, features: dict) -> bool:
        """True when an example with ``features`` lies in this entry's region
        (always true for a whole-test deviation).

        Raises ``KeyError`` naming a feature the region reads that the
        example did not report (a defect of the suite, not of torch).
        """
        if self.region is None:
            return True
        for alt in self.region:
            missing = [k for k in alt if k not in features]
            if missing:
                raise KeyError(missing[0])
        return any(all(_matches(features[k], v) for k, v in alt.items()) for alt in self.region)

    @property
    def region_text(self) -> str:
        """The region as a reader-friendly predicate, e.g. ``target in {none}``."""
        if self.region is None:
            return "every example (whole-test deviation)"
        if self.region == ({"everywhere": True},):
            return "every example of the test (each must deviate)"
        return " or ".join(
            "(" + " and ".join(_describe(k, v) for k, v in alt.items()) + ")"
            if len(self.region) > 1
            else " and ".join(_describe(k, v) for k, v in alt.items())
            for alt in self.region
        )

    @property
    def torch_text(self) -> str:
        """The range as written, alternatives joined by `` or ``."""
        return " or ".join(self.torch)

    @property
    def key(self) -> str:
        """Stable human-readable key, e.g. ``detach.x[test_y]@torch>=1.13,<2.16``."""
        k = self.claim
        if self.test:
            k += f"[{self.test}]"
        if self.torch:
            k += f"@torch{'|'.join(self.torch)}"
        if self.devices:
            k += f"@{'+'.join(self.devices)}"
        if self.backends:
            k += f"@{'+'.join(self.backends)}"
        if self.ordinal > 1:
            k += f"#{self.ordinal}"
        return k

    def in_range(self, torch_version: str) -> bool:
        """True when ``torch_version`` (local label ignored) lies in ``torch``."""
        return any(_contains(s, torch_version) for s in self.torch)

    def is_measured(self, torch_version: str) -> bool:
        """True when this release's baseline shows the entry."""
        try:
            v = Version(Version(torch_version).public)
        except InvalidVersion:
            return False
        return any(Version(m) == v for m in self.measured)

    def reaches(self, newest: str | None) -> bool:
        """True when the range holds the newest release the data measured
        (``newest``): the behaviour was still there when last looked at."""
        return newest is not None and self.in_range(newest)

    def applies(
        self,
        *,
        torch_version: str,
        device: str,
        python_version: str | None = None,
        backend: str | None = None,
        newest: str | None = None,
    ) -> bool:
        """True when this entry's condition holds for the run.

        ``torch_version`` may carry a local label (``2.13.0+cpu``); it is
        compared on its public part, pre-releases included. ``backend`` is the
        compile-tier backend of the test (``None`` outside the tier): an entry
        with ``backends`` applies only to tests of those backends. ``newest``
        is the newest release any entry measured: on a release newer than
        that, an entry whose range reaches it applies too (unmeasured).
        """
        if self.devices and device not in self.devices and device != "any":
            return False
        if self.backends and backend not in self.backends:
            return False
        py = python_version or platform.python_version()
        if self.python and not _contains(self.python, py):
            return False
        if self.in_range(torch_version):
            return True
        return _newer_minor(torch_version, newest) and self.reaches(newest)

    def unmeasured_on(self, torch_version: str) -> bool:
        """True when the run's release is not one this entry was measured on
        (in its range but unmeasured, or newer than any release measured)."""
        return not self.is_measured(torch_version)

    def matches_test(self, test_name: str) -> bool:
        """True when this entry covers the test function ``test_name``."""
        return self.test is None or self.test == test_name

    def matches_failure(self, exception: str, message: str) -> bool:
        """True when a failure has this entry's signature (type name and substring)."""
        return exception == self.exception and self.match in message

    def identity(self) -> tuple:
        """Everything but the range and the prose: two entries with the same
        identity would be one behaviour recorded twice."""
        region = None if self.region is None else tuple(sorted(map(repr, self.region)))
        return (self.claim, self.test, self.devices, self.backends, self.python, region,
                self.exception, self.match)  # fmt: skip

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if v not in (None, (), False, "")}
        for k in ("devices", "backends", "pinned_by", "measured", "probe", "torch"):
            d[k] = list(getattr(self, k))
        d["torch"] = self.torch_text
        d["link"] = self.link
        d["key"] = self.key
        if self.region is not None:
            d["region"] = [dict(alt) for alt in self.region]
        d["region_text"] = self.region_text
        d["whole_test"] = self.whole_test
        d["unmeasured"] = self.unmeasured
        return d


def propose_region(deviated: list[dict], held: list[dict], limit: int = 5) -> list[dict]:
    """Regions that separate the examples of a test that deviated from those
    that held: each proposal is a region table (the ``region`` of an entry)
    that every deviating example lies in and no held one does, simplest first.

    Args:
        deviated: the features (:func:`conformance.evidence.auto_features` plus
            what the test reported) of each example that deviated as a
            whole-test entry records.
        held: the features of each example on which the claim held.
        limit: the most proposals returned.

    Returns:
        Up to ``limit`` region tables over one feature (a value or a list of
        values; for a set-valued feature such as ``layout`` the members any of
        which places an example inside, or ``{all = [...]}``), else over two
        features; ``[]`` when none separates the two sides, or either is empty.
        Only features every example reported with values a region can name
        (str, bool, int, or sets of them) are used; ``everywhere`` never is.
    """
    if not deviated or not held:
        return []
    examples = deviated + held
    keys = set.intersection(*(set(f) for f in examples)) - {"everywhere"}

    def scalar(v) -> bool:
        return isinstance(v, _SCALARS)

    def settish(v) -> bool:
        return isinstance(v, set | frozenset) and all(scalar(m) for m in v)

    def order(vals) -> list:
        return sorted(vals, key=lambda v: (type(v).__name__, str(v)))

    def separates(region: dict) -> bool:
        inside = [all(_matches(f[k], spec) for k, spec in region.items()) for f in examples]
        return all(inside[: len(deviated)]) and not any(inside[len(deviated) :])

    def options(k: str) -> list:
        vals = [f[k] for f in examples]
        if all(scalar(v) for v in vals):
            d = order({f[k] for f in deviated})
            return [d[0] if len(d) == 1 else d]
        if all(settish(v) for v in vals):
            out = []
            dev_sets = [set(f[k]) for f in deviated]
            common = set.intersection(*dev_sets)
            if common:
                out.append({"all": order(common)})
            only = set().union(*dev_sets) - set().union(*(set(f[k]) for f in held))
            if only:
                out.append(order(only))
            return out
        return []

    single = [{k: spec} for k in order(keys) for spec in options(k)]
    found = [r for r in single if separates(r)]
    if not found:
        for i, (a) in enumerate(single):
            for b in single[i + 1 :]:
                if next(iter(a)) != next(iter(b)) and separates({**a, **b}):
                    found.append({**a, **b})

    def size(region: dict) -> tuple:
        n = sum(len(v) if isinstance(v, list) else 1 for v in region.values())
        return (len(region), n, str(region))

    return sorted(found, key=size)[:limit]


def newest_measured(deviations: list[Deviation]) -> str | None:
    """The newest release any entry was measured on (``None`` if none)."""
    vs = [Version(m) for d in deviations for m in d.measured]
    return str(max(vs)) if vs else None


def _newer_minor(version: str, newest: str | None) -> bool:
    """Is ``version`` a minor release newer than ``newest``'s?"""
    if newest is None:
        return False
    try:
        v, n = Version(Version(version).public), Version(newest)
    except InvalidVersion:
        return False
    return v.release[:2] > n.release[:2]


def _as_set(value) -> set | None:
    return set(value) if isinstance(value, set | frozenset | list | tuple) else None


def _matches(feature, spec) -> bool:
    """Does one feature value satisfy one region key's ``spec``?"""
    fset = _as_set(feature)
    if isinstance(spec, dict):
        if "not" in spec:
            bad = set(spec["not"])
            return not (fset & bad) if fset is not None else feature not in bad
        need = set(spec["all"])
        return need <= fset if fset is not None else need <= {feature}
    options = spec if isinstance(spec, list) else [spec]
    if fset is not None:
        return bool(fset & set(options))
    # bool is an int: compare types too, so True never matches 1.
    return any(feature == o and type(feature) is type(o) for o in options)


def _describe(key: str, spec) -> str:
    def fmt(vals):
        return "{" + ", ".join(str(v) for v in vals) + "}"

    if isinstance(spec, dict):
        if "not" in spec:
            return f"{key} not in {fmt(spec['not'])}"
        return f"{key} has all of {fmt(spec['all'])}"
    if isinstance(spec, list):
        return f"{key} in {fmt(spec)}"
    return f"{key} = {spec}"


def _parse_region(raw, where: str) -> tuple[dict, ...]:
    alts = raw if isinstance(raw, list) else [raw]
    if not alts or not all(isinstance(a, dict) and a for a in alts):
        raise ExpectationsError(f"{where}: 'region' must be a non-empty table or array of tables")
    for alt in alts:
        for key, spec in alt.items():
            ok = isinstance(spec, _SCALARS) or (
                isinstance(spec, list) and spec and all(isinstance(v, _SCALARS) for v in spec)
            )
            if isinstance(spec, dict):
                ok = (
                    len(spec) == 1
                    and next(iter(spec)) in ("not", "all")
                    and isinstance(next(iter(spec.values())), list)
                    and all(isinstance(v, _SCALARS) for v in next(iter(spec.values())))
                )
            if not ok:
                raise ExpectationsError(
                    f"{where}: region key {key!r} must be a value, a list of values, "
                    "or a table {not = [...]} / {all = [...]}"
                )
    return tuple(dict(a) for a in alts)


def _contains(spec: str, version: str) -> bool:
    try:
        v = Version(version)
    except InvalidVersion:
        return False
    return SpecifierSet(spec).contains(Version(v.public), prereleases=True)


def load_expectations(
    path: Path | str = EXPECTATIONS_DIR, registry: Registry | None = None
) -> list[Deviation]:
    """Parse and validate the expectations: a directory of ``<area>.toml``
    files (the shipped data) or a single TOML file.

    Every ``claim`` must be registered in ``registry`` (when given), every
    specifier must parse, ``measured`` releases must lie in ``torch``, a
    range must be closed above unless the entry says ``design``, a
    whole-test entry's ``match`` must name the behaviour, ``probe`` paths
    must exist, no two entries may differ only in ``torch``, and no two may
    both explain one failure (same claim, test and exception, one signature
    inside the other, meeting ranges, scopes and regions). A missing path
    means no known deviations.

    Raises :class:`ExpectationsError` with a one-line message.
    """
    path = Path(path)
    if not path.exists():
        return []
    files = sorted(path.glob("*.toml")) if path.is_dir() else [path]
    # Parsed once per process for unchanged files (the targeted sweep's fork
    # server parses them before forking: ~0.25 s saved per mutant run).
    # The memo is keyed by the files' bytes, not their timestamps (coarse).
    stamp = []
    for f in files:
        try:
            stamp.append((str(f), f.read_bytes()))
        except OSError as e:
            raise ExpectationsError(f"{f.name}: cannot read: {e}") from None
    stamp = tuple(stamp)
    cached = _PARSED.get(path.resolve())
    if cached is not None and cached[0] is registry and cached[1] == stamp:
        return list(cached[2])
    out = _load_files(files, registry)
    _PARSED[path.resolve()] = (registry, stamp, tuple(out))
    return out


#: load_expectations' memo: resolved path -> (registry, files' bytes, entries).
_PARSED: dict[Path, tuple[Registry | None, tuple, tuple[Deviation, ...]]] = {}


def _load_files(files: list[Path], registry: Registry | None) -> list[Deviation]:
    out: list[Deviation] = []
    for f in files:
        out.extend(_load_file(f, registry, start=len(out)))
    seen: dict[tuple, Deviation] = {}
    for d in out:
        other = seen.get(d.identity())
        if other is not None:
            raise ExpectationsError(
                f"{d.file}: {d.key} differs from {other.key} ({other.file}) only in its torch "
                "range: one behaviour is one entry (list both ranges in `torch`)"
            )
        seen[d.identity()] = d
    _refuse_overlaps(out)
    counts: dict[str, int] = {}
    for j, d in enumerate(out):
        counts[d.key] = counts.get(d.key, 0) + 1
        if counts[d.key] > 1:
            out[j] = replace(d, ordinal=counts[d.key])
    return out


#: Releases against which two entries' ranges are compared: every minor of
#: the 2.x line with its first and a late patch release.
_RANGE_PROBES = tuple(Version(f"2.{m}.{p}") for m in range(40) for p in (0, 9))


def _releases(d: Deviation) -> set[Version]:
    return {v for v in _RANGE_PROBES if any(v in SpecifierSet(s) for s in d.torch)}


def _scopes_meet(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Device or backend scopes share a member (empty means all)."""
    return not a or not b or bool(set(a) & set(b))


def _regions_meet(a: tuple[dict, ...] | None, b: tuple[dict, ...] | None) -> bool:
    """True when one example can lie in both regions: a whole-test entry
    meets every region; two conjunctions over the same features meet when
    each feature's allowed values intersect. Conjunctions over different
    features are not compared (their overlap depends on the draws)."""
    if a is None or b is None:
        return True
    for x in a:
        for y in b:
            if set(x) != set(y):
                continue
            if all(
                {repr(v) for v in (x[k] if isinstance(x[k], list) else [x[k]])}
                & {repr(v) for v in (y[k] if isinstance(y[k], list) else [y[k]])}
                for k in x
            ):
                return True
    return False


def _refuse_overlaps(entries: list[Deviation]) -> None:
    """Refuse two entries that could both explain one failure: same claim,
    test and exception, meeting device and backend scopes, ranges and
    regions, and one signature contained in the other (issue 28: one
    failure, one entry, so the verdict says which behaviour it was)."""
    groups: dict[tuple, list[Deviation]] = {}
    for d in entries:
        groups.setdefault((d.claim, d.test, d.exception), []).append(d)
    for group in groups.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if not (a.match in b.match or b.match in a.match):
                    continue
                if not (
                    _scopes_meet(a.devices, b.devices) and _scopes_meet(a.backends, b.backends)
                ):
                    continue
                if not _regions_meet(a.region, b.region):
                    continue
                both = _releases(a) & _releases(b)
                if both:
                    raise ExpectationsError(
                        f"{b.file}: {b.key} and {a.key} ({a.file}) can both explain one failure "
                        f"on torch {min(both)}: narrow a region or a range, or merge them"
                    )


def _load_file(path: Path, registry: Registry | None, start: int) -> list[Deviation]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ExpectationsError(f"{path.name}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ExpectationsError(f"{path.name}: malformed TOML: {e}") from None
    extra = set(data) - {"deviation"}
    if extra:
        raise ExpectationsError(f"{path.name}: unknown top-level key(s) {sorted(extra)}")
    entries = data.get("deviation", [])
    if not isinstance(entries, list):
        raise ExpectationsError(f"{path.name}: 'deviation' must be an array of tables")
    out: list[Deviation] = []
    for i, raw in enumerate(entries):
        where = f"{path.name}: deviation #{i + 1}"
        if not isinstance(raw, dict):
            raise ExpectationsError(f"{where}: must be a table")
        unknown = set(raw) - _KEYS
        if unknown:
            raise ExpectationsError(f"{where}: unknown key(s) {sorted(unknown)}")
        where = f"{path.name}: deviation #{i + 1} ({raw.get('claim')})"
        for req in _REQUIRED:
            if req == "torch":
                continue
            if not isinstance(raw.get(req), str) or not raw[req].strip():
                raise ExpectationsError(f"{where}: missing or empty '{req}'")
        if registry is not None and raw["claim"] not in registry:
            raise ExpectationsError(f"{where}: unknown claim id {raw['claim']!r}")
        specs = raw.get("torch")
        specs = [specs] if isinstance(specs, str) else specs
        if not isinstance(specs, list) or not specs or not all(isinstance(x, str) for x in specs):
            raise ExpectationsError(f"{where}: 'torch' must be a specifier or a list of them")
        for spec in [*specs, *([raw["python"]] if "python" in raw else [])]:
            try:
                SpecifierSet(spec)
            except (InvalidSpecifier, TypeError):
                raise ExpectationsError(f"{where}: bad specifier {spec!r}") from None
        if not raw.get("design") and not all(_closed_above(x) for x in specs):
            raise ExpectationsError(
                f"{where}: torch {specs} is open-ended; a bug's range ends at the newest release "
                "measured (e.g. '<2.16'), or say why it may not in 'design'"
            )
        measured = raw.get("measured", [])
        if not isinstance(measured, list) or not all(isinstance(m, str) for m in measured):
            raise ExpectationsError(f"{where}: 'measured' must be a list of release versions")
        for m in measured:
            try:
                Version(m)
            except InvalidVersion:
                raise ExpectationsError(
                    f"{where}: measured release {m!r} is not a version"
                ) from None
            if not any(_contains(x, m) for x in specs):
                raise ExpectationsError(f"{where}: measured release {m} is outside torch {specs}")
        devices = raw.get("devices", [])
        if not isinstance(devices, list) or not all(
            isinstance(d, str) and _DEVICE_NAME.fullmatch(d) for d in devices
        ):
            raise ExpectationsError(
                f"{where}: devices must be a list of device types ('cpu', 'cuda', 'xpu', ...)"
            )
        backends = raw.get("backends", [])
        if not isinstance(backends, list) or not all(
            isinstance(b, str) and _BACKEND_NAME.fullmatch(b) for b in backends
        ):
            raise ExpectationsError(
                f"{where}: backends must be a list of torch.compile backend names "
                "('inductor', 'aot_eager_decomp_partition', ...) or 'module:callable'"
            )
        pinned = raw.get("pinned_by", [])
        if not isinstance(pinned, list) or not all(isinstance(c, str) for c in pinned):
            raise ExpectationsError(f"{where}: 'pinned_by' must be a list of claim ids")
        if registry is not None:
            unknown_pins = [c for c in pinned if c not in registry]
            if unknown_pins:
                raise ExpectationsError(
                    f"{where}: pinned_by names unknown claim {unknown_pins[0]!r}"
                )
        if "test" in raw and (not isinstance(raw["test"], str) or not raw["test"]):
            raise ExpectationsError(f"{where}: 'test' must be a test function name")
        upstream = raw["upstream"]
        if not (upstream.startswith("https://") or upstream in UPSTREAM_NONE):
            raise ExpectationsError(
                f"{where}: 'upstream' must be an https link or one of {list(UPSTREAM_NONE)}"
            )
        probes = raw.get("probe", [])
        probes = [probes] if isinstance(probes, str) else probes
        if not isinstance(probes, list) or not all(isinstance(p, str) for p in probes):
            raise ExpectationsError(f"{where}: 'probe' must be a path or a list of paths")
        missing = [p for p in probes if not (_ROOT / p).is_file()]
        if missing and (_ROOT / "conformance" / "probes").is_dir():
            raise ExpectationsError(f"{where}: probe {missing[0]} does not exist")
        region = _parse_region(raw["region"], where) if "region" in raw else None
        if region is None and GENERIC_MATCH.match(raw["match"]):
            raise ExpectationsError(
                f"{where}: whole-test entry with signature {raw['match']!r}, which any failure "
                "of the test could match: give the behaviour's own message or a region"
            )
        out.append(
            Deviation(
                index=start + i,
                claim=raw["claim"],
                exception=raw["exception"],
                match=raw["match"],
                reason=" ".join(raw["reason"].split()),
                upstream=upstream,
                test=raw.get("test"),
                torch=tuple(specs),
                devices=tuple(devices),
                backends=tuple(backends),
                python=raw.get("python"),
                region=region,
                pinned_by=tuple(pinned),
                measured=tuple(measured),
                probe=tuple(probes),
                doc=raw.get("doc"),
                design=raw.get("design"),
                file=path.name,
            )
        )
    return out


def _closed_above(spec: str) -> bool:
    """Does the specifier exclude every release past some version?"""
    return any(s.operator in ("<", "<=", "==", "===", "~=") for s in SpecifierSet(spec))


#: The order fields are written in (``render_entries``).
FIELD_ORDER = (
    "claim", "test", "backends", "devices", "python", "region", "exception", "match", "torch",
    "measured", "probe", "upstream", "doc", "pinned_by", "design", "reason",
)  # fmt: skip


def render_entries(entries: list[dict], header: str = "") -> str:
    """TOML text of raw entry tables in :data:`FIELD_ORDER` (the shipped
    files' layout), for tools that rewrite the data (migration, confirming a
    release, leaving one out)."""
    lines = [header] if header else []
    for e in entries:
        lines.append("[[deviation]]")
        for k in (*FIELD_ORDER, *sorted(set(e) - set(FIELD_ORDER))):
            if k in e:
                lines.append(f"{k} = {_toml(e[k])}")
        lines.append("")
    return "\n".join(lines)


def _toml(v) -> str:
    import json

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")
