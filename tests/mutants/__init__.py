"""Semantic mutants of torch for the suite's own tests (a thin re-export).

The mutants live one module per claim area in :mod:`conformance.mutants`
(documented :class:`~conformance.mutants.Mutant` objects with their
declared claims, region and witness). This module keeps the small interface
the self-tests use: :data:`MUTANTS` maps a name to ``(description,
source)``, :func:`mutant_env` installs a mutant through a generated
``sitecustomize.py`` on ``PYTHONPATH``.
"""

from __future__ import annotations

from conformance.mutants import MUTANTS, mutant_env, write_sitecustomize

__all__ = ["MUTANTS", "write_sitecustomize", "mutant_env"]
