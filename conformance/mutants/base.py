"""The :class:`Mutant` record (kept apart from the package so that the area
modules can import it without importing each other)."""

from __future__ import annotations

import functools
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["KINDS", "FAMILIES", "Mutant"]

#: The two mutant kinds (see :mod:`conformance.mutants`).
KINDS: tuple[str, ...] = ("always", "partial")
#: The input-space families a ``partial`` mutant can be wrong on.
FAMILIES: tuple[str, ...] = (
    "layout", "dtype", "autograd", "convention", "relation", "subclass", "mode", "value",
    "backend", "other",
)  # fmt: skip


@dataclass(frozen=True)
class Mutant:
    """One semantic mutant of torch: a patch that breaks declared claims.

    Attributes:
        name: unique kebab-case name (``detach-copies-expanded``).
        description: one sentence saying what is broken, and for which inputs.
        claims: the claim ids this mutant violates (at least one). The
            targeted sweep (``torch-conformance mutate``) runs the tests of
            exactly these claims under the mutant and requires each one's
            verdict to flip to FAILED; one that keeps its verdict *survived*
            the mutant (a defect of the suite). The first claim's area is the module
            the mutant lives in.
        region: the part of the input space where the mutant is wrong, in
            words ("non-contiguous float64 inputs", "the function form
            ``torch.detach(t)`` only"); empty for a mutant wrong on every
            input its claims cover. A non-empty region makes it ``partial``.
        family: for a ``partial`` mutant, which kind of region it is:
            ``layout``, ``dtype``, ``value``, ``autograd``, ``convention``
            (calling form), ``relation`` (between arguments), ``subclass``,
            ``mode`` (grad/inference mode), ``backend`` (a compile backend)
            or ``other``.
        patch: a function of no arguments that patches torch, called after
            ``import torch`` (by a ``sitecustomize`` at interpreter start-up,
            or in a forked child of the sweep: see
            :func:`conformance.mutants.install`). It keeps the real
            implementation and calls it outside the broken region; most are
            built by the combinators of :mod:`conformance.mutants.patching`.
            Building the record patches nothing: the patch resolves its
            targets when it is called.
        witness: a function of no arguments asserting the *real* behaviour
            the mutant breaks, run in a fresh interpreter (or a fork of one)
            that imported torch: it returns on real torch and raises
            ``AssertionError`` under the mutant.

    Raises ``ValueError`` on construction for a mutant without claims, a
    partial mutant without family, or an unknown family.
    """

    name: str
    description: str
    claims: tuple[str, ...]
    patch: Callable[[], object]
    witness: Callable[[], object]
    region: str = ""
    family: str = ""
    #: Extra areas whose modules the sweep also collects (rarely needed:
    #: the claims' own areas are always collected).
    areas: tuple[str, ...] = field(default=())
    #: Devices the mutant can only be judged on (``("cuda",)`` for a mutant
    #: of a CUDA-only path); empty for any device. On a machine without
    #: them the sweep reports the mutant "not judged here", never survived.
    devices: tuple[str, ...] = field(default=())
    #: The ``torch.compile`` backends the targeted sweep judges the mutant
    #: on (``--backends``); empty for every backend. A mutant that corrupts
    #: one backend names it (its other columns cannot change); one that
    #: corrupts every backend names the cheapest that reach all its claims
    #: (inductor compiles C++, the Dynamo-only ``eager`` backend does not).
    #: The sweep proves the choice: a claim no test reached reads as an error.
    backends: tuple[str, ...] = field(default=())
    #: The values of declared domain dimensions (``conformance/domains.toml``)
    #: the mutant is wrong at and only at, e.g. ``{"writeable": False}`` for a
    #: ``from_numpy`` that copies read-only arrays. Each declared claim must
    #: declare those values in its ``domain``; the (area, dimension=value)
    #: pairs no such mutant covers are listed by
    #: :func:`conformance.mutants.domain_pairs` (issue 29).
    domain: tuple[tuple[str, object], ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.claims and self.name != "control":
            raise ValueError(f"mutant {self.name}: declares no claims")
        if self.region and self.family not in FAMILIES:
            raise ValueError(f"partial mutant {self.name}: family must be one of {FAMILIES}")
        if not self.region and self.family:
            raise ValueError(f"mutant {self.name}: a family without a region")
        object.__setattr__(self, "claims", tuple(self.claims))
        object.__setattr__(self, "areas", tuple(self.areas))
        object.__setattr__(self, "devices", tuple(self.devices))
        object.__setattr__(self, "backends", tuple(self.backends))
        domain = self.domain.items() if isinstance(self.domain, dict) else self.domain
        object.__setattr__(self, "domain", tuple(sorted((str(d), v) for d, v in domain)))
        if self.domain and not self.region:
            raise ValueError(f"mutant {self.name}: a domain value without a region")
        unknown = set(self.backends) - {"eager", "aot_eager", "inductor"}
        if unknown:
            raise ValueError(f"mutant {self.name}: unknown backends {sorted(unknown)}")
        if not callable(self.patch) or not callable(self.witness):
            raise TypeError(f"mutant {self.name}: patch and witness must be functions")

    @property
    def kind(self) -> Literal["always", "partial"]:
        """``partial`` when the mutant is wrong on a region only, else ``always``."""
        return "partial" if self.region else "always"

    @property
    def area(self) -> str:
        """The area of the first declared claim (the module it lives in)."""
        return self.claims[0].split(".", 1)[0] if self.claims else ""

    @property
    def targets(self) -> tuple[str, ...]:
        """The declared claims (the name older code used)."""
        return self.claims

    @property
    def source(self) -> str:
        """The patch as a reader sees it: the source of its function(s), or
        the combinator's own account of what it replaces (never executed)."""
        return describe(self.patch)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "kind": self.kind,
            "claims": list(self.claims),
            "region": self.region,
            "family": self.family,
            "area": self.area,
            "devices": list(self.devices),
            "backends": list(self.backends),
            "domain": {d: v for d, v in self.domain},
        }


def describe(fn: Callable) -> str:
    """Readable Python for a patch or witness ``fn``: a combinator's own
    ``describe()``, the source of a function (with the arguments bound by a
    :func:`functools.partial`), or its ``repr`` when it has no source."""
    if hasattr(fn, "describe"):
        return fn.describe()
    if isinstance(fn, functools.partial):
        bound = [repr(a) for a in fn.args] + [f"{k}={v!r}" for k, v in fn.keywords.items()]
        return f"{describe(fn.func)}# called with ({', '.join(bound)})\n"
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return f"{fn!r}\n"
