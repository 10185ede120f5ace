"""Semantic mutants of torch: broken implementations the suite must tell apart.

A green conformance run proves nothing by itself; the suite is only as good as
the broken torches it can detect. Each :class:`Mutant` here is a small piece
of Python that patches torch *at interpreter start-up* (through a generated
``sitecustomize.py`` put first on ``PYTHONPATH``), so a conformance run in a
subprocess sees a torch that is wrong in one specific way while the suite
itself is untouched and nothing leaks into the calling process.

Mutants patch both the method and the function form of an API
(``torch.Tensor.detach`` *and* ``torch.detach``), properties through a
``property`` on ``torch.Tensor`` (``.data``, ``.grad``, ``._version``), or
context managers through their class.

Two kinds (:attr:`Mutant.kind`):

``always``
    The broken code path runs on every call, e.g. "``detach()`` copies" or
    "``clone()`` ignores ``preserve_format``" (observable wherever the
    behaviour can differ at all).
``partial``
    The broken path is guarded by a condition on the input space, like a
    fast path gone wrong for one special case: one layout family
    (non-contiguous, permuted, expanded, zero-size, 0-d, channels_last ...),
    one dtype family, one autograd state (leaf or not, requiring grad or
    not, inference tensor), one calling convention (function vs method,
    keyword vs positional), one relation between arguments (same dtype,
    broadcast shapes), or one tensor subclass (``nn.Parameter``). These are
    the mutants that measure how well the *strategies* cover the input space.

Every mutant carries a :attr:`Mutant.witness`: a short Python snippet that
asserts the real behaviour, so it exits 0 on real torch and fails with an
``AssertionError`` under the mutant (checked by ``tests/test_mutants_catalogue.py``).

:mod:`conformance.mutants.runner` runs the whole conformance suite once per
mutant (``torch-conformance mutate``) and records which claims killed it.
"""

from __future__ import annotations

import os
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "KINDS",
    "FAMILIES",
    "Mutant",
    "CATALOGUE",
    "MUTANTS",
    "CONTROL",
    "get",
    "all_mutants",
    "write_sitecustomize",
    "mutant_env",
]

#: The two mutant kinds (see the module docstring).
KINDS: tuple[str, ...] = ("always", "partial")
#: The input-space families a ``partial`` mutant can be wrong on.
FAMILIES: tuple[str, ...] = (
    "layout", "dtype", "autograd", "convention", "relation", "subclass", "mode", "other",
)  # fmt: skip


@dataclass(frozen=True)
class Mutant:
    """One semantic mutant of torch.

    Attributes:
        name: unique kebab-case name (``detach-copies-expanded``).
        description: one sentence saying what is broken, and for which inputs.
        kind: ``"always"`` (the broken path runs on every call) or
            ``"partial"`` (wrong on part of the input space only: one layout,
            dtype family, autograd state, calling convention, argument
            relation or tensor subclass).
        targets: where the killers are expected: claim ids (their tests run
            first) and/or conformance areas (the modules testing them run
            before the others). Used only to *order* a mutation run so the
            likely killers run first; the whole suite always runs.
        source: Python source executed at interpreter start-up (as
            ``sitecustomize``) that patches torch. Must import cleanly and
            leave ``import torch``, pytest and Hypothesis working.
        witness: a short Python snippet asserting the *real* behaviour the
            mutant breaks: it exits 0 on real torch and raises
            ``AssertionError`` under the mutant.
        family: for ``partial`` mutants, the part of the input space that is
            wrong: ``layout``, ``dtype``, ``autograd``, ``convention``,
            ``relation``, ``subclass`` or ``mode`` (grad/inference mode).
    """

    name: str
    description: str
    kind: Literal["always", "partial"]
    targets: tuple[str, ...]
    source: str
    witness: str = ""
    family: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"mutant {self.name}: kind must be one of {KINDS}, not {self.kind!r}")
        if self.kind == "partial" and self.family not in FAMILIES:
            raise ValueError(f"partial mutant {self.name}: family must be one of {FAMILIES}")
        object.__setattr__(self, "source", textwrap.dedent(self.source).strip() + "\n")
        object.__setattr__(self, "witness", textwrap.dedent(self.witness).strip() + "\n")
        object.__setattr__(self, "targets", tuple(self.targets))

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "kind": self.kind,
            "targets": list(self.targets),
            "family": self.family,
        }


from conformance.mutants.catalogue import CATALOGUE  # noqa: E402

#: The no-op mutant of a control run: real torch through the same machinery.
CONTROL = Mutant(
    name="control",
    description="no mutation: real torch through the same sitecustomize machinery",
    kind="always",
    targets=(),
    source="# control run: torch is not patched\n",
    witness="",
)

#: Legacy view of the catalogue: name -> (description, source).
MUTANTS: dict[str, tuple[str, str]] = {m.name: (m.description, m.source) for m in CATALOGUE}

_BY_NAME: dict[str, Mutant] = {m.name: m for m in CATALOGUE}
if len(_BY_NAME) != len(CATALOGUE):  # pragma: no cover - guarded by the self-tests
    raise RuntimeError("duplicate mutant names in the catalogue")


def _extra_mutants() -> list[Mutant]:
    """Mutants contributed in the legacy ``(description, source)`` format by
    ``tests/mutants/graphs.py`` (``GRAPH_MUTANTS``) and
    ``tests/mutants/sequences.py`` (``SEQUENCE_MUTANTS``), when the source
    tree has them. Their kind and targets are inferred from the module."""
    import importlib.util

    out: list[Mutant] = []
    here = Path(__file__).resolve().parents[2] / "tests" / "mutants"
    for filename, attr, area in (
        ("graphs.py", "GRAPH_MUTANTS", "graphs"),
        ("sequences.py", "SEQUENCE_MUTANTS", "sequences"),
    ):
        # By file path: the source tree's ``tests`` is not an installed package.
        path = here / filename
        if not path.is_file():
            continue
        spec = importlib.util.spec_from_file_location(f"_torch_conformance_{area}_mutants", path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception:  # a broken contributed file must not break the catalogue
            continue
        for name, value in getattr(mod, attr, {}).items():
            if name in _BY_NAME:
                continue
            if isinstance(value, Mutant):
                out.append(value)
                continue
            description, source = value[0], value[1]
            # "only for 3-D inputs", "when the destination is a view" (not "even when").
            partial = bool(re.search(r"\bonly\b|(?<!even) when ", description))
            kind = "partial" if partial else "always"
            out.append(
                Mutant(name, description, kind, (area,), source, family="other" if partial else "")
            )
    return out


def all_mutants(include_extra: bool = True) -> list[Mutant]:
    """The catalogue, plus the graph/sequence mutants of ``tests/mutants`` when present."""
    return list(CATALOGUE) + (_extra_mutants() if include_extra else [])


def get(name: str) -> Mutant:
    """The mutant called ``name`` (catalogue, extras, or ``control``); ``KeyError`` if none."""
    if name == CONTROL.name:
        return CONTROL
    if name in _BY_NAME:
        return _BY_NAME[name]
    for m in _extra_mutants():
        if m.name == name:
            return m
    raise KeyError(name)


def write_sitecustomize(name: str | Mutant, directory: Path) -> Path:
    """Write the ``sitecustomize.py`` installing mutant ``name`` into ``directory``.

    ``name`` is a mutant name or a :class:`Mutant`. Raises ``KeyError`` for
    an unknown name.
    """
    mutant = name if isinstance(name, Mutant) else get(name)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "sitecustomize.py"
    header = f"# torch mutant {mutant.name!r}: {mutant.description}\n"
    path.write_text(header + mutant.source, encoding="utf-8")
    return path


def mutant_env(name: str | Mutant, directory: Path) -> dict[str, str]:
    """A copy of ``os.environ`` whose ``PYTHONPATH`` installs mutant ``name``."""
    write_sitecustomize(name, directory)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(directory), env.get("PYTHONPATH")]))
    return env
