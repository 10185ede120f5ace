"""Semantic mutants of torch: broken implementations the suite must tell apart.

A green conformance run proves nothing by itself; the suite is only as good as
the broken torches it can detect. Each :class:`Mutant` here names a function
(:attr:`Mutant.patch`) that patches torch right after ``import torch``: in a
forked child of the targeted sweep, or *at interpreter start-up* through a
generated ``sitecustomize.py`` put first on ``PYTHONPATH`` (both call
:func:`install`), so a conformance run in a subprocess sees a torch that is
wrong in one specific way while the suite itself is untouched and nothing
leaks into the calling process.

Mutants patch both the method and the function form of an API
(``torch.Tensor.detach`` *and* ``torch.detach``), properties through a
``property`` on ``torch.Tensor`` (``.data``, ``.grad``, ``._version``), or
context managers through their class. Most patches are built from the
combinators of :mod:`conformance.mutants.patching` (``wrap_result``,
``wrap_call``, ``replace``, ...), which resolve their targets only when the
patch is applied: importing the catalogue patches nothing and imports no torch.

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

Every mutant *declares the claims it breaks* (:attr:`Mutant.claims`) and
the region of the input space where it breaks them (:attr:`Mutant.region`):
``torch-conformance mutate`` runs each mutant against the tests of exactly
those claims and requires every one of them to turn FAILED, so "held" on a
claim means its own tests would have caught a torch that broke it. Mutants
live one module per claim area (``conformance/mutants/<area>.py``, beside
``conformance/claims/<area>.toml`` and ``conformance/test_<area>.py``), each
defining ``MUTANTS``; :data:`CATALOGUE` collects them all.

Every mutant carries a :attr:`Mutant.witness`: a function that asserts the
real behaviour, so it returns on real torch and fails with an
``AssertionError`` under the mutant (checked by ``tests/test_mutants_catalogue.py``).

The code of the catalogue gives Hypothesis no hints: Hypothesis draws a share
of its values from the literals of the "local" modules it finds imported, and
a mutant's literals (its thresholds, its witness's values) must not steer the
suite's draws towards the mutant. :func:`install` hides the catalogue's
modules from that scan (see :func:`hide_from_hypothesis`).

:mod:`conformance.mutants.runner` runs the whole conformance suite once per
mutant (``torch-conformance mutate --whole-suite``) and records which claims killed it.
"""

from __future__ import annotations

import ast
import functools
import importlib
import os
import pkgutil
import sys
from pathlib import Path

from conformance.mutants.base import FAMILIES, KINDS, Mutant

__all__ = [
    "KINDS",
    "FAMILIES",
    "Mutant",
    "CATALOGUE",
    "MUTANTS",
    "CONTROL",
    "AREA_MODULES",
    "get",
    "all_mutants",
    "by_claim",
    "domain_pairs",
    "DOMAIN_EXEMPT_FILE",
    "install",
    "hide_from_hypothesis",
    "write_sitecustomize",
    "mutant_env",
]

#: Modules of this package that are not mutant areas.
_NOT_AREAS = {"base", "patching", "runner", "order", "targeted", "forkserver"}
#: The checkout holding this package (what a ``sitecustomize`` imports it from).
ROOT = Path(__file__).resolve().parents[2]

#: The area modules (``conformance.mutants.<area>``), by area name.
AREA_MODULES: dict[str, str] = {
    info.name: f"{__name__}.{info.name}"
    for info in pkgutil.iter_modules([str(Path(__file__).parent)])
    if info.name not in _NOT_AREAS and not info.name.startswith("_")
}


def _collect() -> tuple[Mutant, ...]:
    out: list[Mutant] = []
    for area, module in sorted(AREA_MODULES.items()):
        mod = importlib.import_module(module)
        for m in getattr(mod, "MUTANTS", ()):
            if m.area != area:
                raise RuntimeError(
                    f"mutant {m.name} (first claim {m.claims[0]}) is not in {area}.py"
                )
            out.append(m)
    return tuple(out)


#: Every mutant of every area module.
CATALOGUE: tuple[Mutant, ...] = _collect()


def _unpatched() -> None:
    """The control run's patch: torch is not patched."""


#: The no-op mutant of a control run: real torch through the same machinery.
CONTROL = Mutant(
    name="control",
    description="no mutation: real torch through the same sitecustomize machinery",
    claims=(),
    patch=_unpatched,
    witness=_unpatched,
)


def __getattr__(name: str):
    # MUTANTS reads every patch's source: built on first use only.
    if name == "MUTANTS":
        global MUTANTS
        #: name -> (description, readable patch source), for the suite's own tests.
        MUTANTS = {m.name: (m.description, m.source) for m in CATALOGUE}
        return MUTANTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_BY_NAME: dict[str, Mutant] = {m.name: m for m in CATALOGUE}
if len(_BY_NAME) != len(CATALOGUE):  # pragma: no cover - guarded by the self-tests
    _dups = sorted({m.name for m in CATALOGUE if sum(x.name == m.name for x in CATALOGUE) > 1})
    raise RuntimeError(f"duplicate mutant names in the catalogue: {', '.join(_dups)}")


def all_mutants() -> list[Mutant]:
    """Every mutant, area by area."""
    return list(CATALOGUE)


def by_claim() -> dict[str, list[Mutant]]:
    """``{claim id: the mutants that declare it}``."""
    out: dict[str, list[Mutant]] = {}
    for m in CATALOGUE:
        for c in m.claims:
            out.setdefault(c, []).append(m)
    return out


#: (area, dimension, value) pairs no mutant can be wrong at, each with the
#: reason it cannot be broken from Python (``[[exempt]]`` tables).
DOMAIN_EXEMPT_FILE = Path(__file__).parent / "domain_exempt.toml"


def domain_pairs(registry=None) -> dict[tuple[str, str, str], dict]:
    """Every (area, dimension, value) pair some claim of ``area`` declares in
    its ``domain`` (issue 29), with the mutants wrong only there.

    Returns ``{(area, dimension, value name): {"claims": [ids], "mutants":
    [names], "exempt": reason or ""}}``; a pair whose ``mutants`` and
    ``exempt`` are both empty is a gap: no regression confined to that value
    has been shown to turn the area's claims red. A mutant covers a pair when
    it lives in the area and declares ``domain = {dimension: value}``.

    Raises ``ValueError`` for a mutant whose domain value a declared claim
    does not declare, and for an exemption of a pair no claim declares.
    """
    import tomllib

    from conformance.registry import default_registry, domain_value

    registry = registry or default_registry()
    pairs: dict[tuple[str, str, str], dict] = {}
    for claim in registry.claims.values():
        for dim, values in claim.domain:
            for v in values:
                key = (claim.area, dim, domain_value(v))
                pairs.setdefault(key, {"claims": [], "mutants": [], "exempt": ""})
                pairs[key]["claims"].append(claim.id)
    for m in CATALOGUE:
        for dim, v in m.domain:
            for c in m.claims:
                declared = dict(registry[c].domain).get(dim, ())
                if domain_value(v) not in {domain_value(x) for x in declared}:
                    raise ValueError(
                        f"mutant {m.name}: claim {c} does not declare {dim}={domain_value(v)} "
                        "in its domain"
                    )
            pairs[(m.area, dim, domain_value(v))]["mutants"].append(m.name)
    if DOMAIN_EXEMPT_FILE.exists():
        with DOMAIN_EXEMPT_FILE.open("rb") as f:
            for e in tomllib.load(f).get("exempt", []):
                key = (e["area"], e["dimension"], domain_value(e["value"]))
                if key not in pairs:
                    raise ValueError(f"{DOMAIN_EXEMPT_FILE.name}: no claim declares {key}")
                pairs[key]["exempt"] = e["reason"]
    return pairs


def get(name: str) -> Mutant:
    """The mutant called ``name`` (or ``control``); ``KeyError`` if none."""
    if name == CONTROL.name:
        return CONTROL
    return _BY_NAME[name]


def hide_from_hypothesis() -> None:
    """Keep the catalogue's modules out of Hypothesis' pool of local constants.

    Hypothesis draws about one value in twenty from the literals of the
    modules it finds imported outside site-packages and the tests. The
    mutants' patches and witnesses (thresholds, sizes, values) must not
    steer the suite's draws towards the mutant a run is judging - a real
    regression in torch gives no such hint - so every module of the
    catalogue (the area modules, :mod:`~conformance.mutants.patching`, the
    helpers) imported so far is marked as already scanned. Does nothing
    without Hypothesis, or with a Hypothesis that has no such pool.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - Hypothesis is a dependency
        return
    seen = getattr(providers, "_seen_modules", None)
    if not isinstance(seen, set):  # pragma: no cover - another Hypothesis
        return
    prefix = __name__ + "."
    for name, module in list(sys.modules.items()):
        if name == __name__ or (
            name.startswith(prefix)
            and name.removeprefix(prefix).split(".")[0] not in {"runner", "order", "targeted"}
        ):
            seen.add(id(module))


def install(name: str) -> Mutant:
    """Patch torch with mutant ``name`` in this process (for good) and
    return it; ``control`` patches nothing. Hides the catalogue from
    Hypothesis' constant pool first (:func:`hide_from_hypothesis`). Raises
    ``KeyError`` for an unknown name."""
    mutant = get(name)
    hide_from_hypothesis()
    mutant.patch()
    return mutant


def _loader(mutant: Mutant) -> tuple[str, str]:
    """The imports and the call a ``sitecustomize`` runs to apply ``mutant``:
    :func:`install` by name for the catalogue (and the control), else its
    patch looked up as ``module:qualname`` - a module-level function, or a
    :func:`functools.partial` of one binding literal arguments (the suite's
    own tests make such mutants)."""
    if mutant is CONTROL or _BY_NAME.get(mutant.name) is mutant:
        return "from conformance.mutants import install\n", f"install({mutant.name!r})\n"
    fn, args = mutant.patch, ()
    if isinstance(fn, functools.partial) and not fn.keywords:
        fn, args = fn.func, fn.args
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    literal = all(_is_literal(a) for a in args)
    if not module or not qualname.isidentifier() or not literal:
        raise ValueError(
            f"mutant {mutant.name}: a sitecustomize can apply only the catalogue's mutants "
            "or a patch that is a module-level function (of literal arguments)"
        )
    return (
        f"from conformance.mutants import hide_from_hypothesis\nfrom {module} import {qualname}\n",
        f"hide_from_hypothesis()\n{qualname}({', '.join(repr(a) for a in args)})\n",
    )


def _is_literal(value: object) -> bool:
    try:
        return ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError):
        return False


def write_sitecustomize(name: str | Mutant, directory: Path) -> Path:
    """Write the ``sitecustomize.py`` installing mutant ``name`` into ``directory``.

    ``name`` is a mutant name or a :class:`Mutant` (of the catalogue, the
    control, or one whose patch is a module-level function: see
    :func:`_loader`). The file imports torch, then this package (and the
    patch's module) from the checkout (:data:`ROOT`, put first on
    ``sys.path`` for those imports only) and applies the patch. Raises
    ``KeyError`` for an unknown name.
    """
    mutant = name if isinstance(name, Mutant) else get(name)
    imports, call = _loader(mutant)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "sitecustomize.py"
    path.write_text(
        f"# torch mutant {mutant.name!r}: {mutant.description}\n"
        "import sys\n\n"
        "import torch  # noqa: F401  (a mutant patches torch right after its import)\n\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "try:\n" + "".join(f"    {line}\n" for line in imports.splitlines()) + "finally:\n"
        "    sys.path.pop(0)\n" + call,
        encoding="utf-8",
    )
    return path


def mutant_env(name: str | Mutant, directory: Path) -> dict[str, str]:
    """A copy of ``os.environ`` whose ``PYTHONPATH`` installs mutant ``name``."""
    write_sitecustomize(name, directory)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(directory), env.get("PYTHONPATH")]))
    return env
