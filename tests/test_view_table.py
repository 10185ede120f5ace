"""Meta-tests of the view-op table of ``conformance/test_views.py``.

The Tensor Views page (https://docs.pytorch.org/docs/stable/tensor_view.html)
lists the view ops; ``views.tensor-views-ops-return-views`` and
``views.tensor-views-writes-visible`` are only as strong as the table that
applies them. These tests check the table against the page's list and
against torch itself: every listed op is applied by the table or excluded
with a reason, every table entry really calls the torch op it is named
after, and every entry is reachable from its family's input strategy.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch.overrides import TorchFunctionMode, resolve_name

from conformance import test_views as tv

#: The page's list as published (read 2026-11): the ops after "For
#: reference, here's a full list of view ops in PyTorch:", "Basic slicing
#: and indexing" written as ``slicing``.
PAGE_LIST = (
    "slicing adjoint as_strided detach diagonal expand expand_as movedim narrow permute "
    "select squeeze transpose t T H mT mH real imag view_as_real unflatten unfold "
    "unsqueeze view view_as unbind split hsplit vsplit tensor_split split_with_sizes "
    "swapaxes swapdims chunk indices values"
).split()

#: Page entries the table does not apply, and where they are covered instead.
EXCLUDED = {
    "detach": "tested on its own (views.detach-listed-as-view, views.detach-untracked-alias)",
    "indices": "sparse COO only; the suite covers strided tensors",
    "values": "sparse COO only; the suite covers strided tensors",
}


class _Recorder(TorchFunctionMode):
    """Records the public torch names of every function, method and property
    getter called in its body (``torch.Tensor.T.__get__``, ...).

    A torch function mode observes the calls without patching ``torch.Tensor``:
    assigning a Python ``__getitem__`` to the class, even briefly, changes its
    C-level slots for the rest of the process (``torch.tensor([0-d tensor])``
    then calls ``len()`` on the element and raises)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = resolve_name(func) or getattr(func, "__name__", repr(func))
        self.calls.append(name.removesuffix(".__get__").rsplit(".", 1)[-1])
        return func(*args, **(kwargs or {}))


def _entry_point(name: str) -> str:
    """The last component of the torch name a table entry must call."""
    return "__getitem__" if name == "slicing" else name


@st.composite
def _accepted_input(draw, name: str) -> torch.Tensor:
    family = next(f for f, ops in tv.VIEW_OP_FAMILIES.items() if name in ops)
    spec = draw(tv.family_specs(family))
    t = spec.build("cpu")
    from hypothesis import assume

    assume(tv.accepts(name, t))
    return t


@pytest.mark.parametrize("name", tv.DOCUMENTED_VIEW_OPS)
def test_each_table_entry_calls_the_op_it_is_named_after(name):
    """A table entry that silently applied another op (or none) would leave
    the named op unchecked while its claim reads "held"."""

    @settings(
        max_examples=5, deadline=None, database=None,
        suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
    )  # fmt: skip
    @given(data=st.data())
    def check(data):
        t = data.draw(_accepted_input(name))
        op = data.draw(tv.view_op_args(name, t))
        with _Recorder() as recorder:
            op.apply(t)
        assert _entry_point(name) in recorder.calls, (
            f"ViewOp({name!r}).apply did not call torch's {name}: it called {recorder.calls}"
        )

    check()
