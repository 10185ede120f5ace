"""Mutants of the ``indexing`` area (Indexing (basic views, advanced copies, assignment) and torch.stack of indexed elements); claims in ``conformance/claims/indexing.toml``,
tests in ``conformance/test_indexing.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS
from conformance.mutants.base import Mutant
from conformance.mutants.patching import function_mode, refused, torch, wrap


def _getitem_step_copies(func, args, kwargs):
    out = func(*args, **kwargs)
    if getattr(func, "__name__", "") == "__getitem__":
        index = args[1]
        items = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, slice) and i.step not in (None, 1) for i in items):
            out = out.clone()
    return out


def _witness_getitem_step_copies():
    x = torch.zeros(6)
    v = x[::2]
    x[2] = 1
    assert v[1].item() == 1


def _setitem_advanced_noop(orig, self, index, value):
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, (list, torch.Tensor)) for i in items):
        return None
    return orig(self, index, value)


def _witness_setitem_advanced_noop():
    x = torch.zeros(4)
    x[[0, 2]] = 1.0
    assert x.tolist() == [1.0, 0.0, 1.0, 0.0]


def _stack_loses_graph(orig, tensors, *args, **kwargs):
    return orig([t.detach() for t in tensors], *args, **kwargs)


def _witness_stack_loses_graph():
    x = torch.ones(3, requires_grad=True)
    assert torch.stack([x, x]).grad_fn is not None


def _stack_single_aliases(orig, tensors, dim=0, **kwargs):
    tensors = list(tensors)
    if len(tensors) == 1 and not kwargs:
        return tensors[0].unsqueeze(dim)
    return orig(tensors, dim, **kwargs)


def _witness_stack_single_aliases():
    x = torch.ones(3)
    assert torch.stack([x]).data_ptr() != x.data_ptr()


def _getitem_int_copies_strided(func, args, kwargs):
    out = func(*args, **kwargs)
    if (
        getattr(func, "__name__", "") == "__getitem__"
        and len(args) == 2
        and type(args[1]) is int
        and not args[0].is_contiguous()
    ):
        out = out.clone()
    return out


def _witness_getitem_int_copies_strided():
    a = torch.zeros(3, 2).t()
    row = a[0]
    a[0] = 1.0
    assert row.tolist() == [1.0, 1.0, 1.0]


def _setitem_reads_strided_value_linearly(orig, self, index, value):
    if (
        isinstance(value, torch.Tensor)
        and value.dim() > 0
        and value.numel() > 1
        and not value.is_contiguous()
    ):
        strides = [1] * value.dim()
        for d in range(value.dim() - 2, -1, -1):
            strides[d] = strides[d + 1] * value.shape[d + 1]
        room = value.untyped_storage().nbytes() // value.element_size()
        if value.storage_offset() + value.numel() <= room:
            value = value.as_strided(value.shape, strides, value.storage_offset())
    return orig(self, index, value)


def _witness_setitem_reads_strided_value_linearly():
    a = torch.arange(6.0).reshape(2, 3).t()  # rows [0, 3], [1, 4], [2, 5]
    b = torch.zeros(3, 2)
    b[0] = a[0]
    b[1] = a[1]
    assert b[1].tolist() == [1.0, 4.0], b


def _tensor_of_grad_scalars_stacks(
    orig, data, *args, dtype=None, device=None, requires_grad=False, **kwargs
):
    if (
        isinstance(data, (list, tuple))
        and data
        and not args
        and not kwargs
        and all(isinstance(x, torch.Tensor) and x.dim() == 0 for x in data)
        and any(x.requires_grad for x in data)
        and torch.is_grad_enabled()
    ):
        out = torch.stack(list(data))
        return out.to(dtype=dtype or out.dtype, device=device or out.device)
    return orig(data, *args, dtype=dtype, device=device, requires_grad=requires_grad, **kwargs)


def _witness_tensor_of_grad_scalars_stacks():
    import warnings

    a = torch.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = torch.tensor([a[0], a[1]])
    assert not c.requires_grad and c.grad_fn is None


def _getitem_progression_list_slices(func, args, kwargs):
    if getattr(func, "__name__", "") == "__getitem__" and len(args) == 2:
        t, index = args
        items = index if isinstance(index, tuple) else (index,)
        *pre, last = items
        if (
            isinstance(last, list)
            and last
            and all(type(i) is int for i in last)
            and all(p == slice(None) for p in pre)
            and len(pre) < t.dim()
        ):
            n = t.shape[len(pre)]
            pos = [i + n if i < 0 else i for i in last]
            step = pos[1] - pos[0] if len(pos) > 1 else 1
            if step > 0 and all(b - a == step for a, b in zip(pos, pos[1:], strict=False)):
                return func(t, (*pre, slice(pos[0], pos[-1] + 1, step)))
    return func(*args, **kwargs)


def _witness_getitem_progression_list_slices():
    a = torch.arange(6.0)
    assert not a[[1, 3]]._is_view()
    assert not a[[2]]._is_view()


def _getitem_negative_zero_dim_index_select(func, args, kwargs):
    if getattr(func, "__name__", "") == "__getitem__" and len(args) == 2:
        t, index = args
        if (
            isinstance(index, torch.Tensor)
            and index.dim() == 0
            and not index.is_floating_point()
            and not index.is_complex()
            and index.dtype != torch.bool
            and index.item() < 0
        ):
            return torch.index_select(t, 0, index.reshape(1)).squeeze(0)
    return func(*args, **kwargs)


def _witness_getitem_negative_zero_dim_index_select():
    a = torch.arange(6.0).reshape(3, 2)
    try:
        r = a[torch.tensor(-1)]
    except IndexError as e:
        raise AssertionError(f"a[torch.tensor(-1)] raised {e}") from None
    assert r.tolist() == [4.0, 5.0]


def _getitem_zero_dim_index_copies_1d(func, args, kwargs):
    out = func(*args, **kwargs)
    if (
        getattr(func, "__name__", "") == "__getitem__"
        and len(args) == 2
        and isinstance(args[1], torch.Tensor)
        and args[1].dim() == 0
        and args[0].dim() == 1
    ):
        out = out.clone()
    return out


def _witness_getitem_zero_dim_index_copies_1d():
    a = torch.arange(4.0)
    assert a[torch.tensor(1)]._is_view()


def _stack_broadcasts_sizes(orig, tensors, dim=0, **kwargs):
    tensors = list(tensors)
    sizes = {tuple(t.shape) for t in tensors}
    if len(sizes) > 1:
        try:
            common = torch.broadcast_shapes(*sizes)
        except RuntimeError:
            common = None
        if common is not None:
            tensors = [t.expand(common) for t in tensors]
    return orig(tensors, dim, **kwargs)


def _witness_stack_broadcasts_sizes():
    with refused(RuntimeError, "stack of different sizes did not raise", match="equal size"):
        torch.stack([torch.zeros(3), torch.zeros(1)])


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="getitem-step-copies",
        description="basic indexing with a stepped slice (x[::2]) returns a copy instead of a view",
        claims=("indexing.basic-indexing-is-view",),
        region="slices with a step > 1",
        family="layout",
        patch=function_mode(_getitem_step_copies),
        witness=_witness_getitem_step_copies,
    ),
    Mutant(
        name="setitem-advanced-noop",
        description="assignment through advanced indexing (x[[0, 2]] = v) writes into a temporary copy",
        claims=("indexing.assignment-is-in-place",),
        region="advanced (integer-list or mask) index assignment",
        family="convention",
        patch=wrap("torch.Tensor.__setitem__", _setitem_advanced_noop),
        witness=_witness_setitem_advanced_noop,
    ),
    Mutant(
        name="stack-loses-graph",
        description="torch.stack returns the right values but cuts the graph to its inputs",
        claims=(
            "indexing.stack-of-element-list-keeps-graph",
            "indexing.element-list-sees-optimizer-step",
        ),
        patch=wrap("torch.stack", _stack_loses_graph),
        witness=_witness_stack_loses_graph,
    ),
    Mutant(
        name="stack-single-aliases",
        description="torch.stack([t]) of a single tensor returns t.unsqueeze(dim), a view sharing t's memory",
        claims=("indexing.stack-new-memory",),
        region="a list of one tensor",
        family="relation",
        patch=wrap("torch.stack", _stack_single_aliases),
        witness=_witness_stack_single_aliases,
    ),
    Mutant(
        name="getitem-int-copies-strided",
        description="a[i] with a single integer index returns a copy of row i when a is not contiguous (a gather fast path) instead of a view",
        claims=("indexing.element-list-sees-writes",),
        region="integer indices into non-contiguous tensors",
        family="layout",
        patch=function_mode(_getitem_int_copies_strided),
        witness=_witness_getitem_int_copies_strided,
    ),
    Mutant(
        name="setitem-reads-strided-value-linearly",
        description="b[k] = v with a non-contiguous tensor v copies v's memory in storage order (as if v were contiguous) instead of v's elements",
        claims=("indexing.element-assignment-copies",),
        region="non-contiguous tensor values",
        family="layout",
        patch=wrap("torch.Tensor.__setitem__", _setitem_reads_strided_value_linearly),
        witness=_witness_setitem_reads_strided_value_linearly,
    ),
    Mutant(
        name="tensor-of-grad-scalars-stacks",
        description="torch.tensor(list of 0-d tensors that require grad) stacks them (keeping their graph) instead of copying their values into a new leaf",
        claims=("indexing.tensor-of-element-list-cuts-graph",),
        region="lists of 0-d tensors that require grad",
        family="autograd",
        patch=wrap("torch.tensor", _tensor_of_grad_scalars_stacks),
        witness=_witness_tensor_of_grad_scalars_stacks,
    ),
    Mutant(
        name="getitem-progression-list-slices",
        description="an integer-list index forming an ascending arithmetic progression (a[[i]], a[[0, 2, 4]]) is turned into a slice: a view instead of a copy",
        claims=("indexing.advanced-indexing-is-copy",),
        region="integer-list indices that are ascending arithmetic progressions",
        family="relation",
        patch=function_mode(_getitem_progression_list_slices),
        witness=_witness_getitem_progression_list_slices,
    ),
    Mutant(
        name="getitem-negative-zero-dim-index-select",
        description="a[t] with a negative 0-d integer tensor t goes through index_select (the advanced path), which rejects negative indices: IndexError",
        claims=(
            "indexing.zero-dim-index-tensor-follows-numpy",
            "indexing.zero-dim-int-tensor-index-is-view",
        ),
        region="negative 0-d integer tensor indices",
        family="value",
        patch=function_mode(_getitem_negative_zero_dim_index_select),
        witness=_witness_getitem_negative_zero_dim_index_select,
    ),
    Mutant(
        name="getitem-zero-dim-index-copies-1d",
        description="a[t] with a 0-d integer tensor t on a 1-d tensor returns a copy of the element (NumPy-like) instead of a select view",
        claims=("indexing.zero-dim-int-tensor-index-is-view",),
        region="1-d tensors indexed by a 0-d integer tensor",
        family="layout",
        patch=function_mode(_getitem_zero_dim_index_copies_1d),
        witness=_witness_getitem_zero_dim_index_copies_1d,
    ),
    Mutant(
        name="stack-broadcasts-sizes",
        description="torch.stack of tensors of different but broadcastable sizes broadcasts them instead of raising",
        claims=("indexing.stack-size-mismatch-raises",),
        region="inputs whose sizes broadcast to a common shape",
        family="relation",
        patch=wrap("torch.stack", _stack_broadcasts_sizes),
        witness=_witness_stack_broadcasts_sizes,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402


def _getitem_copies(hit, orig, self, index):
    out = orig(self, index)
    return out.clone() if hit(self) and out._is_view() else out


def _basic_indexing_copies_check(t):
    assert t[...]._is_view() and t[None]._is_view()


# Issue 29: basic indexing that returns a copy at exactly one value of the
# domain indexing.basic-indexing-is-view declares (each layout family and
# dtype family).
MUTANTS += domain_mutants(
    "basic-indexing-copies",
    claims={d: ("indexing.basic-indexing-is-view",) for d in ("layout", "dtype_family")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
    },
    broken="basic indexing a[...] returns a copy instead of a view",
    patch=wrap("torch.Tensor.__getitem__", _getitem_copies),
    check=_basic_indexing_copies_check,
)  # fmt: skip
