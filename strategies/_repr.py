"""Source text for the records' reprs, shared by :mod:`strategies.graphs` and
:mod:`strategies.programs` (whose ``repr`` of a record is runnable Python).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from strategies.dtypes import dtype_name

__all__ = ["params_repr", "tuple_repr"]


def params_repr(params: tuple) -> str:
    """``params`` as Python source: nested tuples (one-element ones with their
    trailing comma), dtypes as ``torch.<name>``, anything else by ``repr``.

    >>> params_repr((torch.float64, (0, 1)))
    '(torch.float64, (0, 1))'
    """

    def one(p):
        if isinstance(p, torch.dtype):
            return f"torch.{dtype_name(p)}"
        if isinstance(p, tuple):
            inner = ", ".join(one(q) for q in p)
            return f"({inner},)" if len(p) == 1 else f"({inner})"
        return repr(p)

    return one(tuple(params))


def tuple_repr(items: Sequence) -> str:
    """A tuple display of the items' reprs: ``(a,)`` for one item, ``(a, b)``."""
    inner = ", ".join(repr(x) for x in items)
    return f"({inner},)" if len(items) == 1 else f"({inner})"
