"""Mutants of the ``copy`` area (Tensor.copy_, empty_like(z).copy_(z), clone().detach() and detach().clone()); claims in ``conformance/claims/copy.toml``,
tests in ``conformance/test_copy.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS, is_dense
from conformance.mutants.base import Mutant
from conformance.mutants.patching import accepted, refused, torch, wrap


def _copy_loses_graph(orig, self, src, *args, **kwargs):
    if isinstance(src, torch.Tensor):
        src = src.detach()
    return orig(self, src, *args, **kwargs)


def _witness_copy_loses_graph():
    x = torch.ones(3, requires_grad=True)
    y = torch.empty(3).copy_(x)
    assert y.requires_grad and y.grad_fn is not None


def _copy_refuses_broadcast(orig, self, src, *args, **kwargs):
    if isinstance(src, torch.Tensor) and src.shape != self.shape:
        raise RuntimeError(f"copy_: shape {tuple(src.shape)} != {tuple(self.shape)}")
    return orig(self, src, *args, **kwargs)


def _witness_copy_refuses_broadcast():
    with accepted(RuntimeError, "copy_ refused a broadcastable src"):
        y = torch.zeros(2, 3).copy_(torch.arange(3.0))
    assert torch.equal(y[1], torch.arange(3.0))


def _copy_non_blocking_skips(orig, self, src, non_blocking=False):
    if non_blocking and isinstance(src, torch.Tensor) and src.device == self.device:
        return self
    return orig(self, src, non_blocking)


def _witness_copy_non_blocking_skips():
    y = torch.zeros(3).copy_(torch.ones(3), non_blocking=True)
    assert torch.equal(y, torch.ones(3))


def _copy_into_view_of_leaf_allowed(orig, self, src, *args, **kwargs):
    base = self._base
    if torch.is_grad_enabled() and base is not None and base.is_leaf and base.requires_grad:
        with torch.no_grad():
            return orig(self, src, *args, **kwargs)
    return orig(self, src, *args, **kwargs)


def _witness_copy_into_view_of_leaf_allowed():
    x = torch.zeros(4, requires_grad=True)
    with refused(RuntimeError, "copy_ into a view of a leaf requiring grad did not raise"):
        x[1:].copy_(torch.ones(3))


def _copy_overlap_silent(orig, self, src, *args, **kwargs):
    if any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride(), strict=False)):
        return self
    return orig(self, src, *args, **kwargs)


def _witness_copy_overlap_silent():
    d = torch.zeros(3).expand(2, 3)
    with refused(RuntimeError, "copy_ into an expanded tensor did not raise"):
        d.copy_(torch.ones(2, 3))


def _copy_convert_rebinds_storage(orig, self, src, *args, **kwargs):
    if (
        isinstance(src, torch.Tensor)
        and src.dtype != self.dtype
        and not self.requires_grad
        and not src.requires_grad
        and not self.is_inference()
        and not torch.is_inference_mode_enabled()
    ):
        new = torch.empty_like(self)
        orig(new, src, *args, **kwargs)
        with torch.no_grad():
            self.set_(new.untyped_storage(), new.storage_offset(), new.size(), new.stride())
        return self
    return orig(self, src, *args, **kwargs)


def _witness_copy_convert_rebinds_storage():
    base = torch.zeros(4, 3)
    base[1:].copy_(torch.ones(3, 3, dtype=torch.int64))
    assert base.sum().item() == 9


def _empty_like_aliases_contiguous(orig, input, *args, **kwargs):
    if not args and not kwargs and input.is_contiguous() and not input.requires_grad:
        return input.detach()
    return orig(input, *args, **kwargs)


def _witness_empty_like_aliases_contiguous():
    x = torch.ones(3)
    assert torch.empty_like(x).data_ptr() != x.data_ptr()


def _copy_0d_returns_new_alias(orig, self, src, *args, **kwargs):
    out = orig(self, src, *args, **kwargs)
    if self.dim() == 0:
        return out.view_as(out)
    return out


def _witness_copy_0d_returns_new_alias():
    d = torch.zeros(())
    assert d.copy_(torch.ones(())) is d


def _patch_copy_permuted_src_memory_order():
    _orig = torch.Tensor.copy_

    def _dense_permuted(t):
        if t.numel() < 2 or t.is_contiguous() or any(st <= 0 for st in t.stride()):
            return False
        return is_dense(t)

    def copy_(self, src, *args, **kwargs):
        if isinstance(src, torch.Tensor) and src.shape == self.shape and _dense_permuted(src):
            flat = src.as_strided((src.numel(),), (1,), src.storage_offset())
            return _orig(self, flat.view(self.shape), *args, **kwargs)
        return _orig(self, src, *args, **kwargs)

    torch.Tensor.copy_ = copy_


def _witness_copy_permuted_src_memory_order():
    src = torch.arange(6.0).reshape(2, 3).t()
    dst = torch.zeros(3, 2).copy_(src)
    assert dst.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def _copy_drops_extra_leading_dims(orig, self, src, *args, **kwargs):
    if isinstance(src, torch.Tensor) and src.dim() > self.dim() and src.numel() > 0:
        lead = src.dim() - self.dim()
        src = src.reshape(-1, *src.shape[lead:])[-1]
    return orig(self, src, *args, **kwargs)


def _witness_copy_drops_extra_leading_dims():
    with refused(RuntimeError, "copy_ of a (2, 3) src into a (3,) dst did not raise"):
        torch.zeros(3).copy_(torch.ones(2, 3))


def _patch_copy_integral_skips_version_bump():
    _orig = torch.Tensor.copy_
    _data = torch._C.TensorBase.data

    def copy_(self, src, *args, **kwargs):
        if (
            not (self.is_floating_point() or self.is_complex())
            and not self.requires_grad
            and not (isinstance(src, torch.Tensor) and src.requires_grad)
            and not self.is_inference()
            and not torch.is_inference_mode_enabled()
        ):
            _orig(_data.__get__(self), src, *args, **kwargs)
            return self
        return _orig(self, src, *args, **kwargs)

    torch.Tensor.copy_ = copy_


def _witness_copy_integral_skips_version_bump():
    d = torch.zeros(3, dtype=torch.int64)
    v = d._version
    d.copy_(torch.ones(3, dtype=torch.int64))
    assert d._version > v


def _copy_no_grad_refuses_complex_leaf(orig, self, src, *args, **kwargs):
    if not torch.is_grad_enabled() and self.is_complex() and self.is_leaf and self.requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    return orig(self, src, *args, **kwargs)


def _witness_copy_no_grad_refuses_complex_leaf():
    p = torch.zeros(2, dtype=torch.complex64, requires_grad=True)
    with torch.no_grad():
        with accepted(RuntimeError, "copy_ under no_grad raised"):
            p.copy_(torch.ones(2, dtype=torch.complex64))
    assert p.requires_grad and p.is_leaf


def _copy_floating_partial_overlap_silent(orig, self, src, *args, **kwargs):
    if (
        isinstance(src, torch.Tensor)
        and self.is_floating_point()
        and self.untyped_storage().nbytes() > 0
        and src.untyped_storage().data_ptr() == self.untyped_storage().data_ptr()
    ):
        src = src.clone()
    return orig(self, src, *args, **kwargs)


def _witness_copy_floating_partial_overlap_silent():
    x = torch.arange(4.0)
    with refused(RuntimeError, "copy_ between partly overlapping views did not raise"):
        x[1:].copy_(x[:-1])


def _empty_like_inherits_requires_grad_non_leaf(orig, input, *args, **kwargs):
    if input.requires_grad and not input.is_leaf and "requires_grad" not in kwargs:
        kwargs = {**kwargs, "requires_grad": True}
    return orig(input, *args, **kwargs)


def _witness_empty_like_inherits_requires_grad_non_leaf():
    z = torch.ones(3, requires_grad=True) * 2
    assert not torch.empty_like(z).requires_grad


def _patch_clone_aliases_integral():
    _orig = torch.Tensor.clone
    _detach = torch.Tensor.detach

    def clone(self, *args, **kwargs):
        if not (self.is_floating_point() or self.is_complex()) and not self.requires_grad:
            return _detach(self)
        return _orig(self, *args, **kwargs)

    torch.Tensor.clone = clone
    torch.clone = clone


def _witness_clone_aliases_integral():
    x = torch.arange(3)
    assert x.detach().clone().data_ptr() != x.data_ptr()


def _copy_non_blocking_h2d_skips(orig, self, src, non_blocking=False):
    if non_blocking and self.is_cuda and not src.is_cuda:
        return self
    return orig(self, src, non_blocking)


def _witness_copy_non_blocking_h2d_skips():
    dst = torch.zeros(3, device="cuda")
    dst.copy_(torch.ones(3), non_blocking=True)
    torch.cuda.synchronize()
    assert dst.cpu().tolist() == [1.0, 1.0, 1.0]


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="copy-loses-graph",
        description="copy_() copies the values but not the autograd history of src",
        claims=("copy.differentiable-wrt-src",),
        patch=wrap("torch.Tensor.copy_", _copy_loses_graph),
        witness=_witness_copy_loses_graph,
    ),
    Mutant(
        name="copy-refuses-broadcast",
        description="copy_() raises unless src has exactly dst's shape (no broadcasting)",
        claims=("copy.broadcasts-src",),
        region="src of another shape that broadcasts to dst",
        family="relation",
        patch=wrap("torch.Tensor.copy_", _copy_refuses_broadcast),
        witness=_witness_copy_refuses_broadcast,
    ),
    Mutant(
        name="copy-non-blocking-skips",
        description="copy_(src, non_blocking=True) on the same device returns before copying",
        claims=("copy.non-blocking-no-effect-same-device",),
        region="non_blocking=True on one device",
        family="convention",
        patch=wrap("torch.Tensor.copy_", _copy_non_blocking_skips),
        witness=_witness_copy_non_blocking_skips,
    ),
    Mutant(
        name="copy-into-view-of-leaf-allowed",
        description="copy_() into a view of a leaf that requires grad silently writes instead of raising",
        claims=("copy.leaf-requiring-grad-raises",),
        region="destinations that are views of a leaf requiring grad",
        family="autograd",
        patch=wrap("torch.Tensor.copy_", _copy_into_view_of_leaf_allowed),
        witness=_witness_copy_into_view_of_leaf_allowed,
    ),
    Mutant(
        name="copy-overlap-silent",
        description="copy_() into a self-overlapping (expanded) destination silently does nothing",
        claims=("copy.internal-overlap-raises", "copy.not-broadcastable-raises"),
        region="self-overlapping (expanded) destinations",
        family="layout",
        patch=wrap("torch.Tensor.copy_", _copy_overlap_silent),
        witness=_witness_copy_overlap_silent,
    ),
    Mutant(
        name="copy-convert-rebinds-storage",
        description="copy_() from a src of another dtype converts into fresh memory and rebinds dst to it (dst's base and other views never see the values)",
        claims=("copy.converts-dtype",),
        region="src of another dtype than dst",
        family="relation",
        patch=wrap("torch.Tensor.copy_", _copy_convert_rebinds_storage),
        witness=_witness_copy_convert_rebinds_storage,
    ),
    Mutant(
        name="empty-like-aliases-contiguous",
        description="torch.empty_like(t) of a contiguous tensor not requiring grad returns an alias of t",
        claims=("copy.empty-like-copy-no-sharing",),
        region="contiguous inputs that do not require grad",
        family="layout",
        patch=wrap("torch.empty_like", _empty_like_aliases_contiguous),
        witness=_witness_empty_like_aliases_contiguous,
    ),
    Mutant(
        name="copy-0d-returns-new-alias",
        description="dst.copy_(src) into a 0-d dst copies the value but returns a fresh alias of dst instead of dst itself",
        claims=("copy.returns-self",),
        region="0-d destinations",
        family="layout",
        patch=wrap("torch.Tensor.copy_", _copy_0d_returns_new_alias),
        witness=_witness_copy_0d_returns_new_alias,
    ),
    Mutant(
        name="copy-permuted-src-memory-order",
        description="copy_() from a dense but permuted (non-contiguous) src of dst's shape reads src in memory order instead of logical order",
        claims=("copy.copies-values",),
        region="dense permuted (non-contiguous) src",
        family="layout",
        patch=_patch_copy_permuted_src_memory_order,
        witness=_witness_copy_permuted_src_memory_order,
    ),
    Mutant(
        name="copy-drops-extra-leading-dims",
        description="dst.copy_(src) with src having more dims than dst copies src's last leading slice instead of raising that src does not match the broadcast shape",
        claims=("copy.src-cannot-grow-self",),
        region="non-empty src with extra leading dimensions",
        family="relation",
        patch=wrap("torch.Tensor.copy_", _copy_drops_extra_leading_dims),
        witness=_witness_copy_drops_extra_leading_dims,
    ),
    Mutant(
        name="copy-integral-skips-version-bump",
        description="copy_() into an integral or bool dst not involved in autograd writes through an untracked alias (.data), so dst's version counter is not bumped",
        claims=("copy.bumps-version",),
        region="integral and bool destinations outside autograd",
        family="dtype",
        patch=_patch_copy_integral_skips_version_bump,
        witness=_witness_copy_integral_skips_version_bump,
    ),
    Mutant(
        name="copy-no-grad-refuses-complex-leaf",
        description="under torch.no_grad(), copy_() into a complex leaf that requires grad still raises the in-place-on-a-leaf error",
        claims=("copy.allowed-under-no-grad",),
        region="complex leaf destinations under no_grad",
        family="dtype",
        patch=wrap("torch.Tensor.copy_", _copy_no_grad_refuses_complex_leaf),
        witness=_witness_copy_no_grad_refuses_complex_leaf,
    ),
    Mutant(
        name="copy-floating-partial-overlap-silent",
        description="copy_() between partly overlapping floating views of one storage goes ahead through a temporary copy of src instead of raising",
        claims=("copy.partial-overlap-raises",),
        region="floating dtypes",
        family="dtype",
        patch=wrap("torch.Tensor.copy_", _copy_floating_partial_overlap_silent),
        witness=_witness_copy_floating_partial_overlap_silent,
    ),
    Mutant(
        name="empty-like-inherits-requires-grad-non-leaf",
        description="torch.empty_like(z) of a non-leaf z requiring grad returns a leaf that requires grad, so empty_like(z).copy_(z) raises the in-place-on-a-leaf error",
        claims=("copy.empty-like-copy-in-graph",),
        region="non-leaf inputs that require grad",
        family="autograd",
        patch=wrap("torch.empty_like", _empty_like_inherits_requires_grad_non_leaf),
        witness=_witness_empty_like_inherits_requires_grad_non_leaf,
    ),
    Mutant(
        name="clone-aliases-integral",
        description="clone() of an integral or bool tensor that does not require grad returns an alias ('integers need no copy'), so detach().clone() and clone().detach() share t's storage and version counter",
        claims=("copy.clone-detach-is-independent-leaf", "clone.new-storage"),
        region="integral and bool inputs",
        family="dtype",
        patch=_patch_clone_aliases_integral,
        witness=_witness_clone_aliases_integral,
    ),
    Mutant(
        name="copy-non-blocking-h2d-skips",
        description="copy_(src, non_blocking=True) from host memory into a CUDA tensor returns "
        "without copying (as if the asynchronous copy were never enqueued)",
        claims=("copy.across-devices",),
        region="host-to-CUDA copies with non_blocking=True",
        family="convention",
        devices=("cuda",),
        patch=wrap("torch.Tensor.copy_", _copy_non_blocking_h2d_skips),
        witness=_witness_copy_non_blocking_h2d_skips,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402


def _copy_returns_new(hit, orig, self, src, *args, **kwargs):
    out = orig(self, src, *args, **kwargs)
    return out.clone() if hit(self) or hit(src) else out


def _copy_returns_new_check(t):
    src = t.clone()
    dst = torch.empty_like(src)
    assert dst.copy_(t) is dst and dst.copy_(src) is dst


# Issue 29: a copy_ that returns a new tensor (holding the copied values)
# instead of dst when dst or src is at exactly one value of the domain
# copy.returns-self declares (the layouts of either, each dtype family).
MUTANTS += domain_mutants(
    "copy-returns-new",
    claims={d: ("copy.returns-self",) for d in ("layout", "dtype_family")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
    },
    broken="dst.copy_(src) returns a new tensor with the copied values instead of dst",
    patch=wrap("torch.Tensor.copy_", _copy_returns_new),
    check=_copy_returns_new_check,
)  # fmt: skip


def _copy_into_leaf_unguarded(hit):
    """copy_ into a leaf requiring grad, or a view of one, skips the leaf
    check (the write goes through) where ``hit(leaf)``."""

    _orig = torch.Tensor.copy_

    def _leaf_of(t):
        root = t if t._base is None else t._base
        return root if root.is_leaf and root.requires_grad else None

    def copy_(self, src, *args, **kwargs):
        leaf = _leaf_of(self)
        if leaf is not None and torch.is_grad_enabled() and hit(leaf):
            with torch.no_grad():  # the leaf check is skipped: the write goes through
                return _orig(self, src, *args, **kwargs)
        return _orig(self, src, *args, **kwargs)

    torch.Tensor.copy_ = copy_


def _is_parameter(t):
    return isinstance(t, torch.nn.Parameter)


def _is_not_parameter(t):
    return not _is_parameter(t)


def _copy_into_leaf_refused(make):
    for t in (make(), make()[1:]):
        try:
            t.copy_(torch.ones_like(t))
        except RuntimeError:
            pass
        else:
            raise AssertionError(
                "copy_ into a leaf requiring grad (or a view of one) did not raise"
            )


# Issue 29: copy.leaf-requiring-grad-raises speaks of every leaf that requires
# grad: a plain tensor or an nn.Parameter; each mutant skips the leaf check
# for one of them.
MUTANTS += (
    Mutant(
        name="copy-into-leaf-allowed-only-tensor",
        description="in grad mode, copy_ into a plain leaf requiring grad (or a view of one) goes through instead of raising; Parameters still raise",
        claims=("copy.leaf-requiring-grad-raises",),
        domain={"leaf_kind": "tensor"},
        region="plain (non-Parameter) leaves that require grad, and their views",
        family="autograd",
        patch=functools.partial(_copy_into_leaf_unguarded, _is_not_parameter),
        witness=functools.partial(
            _copy_into_leaf_refused, lambda: torch.zeros(3, requires_grad=True)
        ),
    ),
    Mutant(
        name="copy-into-leaf-allowed-only-parameter",
        description="in grad mode, copy_ into an nn.Parameter (or a view of one) goes through instead of raising; plain leaves still raise",
        claims=("copy.leaf-requiring-grad-raises",),
        domain={"leaf_kind": "parameter"},
        region="nn.Parameter leaves and their views",
        family="subclass",
        patch=functools.partial(_copy_into_leaf_unguarded, _is_parameter),
        witness=functools.partial(
            _copy_into_leaf_refused, lambda: torch.nn.Parameter(torch.zeros(3))
        ),
    ),
)

from conformance.mutants._tensor_domain import domain_mutants as _kind_mutants  # noqa: E402


def _copy_graph_state_wrong(hit, orig_copy_, self, src, *args, **kwargs):
    if isinstance(src, torch.Tensor) and not self.requires_grad and hit(src):
        if src.requires_grad:
            with torch.no_grad():
                return orig_copy_(self, src, *args, **kwargs)
        out = orig_copy_(self, src, *args, **kwargs)
        if self.is_floating_point() or self.is_complex():
            self.requires_grad_()
        return out
    return orig_copy_(self, src, *args, **kwargs)


def _copy_graph_state_wrong_witness(make):
    z = make()
    c = torch.empty_like(z).copy_(z)
    assert c.requires_grad == z.requires_grad, "empty_like(z).copy_(z) has the wrong requires_grad"


# Issue 29: copy.empty-like-copy-in-graph speaks of a z that requires grad
# (a leaf or a result) or not; each mutant gives the copy the wrong autograd
# state for one kind of z only (no history from a z that requires grad, or
# requires_grad from a z that does not).
MUTANTS += _kind_mutants(
    prefix="copy-graph-state-wrong",
    claims=("copy.empty-like-copy-in-graph",),
    what="dst.copy_(src) into a tensor that does not require grad gets the wrong requires_grad",
    patch=wrap("torch.Tensor.copy_", _copy_graph_state_wrong),
    witness=_copy_graph_state_wrong_witness,
    dims={"tensor_kind": ("plain", "leaf", "non_leaf")},
)
