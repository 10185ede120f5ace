"""Known deviations: where the installed torch is expected to break a claim.

``conformance/expectations.toml`` holds one ``[[deviation]]`` table per known
deviation::

    [[deviation]]
    claim = "detach.metadata-change-raises"      # registered claim id
    test = "test_detach_metadata_change_raises"  # optional: one test function
    torch = ">=1.13"                             # optional: packaging specifier
    devices = ["cpu", "cuda"]                    # optional: default every device
    backends = ["aot_eager", "inductor"]         # optional (compile tier): default every backend
    python = ">=3.10"                            # optional: packaging specifier
    exception = "Failed"                         # failure signature: exception type name
    match = "DID NOT RAISE"                      # ... and a stable message substring
    reason = "Metadata changes are allowed since PR #83590 (torch 1.13)."
    link = "https://github.com/pytorch/pytorch/pull/83590"
    region = { op = ["resize_", "set_"] }        # optional: where torch deviates
    pinned_by = ["detach.metadata-change-allowed"]  # claims pinning what torch does instead

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
An entry without ``region`` covers the whole test, as before, and is flagged
in the report as a *whole-test deviation*.

A test of that claim that fails with exactly this signature is an *expected
deviation*; one that fails differently is a *regression* (changed failure);
one that passes is an *unexpected pass* (the entry is stale). Loading raises
only :class:`ExpectationsError`, with a one-line message.
"""

from __future__ import annotations

import platform
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance.registry import Registry

EXPECTATIONS_FILE = Path(__file__).parent / "expectations.toml"
_KEYS = {
    "claim", "test", "torch", "devices", "backends", "python", "exception", "match", "reason", "link", "region",
    "pinned_by",
}  # fmt: skip
_SCALARS = (str, bool, int)


class ExpectationsError(Exception):
    """Malformed expectations file or an entry naming an unknown claim."""


@dataclass(frozen=True)
class Deviation:
    """One known deviation with its failure signature."""

    index: int
    claim: str
    exception: str
    match: str
    reason: str
    link: str
    test: str | None = None
    torch: str | None = None
    devices: tuple[str, ...] = ()
    #: torch.compile backends (compile tier) the entry applies to; empty: all.
    backends: tuple[str, ...] = ()
    python: str | None = None
    #: Alternatives (any may match) of conjunctions (every key must match);
    #: ``None`` for a whole-test deviation.
    region: tuple[dict, ...] | None = None
    #: Characterization claims pinning what torch does instead.
    pinned_by: tuple[str, ...] = ()
    #: 1, 2, ... among entries sharing claim, test, torch, devices and
    #: backends (which differ by region): keeps :attr:`key` unique.
    ordinal: int = 0

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
    def key(self) -> str:
        """Stable human-readable key, e.g. ``detach.x[test_y]@torch>=1.13``."""
        k = self.claim
        if self.test:
            k += f"[{self.test}]"
        if self.torch:
            k += f"@torch{self.torch}"
        if self.devices:
            k += f"@{'+'.join(self.devices)}"
        if self.backends:
            k += f"@{'+'.join(self.backends)}"
        if self.ordinal > 1:
            k += f"#{self.ordinal}"
        return k

    def applies(
        self,
        *,
        torch_version: str,
        device: str,
        python_version: str | None = None,
        backend: str | None = None,
    ) -> bool:
        """True when this entry's condition holds for the run.

        ``torch_version`` may carry a local label (``2.13.0+cpu``); it is
        compared on its public part, pre-releases included. ``backend`` is the
        compile-tier backend of the test (``None`` outside the tier): an entry
        with ``backends`` applies only to tests of those backends.
        """
        if self.devices and device not in self.devices and device != "any":
            return False
        if self.backends and backend not in self.backends:
            return False
        if self.torch and not _contains(self.torch, torch_version):
            return False
        py = python_version or platform.python_version()
        return not (self.python and not _contains(self.python, py))

    def matches_test(self, test_name: str) -> bool:
        """True when this entry covers the test function ``test_name``."""
        return self.test is None or self.test == test_name

    def matches_failure(self, exception: str, message: str) -> bool:
        """True when a failure has this entry's signature (type name and substring)."""
        return exception == self.exception and self.match in message

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if v not in (None, ())}
        d["devices"] = list(self.devices)
        d["backends"] = list(self.backends)
        d["pinned_by"] = list(self.pinned_by)
        d["key"] = self.key
        if self.region is not None:
            d["region"] = [dict(alt) for alt in self.region]
        d["region_text"] = self.region_text
        d["whole_test"] = self.whole_test
        return d


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
    path: Path | str = EXPECTATIONS_FILE, registry: Registry | None = None
) -> list[Deviation]:
    """Parse and validate the expectations file.

    Every ``claim`` must be registered in ``registry`` (when given), every
    specifier must parse, and ``exception``/``match``/``reason``/``link`` are
    required. A missing file means no known deviations.

    Raises :class:`ExpectationsError` with a one-line message.
    """
    path = Path(path)
    if not path.exists():
        return []
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
        for req in ("claim", "exception", "match", "reason", "link"):
            if not isinstance(raw.get(req), str) or not raw[req].strip():
                raise ExpectationsError(f"{where}: missing or empty '{req}'")
        if registry is not None and raw["claim"] not in registry:
            raise ExpectationsError(f"{where}: unknown claim id {raw['claim']!r}")
        for spec_key in ("torch", "python"):
            if spec_key in raw:
                try:
                    SpecifierSet(raw[spec_key])
                except (InvalidSpecifier, TypeError):
                    raise ExpectationsError(
                        f"{where}: bad {spec_key} specifier {raw[spec_key]!r}"
                    ) from None
        devices = raw.get("devices", [])
        if not isinstance(devices, list) or not all(d in ("cpu", "cuda") for d in devices):
            raise ExpectationsError(f"{where}: devices must be a list of 'cpu'/'cuda'")
        backends = raw.get("backends", [])
        if not isinstance(backends, list) or not all(
            b in ("eager", "aot_eager", "inductor") for b in backends
        ):
            raise ExpectationsError(
                f"{where}: backends must be a list of 'eager'/'aot_eager'/'inductor'"
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
        out.append(
            Deviation(
                index=i,
                claim=raw["claim"],
                exception=raw["exception"],
                match=raw["match"],
                reason=" ".join(raw["reason"].split()),
                link=raw["link"],
                test=raw.get("test"),
                torch=raw.get("torch"),
                devices=tuple(devices),
                backends=tuple(backends),
                python=raw.get("python"),
                region=_parse_region(raw["region"], where) if "region" in raw else None,
                pinned_by=tuple(pinned),
            )
        )
    seen: dict[str, int] = {}
    for j, d in enumerate(out):
        seen[d.key] = seen.get(d.key, 0) + 1
        if seen[d.key] > 1:
            out[j] = replace(d, ordinal=seen[d.key])
    return out
