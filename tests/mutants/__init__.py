"""Semantic mutants of torch, installed through a generated ``sitecustomize``.

Each mutant is Python source that patches torch at interpreter start-up, so a
conformance run in a subprocess with :func:`mutant_env` sees a broken torch
while the suite itself is untouched.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

#: name -> (description, source patched into torch at start-up)
MUTANTS: dict[str, tuple[str, str]] = {
    "detach-copies-noncontig-f64": (
        "detach() copies, but only for non-contiguous float64 inputs",
        """
        import torch
        _orig = torch.Tensor.detach
        def _detach(self):
            out = _orig(self)
            if self.dtype == torch.float64 and not self.is_contiguous():
                out = out.clone()
            return out
        torch.Tensor.detach = _detach
        torch.detach = _detach
        """,
    ),
    "clone-shares-storage": (
        "clone() returns an alias (detach-like view) instead of a copy",
        """
        import torch
        _view_as = torch.Tensor.view_as
        def _clone(self, *args, **kwargs):
            return _view_as(self, self)
        torch.Tensor.clone = _clone
        torch.clone = _clone
        """,
    ),
}


def write_sitecustomize(name: str, directory: Path) -> Path:
    """Write the ``sitecustomize.py`` for mutant ``name`` into ``directory``.

    Raises ``KeyError`` for an unknown mutant.
    """
    _, source = MUTANTS[name]
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
