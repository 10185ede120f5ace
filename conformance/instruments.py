"""Instruments: the primitives the property tests observe a claim through.

``conformance/instruments.toml`` lists a small set of torch operations the
tests use as instruments (``detach`` to snapshot values, ``clone`` to keep
them, ``torch.tensor`` to build expected values, ...), each with its *own
claims*, the claims that check the primitive itself. Tests declare the
instruments they observe through with ``@pytest.mark.observes("detach", ...)``;
the report groups a failing claim under an instrument whose own claims failed
in the same run (:mod:`reports.causes`).

Loading raises only :class:`InstrumentsError` (one line).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

INSTRUMENTS_FILE = Path(__file__).parent / "instruments.toml"

__all__ = [
    "Primitive",
    "InstrumentsError",
    "load_instruments",
    "default_instruments",
    "INSTRUMENTS_FILE",
]


class InstrumentsError(Exception):
    """A malformed instruments file or an unknown claim id (one-line message)."""


@dataclass(frozen=True)
class Primitive:
    """One instrument primitive: ``name`` (what tests write in
    ``@pytest.mark.observes``), a one-line ``description`` and the ids of its
    own ``claims``."""

    name: str
    description: str
    claims: tuple[str, ...]
    #: Claim areas devoted to the primitive: all their claims are its own too.
    areas: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "claims": list(self.claims),
                "areas": list(self.areas)}  # fmt: skip


def load_instruments(path: Path | str = INSTRUMENTS_FILE, registry=None) -> dict[str, Primitive]:
    """``{name: Primitive}`` from ``path``; with ``registry``, every own claim
    must be registered. Raises :class:`InstrumentsError`."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InstrumentsError(f"{path.name}: cannot parse: {e}") from None
    out: dict[str, Primitive] = {}
    for i, raw in enumerate(data.get("primitive", [])):
        where = f"{path.name}: primitive #{i + 1}"
        if (
            not isinstance(raw, dict)
            or not {"name", "description", "claims"} <= set(raw)
            or (set(raw) - {"name", "description", "claims", "areas"})
        ):
            raise InstrumentsError(
                f"{where}: needs 'name', 'description' and 'claims' (and optional 'areas')"
            )
        name, claims = raw["name"], raw["claims"]
        if not isinstance(name, str) or not name or name in out:
            raise InstrumentsError(f"{where}: missing or duplicate name {name!r}")
        if (
            not isinstance(claims, list)
            or not claims
            or not all(isinstance(c, str) for c in claims)
        ):
            raise InstrumentsError(f"{where} ({name}): 'claims' must list claim ids")
        if registry is not None:
            unknown = [c for c in claims if c not in registry]
            if unknown:
                raise InstrumentsError(
                    f"{where} ({name}): unknown claim id(s) {', '.join(unknown)}"
                )
        areas = raw.get("areas", [])
        if not isinstance(areas, list) or not all(isinstance(a, str) for a in areas):
            raise InstrumentsError(f"{where} ({name}): 'areas' must list claim areas")
        if registry is not None:
            unknown_areas = [a for a in areas if a not in registry.areas]
            if unknown_areas:
                raise InstrumentsError(
                    f"{where} ({name}): unknown area(s) {', '.join(unknown_areas)}"
                )
        out[name] = Primitive(
            name, " ".join(str(raw["description"]).split()), tuple(claims), tuple(areas)
        )
    return out


@lru_cache(maxsize=1)
def default_instruments() -> dict[str, Primitive]:
    """The shipped instruments, checked against the default registry."""
    from conformance.registry import default_registry

    return load_instruments(INSTRUMENTS_FILE, default_registry())
