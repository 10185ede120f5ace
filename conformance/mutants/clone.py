"""Mutants of the ``clone`` area (torch.clone and Tensor.clone); claims in ``conformance/claims/clone.toml``,
tests in ``conformance/test_clone.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from conformance.mutants._tensor_domain import (
    DTYPE_FAMILIES,
    LAYOUTS,
    TENSOR_KINDS,
    InDomain,
    Maker,
    bind_domain,
    is_dense,
)
from conformance.mutants.base import Mutant
from conformance.mutants.patching import accepted, refused, torch, wrap

#: A witness's input at each domain value: ``make()`` builds a small
#: tensor at that value (and at the default of every other dimension).
DOMAIN_WITNESS_INPUT: dict[tuple[str, str], Maker] = {
    ("layout", "contiguous"): lambda: torch.arange(6.0).reshape(2, 3),
    ("layout", "offset"): lambda: torch.arange(12.0).reshape(4, 3)[1:],
    ("layout", "stepped"): lambda: torch.arange(12.0).reshape(2, 6)[:, ::2],
    ("layout", "permuted"): lambda: torch.arange(6.0).reshape(3, 2).t(),
    ("layout", "expanded"): lambda: torch.arange(3.0).reshape(1, 3).expand(2, 3),
    ("layout", "channels_last"): lambda: (
        torch.arange(24.0).reshape(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
    ),
    ("layout", "zero-size"): lambda: torch.zeros(0, 3),
    ("layout", "0-d"): lambda: torch.tensor(1.5),
    ("dtype_family", "bool"): lambda: torch.tensor([True, False, True]),
    ("dtype_family", "signed"): lambda: torch.arange(-1, 2),
    ("dtype_family", "unsigned"): lambda: torch.arange(3, dtype=torch.uint8),
    ("dtype_family", "reduced_float"): lambda: torch.arange(3, dtype=torch.float16),
    ("dtype_family", "float"): lambda: torch.arange(3.0),
    ("dtype_family", "complex"): lambda: torch.tensor([1 + 2j, 3 - 1j]),
    ("tensor_kind", "plain"): lambda: torch.arange(3.0),
    ("tensor_kind", "leaf"): lambda: torch.arange(3.0).requires_grad_(),
    ("tensor_kind", "non_leaf"): lambda: torch.arange(3.0).requires_grad_() * 2,
    ("tensor_kind", "parameter"): lambda: torch.nn.Parameter(torch.arange(3.0)),
    ("tensor_kind", "subclass"): lambda: torch.arange(3.0).as_subclass(
        type("Sub", (torch.Tensor,), {})
    ),
    ("tensor_kind", "inference"): lambda: torch.inference_mode()(torch.arange)(3.0),
    ("math_bit", "none"): lambda: torch.tensor([1 + 2j, 3 - 1j]),
    ("math_bit", "conj"): lambda: torch.tensor([1 + 2j, 3 - 1j]).conj(),
    ("math_bit", "neg"): lambda: torch.tensor([1 + 2j, 3 - 1j]).conj().imag,
}

#: Each domain value in words (a mutant's ``region``) and its mutant family.
DOMAIN_REGION: dict[tuple[str, str], tuple[str, str]] = {
    ("layout", "contiguous"): (
        "row-major contiguous inputs at storage offset 0 (the fast path)",
        "layout",
    ),
    ("layout", "offset"): ("inputs at a storage offset > 0", "layout"),
    ("layout", "stepped"): ("non-dense (stepped, gapped) inputs", "layout"),
    ("layout", "permuted"): (
        "inputs whose strides are not in decreasing order (permuted)",
        "layout",
    ),
    ("layout", "expanded"): ("expanded (stride-0) inputs", "layout"),
    ("layout", "channels_last"): ("channels_last-contiguous 4-D inputs", "layout"),
    ("layout", "zero-size"): ("zero-size inputs", "layout"),
    ("layout", "0-d"): ("0-d inputs", "layout"),
    ("dtype_family", "bool"): ("bool inputs", "dtype"),
    ("dtype_family", "signed"): ("signed integer inputs", "dtype"),
    ("dtype_family", "unsigned"): ("unsigned integer inputs", "dtype"),
    ("dtype_family", "reduced_float"): ("float16/bfloat16 inputs", "dtype"),
    ("dtype_family", "float"): ("float32/float64 inputs", "dtype"),
    ("dtype_family", "complex"): ("complex inputs", "dtype"),
    ("tensor_kind", "plain"): (
        "plain tensors (not requiring grad, no subclass, not inference)",
        "autograd",
    ),
    ("tensor_kind", "leaf"): ("leaves that require grad", "autograd"),
    ("tensor_kind", "non_leaf"): ("non-leaf tensors (with a grad_fn)", "autograd"),
    ("tensor_kind", "parameter"): ("nn.Parameter inputs", "subclass"),
    ("tensor_kind", "subclass"): (
        "instances of a __torch_function__ subclass of Tensor",
        "subclass",
    ),
    ("tensor_kind", "inference"): ("inference tensors", "mode"),
    ("math_bit", "none"): ("tensors without a lazy math bit", "layout"),
    ("math_bit", "conj"): ("conjugate views (t.conj() of a complex t)", "layout"),
    ("math_bit", "neg"): ("negative-bit views (t.conj().imag)", "layout"),
}


def _check_at(make: Maker, check: Callable[[object], object]) -> None:
    """The witness of a domain mutant: ``check`` on the input ``make`` builds."""
    check(make())


def domain_mutants(
    area_op: str,
    *,
    claims: dict[str, tuple[str, ...]],
    values: dict[str, tuple[str, ...]],
    broken: str,
    patch: Callable[[InDomain], object],
    check: Callable[[object], object],
) -> tuple[Mutant, ...]:
    """One mutant per domain value (issue 29), wrong only at that value.

    ``values``: ``{dimension: (value, ...)}``; ``claims``: the claims each
    dimension's mutants break (each declares those values); ``area_op``
    names them (``<area_op>-<broken>-only-<value>``, e.g.
    ``clone-aliases-only-offset``); ``broken``: what is wrong, in words
    after the op (``"returns its input (an alias)"``); ``patch(hit)``:
    patches the broken op, calling ``hit(t)`` (an
    :class:`~conformance.mutants._tensor_domain.InDomain`) to test whether
    ``t`` is at the mutant's value; ``check(t)``: the witness's assertion of
    the real behaviour on the tensor ``t`` of :data:`DOMAIN_WITNESS_INPUT`.
    """
    out = []
    for dim, vals in values.items():
        for v in vals:
            region, family = DOMAIN_REGION[(dim, v)]
            slug = v.replace("_", "-").replace("0-d", "zero-dim")
            out.append(Mutant(
                name=f"{area_op}-only-{slug}",
                description=f"{broken}, only for {region}",
                claims=claims[dim],
                domain={dim: v},
                region=region,
                family=family,
                patch=bind_domain(patch, InDomain(dim, v)),
                witness=functools.partial(_check_at, DOMAIN_WITNESS_INPUT[(dim, v)], check),
            ))  # fmt: skip
    return tuple(out)


def _clone_shares_storage(view_as, self, *args, **kwargs):
    return view_as(self, self)


def _witness_clone_shares_storage():
    x = torch.arange(4.0)
    assert x.clone().data_ptr() != x.data_ptr()


def _clone_shares_expanded(orig, self, *args, **kwargs):
    if any(st == 0 and sz > 1 for sz, st in zip(self.shape, self.stride(), strict=False)):
        return self.view_as(self)
    return orig(self, *args, **kwargs)


def _witness_clone_shares_expanded():
    x = torch.arange(3.0).expand(2, 3)
    assert x.clone().untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def _clone_shares_0d(orig, self, *args, **kwargs):
    if self.dim() == 0:
        return self.view_as(self)
    return orig(self, *args, **kwargs)


def _witness_clone_shares_0d():
    x = torch.tensor(2.0)
    assert x.clone().data_ptr() != x.data_ptr()


def _clone_shares_bool(orig, self, *args, **kwargs):
    if self.dtype == torch.bool:
        return self.view_as(self)
    return orig(self, *args, **kwargs)


def _witness_clone_shares_bool():
    x = torch.tensor([True, False, True])
    assert x.clone().data_ptr() != x.data_ptr()


def _patch_clone_ignores_preserve_format():
    _orig = torch.Tensor.clone

    def clone(self, *, memory_format=torch.preserve_format):
        if memory_format == torch.preserve_format:
            memory_format = torch.contiguous_format
        return _orig(self, memory_format=memory_format)

    torch.Tensor.clone = clone
    torch.clone = clone


def _witness_clone_ignores_preserve_format():
    x = torch.zeros(2, 3).t()
    assert x.clone().stride() == x.stride()


def _patch_clone_channels_last_loses_format():
    _orig = torch.Tensor.clone

    def clone(self, *, memory_format=torch.preserve_format):
        if (
            memory_format == torch.preserve_format
            and self.dim() == 4
            and not self.is_contiguous()
            and self.is_contiguous(memory_format=torch.channels_last)
        ):
            memory_format = torch.contiguous_format
        return _orig(self, memory_format=memory_format)

    torch.Tensor.clone = clone
    torch.clone = clone


def _witness_clone_channels_last_loses_format():
    x = torch.zeros(2, 3, 2, 2).contiguous(memory_format=torch.channels_last)
    assert x.clone().stride() == x.stride()


def _patch_clone_function_ignores_memory_format():
    _orig = torch.clone

    def clone(input, *, memory_format=torch.preserve_format):
        return _orig(input)

    torch.clone = clone


def _witness_clone_function_ignores_memory_format():
    x = torch.zeros(2, 3).t()
    assert torch.clone(x, memory_format=torch.contiguous_format).is_contiguous()


def _patch_clone_method_ignores_memory_format():
    _orig = torch.Tensor.clone

    def clone(self, *, memory_format=torch.preserve_format):
        return _orig(self)

    torch.Tensor.clone = clone


def _witness_clone_method_ignores_memory_format():
    x = torch.zeros(2, 3).t()
    assert x.clone(memory_format=torch.contiguous_format).is_contiguous()


def _clone_explicit_preserve_format_row_major(orig, self, *args, **kwargs):
    if kwargs.get("memory_format") is torch.preserve_format:
        kwargs["memory_format"] = torch.contiguous_format
    return orig(self, *args, **kwargs)


def _witness_clone_explicit_preserve_format_row_major():
    x = torch.zeros(2, 3).t()
    assert x.clone(memory_format=torch.preserve_format).stride() == x.stride()
    assert x.clone().stride() == x.stride()


def _patch_clone_detaches_nonleaf_views():
    _orig = torch.Tensor.clone
    _detach = torch.Tensor.detach

    def clone(self, *args, **kwargs):
        if self.requires_grad and self._is_view() and not self.is_leaf:
            return _orig(_detach(self), *args, **kwargs)
        return _orig(self, *args, **kwargs)

    torch.Tensor.clone = clone
    torch.clone = clone


def _witness_clone_detaches_nonleaf_views():
    x = torch.ones(4, requires_grad=True)
    assert x[1:].clone().requires_grad


def _patch_clone_shares_version_counter():
    _orig = torch.Tensor.clone
    _detach = torch.Tensor.detach

    def clone(self, *args, **kwargs):
        out = _orig(self, *args, **kwargs)
        if self.requires_grad or self.is_inference() or torch.is_inference_mode_enabled():
            return out
        alias = _detach(self)
        with torch.no_grad():
            alias.set_(out.untyped_storage(), out.storage_offset(), out.size(), out.stride())
        return alias

    torch.Tensor.clone = clone
    torch.clone = clone


def _witness_clone_shares_version_counter():
    x = torch.ones(3)
    c = x.clone()
    c.add_(1)
    assert x._version == 0


def _clone_flushes_negative_zero(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if self.dtype.is_floating_point and out.numel():
        d = out.data  # an untracked alias: no version bump, no autograd record
        d.masked_fill_((d == 0) & torch.signbit(d), 0.0)
    return out


def _witness_clone_flushes_negative_zero():
    x = torch.tensor([1.0, -0.0])
    assert torch.signbit(x.clone())[1].item()
    assert torch.signbit(torch.clone(x))[1].item()


def _patch_clone_backward_conjugates_complex():
    _orig = torch.Tensor.clone

    class _ConjClone(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, memory_format):
            return _orig(x, memory_format=memory_format)

        @staticmethod
        def backward(ctx, grad):
            return grad.conj(), None

    def clone(self, *, memory_format=torch.preserve_format):
        if self.is_complex() and self.requires_grad and torch.is_grad_enabled():
            return _ConjClone.apply(self, memory_format)
        return _orig(self, memory_format=memory_format)

    torch.Tensor.clone = clone
    torch.clone = clone


def _witness_clone_backward_conjugates_complex():
    x = torch.zeros(2, dtype=torch.complex64, requires_grad=True)
    g = torch.tensor([1 + 1j, 2 - 1j], dtype=torch.complex64)
    (gx,) = torch.autograd.grad(x.clone(), x, grad_outputs=g)
    assert torch.equal(gx.resolve_conj(), g)


def _clone_retains_grad_of_leaf_views(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if self.is_leaf and self.requires_grad and self._is_view() and out.requires_grad:
        out.retain_grad()
    return out


def _witness_clone_retains_grad_of_leaf_views():
    x = torch.zeros(4)[1:].requires_grad_()
    c = x.clone()
    c.sum().backward()
    assert c.grad is None


def _clone_inference_fast_path_half(orig, self, *args, **kwargs):
    if (
        self.dtype in (torch.float16, torch.bfloat16)
        and not self.requires_grad
        and not self.is_inference()
    ):
        with torch.inference_mode():
            return orig(self, *args, **kwargs)
    return orig(self, *args, **kwargs)


def _witness_clone_inference_fast_path_half():
    x = torch.ones(3, dtype=torch.float16)
    with accepted(RuntimeError, "x.clone().requires_grad_() raised"):
        c = x.clone().requires_grad_()
    assert c.is_leaf and c.requires_grad


def _patch_clone_stepped_keeps_gaps():
    _orig = torch.Tensor.clone

    def _stepped(t):
        if t.numel() == 0 or any(
            st == 0 and sz > 1 for sz, st in zip(t.shape, t.stride(), strict=False)
        ):
            return False
        return not is_dense(t)

    def clone(self, *, memory_format=torch.preserve_format):
        if memory_format == torch.preserve_format and _stepped(self):
            out = torch.empty_strided(
                self.shape, self.stride(), dtype=self.dtype, device=self.device
            )
            return out.copy_(self)
        return _orig(self, memory_format=memory_format)

    torch.Tensor.clone = clone
    torch.clone = clone


def _witness_clone_stepped_keeps_gaps():
    x = torch.arange(8.0).reshape(2, 4)[:, ::2]
    assert x.clone().is_contiguous()


def _patch_clone_channels_last_accepts_rank_3():
    _orig = torch.Tensor.clone

    def clone(self, *, memory_format=torch.preserve_format):
        if memory_format == torch.channels_last and self.dim() == 3:
            memory_format = torch.contiguous_format
        return _orig(self, memory_format=memory_format)

    torch.Tensor.clone = clone
    torch.clone = clone


def _witness_clone_channels_last_accepts_rank_3():
    with refused(RuntimeError, "clone(memory_format=channels_last) of a 3-D tensor did not raise"):
        torch.zeros(2, 3, 4).clone(memory_format=torch.channels_last)


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="clone-shares-storage",
        description="clone() returns an alias (detach-like view) instead of a copy",
        claims=("clone.new-storage",),
        patch=wrap(
            "torch.Tensor.clone",
            _clone_shares_storage,
            also=("torch.clone",),
            original="torch.Tensor.view_as",
        ),
        witness=_witness_clone_shares_storage,
    ),
    Mutant(
        name="clone-shares-expanded",
        description="clone() of an expanded (stride-0) input returns an alias: 'it is read-only anyway'",
        claims=("clone.new-storage",),
        region="expanded (stride-0) inputs",
        family="layout",
        patch=wrap("torch.Tensor.clone", _clone_shares_expanded, also=("torch.clone",)),
        witness=_witness_clone_shares_expanded,
    ),
    Mutant(
        name="clone-shares-0d",
        description="clone() of a 0-d tensor returns an alias",
        claims=("clone.new-storage",),
        region="0-d inputs",
        family="layout",
        patch=wrap("torch.Tensor.clone", _clone_shares_0d, also=("torch.clone",)),
        witness=_witness_clone_shares_0d,
    ),
    Mutant(
        name="clone-shares-bool",
        description="clone() of a bool tensor returns an alias (a dtype family)",
        claims=("clone.new-storage",),
        region="bool inputs",
        family="dtype",
        patch=wrap("torch.Tensor.clone", _clone_shares_bool, also=("torch.clone",)),
        witness=_witness_clone_shares_bool,
    ),
    Mutant(
        name="clone-ignores-preserve-format",
        description="clone() treats preserve_format as contiguous_format (drops permuted/channels_last strides)",
        claims=("clone.preserve-format-dense-keeps-strides",),
        patch=_patch_clone_ignores_preserve_format,
        witness=_witness_clone_ignores_preserve_format,
    ),
    Mutant(
        name="clone-channels-last-loses-format",
        description="clone() with preserve_format returns contiguous output for channels_last inputs only",
        claims=("clone.preserve-format-dense-keeps-strides",),
        region="channels_last inputs with preserve_format",
        family="layout",
        patch=_patch_clone_channels_last_loses_format,
        witness=_witness_clone_channels_last_loses_format,
    ),
    Mutant(
        name="clone-function-ignores-memory-format",
        description="torch.clone(x, memory_format=...) (function form only) ignores the explicit format",
        claims=("clone.explicit-memory-format",),
        domain={"call_form": "function"},
        region="the function form torch.clone(t, memory_format=...) only",
        family="convention",
        patch=_patch_clone_function_ignores_memory_format,
        witness=_witness_clone_function_ignores_memory_format,
    ),
    Mutant(
        name="clone-method-ignores-memory-format",
        description="t.clone(memory_format=...) (method form only) ignores the explicit format and keeps t's strides; torch.clone(t, memory_format=...) honours it",
        claims=("clone.explicit-memory-format",),
        domain={"call_form": "method"},
        region="the method form t.clone(memory_format=...) only",
        family="convention",
        patch=_patch_clone_method_ignores_memory_format,
        witness=_witness_clone_method_ignores_memory_format,
    ),
    Mutant(
        name="clone-explicit-preserve-format-row-major",
        description="clone(memory_format=torch.preserve_format) spelt out as a keyword returns a row-major clone; the default (no argument) still keeps a dense input's strides",
        claims=("clone.preserve-format-dense-keeps-strides",),
        domain={"call_form": "keyword"},
        region="an explicit memory_format=torch.preserve_format keyword only",
        family="convention",
        patch=wrap(
            "torch.Tensor.clone", _clone_explicit_preserve_format_row_major, also=("torch.clone",)
        ),
        witness=_witness_clone_explicit_preserve_format_row_major,
    ),
    Mutant(
        name="clone-detaches-nonleaf-views",
        description="clone() of a non-leaf view that requires grad returns a detached copy",
        claims=("clone.requires-grad-follows-input",),
        region="non-leaf views that require grad",
        family="autograd",
        patch=_patch_clone_detaches_nonleaf_views,
        witness=_witness_clone_detaches_nonleaf_views,
    ),
    Mutant(
        name="clone-shares-version-counter",
        description="clone() of a tensor that does not require grad copies the data but shares the input's version counter",
        claims=("clone.own-version-counter",),
        region="inputs that do not require grad",
        family="autograd",
        patch=_patch_clone_shares_version_counter,
        witness=_witness_clone_shares_version_counter,
    ),
    Mutant(
        name="clone-flushes-negative-zero",
        description="clone() of a floating tensor returns +0.0 where its input holds -0.0 (equal under ==, so only a bit-exact value check sees it)",
        claims=("clone.same-values-dtype-shape-device",),
        region="floating inputs holding -0.0",
        family="dtype",
        patch=wrap("torch.Tensor.clone", _clone_flushes_negative_zero, also=("torch.clone",)),
        witness=_witness_clone_flushes_negative_zero,
    ),
    Mutant(
        name="clone-backward-conjugates-complex",
        description="the backward of clone() of a complex tensor returns the conjugate of the incoming gradient instead of the gradient itself",
        claims=("clone.gradient-flows-to-input",),
        region="complex inputs that require grad",
        family="dtype",
        patch=_patch_clone_backward_conjugates_complex,
        witness=_witness_clone_backward_conjugates_complex,
    ),
    Mutant(
        name="clone-retains-grad-of-leaf-views",
        description="clone() of a leaf view requiring grad (a strided or offset leaf) calls retain_grad() on the clone: backward populates the clone's own .grad and reading it no longer warns",
        claims=("clone.own-grad-stays-none",),
        region="leaf inputs requiring grad that are views of a larger base",
        family="autograd",
        patch=wrap("torch.Tensor.clone", _clone_retains_grad_of_leaf_views, also=("torch.clone",)),
        witness=_witness_clone_retains_grad_of_leaf_views,
    ),
    Mutant(
        name="clone-inference-fast-path-half",
        description="clone() of a half-precision tensor that does not require grad runs under inference_mode (it 'needs no autograd'): the clone is an inference tensor, so clone().requires_grad_() raises",
        claims=("clone.requires-grad-on-clone-is-new-leaf",),
        region="float16/bfloat16 inputs that do not require grad",
        family="dtype",
        patch=wrap("torch.Tensor.clone", _clone_inference_fast_path_half, also=("torch.clone",)),
        witness=_witness_clone_inference_fast_path_half,
    ),
    Mutant(
        name="clone-stepped-keeps-gaps",
        description="clone() of a stepped (non-dense, non-overlapping) input allocates the input's exact strides, gaps included, so the clone is neither contiguous nor dense",
        claims=(
            "clone.preserve-format-non-dense-keeps-stride-order",
            "clone.preserve-format-non-dense-contiguous",
        ),
        region="stepped (non-dense, non-overlapping) inputs with preserve_format",
        family="layout",
        patch=_patch_clone_stepped_keeps_gaps,
        witness=_witness_clone_stepped_keeps_gaps,
    ),
    Mutant(
        name="clone-channels-last-accepts-rank-3",
        description="clone(memory_format=torch.channels_last) of a 3-D tensor returns a contiguous clone instead of raising 'required rank 4 tensor'",
        claims=("clone.channels-last-needs-rank-4",),
        region="3-D inputs",
        family="layout",
        patch=_patch_clone_channels_last_accepts_rank_3,
        witness=_witness_clone_channels_last_accepts_rank_3,
    ),
)


def _clone_aliases(hit, orig, self, *args, **kwargs):
    if hit(self):
        return self
    return orig(self, *args, **kwargs)


def _clone_aliases_check(t):
    assert t.clone() is not t and torch.clone(t) is not t


# Issue 29: a clone that aliases its input at exactly one value of the
# domain clone.new-storage declares (every tensor: each layout family, dtype
# family, tensor kind and math bit).
MUTANTS += domain_mutants(
    "clone-aliases",
    claims={d: ("clone.new-storage",) for d in ("layout", "dtype_family", "tensor_kind", "math_bit")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
        "tensor_kind": TENSOR_KINDS,
        "math_bit": ("none", "conj", "neg"),
    },
    broken="clone() returns its input itself (an alias) instead of a copy",
    patch=wrap("torch.Tensor.clone", _clone_aliases, also=("torch.clone",)),
    check=_clone_aliases_check,
)  # fmt: skip


def _patch_clone_aliases_only_method():
    torch.Tensor.clone = lambda self, *args, **kwargs: self


def _witness_clone_aliases_only_method():
    t = torch.arange(3.0)
    assert t.clone() is not t


def _patch_clone_aliases_only_function():
    torch.clone = lambda input, *args, **kwargs: input


def _witness_clone_aliases_only_function():
    t = torch.arange(3.0)
    assert torch.clone(t) is not t


MUTANTS += (
    Mutant(
        name="clone-aliases-only-method",
        description="t.clone() returns t itself; torch.clone(t) still copies",
        claims=("clone.new-storage",),
        domain={"call_form": "method"},
        region="the method form t.clone() only",
        family="convention",
        patch=_patch_clone_aliases_only_method,
        witness=_witness_clone_aliases_only_method,
    ),
    Mutant(
        name="clone-aliases-only-function",
        description="torch.clone(t) returns t itself; t.clone() still copies",
        claims=("clone.new-storage",),
        domain={"call_form": "function"},
        region="the function form torch.clone(t) only",
        family="convention",
        patch=_patch_clone_aliases_only_function,
        witness=_witness_clone_aliases_only_function,
    ),
)
