"""Mutants of the ``version`` area (The autograd version counter (Tensor._version)); claims in ``conformance/claims/version.toml``,
tests in ``conformance/test_version.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants.base import Mutant

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="increment-version-noop",
        description="torch.autograd.graph.increment_version does not bump the version counter",
        claims=("version.increment-version",),
        source="""
        import torch
        import torch.autograd.graph
        def increment_version(tensor):
            return None
        torch.autograd.graph.increment_version = increment_version
        """,
        witness="""
        import torch
        x = torch.ones(3)
        torch.autograd.graph.increment_version(x)
        assert x._version == 1
        """,
    ),
)
