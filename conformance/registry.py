"""The claim registry: every promise the suite checks, with its source.

Claims live in ``conformance/claims/*.toml``, one file per area::

    area = "detach"
    title = "Tensor.detach"

    [[claim]]
    id = "detach.shares-storage"
    statement = "detach() returns a tensor that shares storage with its input."
    kind = "documented"            # documented | folklore | characterization
    [[claim.sources]]
    doc = "torch.Tensor.detach"    # object whose docstring holds the quote
    url = "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.detach.html"
    quote = "Returned Tensor shares the same storage with the original one."
    [[claim.sources]]
    seed = "000_1e6242bf72cbab49.txt"   # a tutorial in ../shared/seeds/

A source has either ``doc``/``url`` (PyTorch documentation) or ``seed`` (a
tutorial file name) and an optional ``quote``. ``documented`` claims need a
doc source with a quote; ``folklore`` claims need a seed source;
``characterization`` claims pin undocumented behaviour and need a ``note``
explaining why. ``check = "measurement"`` marks a claim (a speed claim) that
is measured and reported outside the pass/fail gate instead of tested.
``domain = { <dimension> = [values] }`` declares what the claim's sentence
quantifies over, in the vocabulary of ``conformance/domains.toml``
(:func:`load_dimensions`): every run checks that each declared value was
drawn by an example that checked the claim; ``domain_excludes = { <dimension> =
"reason" }`` leaves a dimension out in words, and ``domain_none = "reason"`` says
why the sentence quantifies over no dimension of the vocabulary (one fixed
program, one object). Every claim is reviewed this way: it has at least one of
the three, or is listed in ``conformance/claims/domain_review_pending.txt``
(checked by ``tests/test_domain_coverage.py``). ``unfalsifiable = "..."`` says
why no mutant of torch patched from Python can break the claim (every other
claim is declared by some mutant in ``conformance/mutants/<area>.py``, whose
targeted sweep proves the claim's own tests would catch it).

Loading never raises anything but :class:`RegistryError`, whose message is
one line naming the file and the problem.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

CLAIMS_DIR = Path(__file__).parent / "claims"
KINDS = ("documented", "folklore", "characterization")
#: How a claim is checked: by property tests (the gate), or by a timing
#: measurement reported outside the gate (speed claims).
CHECKS = ("property", "measurement")
_ID_RE = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_-]+)+$")
SEED_RE = re.compile(r"^\d{3}_[0-9a-f]{16}\.txt$")
_ROW_RE = re.compile(r"^[A-Z_]+-\d{2}$")
#: A claim's ``devices`` item: a torch device type (``cuda``, ``xpu``, a
#: PrivateUse1 backend's renamed type) or ``accelerator``, any device but the CPU.
_DEVICE_NAME = re.compile(r"[a-z_][a-z0-9_]*")
OUT_OF_SCOPE_FILE = Path(__file__).parent / "out_of_scope.toml"
DOMAINS_FILE = Path(__file__).parent / "domains.toml"


class RegistryError(Exception):
    """A malformed claim file or an unknown claim id (one-line message)."""


@dataclass(frozen=True)
class Source:
    """Where a claim comes from: a PyTorch doc page/docstring or a seed tutorial."""

    doc: str | None = None
    url: str | None = None
    seed: str | None = None
    quote: str | None = None

    @property
    def label(self) -> str:
        return self.seed or self.doc or self.url or "?"

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Claim:
    """One registered claim."""

    id: str
    area: str
    statement: str
    kind: str
    sources: tuple[Source, ...]
    note: str | None = None
    devices: tuple[str, ...] = ()
    check: str = "property"
    catalogue: tuple[str, ...] = ()
    file: str = ""
    #: Why no mutant of torch can break this claim from Python (shown in the
    #: report's detection-power section); ``None`` for a falsifiable claim.
    unfalsifiable: str | None = None
    #: The declared domain: ``((dimension, (value, ...)), ...)`` in the
    #: vocabulary of ``conformance/domains.toml``; empty when undeclared.
    domain: tuple[tuple[str, tuple], ...] = ()
    #: Dimensions (or values of them) the sentence does not speak of, each
    #: with the reason in words ("writable arrays only, per the docstring"):
    #: ``((dimension, reason), ...)``; an exclusion is never by omission.
    domain_excludes: tuple[tuple[str, str], ...] = ()
    #: Why the sentence quantifies over no dimension of the vocabulary (a
    #: fixed program and its arguments, one object), in words; ``None`` when
    #: it declares or excludes dimensions, or is not reviewed yet.
    domain_none: str | None = None

    @property
    def domain_reviewed(self) -> bool:
        """Has the sentence been reviewed for its domain (issue 29): it declares
        a domain, excludes dimensions in words, or says why it has none."""
        return bool(self.domain or self.domain_excludes or self.domain_none)

    def to_dict(self) -> dict:
        d = {
            "id": self.id,
            "area": self.area,
            "statement": self.statement,
            "kind": self.kind,
            "sources": [s.to_dict() for s in self.sources],
        }
        if self.note:
            d["note"] = self.note
        if self.devices:
            d["devices"] = list(self.devices)
        d["check"] = self.check
        if self.catalogue:
            d["catalogue"] = list(self.catalogue)
        if self.unfalsifiable:
            d["unfalsifiable"] = self.unfalsifiable
        if self.domain:
            d["domain"] = {dim: list(values) for dim, values in self.domain}
        if self.domain_excludes:
            d["domain_excludes"] = dict(self.domain_excludes)
        if self.domain_none:
            d["domain_none"] = self.domain_none
        return d


@dataclass
class Registry:
    """All claims, keyed by id, with the area titles."""

    claims: dict[str, Claim] = field(default_factory=dict)
    areas: dict[str, str] = field(default_factory=dict)

    def __contains__(self, claim_id: str) -> bool:
        return claim_id in self.claims

    def __getitem__(self, claim_id: str) -> Claim:
        try:
            return self.claims[claim_id]
        except KeyError:
            raise RegistryError(f"unknown claim id {claim_id!r}") from None

    def __len__(self) -> int:
        return len(self.claims)

    def by_area(self) -> dict[str, list[Claim]]:
        out: dict[str, list[Claim]] = {}
        for c in self.claims.values():
            out.setdefault(c.area, []).append(c)
        return out


def _source(raw: object, where: str) -> Source:
    if not isinstance(raw, dict):
        raise RegistryError(f"{where}: a source must be a table")
    unknown = set(raw) - {"doc", "url", "seed", "quote"}
    if unknown:
        raise RegistryError(f"{where}: unknown source key(s) {sorted(unknown)}")
    for k, v in raw.items():
        if not isinstance(v, str) or not v.strip():
            raise RegistryError(f"{where}: source key {k!r} must be a non-empty string")
    if not (raw.keys() & {"doc", "url", "seed"}):
        raise RegistryError(f"{where}: a source needs 'doc', 'url' or 'seed'")
    if "seed" in raw and not SEED_RE.match(raw["seed"]):
        raise RegistryError(f"{where}: seed {raw['seed']!r} is not a seed file name")
    return Source(**raw)


def load_file(path: Path) -> tuple[str, str, list[Claim]]:
    """Parse one claims file; returns ``(area, title, claims)``.

    Raises :class:`RegistryError` for unreadable TOML or any schema problem.
    """
    name = path.name
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise RegistryError(f"{name}: cannot read claims file: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise RegistryError(f"{name}: malformed TOML: {e}") from None
    area = data.get("area")
    if not isinstance(area, str) or not area:
        raise RegistryError(f"{name}: missing top-level 'area'")
    title = data.get("title", area)
    raw_claims = data.get("claim", [])
    if not isinstance(raw_claims, list) or not raw_claims:
        raise RegistryError(f"{name}: no [[claim]] tables")
    claims = []
    for i, raw in enumerate(raw_claims):
        where = f"{name}: claim #{i + 1}"
        if not isinstance(raw, dict):
            raise RegistryError(f"{where}: must be a table")
        cid = raw.get("id")
        if not isinstance(cid, str) or not _ID_RE.match(cid):
            raise RegistryError(f"{where}: bad or missing id {cid!r} (dotted lower-case)")
        where = f"{name}: claim {cid}"
        unknown = set(raw) - {
            "id",
            "statement",
            "kind",
            "sources",
            "note",
            "devices",
            "check",
            "catalogue",
            "unfalsifiable",
            "domain",
            "domain_excludes",
            "domain_none",
        }
        if unknown:
            raise RegistryError(f"{where}: unknown key(s) {sorted(unknown)}")
        statement = raw.get("statement")
        if not isinstance(statement, str) or not statement.strip():
            raise RegistryError(f"{where}: missing statement")
        kind = raw.get("kind")
        if kind not in KINDS:
            raise RegistryError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        raw_sources = raw.get("sources", [])
        if not isinstance(raw_sources, list) or not raw_sources:
            raise RegistryError(f"{where}: has no source")
        sources = tuple(_source(s, where) for s in raw_sources)
        note = raw.get("note")
        if kind == "documented" and not any(s.quote and (s.doc or s.url) for s in sources):
            raise RegistryError(f"{where}: a documented claim needs a doc source with a quote")
        if kind == "folklore" and not any(s.seed for s in sources):
            raise RegistryError(f"{where}: a folklore claim needs a seed source")
        if kind == "characterization" and not note:
            raise RegistryError(f"{where}: a characterization claim needs a 'note' saying why")
        devices = raw.get("devices", [])
        if not isinstance(devices, list) or not all(
            isinstance(d, str) and _DEVICE_NAME.fullmatch(d) for d in devices
        ):
            raise RegistryError(
                f"{where}: devices must be a list of device types ('cpu', 'cuda', ...) "
                "or 'accelerator' (any device but the CPU)"
            )
        catalogue = raw.get("catalogue", [])
        if not isinstance(catalogue, list) or not all(
            isinstance(r, str) and _ROW_RE.match(r) for r in catalogue
        ):
            raise RegistryError(f"{where}: catalogue must list reference rows like 'CLONE-01'")
        check = raw.get("check", "property")
        if check not in CHECKS:
            raise RegistryError(f"{where}: check must be one of {', '.join(CHECKS)}, got {check!r}")
        unfalsifiable = raw.get("unfalsifiable")
        if unfalsifiable is not None and (
            not isinstance(unfalsifiable, str) or not unfalsifiable.strip()
        ):
            raise RegistryError(f"{where}: unfalsifiable must be a non-empty reason")
        domain = _domain(raw.get("domain", {}), where)
        excludes = _domain_excludes(raw.get("domain_excludes", {}), where)
        domain_none = raw.get("domain_none")
        if domain_none is not None and (
            not isinstance(domain_none, str) or not domain_none.strip()
        ):
            raise RegistryError(f"{where}: domain_none must be a non-empty reason in words")
        if domain_none is not None and (domain or excludes):
            raise RegistryError(
                f"{where}: domain_none says the sentence has no domain, but it declares "
                "domain or domain_excludes"
            )
        claims.append(
            Claim(
                id=cid,
                area=area,
                statement=" ".join(statement.split()),
                kind=kind,
                sources=sources,
                note=" ".join(note.split()) if note else None,
                devices=tuple(devices),
                check=check,
                catalogue=tuple(catalogue),
                file=name,
                unfalsifiable=" ".join(unfalsifiable.split()) if unfalsifiable else None,
                domain=domain,
                domain_excludes=excludes,
                domain_none=" ".join(domain_none.split()) if domain_none else None,
            )
        )
    return area, title, claims


def _domain_excludes(raw, where: str) -> tuple[tuple[str, str], ...]:
    """A claim's ``domain_excludes`` table: dimension -> the reason, in words,
    its sentence leaves that dimension (or some of its values) out."""
    if not isinstance(raw, dict):
        raise RegistryError(f"{where}: domain_excludes must be a table of dimension = 'reason'")
    vocabulary = load_dimensions()
    out = []
    for dim, reason in raw.items():
        if dim not in vocabulary:
            raise RegistryError(
                f"{where}: domain_excludes dimension {dim!r} is not in domains.toml"
            )
        if not isinstance(reason, str) or not reason.strip():
            raise RegistryError(f"{where}: domain_excludes {dim} needs a reason in words")
        out.append((dim, " ".join(reason.split())))
    return tuple(out)


def _domain(raw, where: str) -> tuple[tuple[str, tuple], ...]:
    """A claim's ``domain`` table, checked against the vocabulary."""
    if not isinstance(raw, dict):
        raise RegistryError(f"{where}: domain must be a table of dimension = [values]")
    vocabulary = load_dimensions()
    out = []
    for dim, values in raw.items():
        if dim not in vocabulary:
            raise RegistryError(
                f"{where}: domain dimension {dim!r} is not in domains.toml "
                f"(known: {', '.join(sorted(vocabulary))})"
            )
        if not isinstance(values, list) or not values or len(set(map(repr, values))) < len(values):
            raise RegistryError(f"{where}: domain {dim} must list distinct values")
        allowed = vocabulary[dim]["values"]
        bad = [v for v in values if not any(type(v) is type(a) and v == a for a in allowed)]
        if bad:
            raise RegistryError(
                f"{where}: domain {dim} has value(s) {bad!r} outside its vocabulary {allowed!r}"
            )
        out.append((dim, tuple(values)))
    return tuple(out)


@lru_cache(maxsize=1)
def load_dimensions(path: Path | str = DOMAINS_FILE) -> dict[str, dict]:
    """The domain vocabulary: dimension name -> ``{"doc": str, "values": list}``
    from ``conformance/domains.toml`` (``[dimension.<name>]`` tables). Raises
    :class:`RegistryError` (one line) when the file is unreadable or malformed."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise RegistryError(f"{path.name}: cannot read the domain vocabulary: {e}") from None
    dims = data.get("dimension")
    if not isinstance(dims, dict) or set(data) - {"dimension"}:
        raise RegistryError(f"{path.name}: expected only [dimension.<name>] tables")
    for name, d in dims.items():
        if (
            not isinstance(d, dict)
            or set(d) != {"doc", "values"}
            or not isinstance(d["doc"], str)
            or not isinstance(d["values"], list)
            or not d["values"]
            or not all(isinstance(v, str | bool | int) for v in d["values"])
        ):
            raise RegistryError(
                f"{path.name}: dimension {name!r} needs a doc and a non-empty list of "
                "str/bool/int values"
            )
    return dims


def domain_value(value) -> str:
    """The name of a domain value (a feature's value) in results and reports:
    ``true``/``false`` for bools, the string itself, or the int's digits."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def load_registry(directory: Path | str = CLAIMS_DIR) -> Registry:
    """Load every ``*.toml`` under ``directory`` into a :class:`Registry`.

    Raises :class:`RegistryError` on malformed files, duplicate ids, or an
    empty directory.
    """
    directory = Path(directory)
    files = sorted(directory.glob("*.toml"))
    if not files:
        raise RegistryError(f"no claim files in {directory}")
    reg = Registry()
    for path in files:
        area, title, claims = load_file(path)
        if area in reg.areas and reg.areas[area] != title:
            raise RegistryError(
                f"{path.name}: area {area!r} is defined twice with different titles"
            )
        reg.areas[area] = title
        for c in claims:
            if c.id in reg.claims:
                raise RegistryError(
                    f"{path.name}: duplicate claim id {c.id!r} (also in {reg.claims[c.id].file})"
                )
            reg.claims[c.id] = c
    return reg


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The registry shipped with the suite, or the directory named by the
    ``TORCH_CONFORMANCE_CLAIMS_DIR`` environment variable (cached)."""
    return load_registry(os.environ.get("TORCH_CONFORMANCE_CLAIMS_DIR") or CLAIMS_DIR)


def load_out_of_scope(path: Path | str = OUT_OF_SCOPE_FILE) -> list[dict]:
    """Catalogue rows deliberately not registered, each ``{id, reason}``.

    ``conformance/out_of_scope.toml`` holds ``[[row]]`` tables with ``id``
    (a row of ``torch-copy-claims-catalogue.md``, e.g. ``COPY-04``) and
    ``reason``. Raises :class:`RegistryError` (one line) when malformed.
    """
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise RegistryError(f"{path.name}: cannot parse: {e}") from None
    rows = data.get("row", [])
    out = []
    for i, r in enumerate(rows if isinstance(rows, list) else [None]):
        if (
            not isinstance(r, dict)
            or not _ROW_RE.match(str(r.get("id", "")))
            or not r.get("reason")
        ):
            raise RegistryError(
                f"{path.name}: row #{i + 1} needs an 'id' like 'COPY-04' and a 'reason'"
            )
        out.append({"id": r["id"], "reason": " ".join(str(r["reason"]).split())})
    return out
