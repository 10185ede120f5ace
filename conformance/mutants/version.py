"""Mutants of the ``version`` area (The autograd version counter (Tensor._version)); claims in ``conformance/claims/version.toml``,
tests in ``conformance/test_version.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, LAYOUTS
from conformance.mutants.base import Mutant
from conformance.mutants.patching import (
    INPLACE_OPS,
    accepted,
    patches,
    refused,
    torch,
    wrap,
    wrap_each,
)


def _patch_increment_version_noop():
    import torch.autograd.graph

    def increment_version(tensor):
        return None

    torch.autograd.graph.increment_version = increment_version


def _witness_increment_version_noop():
    x = torch.ones(3)
    torch.autograd.graph.increment_version(x)
    assert x._version == 1


def _zero_size_skips_bump(orig, self, *args, **kwargs):
    if self.numel() == 0:
        orig(self.data, *args, **kwargs)
        return self
    return orig(self, *args, **kwargs)


def _mul_out_zero_size_skips_bump(_mul, *args, out=None, **kwargs):
    if out is not None and out.numel() == 0:
        _mul(*args, out=out.data, **kwargs)
        return out
    return _mul(*args, out=out, **kwargs) if out is not None else _mul(*args, **kwargs)


def _witness_inplace_zero_size_skips_bump():
    t = torch.empty(0, 3)
    t.zero_()
    torch.mul(t, t, out=t)
    assert t._version == 2


def _expand_untracked_alias(orig, self, *sizes, **kwargs):
    out = orig(self, *sizes, **kwargs)
    return out if self.requires_grad else out.data


def _witness_expand_untracked_alias():
    t = torch.zeros(3)
    e = t.expand(2, 3)
    t.fill_(1)
    assert e._version == t._version


def _patch_data_of_grad_tensor_shares_counter():
    _desc = torch._C.TensorBase.data
    _detach = torch._C.TensorBase.detach

    def _get(self):
        return _detach(self) if self.requires_grad else _desc.__get__(self)

    torch.Tensor.data = property(_get, lambda self, v: _desc.__set__(self, v))


def _witness_data_of_grad_tensor_shares_counter():
    x = torch.ones(3, requires_grad=True)
    x.data.add_(1)
    assert x._version == 0


def _requires_grad_false_bumps(orig, self, requires_grad=True):
    out = orig(self, requires_grad)
    if not requires_grad:
        torch.autograd.graph.increment_version(self)
    return out


def _witness_requires_grad_false_bumps():
    x = torch.ones(3, requires_grad=True)
    x.requires_grad_(False)
    assert x._version == 0


def _patch_version_settable_forward():
    _desc = torch._C.TensorBase._version

    def _set(self, value):
        while _desc.__get__(self) < value:
            torch.autograd.graph.increment_version(self)
        if _desc.__get__(self) != value:
            raise AttributeError(
                "attribute '_version' of 'torch._C.TensorBase' objects is not writable"
            )

    torch.Tensor._version = property(_desc.__get__, _set)


def _witness_version_settable_forward():
    t = torch.ones(3)
    with refused(AttributeError, "assigning _version did not raise"):
        t._version = 5


def _increment_version_refuses_inference_outside(orig, tensor):
    import torch.autograd.graph

    ts = [tensor] if isinstance(tensor, torch.Tensor) else list(tensor)
    if any(t.is_inference() for t in ts) and not torch.is_inference_mode_enabled():
        raise RuntimeError("Inference tensors do not track version counter.")
    return orig(tensor)


def _witness_increment_version_refuses_inference_outside():
    with torch.inference_mode():
        t = torch.ones(3)
    with accepted(RuntimeError, "increment_version of an inference tensor raised"):
        torch.autograd.graph.increment_version(t)


def _patch_exp_sigmoid_save_result_copy():
    _exp, _sigmoid = torch.exp, torch.sigmoid

    class _Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            r = _exp(x)
            ctx.result = r.clone()
            return r

        @staticmethod
        def backward(ctx, g):
            return g * ctx.result

    class _Sigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            r = _sigmoid(x)
            ctx.result = r.clone()
            return r

        @staticmethod
        def backward(ctx, g):
            return g * ctx.result * (1 - ctx.result)

    def _wrap(orig, fn):
        def op(x, *args, **kwargs):
            if (
                not args
                and not kwargs
                and isinstance(x, torch.Tensor)
                and x.is_floating_point()
                and x.requires_grad
                and torch.is_grad_enabled()
            ):
                return fn.apply(x)
            return orig(x, *args, **kwargs)

        return op

    torch.exp = torch.Tensor.exp = _wrap(_exp, _Exp)
    torch.sigmoid = torch.Tensor.sigmoid = _wrap(_sigmoid, _Sigmoid)


def _witness_exp_sigmoid_save_result_copy():
    x = torch.ones(3, requires_grad=True)
    y = torch.exp(x)
    y.add_(1)
    with refused(RuntimeError, "backward after modifying a saved result did not raise"):
        y.sum().backward()


def _resize_noop_bumps_noncontig(orig, self, *sizes, **kwargs):
    new = sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    same = tuple(new) == tuple(self.shape) and not self.is_contiguous()
    out = orig(self, *sizes, **kwargs)
    if same:
        torch.autograd.graph.increment_version(self)
    return out


def _witness_resize_noop_bumps_noncontig():
    t = torch.zeros(2, 3).t()
    t.resize_(t.shape)
    assert t._version == 0


def _increment_version_list_refused(orig, tensor):
    if isinstance(tensor, (list, tuple)):
        raise TypeError("increment_version(): argument 'tensor' must be Tensor, not list")
    return orig(tensor)


def _witness_increment_version_list_refused():
    x, y = torch.ones(2), torch.ones(2)
    try:
        torch.autograd.graph.increment_version([x, y])
    except TypeError as e:
        raise AssertionError(f"the list form is refused: {e}") from None
    assert (x._version, y._version) == (1, 1)


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="increment-version-noop",
        description="torch.autograd.graph.increment_version does not bump the version counter",
        claims=("version.increment-version",),
        patch=_patch_increment_version_noop,
        witness=_witness_increment_version_noop,
    ),
    Mutant(
        name="inplace-zero-size-skips-bump",
        description="in-place ops and out= writes into a zero-size tensor skip the version bump ('nothing was written')",
        claims=("version.inplace-bumps",),
        region="zero-size tensors",
        family="layout",
        patch=patches(
            wrap_each(INPLACE_OPS, _zero_size_skips_bump),
            wrap("torch.mul", _mul_out_zero_size_skips_bump),
        ),
        witness=_witness_inplace_zero_size_skips_bump,
    ),
    Mutant(
        name="expand-untracked-alias",
        description="expand() of a tensor that does not require grad returns an untracked alias (like .data) with a version counter of its own",
        claims=("version.views-and-detach-share",),
        region="expand() of tensors that do not require grad",
        family="layout",
        patch=wrap("torch.Tensor.expand", _expand_untracked_alias),
        witness=_witness_expand_untracked_alias,
    ),
    Mutant(
        name="data-of-grad-tensor-shares-counter",
        description=".data of a tensor that requires grad returns detach() (sharing the version counter) instead of an alias with a counter of its own",
        claims=("version.clone-and-data-own-counter",),
        region="tensors that require grad",
        family="autograd",
        patch=_patch_data_of_grad_tensor_shares_counter,
        witness=_witness_data_of_grad_tensor_shares_counter,
    ),
    Mutant(
        name="requires-grad-false-bumps",
        description="requires_grad_(False) (the method form) is treated as an in-place write and bumps the version counter",
        claims=("version.requires-grad-no-bump",),
        region="the method form requires_grad_(False)",
        family="convention",
        patch=wrap("torch.Tensor.requires_grad_", _requires_grad_false_bumps),
        witness=_witness_requires_grad_false_bumps,
    ),
    Mutant(
        name="version-settable-forward",
        description="assigning _version a value at or above the current one is accepted (the counter is moved forward); only lowering it raises AttributeError",
        claims=("version.read-only",),
        region="assigning a version >= the current one",
        family="relation",
        patch=_patch_version_settable_forward,
        witness=_witness_version_settable_forward,
    ),
    Mutant(
        name="increment-version-refuses-inference-outside",
        description="increment_version(t) of an inference tensor outside inference_mode raises 'Inference tensors do not track version counter' instead of doing nothing",
        claims=("version.increment-version-inference-noop",),
        region="inference tensors outside inference_mode",
        family="mode",
        patch=wrap(
            "torch.autograd.graph.increment_version", _increment_version_refuses_inference_outside
        ),
        witness=_witness_increment_version_refuses_inference_outside,
    ),
    Mutant(
        name="exp-sigmoid-save-result-copy",
        description="exp and sigmoid of real floating inputs save a copy of their result for backward, so an in-place change of the result is neither detected nor seen by backward",
        claims=("version.saved-tensor-check",),
        region="exp and sigmoid of real floating inputs",
        family="dtype",
        patch=_patch_exp_sigmoid_save_result_copy,
        witness=_witness_exp_sigmoid_save_result_copy,
    ),
    Mutant(
        name="resize-noop-bumps-noncontig",
        description="resize_ to the current shape of a non-contiguous tensor bumps the version counter (it re-strides instead of returning early)",
        claims=("version.resize-bumps-on-shape-change",),
        region="no-op resize_ of non-contiguous tensors",
        family="layout",
        patch=wrap("torch.Tensor.resize_", _resize_noop_bumps_noncontig),
        witness=_witness_resize_noop_bumps_noncontig,
    ),
    Mutant(
        name="increment-version-list-refused",
        description="torch.autograd.graph.increment_version refuses a list of tensors (TypeError), as before torch 2.5",
        claims=("version.increment-version",),
        region="the list form",
        family="other",
        patch=wrap("torch.autograd.graph.increment_version", _increment_version_list_refused),
        witness=_witness_increment_version_list_refused,
    ),
)

from conformance.mutants.clone import domain_mutants  # noqa: E402

#: The in-place methods the version mutants write through ``.data`` (whose
#: counter is its own).
_UNBUMPED = tuple(f"torch.Tensor.{op}" for op in ("add_", "mul_", "copy_", "zero_", "fill_"))


def _through_data(hit, orig, self, *args, **kwargs):
    if hit(self):
        orig(self.data, *args, **kwargs)  # .data has a counter of its own
        return self
    return orig(self, *args, **kwargs)


def _inplace_no_bump(hit):
    wrap_each(_UNBUMPED, functools.partial(_through_data, hit))()


def _always(t):
    return True


def _inplace_no_bump_check(t):
    v = t._version
    t.fill_(1)
    assert t._version > v


# Issue 29: in-place methods that write through .data (so the written
# tensor's version counter stays put) at exactly one value of the domain
# version.inplace-bumps declares (each layout family and dtype family).
MUTANTS += domain_mutants(
    "inplace-no-bump",
    claims={d: ("version.inplace-bumps",) for d in ("layout", "dtype_family")},
    values={
        "layout": LAYOUTS,
        "dtype_family": DTYPE_FAMILIES,
    },
    broken="in-place methods (add_, mul_, copy_, zero_, fill_) do not bump the version counter",
    patch=_inplace_no_bump,
    check=_inplace_no_bump_check,
)  # fmt: skip


def _witness_inplace_no_bump_only_inplace():
    t = torch.zeros(3)
    t.fill_(1)
    assert t._version == 1


def _inplace_no_bump_only_out(mul, *args, out=None, **kwargs):
    if out is None:
        return mul(*args, **kwargs)
    mul(*args, out=out.data, **kwargs)  # .data has a counter of its own
    return out


def _witness_inplace_no_bump_only_out():
    t = torch.zeros(3)
    torch.mul(torch.ones(3), torch.ones(3), out=t)
    assert t._version >= 1


MUTANTS += (
    Mutant(
        name="inplace-no-bump-only-inplace",
        description="in-place methods (add_, mul_, copy_, zero_, fill_) do not bump the version counter; out= writes and setitem still do",
        claims=("version.inplace-bumps",),
        domain={"call_form": "inplace"},
        region="the in-place methods (name_)",
        family="convention",
        patch=wrap_each(_UNBUMPED, functools.partial(_through_data, _always)),
        witness=_witness_inplace_no_bump_only_inplace,
    ),
    Mutant(
        name="inplace-no-bump-only-out",
        description="an out= argument of torch.mul is written without bumping its version counter; in-place methods still bump",
        claims=("version.inplace-bumps",),
        domain={"call_form": "out"},
        region="out= writes (torch.mul(a, b, out=t))",
        family="convention",
        patch=wrap("torch.mul", _inplace_no_bump_only_out),
        witness=_witness_inplace_no_bump_only_out,
    ),
)


# Issue 29: version.increment-version-inference-noop speaks of the grad mode
# at the call; each mutant makes increment_version refuse an inference
# tensor in one mode only.
_REFUSES_INFERENCE_WHEN = {
    "enabled": lambda: not torch.is_inference_mode_enabled() and torch.is_grad_enabled(),
    "no_grad": lambda: not torch.is_inference_mode_enabled() and not torch.is_grad_enabled(),
    "inference_mode": lambda: torch.is_inference_mode_enabled(),
}


def _increment_version_refuses_inference(mode, orig, tensor):
    ts = [tensor] if isinstance(tensor, torch.Tensor) else list(tensor)
    if any(t.is_inference() for t in ts) and _REFUSES_INFERENCE_WHEN[mode]():
        raise RuntimeError("Inference tensors do not track version counter.")
    return orig(tensor)


def _witness_increment_version_of_inference(mode):
    import contextlib

    with torch.inference_mode():
        t = torch.ones(3)
    ctx = {
        "enabled": torch.enable_grad,
        "no_grad": torch.no_grad,
        "inference_mode": torch.inference_mode,
    }.get(mode, contextlib.nullcontext)
    with ctx(), accepted(RuntimeError, "increment_version of an inference tensor raised"):
        torch.autograd.graph.increment_version(t)


MUTANTS += tuple(
    Mutant(
        name=f"increment-version-refuses-inference-{slug}",
        description=description,
        claims=("version.increment-version-inference-noop",),
        domain={"grad_mode": mode},
        region=region,
        family="mode",
        patch=wrap(
            "torch.autograd.graph.increment_version",
            functools.partial(_increment_version_refuses_inference, mode),
        ),
        witness=functools.partial(_witness_increment_version_of_inference, mode),
    )
    for mode, slug, region, description in (
        (
            "enabled",
            "grad-enabled",
            "inference tensors outside inference_mode, grad enabled",
            "increment_version(t) of an inference tensor raises 'Inference tensors do not track version counter' outside inference_mode with grad enabled; under no_grad and inside inference_mode it still does nothing",
        ),
        (
            "no_grad",
            "under-no-grad",
            "inference tensors under torch.no_grad()",
            "increment_version(t) of an inference tensor raises 'Inference tensors do not track version counter' under no_grad (outside inference_mode); with grad enabled and inside inference_mode it still does nothing",
        ),
        (
            "inference_mode",
            "inside",
            "inference tensors inside inference_mode",
            "increment_version(t) of an inference tensor raises 'Inference tensors do not track version counter' inside inference_mode; outside it still does nothing",
        ),
    )
)  # fmt: skip
