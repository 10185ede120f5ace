"""Mutants of the ``graphs`` area (Autograd graphs); claims in ``conformance/claims/graphs.toml``,
tests in ``conformance/test_graphs.py``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools

from conformance.mutants.base import Mutant
from conformance.mutants.patching import function_mode, patches, refused, torch, wrap, wrap_each

#: The start of torch's error for an in-place write of an inference tensor outside the mode.
_INFERENCE_WRITE = "Inplace update to inference tensor outside InferenceMode"


def _getitem_no_grad_detaches(func, args, kwargs):
    out = func(*args, **kwargs)
    if (
        getattr(func, "__name__", "") == "__getitem__"
        and args[0].requires_grad
        and not torch.is_grad_enabled()
        and isinstance(out, torch.Tensor)
    ):
        out = out.detach()
    return out


def _witness_getitem_no_grad_detaches():
    x = torch.ones(4, requires_grad=True)
    with torch.no_grad():
        v = x[1:]
    assert v.requires_grad


def _backward_overwrites_grad(backward, self, *args, **kwargs):
    stack = [self.grad_fn] if self.grad_fn is not None else []
    seen = set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        variable = getattr(fn, "variable", None)
        if variable is not None:
            variable.grad = None
        stack.extend(f for f, _ in fn.next_functions)
    return backward(self, *args, **kwargs)


def _witness_backward_overwrites_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0], x.grad


def _patch_sigmoid_backward_reads_input():
    _sigmoid = torch.sigmoid

    class _Sigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x  # a plain reference: no saved-tensor version check
            return _sigmoid(x)

        @staticmethod
        def backward(ctx, grad):
            s = _sigmoid(ctx.x)
            return grad * (s * (1 - s)).conj()

    def sigmoid(input, *, out=None):
        return _Sigmoid.apply(input)

    torch.sigmoid = sigmoid
    torch.Tensor.sigmoid = sigmoid


def _witness_sigmoid_backward_reads_input():
    x = torch.tensor([0.5, -1.0], requires_grad=True)
    y = torch.sigmoid(x)
    want = (y * (1 - y)).detach()
    x.data.mul_(3.0)
    y.sum().backward()
    assert torch.equal(x.grad, want), (x.grad, want)


def _grad_fn_first(method, self, *args, **kwargs):
    try:
        _ = self.grad_fn
    except RuntimeError:
        pass
    return method(self, *args, **kwargs)


def _witness_view_grad_fn_eager():
    base = torch.zeros(3)
    v = base[:2]
    w = torch.ones((), requires_grad=True)
    base.mul_(w)  # base now requires grad; v is a lazy view (no grad_fn yet)
    with refused(
        RuntimeError,
        "in-place op on a lazy view did not raise the leaf error",
        match="leaf Variable that requires grad",
    ):
        v.add_(1.0)


def _binary_op_mixed_operands_unrecorded(func, args, kwargs):
    ts = [a for a in args if isinstance(a, torch.Tensor)]
    if (
        getattr(func, "__name__", "") in {"add", "sub", "mul", "div", "maximum"}
        and len(ts) == 2
        and ts[0].requires_grad != ts[1].requires_grad
    ):
        with torch.no_grad():
            return func(*args, **kwargs)
    return func(*args, **kwargs)


def _witness_binary_op_mixed_operands_unrecorded():
    x = torch.ones(2, requires_grad=True)
    y = torch.sub(torch.ones(2), x)
    assert y.requires_grad and y.grad_fn is not None


def _patch_graphs_is_leaf_true_for_0d():
    _is_leaf = torch._C.TensorBase.is_leaf

    def is_leaf(self):
        return True if self.dim() == 0 else _is_leaf.__get__(self)

    torch.Tensor.is_leaf = property(is_leaf)


def _witness_graphs_is_leaf_true_for_0d():
    x = torch.ones(3, requires_grad=True)
    assert not x.sum().is_leaf


#: The differentiable ops the grad-mode mutants of the graph tests read.
_OPS = {"exp", "sin", "tanh", "sigmoid", "relu", "abs", "neg", "square", "add", "sub", "mul",
        "div", "maximum", "sum", "mean", "amax", "matmul"}  # fmt: skip


def _no_grad_results_keep_requires_grad(func, args, kwargs):
    out = func(*args, **kwargs)
    if (
        getattr(func, "__name__", "") in _OPS
        and not torch.is_grad_enabled()
        and not torch.is_inference_mode_enabled()
        and isinstance(out, torch.Tensor)
        and not out._is_view()
        and (out.is_floating_point() or out.is_complex())
        and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
    ):
        out.requires_grad_(True)
    return out


def _witness_no_grad_results_keep_requires_grad():
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        y = torch.exp(x)
    assert not y.requires_grad


def _inference_mode_grad_inputs_give_normal_tensors(func, args, kwargs):
    if (
        getattr(func, "__name__", "") in _OPS | {"clone"}
        and torch.is_inference_mode_enabled()
        and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
    ):
        with torch.inference_mode(False), torch.no_grad():
            return func(*args, **kwargs)
    return func(*args, **kwargs)


def _witness_inference_mode_grad_inputs_give_normal_tensors():
    x = torch.ones(3, requires_grad=True)
    with torch.inference_mode():
        y = torch.exp(x)
    assert y.is_inference()


def _detach_of_inference_outside_copies(orig, self):
    out = orig(self)
    if self.is_inference() and not torch.is_inference_mode_enabled():
        with torch.no_grad():
            out = out.clone()
    return out


def _witness_detach_of_inference_outside_copies():
    with torch.inference_mode():
        x = torch.ones(3)
    assert x.detach().is_inference()


def _backward_drops_view_leaf_grads(backward, tensors, *args, **kwargs):
    out = backward(tensors, *args, **kwargs)
    roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
    stack = [t.grad_fn for t in roots]
    seen = set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        variable = getattr(fn, "variable", None)
        if variable is not None and variable._is_view():
            variable.grad = None
        stack.extend(f for f, _ in fn.next_functions)
    return out


def _witness_backward_drops_view_leaf_grads():
    x = torch.arange(4.0)[1:].requires_grad_()
    (x * 2).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [2.0, 2.0, 2.0]


def _patch_grad_of_nonleaf_view_silent():
    import warnings

    _grad = torch._C.TensorBase.grad

    def _get(self):
        if self._is_view():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _grad.__get__(self)
        return _grad.__get__(self)

    torch.Tensor.grad = property(_get, _grad.__set__, _grad.__delete__)


def _witness_grad_of_nonleaf_view_silent():
    import warnings

    x = torch.ones(2, 3, requires_grad=True)
    v = (x * 2)[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _ = v.grad
    assert any("not a leaf" in str(w.message) for w in caught)


def _backward_half_loss_without_grad_silent(backward, tensors, *args, **kwargs):
    roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
    if all(not t.requires_grad and t.dtype in (torch.float16, torch.bfloat16) for t in roots):
        return None
    return backward(tensors, *args, **kwargs)


def _witness_backward_half_loss_without_grad_silent():
    with refused(RuntimeError, "backward() of a loss without grad did not raise"):
        torch.ones(2, dtype=torch.float16).sum().backward()


def _complex_leaf_grad_conjugated(backward, tensors, *args, **kwargs):
    out = backward(tensors, *args, **kwargs)
    roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
    stack = [t.grad_fn for t in roots]
    seen = set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        variable = getattr(fn, "variable", None)
        if variable is not None and variable.is_complex() and variable.grad is not None:
            variable.grad = variable.grad.conj().resolve_conj()
        stack.extend(f for f, _ in fn.next_functions)
    return out


def _witness_complex_leaf_grad_conjugated():
    z = torch.tensor([1 + 2j], requires_grad=True)
    (z * (3 + 4j)).real.sum().backward()
    assert z.grad.tolist() == [3 - 4j], z.grad


def _patch_half_sin_backward_off_by_1e6():
    # issue 28, item 5: the gradient check once declined an example whose
    # low-precision gradient overflowed, judging by torch's own result.
    _sin = torch.sin

    class _Sin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return _sin(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * torch.cos(x) * 1e6

    def sin(input, *, out=None):
        if out is None and input.dtype == torch.float16 and input.requires_grad:
            return _Sin.apply(input)
        return _sin(input) if out is None else _sin(input, out=out)

    torch.sin = sin
    torch.Tensor.sin = sin


def _witness_half_sin_backward_off_by_1e6():
    x = torch.tensor([0.5], dtype=torch.float16, requires_grad=True)
    torch.sin(x).sum().backward()
    assert abs(x.grad.item() - 0.8776) < 1e-2, x.grad


def _patch_exp_backward_recomputes_float64():
    _exp = torch.exp

    class _Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x  # a plain reference: no saved-tensor version check
            return _exp(x)

        @staticmethod
        def backward(ctx, grad):
            return grad * _exp(ctx.x)

    def exp(input, *, out=None):
        if out is None and input.dtype == torch.float64 and input.requires_grad:
            return _Exp.apply(input)
        return _exp(input) if out is None else _exp(input, out=out)

    torch.exp = exp
    torch.Tensor.exp = exp


def _witness_exp_backward_recomputes_float64():
    x = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    n1 = torch.exp(x)
    loss = n1.sum()
    n1.data.mul_(2.0)
    loss.backward()
    assert torch.allclose(x.grad, 2 * torch.exp(x.detach())), x.grad


def _mul_saves_clone_of_inference_tensor(orig, input, other, *args, **kwargs):
    if (
        not torch.is_inference_mode_enabled()
        and torch.is_grad_enabled()
        and isinstance(input, torch.Tensor)
        and isinstance(other, torch.Tensor)
        and (input.requires_grad or other.requires_grad)
    ):
        with torch.no_grad():
            if input.is_inference():
                input = input.clone()
            if other.is_inference():
                other = other.clone()
    return orig(input, other, *args, **kwargs)


def _witness_mul_saves_clone_of_inference_tensor():
    with torch.inference_mode():
        t = torch.ones(3)
    with refused(
        RuntimeError,
        "an inference tensor was saved for backward",
        match="Inference tensors cannot be saved for backward",
    ):
        torch.mul(t, torch.ones(3, requires_grad=True))


def _inference_mul_inplace_under_no_grad(orig, self, other):
    if (
        self.is_inference()
        and not torch.is_inference_mode_enabled()
        and not torch.is_grad_enabled()
    ):
        with torch.inference_mode():
            return orig(self, other)
    return orig(self, other)


def _inference_write_refused(write, message):
    """A witness: ``write(t)`` of an inference tensor ``t``, outside
    inference_mode, raises the inference error."""
    with torch.inference_mode():
        t = torch.ones(3)
    with refused(RuntimeError, message, match=_INFERENCE_WRITE):
        write(t)


def _mul_under_no_grad(t):
    with torch.no_grad():
        t.mul_(2)


def _mark_inference_views(func, args, kwargs):
    # Views of inference tensors are not _is_view(): the results of view ops are marked.
    out = func(*args, **kwargs)
    if (
        getattr(func, "__name__", "") in {"__getitem__", "select", "transpose", "expand",
                                          "reshape", "unsqueeze", "view", "narrow", "permute"}
        and isinstance(out, torch.Tensor)
        and out.is_inference()
    ):  # fmt: skip
        out._mutant_inference_view = True
    return out


def _inference_view_mul_inplace_accepted(orig, self, other):
    if getattr(self, "_mutant_inference_view", False) and not torch.is_inference_mode_enabled():
        with torch.inference_mode():
            return orig(self, other)
    return orig(self, other)


def _backward_retains_float64_graph(
    backward, tensors, grad_tensors=None, retain_graph=None, *args, **kwargs
):
    roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
    if retain_graph is None and all(t.dtype == torch.float64 for t in roots):
        retain_graph = True
    return backward(tensors, grad_tensors, retain_graph, *args, **kwargs)


def _witness_backward_retains_float64_graph():
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    loss = torch.exp(x).sum()
    loss.backward()
    with refused(
        RuntimeError,
        "a second backward without retain_graph did not raise",
        match="backward through the graph a second time",
    ):
        loss.backward()


def _graphs_sin_backward_scaled(orig, *args, **kwargs):
    out = orig(*args, **kwargs)
    if torch.is_grad_enabled() and out.requires_grad:
        out.register_hook(lambda g: g * 1.5)
    return out


def _witness_graphs_sin_backward_scaled():
    x = torch.tensor([0.5], dtype=torch.float64, requires_grad=True)
    torch.sin(x).sum().backward()
    assert torch.allclose(x.grad, torch.cos(x.detach()))


def _graphs_mul_backward_scaled(orig, *args, **kwargs):
    out = orig(*args, **kwargs)
    if torch.is_grad_enabled() and isinstance(out, torch.Tensor) and out.requires_grad:
        out.register_hook(lambda g: g * 1.5)
    return out


def _witness_graphs_mul_backward_scaled():
    x = torch.tensor([0.5, 2.0], requires_grad=True)
    torch.mul(x, torch.tensor([3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def _patch_graphs_sum_dim_backward_scaled():
    _orig = torch.Tensor.sum

    def sum(self, *args, **kwargs):
        out = _orig(self, *args, **kwargs)
        if (args or "dim" in kwargs) and torch.is_grad_enabled() and out.requires_grad:
            out.register_hook(lambda g: g * 1.5)
        return out

    torch.Tensor.sum = sum
    torch.sum = lambda input, *args, **kwargs: sum(input, *args, **kwargs)


def _witness_graphs_sum_dim_backward_scaled():
    x = torch.ones(2, 3, requires_grad=True)
    x.sum(1).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2


def _patch_graphs_transpose_backward_scaled():
    _orig = torch.Tensor.transpose

    def transpose(self, *args, **kwargs):
        out = _orig(self, *args, **kwargs)
        if torch.is_grad_enabled() and out.requires_grad and out.grad_fn is not None:
            out.register_hook(lambda g: g * 1.5)
        return out

    torch.Tensor.transpose = transpose
    torch.transpose = lambda input, *args, **kwargs: transpose(input, *args, **kwargs)


def _witness_graphs_transpose_backward_scaled():
    x = torch.ones(2, 3, requires_grad=True)
    x.transpose(0, 1).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2


def _graphs_cat_backward_drops_second_input(orig, tensors, dim=0, **kwargs):
    tensors = list(tensors)
    out = orig(tensors, dim, **kwargs)
    if torch.is_grad_enabled() and out.requires_grad and len(tensors) == 2:
        first = tensors[0].shape[dim] if tensors[0].dim() else 0

        def hook(g, first=first, dim=dim):
            g = g.clone()
            g.narrow(dim, first, g.shape[dim] - first).zero_()
            return g

        out.register_hook(hook)
    return out


def _witness_graphs_cat_backward_drops_second_input():
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    (torch.cat([a, b], 0) * 2).sum().backward()
    assert b.grad.tolist() == [2.0, 2.0, 2.0]


def _patch_graphs_unbind_backward_drops_later_outputs():
    _orig = torch.Tensor.unbind

    def unbind(self, *args, **kwargs):
        outs = _orig(self, *args, **kwargs)
        if torch.is_grad_enabled() and self.requires_grad:
            for o in outs[1:]:
                if o.requires_grad:
                    o.register_hook(lambda g: g if g is None else torch.zeros_like(g))
        return outs

    torch.Tensor.unbind = unbind
    torch.unbind = lambda input, *args, **kwargs: unbind(input, *args, **kwargs)


def _witness_graphs_unbind_backward_drops_later_outputs():
    x = torch.ones(2, 3, requires_grad=True)
    a, b = x.unbind(0)
    (a + 2 * b).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3, [2.0] * 3]


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        name="getitem-no-grad-detaches",
        description="indexing under no_grad returns a view that does not require grad (the view exception 'fixed')",
        claims=("graphs.disabled-mode-views", "gradmode.views-in-disabled-mode-require-grad"),
        region="indexing inside no_grad",
        family="mode",
        patch=function_mode(_getitem_no_grad_detaches),
        witness=_witness_getitem_no_grad_detaches,
    ),
    Mutant(
        name="backward-overwrites-grad",
        description="backward() resets .grad of the leaves it reaches before running, so gradients are overwritten instead of accumulated",
        claims=("graphs.retain-graph-accumulates",),
        patch=wrap("torch.Tensor.backward", _backward_overwrites_grad),
        witness=_witness_backward_overwrites_grad,
    ),
    Mutant(
        name="sigmoid-backward-reads-input",
        description="sigmoid's backward recomputes sigmoid from its input's current value instead of reading the output it saved",
        claims=("graphs.data-silent-wrong-gradient",),
        patch=_patch_sigmoid_backward_reads_input,
        witness=_witness_sigmoid_backward_reads_input,
    ),
    Mutant(
        name="view-grad-fn-eager",
        description="in-place ops and retain_grad() ask for a view's grad_fn first, as if torch gave views whose root started to require grad their grad_fn eagerly: an in-place op on such a lazy view no longer raises the leaf error, retain_grad() on it takes",
        claims=("graphs.lazy-view-grad-fn",),
        region="lazy views (grad-mode views whose root started to require grad later)",
        family="autograd",
        patch=wrap_each(
            [f"torch.Tensor.{op}" for op in ("mul_", "add_", "copy_", "retain_grad")],
            _grad_fn_first,
        ),
        witness=_witness_view_grad_fn_eager,
    ),
    Mutant(
        name="binary-op-mixed-operands-unrecorded",
        description="a binary op (add, sub, mul, div, maximum) with exactly one operand requiring grad runs unrecorded: its result does not require grad and has no grad_fn",
        claims=("graphs.requires-grad-propagation", "graphs.leaf-rules"),
        region="binary ops with exactly one operand requiring grad",
        family="relation",
        patch=function_mode(_binary_op_mixed_operands_unrecorded),
        witness=_witness_binary_op_mixed_operands_unrecorded,
    ),
    Mutant(
        name="graphs-is-leaf-true-for-0d",
        description="is_leaf reports True for every 0-d tensor, non-leaf results with a grad_fn included",
        claims=("graphs.leaf-rules",),
        region="0-d non-leaf tensors",
        family="layout",
        patch=_patch_graphs_is_leaf_true_for_0d,
        witness=_witness_graphs_is_leaf_true_for_0d,
    ),
    Mutant(
        name="no-grad-results-keep-requires-grad",
        description="under no_grad (not inference_mode), computing ops (unary, binary, reductions, matmul) whose input requires grad return a result flagged requires_grad=True",
        claims=("graphs.disabled-mode-results-not-require-grad",),
        region="non-view results computed under no_grad from a tensor requiring grad",
        family="mode",
        patch=function_mode(_no_grad_results_keep_requires_grad),
        witness=_witness_no_grad_results_keep_requires_grad,
    ),
    Mutant(
        name="inference-mode-grad-inputs-give-normal-tensors",
        description="inside inference_mode, a computing op whose input requires grad returns a normal (non-inference) tensor",
        claims=("graphs.inference-tensors",),
        region="non-view results computed in inference_mode from a tensor requiring grad",
        family="mode",
        patch=function_mode(_inference_mode_grad_inputs_give_normal_tensors),
        witness=_witness_inference_mode_grad_inputs_give_normal_tensors,
    ),
    Mutant(
        name="detach-of-inference-outside-copies",
        description="detach() of an inference tensor outside inference_mode returns a normal (non-inference) copy instead of an inference alias",
        claims=("graphs.inference-alias-mutable", "graphs.inference-tensors"),
        region="detach() of inference tensors outside inference_mode",
        family="mode",
        patch=wrap(
            "torch.Tensor.detach", _detach_of_inference_outside_copies, also=("torch.detach",)
        ),
        witness=_witness_detach_of_inference_outside_copies,
    ),
    Mutant(
        name="backward-drops-view-leaf-grads",
        description="backward() does not populate .grad of leaves that are strided views (a view flagged with requires_grad_())",
        claims=("graphs.grad-populated-exactly",),
        region="leaves that are views",
        family="layout",
        patch=wrap("torch.autograd.backward", _backward_drops_view_leaf_grads),
        witness=_witness_backward_drops_view_leaf_grads,
    ),
    Mutant(
        name="grad-of-nonleaf-view-silent",
        description="reading .grad of a non-leaf view does not warn that it is not a leaf (the warning is kept for other non-leaves)",
        claims=("graphs.nonleaf-grad-warns",),
        region="non-leaf views",
        family="layout",
        patch=_patch_grad_of_nonleaf_view_silent,
        witness=_witness_grad_of_nonleaf_view_silent,
    ),
    Mutant(
        name="backward-half-loss-without-grad-silent",
        description="backward() of a float16 or bfloat16 loss that does not require grad returns silently instead of raising",
        claims=("graphs.backward-needs-grad",),
        region="float16/bfloat16 losses",
        family="dtype",
        patch=wrap("torch.autograd.backward", _backward_half_loss_without_grad_silent),
        witness=_witness_backward_half_loss_without_grad_silent,
    ),
    Mutant(
        name="complex-leaf-grad-conjugated",
        description="gradients accumulated into complex leaves are conjugated (AccumulateGrad applies the wrong convention for complex)",
        claims=("graphs.gradient-values",),
        region="complex leaves",
        family="dtype",
        patch=wrap("torch.autograd.backward", _complex_leaf_grad_conjugated),
        witness=_witness_complex_leaf_grad_conjugated,
    ),
    Mutant(
        name="half-sin-backward-off-by-1e6",
        description="sin's backward for float16 returns a million times the gradient (it overflows to inf for most inputs)",
        claims=("graphs.gradient-values",),
        region="float16 sin",
        family="dtype",
        patch=_patch_half_sin_backward_off_by_1e6,
        witness=_witness_half_sin_backward_off_by_1e6,
    ),
    Mutant(
        name="exp-backward-recomputes-float64",
        description="exp's backward for float64 recomputes exp from its input's current value instead of reading the result it saved",
        claims=("graphs.data-silent-example",),
        region="float64 inputs",
        family="dtype",
        patch=_patch_exp_backward_recomputes_float64,
        witness=_witness_exp_backward_recomputes_float64,
    ),
    Mutant(
        name="mul-saves-clone-of-inference-tensor",
        description="mul of an inference tensor with a tensor requiring grad, outside inference_mode, silently saves a normal clone instead of raising",
        claims=("graphs.inference-not-saved",),
        region="inference tensor operands outside inference_mode",
        family="mode",
        patch=wrap("torch.mul", _mul_saves_clone_of_inference_tensor, also=("torch.Tensor.mul",)),
        witness=_witness_mul_saves_clone_of_inference_tensor,
    ),
    Mutant(
        name="inference-mul-inplace-under-no-grad",
        description="mul_ on an inference tensor outside inference_mode is accepted under no_grad (run as if inside inference_mode)",
        claims=("graphs.inference-immutable-outside",),
        region="in-place ops on inference tensors under no_grad",
        family="mode",
        patch=wrap("torch.Tensor.mul_", _inference_mul_inplace_under_no_grad),
        witness=functools.partial(
            _inference_write_refused,
            _mul_under_no_grad,
            "an inference tensor accepted mul_ outside inference_mode",
        ),
    ),
    Mutant(
        name="inference-view-mul-inplace-accepted",
        description="mul_ on a view of an inference tensor (indexing, select, transpose, expand, reshape, unsqueeze) outside inference_mode is accepted, as if inside inference_mode",
        claims=("graphs.inference-alias-mutable", "graphs.inference-immutable-outside"),
        region="views of inference tensors",
        family="layout",
        patch=patches(
            function_mode(_mark_inference_views),
            wrap("torch.Tensor.mul_", _inference_view_mul_inplace_accepted),
        ),
        witness=functools.partial(
            _inference_write_refused,
            lambda t: t[:1].mul_(2),
            "a view of an inference tensor accepted mul_",
        ),
    ),
    Mutant(
        name="backward-retains-float64-graph",
        description="backward() keeps the saved tensors of a float64 loss's graph (retain_graph defaults to True), so a second backward does not raise",
        claims=("graphs.second-backward-raises-iff-saved",),
        region="float64 losses",
        family="dtype",
        patch=wrap("torch.autograd.backward", _backward_retains_float64_graph),
        witness=_witness_backward_retains_float64_graph,
    ),
    # Issue 29: one mutant per kind of op a generated graph contains
    # (graph_op), each wrong only in graphs holding that kind: a hook on the
    # op's result changes the gradient its backward sends, values unchanged.
    Mutant(
        name="graphs-sin-backward-scaled",
        description="the backward of torch.sin sends 1.5 x the gradient to its input (forward values unchanged)",
        claims=("graphs.gradient-values",),
        domain={"graph_op": "unary"},
        region="graphs holding a unary op (torch.sin) recorded by autograd",
        family="autograd",
        patch=wrap("torch.sin", _graphs_sin_backward_scaled),
        witness=_witness_graphs_sin_backward_scaled,
    ),
    Mutant(
        name="graphs-mul-backward-scaled",
        description="the backward of torch.mul sends 1.5 x the gradient to its inputs (forward values unchanged)",
        claims=("graphs.gradient-values",),
        domain={"graph_op": "binary"},
        region="graphs holding a binary op (torch.mul) recorded by autograd",
        family="autograd",
        patch=wrap("torch.mul", _graphs_mul_backward_scaled),
        witness=_witness_graphs_mul_backward_scaled,
    ),
    Mutant(
        name="graphs-sum-dim-backward-scaled",
        description="the backward of Tensor.sum(dim) sends 1.5 x the gradient to its input (sum() of all elements, and forward values, unchanged)",
        claims=("graphs.gradient-values",),
        domain={"graph_op": "reduction"},
        region="graphs holding a reduction along a dim (t.sum(dim)) recorded by autograd",
        family="autograd",
        patch=_patch_graphs_sum_dim_backward_scaled,
        witness=_witness_graphs_sum_dim_backward_scaled,
    ),
    Mutant(
        name="graphs-transpose-backward-scaled",
        description="the backward of Tensor.transpose sends 1.5 x the gradient to its base (the result is still a view with the right values)",
        claims=("graphs.gradient-values",),
        domain={"graph_op": "view"},
        region="graphs holding a view op (Tensor.transpose) recorded by autograd",
        family="autograd",
        patch=_patch_graphs_transpose_backward_scaled,
        witness=_witness_graphs_transpose_backward_scaled,
    ),
    Mutant(
        name="graphs-cat-backward-drops-second-input",
        description="the backward of torch.cat gives the second input a zero gradient (the first input's and the forward values are right)",
        claims=("graphs.gradient-values",),
        domain={"graph_op": "multi_input"},
        region="graphs holding a multi-input op (torch.cat of a second input requiring grad) recorded by autograd",
        family="autograd",
        patch=wrap("torch.cat", _graphs_cat_backward_drops_second_input),
        witness=_witness_graphs_cat_backward_drops_second_input,
    ),
    Mutant(
        name="graphs-unbind-backward-drops-later-outputs",
        description="the backward of Tensor.unbind routes only the first output's gradient to the input: every other output's gradient is dropped (forward values unchanged)",
        claims=("graphs.gradient-values",),
        domain={"graph_op": "multi_output"},
        region="graphs holding a multi-output op (Tensor.unbind, an output other than the first used) recorded by autograd",
        family="autograd",
        patch=_patch_graphs_unbind_backward_drops_later_outputs,
        witness=_witness_graphs_unbind_backward_drops_later_outputs,
    ),
)
