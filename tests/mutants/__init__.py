"""Semantic mutants of torch for the suite's own tests (a thin re-export).

The catalogue lives in :mod:`conformance.mutants` (documented
:class:`~conformance.mutants.Mutant` objects with kind, targets and witness).
This module keeps the legacy interface: :data:`MUTANTS` maps a name to
``(description, source)``, :func:`write_sitecustomize` and :func:`mutant_env`
install a mutant through a generated ``sitecustomize.py`` on ``PYTHONPATH``.

Mutants contributed in the legacy format by ``tests/mutants/graphs.py``
(``GRAPH_MUTANTS``) and ``tests/mutants/sequences.py`` (``SEQUENCE_MUTANTS``)
are merged in when those modules exist.
"""

from __future__ import annotations

import importlib
import os
import textwrap
from pathlib import Path

from conformance.mutants import CATALOGUE
from conformance.mutants import get as _get_mutant

__all__ = ["MUTANTS", "write_sitecustomize", "mutant_env"]

#: name -> (description, source patched into torch at start-up)
MUTANTS: dict[str, tuple[str, str]] = {m.name: (m.description, m.source) for m in CATALOGUE}

for _module, _attr in (("graphs", "GRAPH_MUTANTS"), ("sequences", "SEQUENCE_MUTANTS")):
    try:
        _extra = getattr(importlib.import_module(f"{__name__}.{_module}"), _attr, {})
    except ImportError:
        continue
    for _name, _value in _extra.items():
        if hasattr(_value, "source"):  # a conformance.mutants.Mutant
            MUTANTS.setdefault(_name, (_value.description, _value.source))
        else:
            MUTANTS.setdefault(_name, (_value[0], _value[1]))


def write_sitecustomize(name: str, directory: Path) -> Path:
    """Write the ``sitecustomize.py`` for mutant ``name`` into ``directory``.

    Raises ``KeyError`` for an unknown mutant.
    """
    source = MUTANTS[name][1] if name in MUTANTS else _get_mutant(name).source
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "sitecustomize.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def mutant_env(name: str, directory: Path) -> dict[str, str]:
    """A copy of ``os.environ`` whose ``PYTHONPATH`` installs mutant ``name``."""
    write_sitecustomize(name, directory)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(directory), env.get("PYTHONPATH")]))
    return env
