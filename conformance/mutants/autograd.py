"""Mutants of the ``autograd`` area (Leaves, requires_grad, .grad, retain_grad and backward errors); claims in ``conformance/claims/autograd.toml``,
tests in ``conformance/test_autograd.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools

from conformance.mutants.base import Mutant
from conformance.mutants.patching import INPLACE_OPS, accepted, refused, torch, wrap, wrap_each

#: The start of torch's error for an in-place op on a leaf that requires grad.
_LEAF = "leaf Variable that requires grad is being used in an in-place"


def _graph_leaves(tensors, keep, skip_non_tensors=False):
    """The leaves (the variables of AccumulateGrad nodes) of the graphs of
    ``tensors`` (a tensor or a sequence of them) for which ``keep(leaf)``,
    each once, in depth-first order."""
    roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
    if skip_non_tensors:
        stack = [t.grad_fn for t in roots if isinstance(t, torch.Tensor)]
    else:
        stack = [r.grad_fn for r in roots if r.grad_fn is not None]
    seen, out = set(), []
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        var = getattr(fn, "variable", None)
        if keep(var):
            out.append(var)
        stack.extend(f for f, _ in fn.next_functions)
    return out


def _grads_reset_before(keep, backward, tensors, *args, **kwargs):
    """backward() sets the .grad of the leaves ``keep`` selects to None
    first: it overwrites instead of accumulating."""
    for leaf in _graph_leaves(tensors, keep, skip_non_tensors=keep is _double_with_grad):
        leaf.grad = None
    return backward(tensors, *args, **kwargs)


def _grads_reset_after(keep, backward, tensors, *args, **kwargs):
    """backward() leaves the .grad of the leaves ``keep`` selects (before
    it ran) None."""
    fresh = _graph_leaves(tensors, keep)
    out = backward(tensors, *args, **kwargs)
    for leaf in fresh:
        leaf.grad = None
    return out


def _parameter_with_grad(var):
    return isinstance(var, torch.nn.Parameter) and var.grad is not None


def _tensor_with_grad(var):
    return type(var) is torch.Tensor and var.grad is not None


def _double_with_grad(var):
    return (
        var is not None and var.dtype in (torch.float64, torch.complex128) and var.grad is not None
    )


def _parameter_without_grad(var):
    return isinstance(var, torch.nn.Parameter) and var.grad is None


def _tensor_without_grad(var):
    return type(var) is torch.Tensor and var.grad is None


def _witness_backward_overwrites_parameter_grad():
    p = torch.nn.Parameter(torch.ones(2))
    (p * 3).sum().backward()
    (p * 3).sum().backward()
    assert p.grad.tolist() == [6.0, 6.0]


def _witness_backward_overwrites_tensor_grad():
    t = torch.ones(2, requires_grad=True)
    (t * 3).sum().backward()
    (t * 3).sum().backward()
    assert t.grad.tolist() == [6.0, 6.0]


def _is_param(t):
    return isinstance(t, torch.nn.Parameter) or isinstance(t._base, torch.nn.Parameter)


def _parameter_inplace_allowed(orig, self, *args, **kwargs):
    if torch.is_grad_enabled() and self.requires_grad and _is_param(self):
        with torch.no_grad():
            return orig(self, *args, **kwargs)
    return orig(self, *args, **kwargs)


def _witness_parameter_inplace_allowed():
    p = torch.nn.Parameter(torch.ones(2))
    with refused(
        RuntimeError,
        "an in-place op on a Parameter requiring grad did not raise",
        match="leaf Variable that requires grad",
    ):
        p.add_(1)


def _plain_leaf(t):
    if not (torch.is_grad_enabled() and t.requires_grad and type(t) is torch.Tensor):
        return False
    if t.is_leaf:
        return True
    b = t._base
    return b is not None and b.is_leaf and b.requires_grad and type(b) is torch.Tensor


def _tensor_leaf_inplace_writes_before_raising(orig, self, *args, **kwargs):
    if _plain_leaf(self):
        with torch.no_grad():
            orig(self, *args, **kwargs)
        raise RuntimeError(f"a {_LEAF} operation.")
    return orig(self, *args, **kwargs)


def _witness_tensor_leaf_inplace_writes_before_raising():
    t = torch.ones(2, requires_grad=True)
    try:
        t.add_(1)
    except RuntimeError:
        pass
    assert t.tolist() == [1.0, 1.0] and t._version == 0


def _retain_grad_on_parameter_returns_self(orig, self):
    orig(self)
    return self


def _witness_retain_grad_on_parameter_returns_self():
    p = torch.nn.Parameter(torch.ones(2))
    assert p.retain_grad() is None


def _retain_grad_on_tensor_leaf_marks_retaining(orig, self):
    out = orig(self)
    if type(self) is torch.Tensor and self.is_leaf:
        return self
    return out


def _witness_retain_grad_on_tensor_leaf_marks_retaining():
    t = torch.ones(2, requires_grad=True)
    assert t.retain_grad() is None


def _patch_parameter_requires_grad_method_noop():
    def requires_grad_(self, requires_grad=True):
        return self

    torch.nn.Parameter.requires_grad_ = requires_grad_


def _witness_parameter_requires_grad_method_noop():
    p = torch.nn.Parameter(torch.ones(2))
    assert p.requires_grad_(False).requires_grad is False


def _tensor_requires_grad_method_returns_copy(orig, self, requires_grad=True):
    if type(self) is torch.Tensor and self.is_leaf:
        return orig(self.detach(), requires_grad)
    return orig(self, requires_grad)


def _witness_tensor_requires_grad_method_returns_copy():
    t = torch.ones(2)
    assert t.requires_grad_() is t and t.requires_grad


def _patch_requires_grad_noop():
    def requires_grad_(self, requires_grad=True):
        return self

    torch.Tensor.requires_grad_ = requires_grad_


def _witness_requires_grad_noop():
    x = torch.ones(3)
    assert x.requires_grad_().requires_grad


def _requires_grad_false_nonleaf_detaches(orig, self, requires_grad=True):
    if not requires_grad and not self.is_leaf and not self._is_view():
        return self.detach_()
    return orig(self, requires_grad)


def _witness_requires_grad_false_nonleaf_detaches():
    y = torch.ones(3, requires_grad=True) * 2
    with refused(RuntimeError, "requires_grad_(False) on a non-leaf did not raise"):
        y.requires_grad_(False)


def _requires_grad_integer_silent_call(orig, self, requires_grad=True):
    if requires_grad and not (self.is_floating_point() or self.is_complex()):
        return self
    return orig(self, requires_grad)


def _witness_requires_grad_integer_silent():
    with refused(RuntimeError, "requires_grad_ on an integer tensor did not raise"):
        torch.zeros(3, dtype=torch.int64).requires_grad_()


def _patch_retain_grad_noop():
    def retain_grad(self):
        return None

    torch.Tensor.retain_grad = retain_grad


def _witness_retain_grad_noop():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.sum().backward()
    assert y.grad is not None


def _retain_grad_noop_views(orig, self):
    if self._is_view():
        return None
    return orig(self)


def _witness_retain_grad_noop_views():
    x = torch.ones(4, requires_grad=True)
    y = x[1:]
    y.retain_grad()
    y.sum().backward()
    assert y.grad is not None


def _retain_grad_no_grad_silent_call(orig, self):
    if not self.requires_grad:
        return None
    return orig(self)


def _witness_retain_grad_no_grad_silent():
    with refused(RuntimeError, "retain_grad on a tensor not requiring grad did not raise"):
        torch.ones(3).retain_grad()


def _patch_grad_setter_reshapes():
    _desc = torch._C.TensorBase.grad

    def _set(self, g):
        if isinstance(g, torch.Tensor) and g.shape != self.shape and g.numel() == self.numel():
            g = g.reshape(self.shape)
        _desc.__set__(self, g)

    torch.Tensor.grad = property(_desc.__get__, _set, _desc.__delete__)


def _witness_grad_setter_reshapes():
    x = torch.ones(2, 3, requires_grad=True)
    with refused(RuntimeError, "assigning a grad of the wrong shape did not raise"):
        x.grad = torch.ones(3, 2)


def _patch_nonleaf_grad_silent():
    import warnings

    _desc = torch._C.TensorBase.grad

    def _get(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _desc.__get__(self)

    torch.Tensor.grad = property(_get, _desc.__set__, _desc.__delete__)


def _witness_nonleaf_grad_silent():
    import warnings

    y = torch.ones(3, requires_grad=True) * 2
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _ = y.grad
    assert any("not a leaf" in str(x.message) for x in w)


def _backward_retains_graph(orig, tensors, grad_tensors=None, retain_graph=None, *args, **kwargs):
    return orig(tensors, grad_tensors, True, *args, **kwargs)


def _witness_backward_retains_graph():
    x = torch.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with refused(RuntimeError, "a second backward did not raise"):
        y.backward()


def _backward_implicit_ones_call(orig, tensors, grad_tensors=None, *args, **kwargs):
    import torch.autograd

    if grad_tensors is None and isinstance(tensors, torch.Tensor) and tensors.numel() != 1:
        grad_tensors = torch.ones_like(tensors)
    return orig(tensors, grad_tensors, *args, **kwargs)


def _witness_backward_implicit_ones():
    y = torch.ones(3, requires_grad=True) * 2
    with refused(RuntimeError, "backward of a non-scalar without gradient did not raise"):
        y.backward()


def _patch_is_leaf_true_for_0d():
    _desc = torch._C.TensorBase.is_leaf

    def _is_leaf(self):
        if self.dim() == 0 and self.requires_grad:
            return True
        return _desc.__get__(self)

    torch.Tensor.is_leaf = property(_is_leaf)


def _witness_is_leaf_true_for_0d():
    y = torch.ones((), requires_grad=True) * 2
    assert not y.is_leaf


def _patch_integral_views_not_leaves():
    _desc = torch._C.TensorBase.is_leaf

    def _is_leaf(self):
        if (
            not self.requires_grad
            and self._is_view()
            and not (self.is_floating_point() or self.is_complex())
        ):
            return False
        return _desc.__get__(self)

    torch.Tensor.is_leaf = property(_is_leaf)


def _witness_integral_views_not_leaves():
    v = torch.arange(6).reshape(2, 3)[0]
    assert v.is_leaf


def _sum_retains_input_grad(sum, self, *args, **kwargs):
    if self.requires_grad and not self.is_leaf and torch.is_grad_enabled():
        self.retain_grad()
    return sum(self, *args, **kwargs)


def _witness_sum_retains_input_grad():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.sum().backward()
    assert y.retains_grad is False


def _binary_op_ignores_right_operand_grad(orig, a, b, *args, **kwargs):
    out = orig(a, b, *args, **kwargs)
    if (
        isinstance(a, torch.Tensor)
        and isinstance(b, torch.Tensor)
        and isinstance(out, torch.Tensor)
        and b.requires_grad
        and not a.requires_grad
    ):
        out = out.detach()
    return out


def _witness_binary_op_ignores_right_operand_grad():
    a = torch.ones(3)
    b = torch.ones(3, requires_grad=True)
    assert (a + b).requires_grad and (a * b).grad_fn is not None
    assert torch.mul(a, b).requires_grad


def _leaf_view_inplace_silent(orig, self, *args, **kwargs):
    try:
        return orig(self, *args, **kwargs)
    except RuntimeError as e:
        if _LEAF in str(e) and self._is_view():
            with torch.no_grad():
                return orig(self, *args, **kwargs)
        raise


def _witness_leaf_view_inplace_silent():
    x = torch.ones(4, requires_grad=True)
    with refused(RuntimeError, "in-place on a view of a leaf requiring grad did not raise"):
        x[1:].add_(1)


def _leaf_inplace_writes_then_raises_reduced(orig, self, *args, **kwargs):
    try:
        return orig(self, *args, **kwargs)
    except RuntimeError as e:
        if _LEAF in str(e) and self.dtype in (torch.float16, torch.bfloat16):
            with torch.no_grad():
                orig(self, *args, **kwargs)
        raise


def _witness_leaf_inplace_writes_then_raises_reduced():
    x = torch.ones(3, dtype=torch.float16, requires_grad=True)
    try:
        x.add_(1)
    except RuntimeError:
        pass
    assert x._version == 0 and x.detach().tolist() == [1.0, 1.0, 1.0]


def _patch_retain_grad_marks_leaf_views():
    _retain = torch.Tensor.retain_grad
    _retains = torch._C.TensorBase.retains_grad

    def retain_grad(self):
        if self.is_leaf and self.requires_grad and self._is_view():
            self.__dict__["_retained_leaf_view"] = True
            return None
        return _retain(self)

    def _get(self):
        return bool(self.__dict__.get("_retained_leaf_view")) or _retains.__get__(self)

    torch.Tensor.retain_grad = retain_grad
    torch.Tensor.retains_grad = property(_get)


def _witness_retain_grad_marks_leaf_views():
    x = torch.ones(4)[1:].requires_grad_()
    x.retain_grad()
    assert x.retains_grad is False


def mul_with_backward(forward, backward, use):
    """``a * b`` and ``torch.mul(a, b)`` (no other arguments) run as an
    ``autograd.Function`` whose ``forward(ctx, a, b, mul)`` and
    ``backward(ctx, g, mul)`` are given (``mul`` is the real ``torch.mul``),
    where ``use(a, b)``; the real ops elsewhere."""
    _mul = torch.Tensor.__mul__
    _tmul = torch.mul

    class _Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return forward(ctx, a, b, _tmul)

        @staticmethod
        def backward(ctx, g):
            return backward(ctx, g, _tmul)

    def __mul__(a, b):
        return _Mul.apply(a, b) if use(a, b) else _mul(a, b)

    def mul(a, b, *args, **kwargs):
        if not args and not kwargs and use(a, b):
            return _Mul.apply(a, b)
        return _tmul(a, b, *args, **kwargs)

    torch.Tensor.__mul__ = __mul__
    torch.mul = mul


def _save_operands(ctx, a, b, mul):
    ctx.save_for_backward(a, b)
    return mul(a, b)


def _grad_without_conj(ctx, g, mul):
    a, b = ctx.saved_tensors
    return mul(g, b), mul(g, a)


def _grad_by_own_operand(ctx, g, mul):
    a, b = ctx.saved_tensors
    return mul(g, a), mul(g, b)


def _complex_operands(a, b):
    return (
        isinstance(a, torch.Tensor)
        and isinstance(b, torch.Tensor)
        and a.is_complex()
        and b.is_complex()
        and a.shape == b.shape
        and torch.is_grad_enabled()
        and (a.requires_grad or b.requires_grad)
    )


def _witness_complex_mul_backward_forgets_conj():
    a = torch.tensor([1 + 1j], requires_grad=True)
    b = torch.tensor([2 + 3j], requires_grad=True)
    (a * b).backward(torch.ones(1, dtype=torch.complex64))
    assert a.grad.item() == 2 - 3j


def _witness_backward_overwrites_double_grads():
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def _second_backward_always_raises_reduced(
    orig, self, gradient=None, retain_graph=None, create_graph=False, inputs=None
):
    if self.dtype in (torch.float16, torch.bfloat16) and not (retain_graph or create_graph):
        if self.__dict__.get("_graph_consumed"):
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly "
                "access saved tensors after they have already been freed)."
            )
        self.__dict__["_graph_consumed"] = True
    return orig(self, gradient, retain_graph, create_graph, inputs=inputs)


def _witness_second_backward_always_raises_reduced():
    x = torch.ones(3, dtype=torch.float16, requires_grad=True)
    loss = (x + 1).sum()
    loss.backward()
    with accepted(RuntimeError, "a second backward without saved tensors raised"):
        loss.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def _noncontig_view_inplace_not_rebased(orig, self, *args, **kwargs):
    if (
        self._is_view()
        and self.requires_grad
        and not self.is_leaf
        and not self.is_contiguous()
        and torch.is_grad_enabled()
    ):
        with torch.no_grad():
            return orig(self, *args, **kwargs)
    return orig(self, *args, **kwargs)


def _witness_noncontig_view_inplace_not_rebased():
    base = torch.ones(2, 3, requires_grad=True)
    b = base * 1
    b.t().mul_(2)
    assert type(b.grad_fn).__name__ == "CopySlices"


def _float64_view_inplace_refused(orig, self, *args, **kwargs):
    if (
        self._is_view()
        and self.requires_grad
        and not self.is_leaf
        and self.dtype == torch.float64
        and torch.is_grad_enabled()
    ):
        raise RuntimeError(
            "mul_(): in-place modification of a view whose storage "
            "is referenced by its base is not supported"
        )
    return orig(self, *args, **kwargs)


def _witness_float64_view_inplace_refused():
    b = torch.ones(4, dtype=torch.float64, requires_grad=True) * 1
    with accepted(RuntimeError, "in-place on a view of a non-leaf raised"):
        b[1:].mul_(2)
    assert type(b.grad_fn).__name__ == "CopySlices"


def _chunk_via_narrow(orig, self, chunks, dim=0):
    n = self.size(dim)
    if not self.requires_grad or n == 0:
        return orig(self, chunks, dim)
    size = -(-n // chunks)
    return tuple(self.narrow(dim, s, min(size, n - s)) for s in range(0, n, size))


def _witness_chunk_via_narrow():
    b = torch.ones(4, requires_grad=True) * 1
    with refused(RuntimeError, "in-place on a chunk of a non-leaf did not raise"):
        b.chunk(2)[0].add_(1)


def _upcast_of_leaf_is_new_leaf(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if (
        out is not self
        and self.requires_grad
        and self.is_leaf
        and self.dtype.is_floating_point
        and out.dtype.is_floating_point
        and out.dtype.itemsize > self.dtype.itemsize
    ):
        out = out.detach().requires_grad_()
    return out


def _witness_upcast_of_leaf_is_new_leaf():
    x = torch.ones(3, dtype=torch.float16, requires_grad=True)
    c = x.to(torch.float32)
    assert not c.is_leaf and c.grad_fn is not None


def _clone_0d_returns_self(orig, self, *args, **kwargs):
    if self.dim() == 0 and not self.requires_grad:
        return self
    return orig(self, *args, **kwargs)


def _witness_clone_0d_returns_self():
    x = torch.tensor(2.0)
    c = x.clone().requires_grad_()
    assert not x.requires_grad and c is not x


def _backward_without_graph_silent_reduced(orig, self, *args, **kwargs):
    if not self.requires_grad and self.dtype in (torch.float16, torch.bfloat16):
        return None
    return orig(self, *args, **kwargs)


def _witness_backward_without_graph_silent_reduced():
    with refused(RuntimeError, "backward() without a graph did not raise"):
        torch.ones((), dtype=torch.float16).backward()


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="backward-overwrites-parameter-grad",
        description="backward() into an nn.Parameter that already has a .grad overwrites it with the new gradient instead of adding to it (plain leaf tensors still accumulate)",
        claims=("autograd.grad-accumulates",),
        domain={"leaf_kind": "parameter"},
        region="nn.Parameter leaves that already have a .grad",
        family="subclass",
        patch=wrap(
            "torch.autograd.backward", functools.partial(_grads_reset_before, _parameter_with_grad)
        ),
        witness=_witness_backward_overwrites_parameter_grad,
    ),
    Mutant(
        name="backward-overwrites-tensor-grad",
        description="backward() into a plain-tensor leaf that already has a .grad overwrites it with the new gradient instead of adding to it (nn.Parameter leaves still accumulate)",
        claims=("autograd.grad-accumulates",),
        domain={"leaf_kind": "tensor"},
        region="plain (non-Parameter) leaf tensors that already have a .grad",
        family="subclass",
        patch=wrap(
            "torch.autograd.backward", functools.partial(_grads_reset_before, _tensor_with_grad)
        ),
        witness=_witness_backward_overwrites_tensor_grad,
    ),
    Mutant(
        name="parameter-inplace-allowed",
        description="an in-place op on an nn.Parameter that requires grad (or on a view of one) runs silently under no_grad instead of raising (plain leaf tensors still raise)",
        claims=("autograd.leaf-inplace-raises",),
        domain={"leaf_kind": "parameter"},
        region="nn.Parameter leaves requiring grad and views of them, written in place with grad enabled",
        family="subclass",
        patch=wrap_each((*INPLACE_OPS, "torch.Tensor.__iadd__"), _parameter_inplace_allowed),
        witness=_witness_parameter_inplace_allowed,
    ),
    Mutant(
        name="tensor-leaf-inplace-writes-before-raising",
        description="an in-place op on a plain-tensor leaf that requires grad (or a view of one) writes its result and bumps the version before raising the leaf error (nn.Parameter leaves are refused before writing)",
        claims=("autograd.leaf-inplace-error-before-write",),
        domain={"leaf_kind": "tensor"},
        region="plain (non-Parameter) leaf tensors requiring grad and views of them, written in place",
        family="subclass",
        patch=wrap_each(
            (*INPLACE_OPS, "torch.Tensor.__iadd__"), _tensor_leaf_inplace_writes_before_raising
        ),
        witness=_witness_tensor_leaf_inplace_writes_before_raising,
    ),
    Mutant(
        name="retain-grad-on-parameter-returns-self",
        description="retain_grad() on an nn.Parameter returns the Parameter instead of None (plain leaves return None)",
        claims=("autograd.retain-grad-noop-on-leaf",),
        domain={"leaf_kind": "parameter"},
        region="retain_grad() called on an nn.Parameter",
        family="subclass",
        patch=wrap(
            "torch.nn.Parameter.retain_grad",
            _retain_grad_on_parameter_returns_self,
            original="torch.Tensor.retain_grad",
        ),
        witness=_witness_retain_grad_on_parameter_returns_self,
    ),
    Mutant(
        name="retain-grad-on-tensor-leaf-marks-retaining",
        description="retain_grad() on a plain leaf tensor returns the tensor instead of None, as if it registered a retaining hook (nn.Parameter leaves are unaffected)",
        claims=("autograd.retain-grad-noop-on-leaf",),
        domain={"leaf_kind": "tensor"},
        region="retain_grad() called on a plain (non-Parameter) leaf tensor",
        family="subclass",
        patch=wrap("torch.Tensor.retain_grad", _retain_grad_on_tensor_leaf_marks_retaining),
        witness=_witness_retain_grad_on_tensor_leaf_marks_retaining,
    ),
    Mutant(
        name="parameter-requires-grad-method-noop",
        description="requires_grad_(flag) on an nn.Parameter returns it without changing the flag (plain tensors and the attribute setter work)",
        claims=("autograd.requires-grad-method",),
        domain={"leaf_kind": "parameter"},
        region="the method form requires_grad_() on an nn.Parameter",
        family="subclass",
        patch=_patch_parameter_requires_grad_method_noop,
        witness=_witness_parameter_requires_grad_method_noop,
    ),
    Mutant(
        name="tensor-requires-grad-method-returns-copy",
        description="requires_grad_(flag) on a plain leaf tensor sets the flag on a detached copy and returns the copy (nn.Parameters and the attribute setter work)",
        claims=("autograd.requires-grad-method",),
        domain={"leaf_kind": "tensor"},
        region="the method form requires_grad_() on a plain (non-Parameter) leaf tensor",
        family="subclass",
        patch=wrap("torch.Tensor.requires_grad_", _tensor_requires_grad_method_returns_copy),
        witness=_witness_tensor_requires_grad_method_returns_copy,
    ),
    Mutant(
        name="requires-grad-noop",
        description="requires_grad_() returns self without changing the flag",
        claims=("autograd.requires-grad-method", "autograd.leaf-table"),
        patch=_patch_requires_grad_noop,
        witness=_witness_requires_grad_noop,
    ),
    Mutant(
        name="requires-grad-false-nonleaf-detaches",
        description="requires_grad_(False) on a non-leaf (non-view) silently detaches it in place instead of raising",
        claims=("autograd.requires-grad-nonleaf",),
        region="non-leaf non-view tensors",
        family="autograd",
        patch=wrap("torch.Tensor.requires_grad_", _requires_grad_false_nonleaf_detaches),
        witness=_witness_requires_grad_false_nonleaf_detaches,
    ),
    Mutant(
        name="requires-grad-integer-silent",
        description="requires_grad_(True) on an integer/bool tensor silently does nothing instead of raising",
        claims=("autograd.requires-grad-integer-raises",),
        region="integer and bool tensors",
        family="dtype",
        patch=wrap("torch.Tensor.requires_grad_", _requires_grad_integer_silent_call),
        witness=_witness_requires_grad_integer_silent,
    ),
    Mutant(
        name="retain-grad-noop",
        description="retain_grad() does nothing: a non-leaf's .grad stays None after backward",
        claims=("autograd.retain-grad-populates",),
        patch=_patch_retain_grad_noop,
        witness=_witness_retain_grad_noop,
    ),
    Mutant(
        name="retain-grad-noop-views",
        description="retain_grad() on a non-leaf *view* does nothing (other non-leaves are fine)",
        claims=("autograd.retain-grad-populates", "autograd.retain-grad-requires-grad"),
        region="non-leaf views",
        family="layout",
        patch=wrap("torch.Tensor.retain_grad", _retain_grad_noop_views),
        witness=_witness_retain_grad_noop_views,
    ),
    Mutant(
        name="retain-grad-no-grad-silent",
        description="retain_grad() on a tensor that does not require grad returns silently instead of raising",
        claims=("autograd.retain-grad-requires-grad",),
        region="tensors that do not require grad",
        family="autograd",
        patch=wrap("torch.Tensor.retain_grad", _retain_grad_no_grad_silent_call),
        witness=_witness_retain_grad_no_grad_silent,
    ),
    Mutant(
        name="grad-setter-reshapes",
        description="assigning .grad of another shape with the same numel silently reshapes it instead of raising",
        claims=("autograd.grad-setter-validates",),
        region="a .grad of another shape with the same numel",
        family="relation",
        patch=_patch_grad_setter_reshapes,
        witness=_witness_grad_setter_reshapes,
    ),
    Mutant(
        name="nonleaf-grad-silent",
        description="reading .grad of a non-leaf does not warn",
        claims=("autograd.nonleaf-grad-warns",),
        region="non-leaf tensors",
        family="autograd",
        patch=_patch_nonleaf_grad_silent,
        witness=_witness_nonleaf_grad_silent,
    ),
    Mutant(
        name="backward-retains-graph",
        description="backward() always keeps the graph, so a second backward silently succeeds",
        claims=("autograd.backward-twice-raises",),
        patch=wrap("torch.autograd.backward", _backward_retains_graph),
        witness=_witness_backward_retains_graph,
    ),
    Mutant(
        name="backward-implicit-ones",
        description="backward() of a non-scalar output without a gradient silently uses ones",
        claims=("autograd.nonscalar-backward-needs-gradient",),
        region="non-scalar outputs without a gradient argument",
        family="relation",
        patch=wrap("torch.autograd.backward", _backward_implicit_ones_call),
        witness=_witness_backward_implicit_ones,
    ),
    Mutant(
        name="is-leaf-true-for-0d",
        description="is_leaf reports True for every 0-d tensor that requires grad (a scalar fast path reading requires_grad but not grad_fn), so scalar op results look like leaves",
        claims=("autograd.leaf-until-operated", "autograd.leaf-table"),
        region="0-d results of operations on tensors that require grad",
        family="layout",
        patch=_patch_is_leaf_true_for_0d,
        witness=_witness_is_leaf_true_for_0d,
    ),
    Mutant(
        name="integral-views-not-leaves",
        description="is_leaf reports False for views of integer and bool tensors (leafness read as 'not a view' for dtypes that cannot require grad)",
        claims=("autograd.requires-grad-false-always-leaf",),
        region="views of integer and bool tensors",
        family="dtype",
        patch=_patch_integral_views_not_leaves,
        witness=_witness_integral_views_not_leaves,
    ),
    Mutant(
        name="sum-retains-input-grad",
        description="sum() calls retain_grad() on a non-leaf input, so backward fills the .grad of intermediate results",
        claims=("autograd.only-leaves-get-grad", "autograd.leaf-table"),
        region="non-leaf tensors reduced by sum()",
        family="autograd",
        patch=wrap("torch.Tensor.sum", _sum_retains_input_grad, also=("torch.sum",)),
        witness=_witness_sum_retains_input_grad,
    ),
    Mutant(
        name="binary-op-ignores-right-operand-grad",
        description="a binary op (+, -, *, /, @) whose left operand does not require grad returns a detached result even when the right one does",
        claims=("autograd.requires-grad-contagious",),
        region="only the right-hand operand requires grad",
        family="relation",
        patch=wrap_each(
            (
                *(
                    f"torch.Tensor.{op}"
                    for op in ("__add__", "__sub__", "__mul__", "__truediv__", "__matmul__")
                ),
                *(f"torch.{op}" for op in ("add", "sub", "mul", "div", "matmul")),
            ),
            _binary_op_ignores_right_operand_grad,
        ),
        witness=_witness_binary_op_ignores_right_operand_grad,
    ),
    Mutant(
        name="leaf-view-inplace-silent",
        description="an in-place op on a view of a leaf that requires grad runs untracked (as under no_grad) instead of raising the leaf error",
        claims=("autograd.leaf-inplace-raises",),
        region="views of a leaf that requires grad",
        family="autograd",
        patch=wrap_each((*INPLACE_OPS, "torch.Tensor.__iadd__"), _leaf_view_inplace_silent),
        witness=_witness_leaf_view_inplace_silent,
    ),
    Mutant(
        name="leaf-inplace-writes-then-raises-reduced",
        description="an in-place op on a float16/bfloat16 leaf that requires grad (or a view of one) writes its result and bumps the version before raising the leaf error (issue #2940 regressed)",
        claims=("autograd.leaf-inplace-error-before-write",),
        region="float16 and bfloat16 leaves",
        family="dtype",
        patch=wrap_each(
            (*INPLACE_OPS, "torch.Tensor.__iadd__"), _leaf_inplace_writes_then_raises_reduced
        ),
        witness=_witness_leaf_inplace_writes_then_raises_reduced,
    ),
    Mutant(
        name="retain-grad-marks-leaf-views",
        description="retain_grad() on a leaf that is a view (of a tensor not requiring grad) marks it retains_grad=True instead of being a no-op",
        claims=("autograd.retain-grad-noop-on-leaf",),
        region="leaves that are views",
        family="layout",
        patch=_patch_retain_grad_marks_leaf_views,
        witness=_witness_retain_grad_marks_leaf_views,
    ),
    Mutant(
        name="complex-mul-backward-forgets-conj",
        description="the backward of a * b for complex tensors returns grad * b instead of grad * conj(b)",
        claims=("autograd.chain-rule-values",),
        domain={"dtype_family": "complex"},
        region="complex operands of the same shape",
        family="dtype",
        patch=functools.partial(
            mul_with_backward, _save_operands, _grad_without_conj, _complex_operands
        ),
        witness=_witness_complex_mul_backward_forgets_conj,
    ),
    Mutant(
        name="backward-overwrites-double-grads",
        description="backward() resets an existing .grad of float64/complex128 leaves instead of accumulating into it",
        claims=("autograd.grad-accumulates",),
        region="float64 and complex128 leaves",
        family="dtype",
        patch=wrap(
            "torch.autograd.backward", functools.partial(_grads_reset_before, _double_with_grad)
        ),
        witness=_witness_backward_overwrites_double_grads,
    ),
    Mutant(
        name="second-backward-always-raises-reduced",
        description="a second backward() through a float16/bfloat16 graph raises 'Trying to backward through the graph a second time' even when no node saved a tensor",
        claims=("autograd.backward-twice-without-saved-tensors",),
        region="graphs rooted at a float16 or bfloat16 tensor",
        family="dtype",
        patch=wrap("torch.Tensor.backward", _second_backward_always_raises_reduced),
        witness=_witness_second_backward_always_raises_reduced,
    ),
    Mutant(
        name="noncontig-view-inplace-not-rebased",
        description="mul_ on a non-contiguous view of a non-leaf runs untracked: the base keeps its old grad_fn (no CopySlices) and backward misses the write",
        claims=("autograd.inplace-on-view-rebases-base",),
        region="non-contiguous views of a non-leaf",
        family="layout",
        patch=wrap("torch.Tensor.mul_", _noncontig_view_inplace_not_rebased),
        witness=_witness_noncontig_view_inplace_not_rebased,
    ),
    Mutant(
        name="float64-view-inplace-refused",
        description="mul_ on a float64 view of a non-leaf raises (the storage is shared with the base) instead of rebasing the base onto CopySlices; the test of the stale 'shared storage raises' sentence sees the change as an unexpected pass",
        claims=("autograd.inplace-shared-storage-raises", "autograd.inplace-on-view-rebases-base"),
        region="float64 views of a non-leaf",
        family="dtype",
        patch=wrap("torch.Tensor.mul_", _float64_view_inplace_refused),
        witness=_witness_float64_view_inplace_refused,
    ),
    Mutant(
        name="chunk-via-narrow",
        description="chunk() of a tensor that requires grad returns narrow() views (single-output views), so modifying one chunk in place is allowed",
        claims=("autograd.multi-output-view-inplace-raises",),
        region="chunk() of tensors that require grad",
        family="autograd",
        patch=wrap("torch.Tensor.chunk", _chunk_via_narrow, also=("torch.chunk",)),
        witness=_witness_chunk_via_narrow,
    ),
    Mutant(
        name="upcast-of-leaf-is-new-leaf",
        description="to() a wider floating dtype of a leaf that requires grad returns a fresh leaf (detached, then requires_grad_()) instead of a non-leaf copy in the graph",
        claims=("autograd.cast-copy-not-leaf",),
        region="upcasts of floating leaves to a wider dtype",
        family="dtype",
        patch=wrap("torch.Tensor.to", _upcast_of_leaf_is_new_leaf),
        witness=_witness_upcast_of_leaf_is_new_leaf,
    ),
    Mutant(
        name="clone-0d-returns-self",
        description="clone() of a 0-d tensor that does not require grad returns the tensor itself ('scalars are immutable'), so requires_grad_() on the copy flags the original",
        claims=("autograd.requires-grad-on-copy-starts-graph",),
        region="0-d tensors that do not require grad",
        family="layout",
        patch=wrap("torch.Tensor.clone", _clone_0d_returns_self, also=("torch.clone",)),
        witness=_witness_clone_0d_returns_self,
    ),
    Mutant(
        name="backward-without-graph-silent-reduced",
        description="backward() on a float16/bfloat16 tensor that does not require grad silently returns instead of raising",
        claims=("autograd.backward-without-graph-raises",),
        region="float16 and bfloat16 tensors",
        family="dtype",
        patch=wrap("torch.Tensor.backward", _backward_without_graph_silent_reduced),
        witness=_witness_backward_without_graph_silent_reduced,
    ),
)

from conformance.mutants._tensor_domain import DTYPE_FAMILIES, domain_mutants  # noqa: E402


def _requires_grad_integer_silent(hit, orig_requires_grad_, self, requires_grad=True):
    if requires_grad and hit(self):
        return self
    return orig_requires_grad_(self, requires_grad)


def _requires_grad_integer_silent_witness(make):
    t = make()
    with refused(RuntimeError, "requires_grad_() of a bool/integer tensor did not raise"):
        t.requires_grad_()


# Issue 29: autograd.requires-grad-integer-raises speaks of bool, signed and
# unsigned tensors; each mutant lets requires_grad_() succeed silently (the
# flag unchanged) for one of these dtype families only.
MUTANTS += domain_mutants(
    prefix="requires-grad-integer-silent",
    claims=("autograd.requires-grad-integer-raises",),
    what="t.requires_grad_() of a tensor that cannot require grad returns t without raising",
    patch=wrap("torch.Tensor.requires_grad_", _requires_grad_integer_silent),
    witness=_requires_grad_integer_silent_witness,
    dims={"dtype_family": ("bool", "signed", "unsigned")},
)


def _not_requiring_grad_not_leaf(hit):
    _orig_is_leaf = torch._C.TensorBase.is_leaf

    def _is_leaf(self):
        if not self.requires_grad and hit(self):
            return False
        return _orig_is_leaf.__get__(self)

    torch.Tensor.is_leaf = property(_is_leaf)


def _not_requiring_grad_not_leaf_witness(make):
    t = make()
    assert t.is_leaf, "a tensor that does not require grad is not a leaf"


# Issue 29: autograd.requires-grad-false-always-leaf speaks of every dtype; each
# mutant reports a tensor that does not require grad as a non-leaf for one
# dtype family only.
MUTANTS += domain_mutants(
    prefix="not-requiring-grad-not-leaf",
    claims=("autograd.requires-grad-false-always-leaf",),
    what="t.is_leaf is False for a tensor that does not require grad",
    patch=_not_requiring_grad_not_leaf,
    witness=_not_requiring_grad_not_leaf_witness,
    dims={"dtype_family": DTYPE_FAMILIES},
)


def _backward_implicit_ones(
    hit, orig_backward, self, gradient=None, retain_graph=None, create_graph=False, inputs=None
):
    if gradient is None and self.requires_grad and self.numel() != 1 and hit(self):
        gradient = torch.ones_like(self)
    return orig_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _backward_implicit_ones_witness(make):
    y = make().requires_grad_() * 2
    with refused(
        RuntimeError, "backward() without a gradient on a non-scalar output did not raise"
    ):
        y.backward()


# Issue 29: autograd.nonscalar-backward-needs-gradient speaks of real tensors
# (float16/bfloat16, float32/float64) and of zero-element ones; each mutant
# invents a gradient of ones for one family or for zero-element outputs only.
MUTANTS += domain_mutants(
    prefix="backward-implicit-ones",
    claims=("autograd.nonscalar-backward-needs-gradient",),
    what="backward() without a gradient on an output that is not one element uses a gradient of ones instead of raising",
    patch=wrap("torch.Tensor.backward", _backward_implicit_ones),
    witness=_backward_implicit_ones_witness,
    dims={"dtype_family": ("reduced_float", "float"), "layout": ("zero-size",)},
)


def _retain_grad_no_grad_silent(hit, orig_retain_grad, self):
    if not self.requires_grad and hit(self):
        return None
    return orig_retain_grad(self)


def _retain_grad_no_grad_silent_witness(make):
    t = make()
    with refused(RuntimeError, "retain_grad() on a tensor not requiring grad did not raise"):
        t.retain_grad()


# Issue 29: autograd.retain-grad-requires-grad speaks of every tensor that does
# not require grad; each mutant lets retain_grad() pass silently on one kind.
MUTANTS += domain_mutants(
    prefix="retain-grad-no-grad-silent",
    claims=("autograd.retain-grad-requires-grad",),
    what="retain_grad() on a tensor that does not require grad returns None instead of raising",
    patch=wrap("torch.Tensor.retain_grad", _retain_grad_no_grad_silent),
    witness=_retain_grad_no_grad_silent_witness,
    dims={"tensor_kind": ("plain", "parameter", "subclass", "inference")},
    makers={
        "tensor_kind": {
            "plain": lambda: torch.ones(3),
            "parameter": lambda: torch.nn.Parameter(torch.ones(3), requires_grad=False),
            "subclass": lambda: torch.ones(3).as_subclass(type("Sub", (torch.Tensor,), dict())),
            "inference": lambda: torch.inference_mode()(torch.ones)(3),
        }
    },
)


def _same_operands_at(hit, a, b):
    return (
        isinstance(a, torch.Tensor)
        and isinstance(b, torch.Tensor)
        and a.shape == b.shape
        and a.dtype == b.dtype
        and hit(a)
        and torch.is_grad_enabled()
        and (a.requires_grad or b.requires_grad)
    )


def _mul_backward_uses_own_operand(hit):
    mul_with_backward(
        _save_operands, _grad_by_own_operand, functools.partial(_same_operands_at, hit)
    )


def _mul_backward_uses_own_operand_witness(make):
    a = make().requires_grad_()
    b = make().flip(0).requires_grad_()
    (a * b).sum().backward()
    assert torch.equal(a.grad, b.detach()), "the gradient of a * b with respect to a is not b"


# Issue 29: autograd.chain-rule-values speaks of real and complex leaves; each
# mutant gives a * b the backward (grad * a, grad * b) - each operand's
# gradient uses itself instead of the other operand - for one real dtype
# family only (complex-mul-backward-forgets-conj is the complex one).
MUTANTS += domain_mutants(
    prefix="mul-backward-uses-own-operand",
    claims=("autograd.chain-rule-values",),
    what="the backward of a * b of two same-shape tensors gives a the gradient grad * a (and b grad * b)",
    patch=_mul_backward_uses_own_operand,
    witness=_mul_backward_uses_own_operand_witness,
    dims={"dtype_family": ("reduced_float", "float")},
)


def _view_inplace_not_rebased(hit, orig_mul_, self, *args, **kwargs):
    if (
        self._is_view()
        and self.requires_grad
        and not self.is_leaf
        and torch.is_grad_enabled()
        and hit(self)
    ):
        with torch.no_grad():
            return orig_mul_(self, *args, **kwargs)
    return orig_mul_(self, *args, **kwargs)


def _view_inplace_not_rebased_witness(make):
    v = make()
    b = v._base
    v.mul_(2)
    assert type(b.grad_fn).__name__ == "CopySlices", "in-place on a view did not rebase its base"


# Issue 29: autograd.inplace-on-view-rebases-base speaks of every view of a
# non-leaf (expanded views excluded); each mutant runs mul_ on a view of one
# layout family untracked (under no_grad): the base keeps its grad_fn.
MUTANTS += domain_mutants(
    prefix="view-inplace-not-rebased",
    claims=("autograd.inplace-on-view-rebases-base",),
    what="mul_ on a view of a non-leaf runs untracked: the base keeps its old grad_fn (no CopySlices) and backward misses the write",
    patch=wrap("torch.Tensor.mul_", _view_inplace_not_rebased),
    witness=_view_inplace_not_rebased_witness,
    dims={
        "layout": (
            "contiguous",
            "offset",
            "stepped",
            "permuted",
            "channels_last",
            "zero-size",
            "0-d",
        )
    },  # fmt: skip
    makers={
        "layout": {
            "contiguous": lambda: (torch.ones(2, 3, requires_grad=True) * 1)[...],
            "offset": lambda: (torch.ones(4, 3, requires_grad=True) * 1)[1:],
            "stepped": lambda: (torch.ones(2, 6, requires_grad=True) * 1)[:, ::2],
            "permuted": lambda: (torch.ones(3, 2, requires_grad=True) * 1).t(),
            "channels_last": (
                lambda: (
                    torch.ones(2, 3, 2, 2)
                    .contiguous(memory_format=torch.channels_last)
                    .requires_grad_()
                    * 1
                )[...]
            ),
            "zero-size": lambda: (torch.ones(0, 3, requires_grad=True) * 1)[...],
            "0-d": lambda: (torch.ones((), requires_grad=True) * 1)[...],
        }
    },
)


def _cast_of_leaf_is_new_leaf(hit, orig_to, self, *args, **kwargs):
    out = orig_to(self, *args, **kwargs)
    if (
        out is not self
        and self.is_leaf
        and self.requires_grad
        and out.dtype != self.dtype
        and hit(self)
    ):
        out = out.detach().requires_grad_()
    return out


def _cast_of_leaf_is_new_leaf_witness(make):
    x = make().requires_grad_()
    c = x.to(torch.float32 if x.dtype != torch.float32 else torch.float64)
    assert not c.is_leaf and c.grad_fn is not None, "a dtype copy of a leaf is a leaf"


# Issue 29: autograd.cast-copy-not-leaf speaks of float16/bfloat16 and
# float32/float64 leaves; each mutant makes a dtype copy of a leaf of one
# family a fresh leaf (detached, then requires_grad_()).
MUTANTS += domain_mutants(
    prefix="cast-of-leaf-is-new-leaf",
    claims=("autograd.cast-copy-not-leaf",),
    what="to(another dtype) of a leaf that requires grad returns a fresh leaf cut from the graph",
    patch=wrap("torch.Tensor.to", _cast_of_leaf_is_new_leaf),
    witness=_cast_of_leaf_is_new_leaf_witness,
    dims={"dtype_family": ("reduced_float", "float")},
)


def _tag_no_grad_results():
    """Tag every tensor a torch function returns inside a ``torch.no_grad()``
    block (``t.__dict__["_made_under_no_grad"]``), so a mutant can tell a
    result computed under no_grad from one computed with grad enabled (a
    TorchFunctionMode pushed by no_grad's ``__enter__``)."""
    from torch.overrides import TorchFunctionMode

    class _TagNoGrad(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor):
                out.__dict__["_made_under_no_grad"] = True
            return out

    _no_grad_enter, _no_grad_exit = torch.no_grad.__enter__, torch.no_grad.__exit__

    def __enter__(self):
        _no_grad_enter(self)
        self.__dict__.setdefault("_tag_modes", []).append(_TagNoGrad().__enter__())

    def __exit__(self, *exc):
        modes = self.__dict__.get("_tag_modes")
        if modes:
            modes.pop().__exit__(None, None, None)
        return _no_grad_exit(self, *exc)

    torch.no_grad.__enter__ = __enter__
    torch.no_grad.__exit__ = __exit__


def _made_under_no_grad(t):
    return bool(t.__dict__.get("_made_under_no_grad"))


def _witness_backward_skips_parameter_grad():
    p = torch.nn.Parameter(torch.ones(2))
    (p * 3).sum().backward()
    assert p.grad is not None, "backward() did not populate an nn.Parameter's .grad"


def _witness_backward_skips_tensor_leaf_grad():
    t = torch.ones(2, requires_grad=True)
    (t * 3).sum().backward()
    assert t.grad is not None, "backward() did not populate a leaf tensor's .grad"


def _backward_refuses_0d_output(
    orig, self, gradient=None, retain_graph=None, create_graph=False, inputs=None
):
    if gradient is None and self.dim() == 0 and self.requires_grad:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    return orig(self, gradient, retain_graph, create_graph, inputs=inputs)


def _witness_backward_refuses_0d_output():
    x = torch.tensor(1.5, requires_grad=True)
    with accepted(RuntimeError, "backward() of a 0-d output raised"):
        (x * 2).backward()
    assert x.grad.item() == 2.0


def _parameter_cast_is_new_leaf(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if (
        out is not self
        and isinstance(self, torch.nn.Parameter)
        and self.requires_grad
        and torch.is_grad_enabled()
    ):
        out = out.detach().requires_grad_()
    return out


def _witness_parameter_cast_is_new_leaf():
    p = torch.nn.Parameter(torch.ones(2))
    c = p.to(torch.float64)
    assert not c.is_leaf and c.grad_fn is not None, "a dtype copy of a Parameter is a leaf"


def _tensor_leaf_cast_is_new_leaf(orig, self, *args, **kwargs):
    out = orig(self, *args, **kwargs)
    if (
        out is not self
        and type(self) is torch.Tensor
        and self.is_leaf
        and self.requires_grad
        and torch.is_grad_enabled()
    ):
        out = out.detach().requires_grad_()
    return out


def _witness_tensor_leaf_cast_is_new_leaf():
    x = torch.ones(2, requires_grad=True)
    c = x.to(torch.float64)
    assert not c.is_leaf and c.grad_fn is not None, "a dtype copy of a leaf is a leaf"


def _patch_backward_after_no_grad_silent():
    _tag_no_grad_results()

    _orig_backward = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        if not self.requires_grad and _made_under_no_grad(self):
            return None
        return _orig_backward(self, *args, **kwargs)

    torch.Tensor.backward = backward


def _witness_backward_after_no_grad_silent():
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        t = (x * 2).sum()
    with refused(RuntimeError, "backward() of a result computed under no_grad did not raise"):
        t.backward()


def _patch_backward_without_graph_silent_grad_enabled():
    _tag_no_grad_results()

    _orig_backward = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        if not self.requires_grad and not _made_under_no_grad(self):
            return None
        return _orig_backward(self, *args, **kwargs)

    torch.Tensor.backward = backward


def _witness_backward_without_graph_silent_grad_enabled():
    t = torch.ones(3).sum()
    with refused(RuntimeError, "backward() of a tensor without a graph did not raise"):
        t.backward()


# Issue 29: the hand-written mutants of the leaf_kind, layout and grad_mode
# values of autograd.only-leaves-get-grad, autograd.nonscalar-backward-needs-gradient,
# autograd.cast-copy-not-leaf and autograd.backward-without-graph-raises.
MUTANTS += (
    Mutant(
        name="backward-skips-parameter-grad",
        description="backward() leaves .grad None on nn.Parameter leaves that had no .grad yet (plain leaf tensors get theirs)",
        claims=("autograd.only-leaves-get-grad",),
        domain={"leaf_kind": "parameter"},
        region="nn.Parameter leaves requiring grad whose .grad is None before backward",
        family="subclass",
        patch=wrap(
            "torch.autograd.backward",
            functools.partial(_grads_reset_after, _parameter_without_grad),
        ),
        witness=_witness_backward_skips_parameter_grad,
    ),
    Mutant(
        name="backward-skips-tensor-leaf-grad",
        description="backward() leaves .grad None on plain-tensor leaves that had no .grad yet (nn.Parameter leaves get theirs)",
        claims=("autograd.only-leaves-get-grad",),
        domain={"leaf_kind": "tensor"},
        region="plain (non-Parameter) leaf tensors requiring grad whose .grad is None before backward",
        family="subclass",
        patch=wrap(
            "torch.autograd.backward", functools.partial(_grads_reset_after, _tensor_without_grad)
        ),
        witness=_witness_backward_skips_tensor_leaf_grad,
    ),
    Mutant(
        name="backward-refuses-0d-output",
        description="backward() without a gradient on a 0-d output raises 'grad can be implicitly created only for scalar outputs' (one-element outputs of other shapes still work)",
        claims=("autograd.nonscalar-backward-needs-gradient",),
        domain={"layout": "0-d"},
        region="0-d outputs, backward() without a gradient argument",
        family="layout",
        patch=wrap("torch.Tensor.backward", _backward_refuses_0d_output),
        witness=_witness_backward_refuses_0d_output,
    ),
    Mutant(
        name="parameter-cast-is-new-leaf",
        description="to(another dtype) of an nn.Parameter that requires grad returns a fresh leaf cut from the graph (plain leaf tensors give a non-leaf copy)",
        claims=("autograd.cast-copy-not-leaf",),
        domain={"leaf_kind": "parameter"},
        region="dtype/device copies of nn.Parameter leaves requiring grad",
        family="subclass",
        patch=wrap("torch.Tensor.to", _parameter_cast_is_new_leaf),
        witness=_witness_parameter_cast_is_new_leaf,
    ),
    Mutant(
        name="tensor-leaf-cast-is-new-leaf",
        description="to(another dtype) of a plain leaf tensor that requires grad returns a fresh leaf cut from the graph (nn.Parameter leaves give a non-leaf copy)",
        claims=("autograd.cast-copy-not-leaf",),
        domain={"leaf_kind": "tensor"},
        region="dtype/device copies of plain (non-Parameter) leaf tensors requiring grad",
        family="subclass",
        patch=wrap("torch.Tensor.to", _tensor_leaf_cast_is_new_leaf),
        witness=_witness_tensor_leaf_cast_is_new_leaf,
    ),
    Mutant(
        name="backward-after-no-grad-silent",
        description="backward() on a result computed under torch.no_grad() (no graph) returns silently instead of raising (graph-less tensors computed with grad enabled still raise)",
        claims=("autograd.backward-without-graph-raises",),
        domain={"grad_mode": "no_grad"},
        region="tensors without a graph that were computed under torch.no_grad()",
        family="mode",
        patch=_patch_backward_after_no_grad_silent,
        witness=_witness_backward_after_no_grad_silent,
    ),
    Mutant(
        name="backward-without-graph-silent-grad-enabled",
        description="backward() on a tensor without a graph computed with grad enabled (a plain tensor or ops on one) returns silently instead of raising (results computed under torch.no_grad() still raise)",
        claims=("autograd.backward-without-graph-raises",),
        domain={"grad_mode": "enabled"},
        region="tensors without a graph that were computed with grad enabled",
        family="mode",
        patch=_patch_backward_without_graph_silent_grad_enabled,
        witness=_witness_backward_without_graph_silent_grad_enabled,
    ),
)


def _grad_setter_copies(hit):
    _orig_grad = torch._C.TensorBase.grad

    def _get_grad(self):
        return _orig_grad.__get__(self)

    def _set_grad(self, g):
        if isinstance(g, torch.Tensor) and hit(self):
            g = g.clone()
        _orig_grad.__set__(self, g)

    def _del_grad(self):
        _orig_grad.__delete__(self)

    torch.Tensor.grad = property(_get_grad, _set_grad, _del_grad)


def _grad_setter_copies_witness(make):
    x = make().detach().requires_grad_()
    g = torch.ones_like(x)
    x.grad = g
    assert x.grad is g, "a valid .grad assignment was not stored as is"


# Issue 29: autograd.grad-setter-validates speaks of every leaf's layout; this
# mutant stores a copy of a valid gradient (not the tensor assigned) for
# expanded leaves only.
MUTANTS += domain_mutants(
    prefix="grad-setter-copies",
    claims=("autograd.grad-setter-validates",),
    what="assigning a valid .grad stores a copy of it instead of the tensor itself",
    patch=_grad_setter_copies,
    witness=_grad_setter_copies_witness,
    dims={"layout": ("expanded",)},
)
