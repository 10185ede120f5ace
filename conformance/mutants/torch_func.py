"""Mutants of the ``torch_func`` area (torch.func transforms and functional_call);
claims in ``conformance/claims/torch_func.toml``, tests in ``conformance/test_torch_func.py``.

Most mutants wrap a transform (``torch.func.vmap``, ``grad``, ``grad_and_value``,
``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``functional_call``) with a
broken special case - an eager per-example loop, a copied argument, a dropped
tie, a rescaled or transposed derivative - that is taken for one dtype, layout
or calling form only, and call the real transform otherwise. ``vmap`` is patched as both
``torch.func.vmap`` and ``torch.vmap``.

See :mod:`conformance.mutants` for what a mutant is and how it is run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from conformance.mutants._tensor_domain import (
    DTYPE_FAMILIES,
    TENSOR_KIND_MAKERS,
    TENSOR_KINDS,
    domain_mutants,
)
from conformance.mutants.base import Mutant
from conformance.mutants.patching import refused, resolve, torch, wrap, wrap_each


def _expanded(t):
    return any(s > 1 and st == 0 for s, st in zip(t.shape, t.stride(), strict=False))


def _dense(t):
    dims = sorted((st, s) for s, st in zip(t.shape, t.stride(), strict=False) if s > 1)
    want = 1
    for st, s in dims:
        if st != want:
            return False
        want *= s
    return True


def _permuted(t):
    strides = [st for s, st in zip(t.shape, t.stride(), strict=False) if s > 1 and st != 0]
    return any(a < b for a, b in zip(strides, strides[1:], strict=False))


#: Issue 29: the strided layouts torch.func.grad's claims declare
#: (``layout``, classified as :func:`strategies.domains.layout_kinds` does, on
#: the first argument ``x``, the one the tests report): for each, a test on
#: ``x``, the words, and the witness's input of that layout (``make()``).
_GRAD_LAYOUTS = {
    "contiguous": (
        lambda x: x.is_contiguous() and x.storage_offset() == 0,
        "contiguous (storage offset 0)",
        lambda: torch.ones(2, 3, dtype=torch.float64),
    ),
    "offset": (
        lambda x: x.storage_offset() > 0,
        "with a storage offset > 0",
        lambda: torch.ones(4, 3, dtype=torch.float64)[1:3],
    ),
    "stepped": (
        lambda x: x.numel() > 0 and not _expanded(x) and not _dense(x),
        "stepped (not dense, not expanded)",
        lambda: torch.ones(2, 6, dtype=torch.float64)[:, ::2],
    ),
    "permuted": (
        _permuted,
        "permuted (strides not decreasing)",
        lambda: torch.ones(3, 2, dtype=torch.float64).t(),
    ),
    "expanded": (
        _expanded,
        "expanded (a stride 0 along a dim of size > 1)",
        lambda: torch.ones(1, 3, dtype=torch.float64).expand(2, 3),
    ),
    "0-d": (
        lambda x: x.dim() == 0,
        "0-d",
        lambda: torch.tensor(0.5, dtype=torch.float64),
    ),
}


def _grad_scaled_where(cond):
    _orig = torch.func.grad

    def _hit(x):
        return isinstance(x, torch.Tensor) and cond(x)

    def grad(func, argnums=0, has_aux=False):
        inner = _orig(func, argnums=argnums, has_aux=has_aux)

        def wrapper(*args, **kwargs):
            out = inner(*args, **kwargs)
            if args and _hit(args[0]):
                out = torch.utils._pytree.tree_map(lambda g: g * 1.5, out)
            return out

        return wrapper

    torch.func.grad = grad


def _grad_of_triple(make):
    x = make()
    g = torch.func.grad(lambda t: (t * 3).sum())(x)
    assert torch.equal(g, torch.full_like(x, 3.0))


def _grad_layout_mutant(layout: str) -> Mutant:
    """A ``torch.func.grad`` that scales the gradient by 1.5 when its first
    argument has strided layout ``layout`` (issue 29: wrong only there)."""
    cond, words, make = _GRAD_LAYOUTS[layout]
    name = layout.replace("0-d", "0d")
    return Mutant(
        name=f"func-grad-scaled-{name}",
        description=f"torch.func.grad returns 1.5 x the gradient when its first argument is {words}",
        claims=("torch_func.grad-values",),
        domain={"layout": layout},
        region=f"torch.func.grad with a first argument {words}",
        family="layout",
        patch=functools.partial(_grad_scaled_where, cond),
        witness=functools.partial(_grad_of_triple, make),
    )


def _patch_func_grad_flattens_zero_size():
    _tree_map = torch.utils._pytree.tree_map

    def _wrap(orig, value):
        def transform(func, argnums=0, has_aux=False):
            inner = orig(func, argnums=argnums, has_aux=has_aux)

            def wrapper(*args, **kwargs):
                out = inner(*args, **kwargs)
                if args and isinstance(args[0], torch.Tensor) and args[0].numel() == 0:
                    if value:
                        return (_tree_map(lambda g: g.reshape(-1), out[0]), *out[1:])
                    return _tree_map(lambda g: g.reshape(-1), out)
                return out

            return wrapper

        return transform

    torch.func.grad = _wrap(torch.func.grad, False)
    torch.func.grad_and_value = _wrap(torch.func.grad_and_value, True)


def _witness_func_grad_flattens_zero_size():
    x = torch.ones(0, 3)
    assert torch.func.grad(lambda t: t.sum())(x).shape == (0, 3)


def _vmap_eager_loop_f64(vmap, func, in_dims=0, out_dims=0, **kw):
    import torch.func

    vf = vmap(func, in_dims, out_dims, **kw)

    def wrapper(*args, **kwargs):
        if (
            in_dims == 0
            and out_dims == 0
            and args
            and not kwargs
            and all(isinstance(a, torch.Tensor) and a.dtype == torch.float64 for a in args)
        ):
            return torch.stack(
                [func(*xs) for xs in zip(*[a.unbind(0) for a in args], strict=False)]
            )
        return vf(*args, **kwargs)

    return wrapper


def _witness_vmap_eager_loop_f64():
    c = torch.zeros(3, dtype=torch.float64)
    try:
        torch.func.vmap(lambda b: c.add_(b))(torch.ones(2, 3, dtype=torch.float64))
    except RuntimeError:
        pass
    assert c.tolist() == [0.0, 0.0, 0.0]


def _grad_eager_autograd_f64(grad, func, argnums=0, has_aux=False):
    import torch.func

    g = grad(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        x = args[0] if args else None
        if (
            argnums == 0
            and not has_aux
            and not kwargs
            and isinstance(x, torch.Tensor)
            and x.dtype == torch.float64
        ):
            xr = x.detach().requires_grad_()
            with torch.enable_grad():
                out = func(xr, *args[1:])
            return torch.autograd.grad(out, xr)[0]
        return g(*args, **kwargs)

    return wrapper


def _witness_grad_eager_autograd_f64():
    c = torch.zeros(3, dtype=torch.float64)
    try:
        torch.func.grad(lambda x: c.add_(x).sum())(torch.ones(3, dtype=torch.float64))
    except RuntimeError:
        pass
    assert c.tolist() == [0.0, 0.0, 0.0]


def _vmap_copies_inputs_nonzero_in_dims(vmap, func, in_dims=0, out_dims=0, **kw):
    import torch.func

    vf = vmap(func, in_dims, out_dims, **kw)
    dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,)
    nonzero = any(isinstance(d, int) and d != 0 for d in dims)

    def wrapper(*args, **kwargs):
        if nonzero:
            args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
        return vf(*args, **kwargs)

    return wrapper


def _witness_vmap_copies_inputs_nonzero_in_dims():
    x = torch.zeros(3, 2)
    torch.func.vmap(lambda r: r.add_(1), in_dims=1)(x)
    assert x.tolist() == [[1.0, 1.0]] * 3


def _new_zeros_unbatched_under_vmap_f32(new_zeros, self, *size, **kwargs):
    if torch._C._functorch.is_batchedtensor(self) and self.dtype == torch.float32:
        shape = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
        return torch.zeros(tuple(shape), dtype=self.dtype, device=self.device)
    return new_zeros(self, *size, **kwargs)


def _witness_new_zeros_unbatched_under_vmap_f32():
    try:
        out = torch.func.vmap(lambda b: b.new_zeros(3).copy_(b))(torch.ones(2, 3)).tolist()
    except RuntimeError:
        out = None
    assert out == [[1.0] * 3] * 2


def _vmap_copies_view_outputs_out_dims(vmap, func, in_dims=0, out_dims=0, **kw):
    import torch.func

    vf = vmap(func, in_dims, out_dims, **kw)
    if out_dims == 0:
        return vf

    def wrapper(*args, **kwargs):
        out = vf(*args, **kwargs)
        return out.clone() if isinstance(out, torch.Tensor) else out

    return wrapper


def _witness_vmap_copies_view_outputs_out_dims():
    x = torch.zeros(2, 3)
    out = torch.func.vmap(lambda r: r[1:], out_dims=1)(x)
    assert out.data_ptr() == x.data_ptr() + 4


def _patch_grad_vjp_differentiate_copy_f32():
    import torch.func

    _grad, _vjp = torch.func.grad, torch.func.vjp

    def grad(func, argnums=0, has_aux=False):
        plain = _grad(func, argnums, has_aux)
        copied = _grad(lambda x, *r, **k: func(x.clone(), *r, **k), argnums, has_aux)

        def wrapper(*args, **kwargs):
            if (
                argnums == 0
                and args
                and isinstance(args[0], torch.Tensor)
                and args[0].dtype == torch.float32
            ):
                return copied(*args, **kwargs)
            return plain(*args, **kwargs)

        return wrapper

    def vjp(func, *primals, **kwargs):
        if primals and isinstance(primals[0], torch.Tensor) and primals[0].dtype == torch.float32:
            return _vjp(lambda x, *r: func(x.clone(), *r), *primals, **kwargs)
        return _vjp(func, *primals, **kwargs)

    torch.func.grad = grad
    torch.func.vjp = vjp


def _witness_grad_vjp_differentiate_copy_f32():
    try:
        torch.func.grad(lambda x: x.mul_(2).sum())(torch.ones(3))
        raised = False
    except RuntimeError:
        raised = True
    assert raised


def _jvp_clones_primals_f32(jvp, func, primals, tangents, *args, **kwargs):
    import torch.func

    primals = tuple(
        p.clone() if isinstance(p, torch.Tensor) and p.dtype == torch.float32 else p
        for p in primals
    )
    return jvp(func, primals, tangents, *args, **kwargs)


def _witness_jvp_clones_primals_f32():
    x = torch.ones(3)
    torch.func.jvp(lambda a: a.mul_(2), (x,), (torch.ones(3),))
    assert x.tolist() == [2.0, 2.0, 2.0]


def _tied_module(kind, dtype=None, requires_grad=False):
    """A module whose ``a.w`` and ``b.w`` are one tensor: a Parameter
    (``kind="parameter"``) or a registered buffer (``"buffer"``), of zeros
    (of ``dtype``, a name of torch, if given)."""
    m = torch.nn.Module()
    m.a, m.b = torch.nn.Module(), torch.nn.Module()
    w = torch.zeros(2, dtype=dtype and getattr(torch, dtype))
    if kind == "parameter":
        p = torch.nn.Parameter(w, requires_grad=requires_grad)
        m.a.w = p
        m.b.w = p
    else:
        m.a.register_buffer("w", w)
        m.b.register_buffer("w", w)
    return m


def _functional_call_ignores_tie_for(
    named, fc, module, dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    names = set()
    for d in dicts if isinstance(dicts, (list, tuple)) else (dicts,):
        names |= set(d)
    if names & set(dict(getattr(module, named)(remove_duplicate=False))):
        tie_weights = False
    return fc(module, dicts, args, kwargs, tie_weights=tie_weights, strict=strict)


def _tied_name_gets_the_value(kind):
    m = _tied_module(kind)
    m.forward = lambda: (m.a.w, m.b.w)
    new = torch.ones(2)
    a, b = torch.func.functional_call(m, {"a.w": new}, ())
    assert b is new, "the tied name did not get the value passed for the other"


def _tied_values_refused(kind, dtype=None, requires_grad=False):
    m = _tied_module(kind, dtype, requires_grad)
    m.forward = lambda: m.a.w
    dtype = dtype and getattr(torch, dtype)
    v = {"a.w": torch.ones(2, dtype=dtype), "b.w": torch.ones(2, dtype=dtype)}
    try:
        torch.func.functional_call(m, v, ())
        raised = False
    except ValueError:
        raised = True
    assert raised, "functional_call accepted distinct tensors for tied names"


def _functional_call_ties_by_value_f64(
    fc, module, dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    import torch.func

    if tie_weights and isinstance(dicts, dict):
        named = {
            **dict(module.named_parameters(remove_duplicate=False)),
            **dict(module.named_buffers(remove_duplicate=False)),
        }
        first, d = {}, dict(dicts)
        for k, v in dicts.items():
            t = named.get(k)
            if t is None or not isinstance(v, torch.Tensor) or v.dtype != torch.float64:
                continue
            f = first.setdefault(id(t), v)
            if f is not v and f.shape == v.shape and torch.equal(f, v):
                d[k] = f
        dicts = d
    return fc(module, dicts, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call_drops_tied_duplicate_f64(
    fc, module, dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    import torch.func

    if tie_weights and isinstance(dicts, dict):
        named = {
            **dict(module.named_parameters(remove_duplicate=False)),
            **dict(module.named_buffers(remove_duplicate=False)),
        }
        first, d = {}, {}
        for k, v in dicts.items():
            t = named.get(k)
            if (
                t is not None
                and isinstance(v, torch.Tensor)
                and v.dtype == torch.float64
                and id(t) in first
                and first[id(t)] is not v
            ):
                continue
            if t is not None:
                first.setdefault(id(t), v)
            d[k] = v
        if len(d) != len(dicts):
            return fc(module, d, args, kwargs, tie_weights=False, strict=strict)
    return fc(module, dicts, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call_leaks_buffer_writes_f64(fc, module, dicts, args=None, kwargs=None, **kw):
    import torch.func

    try:
        return fc(module, dicts, args, kwargs, **kw)
    finally:
        bufs = dict(module.named_buffers())
        for k, v in dicts.items() if isinstance(dicts, dict) else ():
            b = bufs.get(k)
            if (
                b is not None
                and b.dtype == torch.float64
                and isinstance(v, torch.Tensor)
                and v.shape == b.shape
            ):
                with torch.no_grad():
                    b.copy_(v)


def _witness_functional_call_leaks_buffer_writes_f64():
    m = torch.nn.Module()
    m.register_buffer("buf", torch.zeros(2, dtype=torch.float64))
    m.forward = lambda: m.buf.add_(1)
    torch.func.functional_call(m, {"buf": torch.zeros(2, dtype=torch.float64)}, ())
    assert m.buf.tolist() == [0.0, 0.0]


def _vmap_retraces_batches_over_3(vmap, func, in_dims=0, out_dims=0, **kw):
    import torch.func

    vf = vmap(func, in_dims, out_dims, **kw)

    def wrapper(*args, **kwargs):
        ts = [a for a in args if isinstance(a, torch.Tensor)]
        if ts and ts[0].dim() and ts[0].shape[0] > 3:
            vf(*args, **kwargs)
        return vf(*args, **kwargs)

    return wrapper


def _witness_vmap_retraces_batches_over_3():
    calls = []
    torch.func.vmap(lambda x: (calls.append(1), x * 1)[1])(torch.ones(5, 2))
    assert len(calls) == 1


def _vmap_passes_list_args_through(vmap, func, in_dims=0, out_dims=0, **kw):
    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        keep = {
            i: a
            for i, a in enumerate(args)
            if isinstance(a, list) and i < len(dims) and dims[i] is None
        }
        if not keep:
            return vmap(func, in_dims, out_dims, **kw)(*args, **kwargs)

        def inner(*xs, **k):
            return func(*[keep.get(i, x) for i, x in enumerate(xs)], **k)

        return vmap(inner, in_dims, out_dims, **kw)(*args, **kwargs)

    return wrapper


def _witness_vmap_passes_list_args_through():
    lst = [0, 1, 2]
    torch.func.vmap(lambda x, items: (items.pop(), x * 1)[1], in_dims=(0, None))(torch.ones(3), lst)
    assert lst == [0, 1, 2]


def _grad_scales_f32_gradients(grad, func, argnums=0, has_aux=False):
    import torch.func

    g = grad(func, argnums, has_aux)

    def scale(t):
        if isinstance(t, torch.Tensor) and t.dtype == torch.float32:
            return t * (1 + 1e-3)
        return t

    def wrapper(*args, **kwargs):
        r = g(*args, **kwargs)
        if has_aux:
            return r
        return tuple(scale(t) for t in r) if isinstance(r, tuple) else scale(r)

    return wrapper


def _witness_grad_scales_f32_gradients():
    x = torch.tensor([0.5, -1.25, 2.0])
    g = torch.func.grad(lambda a: (a * a).sum())(x)
    assert torch.equal(g, 2 * x)


def _grad_and_value_swaps_0d(gv, func, argnums=0, has_aux=False):
    import torch.func

    g = gv(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        r = g(*args, **kwargs)
        a = args[argnums] if isinstance(argnums, int) and argnums < len(args) else None
        if not has_aux and isinstance(a, torch.Tensor) and a.dim() == 0:
            return (r[1], r[0])
        return r

    return wrapper


def _witness_grad_and_value_swaps_0d():
    g, v = torch.func.grad_and_value(lambda a: a * a * a)(torch.tensor(2.0))
    assert g.item() == 12.0 and v.item() == 8.0


def _vjp_normalises_cotangent_f64(vjp, func, *primals, **kwargs):
    import torch.func

    out, fn, *rest = vjp(func, *primals, **kwargs)

    def vjp_fn(ct, *more, **kw):
        if (
            isinstance(ct, torch.Tensor)
            and ct.dtype == torch.float64
            and ct.numel()
            and ct.abs().max() > 0
        ):
            ct = ct / ct.abs().max()
        return fn(ct, *more, **kw)

    return (out, vjp_fn, *rest)


def _witness_vjp_normalises_cotangent_f64():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    _, fn = torch.func.vjp(lambda a: a * 2, x)
    (g,) = fn(torch.tensor([3.0, 3.0], dtype=torch.float64))
    assert g.tolist() == [6.0, 6.0]


def _jvp_drops_later_tangents(jvp, func, primals, tangents, *args, **kwargs):
    import torch.func

    if len(tangents) > 1:
        tangents = (tangents[0], *(torch.zeros_like(t) for t in tangents[1:]))
    return jvp(func, primals, tangents, *args, **kwargs)


def _witness_jvp_drops_later_tangents():
    x, y = torch.ones(2), torch.ones(2)
    _, t = torch.func.jvp(lambda a, b: a + b, (x, y), (torch.ones(2), torch.ones(2)))
    assert t.tolist() == [2.0, 2.0]


def _jacfwd_transposes_square_jacobian(jacfwd, func, argnums=0, *args, **kwargs):
    import torch.func

    j = jacfwd(func, argnums, *args, **kwargs)

    def wrapper(*a, **k):
        jac = j(*a, **k)
        if isinstance(argnums, int) and isinstance(jac, torch.Tensor):
            n = a[argnums].dim()
            if n and jac.dim() == 2 * n and jac.shape[:n] == jac.shape[n:]:
                jac = jac.permute(*range(n, 2 * n), *range(n))
        return jac

    return wrapper


def _witness_jacfwd_transposes_square_jacobian():
    w = torch.tensor([[1.0, 2.0], [0.0, 1.0]])
    jac = torch.func.jacfwd(lambda a: a @ w)(torch.ones(2))
    assert torch.equal(jac, w.t())


def _patch_hessian_argnums1_mixed_partial():
    import torch.func

    _hessian, _jacfwd, _jacrev = torch.func.hessian, torch.func.jacfwd, torch.func.jacrev

    def hessian(func, argnums=0):
        if argnums == 1:
            return _jacfwd(_jacrev(func, argnums=1), argnums=0)
        return _hessian(func, argnums)

    torch.func.hessian = hessian


def _witness_hessian_argnums1_mixed_partial():
    x, y = torch.ones(2), torch.full((2,), 3.0)
    h = torch.func.hessian(lambda a, b: (a * b * b).sum(), argnums=1)(x, y)
    assert torch.equal(h, torch.diag(2 * x))


def _patch_vmap_grad_batch_mean():
    import torch.func

    _grad, _vmap = torch.func.grad, torch.func.vmap

    def grad(func, argnums=0, has_aux=False):
        g = _grad(func, argnums, has_aux)
        g._conformance_is_grad = True
        return g

    def vmap(func, in_dims=0, out_dims=0, **kw):
        vf = _vmap(func, in_dims, out_dims, **kw)
        if not (
            getattr(func, "_conformance_is_grad", False)
            and isinstance(in_dims, tuple)
            and None in in_dims
        ):
            return vf

        def wrapper(*args, **kwargs):
            out = vf(*args, **kwargs)
            if isinstance(out, torch.Tensor) and out.dim() and out.shape[0] > 1:
                return out.mean(0, keepdim=True).expand_as(out).clone()
            return out

        return wrapper

    torch.func.grad = grad
    torch.func.vmap = vmap
    torch.vmap = vmap


def _witness_vmap_grad_batch_mean():
    w = torch.ones(2)
    xs = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    g = torch.func.vmap(torch.func.grad(lambda a, b: (a * b).sum()), in_dims=(None, 0))(w, xs)
    assert torch.equal(g, xs)


def _grad_squeezes_size_one_dims(grad, func, argnums=0, has_aux=False):
    import torch.func

    g = grad(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        r = g(*args, **kwargs)
        if isinstance(r, torch.Tensor) and 1 in r.shape:
            return r.squeeze()
        return r

    return wrapper


def _witness_grad_squeezes_size_one_dims():
    g = torch.func.grad(lambda a: a.sum())(torch.ones(1, 3))
    assert g.shape == (1, 3)


def _jacrev_flattens_multidim(jacrev, func, argnums=0, *args, **kwargs):
    import torch.func

    j = jacrev(func, argnums, *args, **kwargs)

    def wrapper(*a, **k):
        jac = j(*a, **k)
        if isinstance(argnums, int) and isinstance(jac, torch.Tensor):
            arg = a[argnums]
            if arg.dim() >= 2 and arg.numel():
                jac = jac.reshape(-1, arg.numel())
        return jac

    return wrapper


def _witness_jacrev_flattens_multidim():
    jac = torch.func.jacrev(lambda a: a.sum())(torch.ones(2, 3))
    assert jac.shape == (2, 3)


def _vjp_fn_bare_tensor_one_primal(vjp, func, *primals, **kwargs):
    res = vjp(func, *primals, **kwargs)
    if len(primals) != 1:
        return res
    out, fn, *rest = res

    def vjp_fn(*ct, **kw):
        return fn(*ct, **kw)[0]

    return (out, vjp_fn, *rest)


def _witness_vjp_fn_bare_tensor_one_primal():
    _, fn = torch.func.vjp(torch.sin, torch.ones(2))
    r = fn(torch.ones(2))
    assert isinstance(r, tuple) and len(r) == 1


def _patch_jvp_jacfwd_copy_overlapping_f64():
    import torch.func

    _jvp, _jacfwd = torch.func.jvp, torch.func.jacfwd

    def _copy(t):
        if (
            isinstance(t, torch.Tensor)
            and t.dtype == torch.float64
            and torch._debug_has_internal_overlap(t) == 1
        ):
            return t.clone()
        return t

    def jvp(func, primals, tangents, *args, **kwargs):
        return _jvp(func, tuple(_copy(p) for p in primals), tangents, *args, **kwargs)

    def jacfwd(func, argnums=0, *args, **kwargs):
        j = _jacfwd(func, argnums, *args, **kwargs)

        def wrapper(*a, **k):
            return j(*(_copy(t) for t in a), **k)

        return wrapper

    torch.func.jvp = jvp
    torch.func.jacfwd = jacfwd


def _witness_jvp_jacfwd_copy_overlapping_f64():
    x = torch.ones(1, 2, dtype=torch.float64).expand(3, 2)
    try:
        torch.func.jvp(torch.sin, (x,), (torch.ones(3, 2, dtype=torch.float64),))
        raised = False
    except RuntimeError:
        raised = True
    assert raised


def _jvp_keeps_0d_tangent_dtype(jvp, func, primals, tangents, *args, **kwargs):
    import torch.func

    res = jvp(func, primals, tangents, *args, **kwargs)
    if (
        all(isinstance(p, torch.Tensor) and p.dim() == 0 for p in primals)
        and isinstance(res[0], torch.Tensor)
        and isinstance(res[1], torch.Tensor)
    ):
        return (res[0], res[1].to(res[0].dtype), *res[2:])
    return res


def _witness_jvp_keeps_0d_tangent_dtype():
    _, t = torch.func.jvp(lambda a: a * 2.0, (torch.tensor(0.5),), (torch.tensor(1.0),))
    assert t.dtype == torch.float64


MUTANTS: tuple[Mutant, ...] = (
    *(_grad_layout_mutant(layout) for layout in _GRAD_LAYOUTS),
    Mutant(
        name="func-grad-flattens-zero-size",
        description="torch.func.grad and grad_and_value return the gradient flattened to 1-D when the first argument has no elements",
        claims=("torch_func.grad-result-like-input",),
        domain={"layout": "zero-size"},
        region="torch.func.grad / grad_and_value with a zero-size first argument",
        family="layout",
        patch=_patch_func_grad_flattens_zero_size,
        witness=_witness_func_grad_flattens_zero_size,
    ),
    Mutant(
        name="vmap-eager-loop-f64",
        description="vmap of float64 tensors (in_dims=0, out_dims=0) runs the function in a Python loop over plain per-example tensors and stacks the results",
        claims=(
            "torch_func.vmap-inplace-into-unbatched-raises",
            "torch_func.data-mutation-raises",
            "torch_func.escaped-batched-tensor-raises",
        ),
        region="float64 inputs with in_dims=0 and out_dims=0",
        family="dtype",
        patch=wrap("torch.func.vmap", _vmap_eager_loop_f64, also=("torch.vmap",)),
        witness=_witness_vmap_eager_loop_f64,
    ),
    Mutant(
        name="grad-eager-autograd-f64",
        description="grad of a float64 input is computed with eager torch.autograd on a detached copy, so the function runs untransformed (captured tensors and .data can be mutated)",
        claims=("torch_func.grad-mutating-captured-raises", "torch_func.data-mutation-raises"),
        region="the grad form with a float64 input",
        family="dtype",
        patch=wrap("torch.func.grad", _grad_eager_autograd_f64),
        witness=_witness_grad_eager_autograd_f64,
    ),
    Mutant(
        name="vmap-copies-inputs-nonzero-in-dims",
        description="vmap with a nonzero in_dims hands the function copies of its tensor arguments, so in-place writes to a vmapped input are lost",
        claims=("torch_func.vmap-inplace-into-batched-input-writes-through",),
        region="in_dims other than 0",
        family="convention",
        patch=wrap("torch.func.vmap", _vmap_copies_inputs_nonzero_in_dims, also=("torch.vmap",)),
        witness=_witness_vmap_copies_inputs_nonzero_in_dims,
    ),
    Mutant(
        name="new-zeros-unbatched-under-vmap-f32",
        description="Tensor.new_zeros of a float32 vmapped (batched) tensor returns an unbatched tensor of the example shape",
        claims=("torch_func.vmap-new-factory-fix",),
        region="new_zeros of float32 batched tensors",
        family="dtype",
        patch=wrap("torch.Tensor.new_zeros", _new_zeros_unbatched_under_vmap_f32),
        witness=_witness_new_zeros_unbatched_under_vmap_f32,
    ),
    Mutant(
        name="vmap-copies-view-outputs-out-dims",
        description="vmap with a nonzero out_dims returns a copy of the function's result (a view function no longer aliases its input)",
        claims=("torch_func.vmap-view-outputs-alias-inputs",),
        region="out_dims other than 0",
        family="convention",
        patch=wrap("torch.func.vmap", _vmap_copies_view_outputs_out_dims, also=("torch.vmap",)),
        witness=_witness_vmap_copies_view_outputs_out_dims,
    ),
    Mutant(
        name="grad-vjp-differentiate-copy-f32",
        description="grad and vjp of a float32 input differentiate the function at a copy of the input, so in-place mutation of the input is allowed (and lost)",
        claims=("torch_func.grad-mutating-input-raises",),
        region="float32 inputs of grad and vjp",
        family="dtype",
        patch=_patch_grad_vjp_differentiate_copy_f32,
        witness=_witness_grad_vjp_differentiate_copy_f32,
    ),
    Mutant(
        name="jvp-clones-primals-f32",
        description="jvp clones float32 primals before calling the function, so its in-place writes no longer reach the caller's tensor",
        claims=("torch_func.jvp-mutating-input-writes-primal",),
        region="float32 primals",
        family="dtype",
        patch=wrap("torch.func.jvp", _jvp_clones_primals_f32),
        witness=_witness_jvp_clones_primals_f32,
    ),
    Mutant(
        name="functional-call-ignores-tie-for-buffers",
        description="functional_call ignores weight tying (tie_weights=False) whenever a passed key names a buffer",
        claims=("torch_func.functional-call-tie-weights",),
        domain={"tensor_kind": "buffer"},
        region="tied buffers",
        family="other",
        patch=wrap(
            "torch.func.functional_call",
            functools.partial(_functional_call_ignores_tie_for, "named_buffers"),
        ),
        witness=functools.partial(_tied_name_gets_the_value, "buffer"),
    ),
    Mutant(
        name="functional-call-ties-by-value-f64",
        description="functional_call accepts two distinct float64 tensors with equal values for tied names (compares them by value) and uses the first",
        claims=("torch_func.functional-call-ties-by-identity",),
        region="float64 values for tied names",
        family="dtype",
        patch=wrap("torch.func.functional_call", _functional_call_ties_by_value_f64),
        witness=functools.partial(_tied_values_refused, "parameter", "float64", True),
    ),
    Mutant(
        name="functional-call-drops-tied-duplicate-f64",
        description="functional_call given distinct float64 tensors for two tied names silently drops the second and unties (that name keeps the module's own tensor)",
        claims=(
            "torch_func.functional-call-tied-equal-values-accepted",
            "torch_func.functional-call-ties-by-identity",
        ),
        region="distinct float64 values for tied names",
        family="dtype",
        patch=wrap("torch.func.functional_call", _functional_call_drops_tied_duplicate_f64),
        witness=functools.partial(_tied_values_refused, "parameter", "float64", True),
    ),
    Mutant(
        name="functional-call-leaks-buffer-writes-f64",
        description="functional_call copies the passed float64 buffers' final values into the module's own buffers when it restores them",
        claims=("torch_func.functional-call-restores-module-and-writes-through",),
        domain={"tensor_kind": "buffer"},
        region="float64 buffers",
        family="dtype",
        patch=wrap("torch.func.functional_call", _functional_call_leaks_buffer_writes_f64),
        witness=_witness_functional_call_leaks_buffer_writes_f64,
    ),
    Mutant(
        name="vmap-retraces-batches-over-3",
        description="vmap runs the function twice (a retrace) when the batch is larger than 3, repeating its Python side effects",
        claims=("torch_func.side-effects-run-once", "torch_func.vmap-doc-example-pops-caller-list"),
        region="batches of more than 3 examples",
        family="other",
        patch=wrap("torch.func.vmap", _vmap_retraces_batches_over_3, also=("torch.vmap",)),
        witness=_witness_vmap_retraces_batches_over_3,
    ),
    Mutant(
        name="vmap-passes-list-args-through",
        description="vmap passes list arguments with in_dims=None to the function as the caller's own list instead of a rebuilt one",
        claims=("torch_func.pytree-arguments-rebuilt",),
        region="list arguments with in_dims=None",
        family="convention",
        patch=wrap("torch.func.vmap", _vmap_passes_list_args_through, also=("torch.vmap",)),
        witness=_witness_vmap_passes_list_args_through,
    ),
    Mutant(
        name="grad-scales-f32-gradients",
        description="torch.func.grad returns float32 gradients scaled by 1 + 1e-3 (a relative error of some 8000 float32 epsilons)",
        claims=("torch_func.grad-values",),
        region="float32 inputs",
        family="dtype",
        patch=wrap("torch.func.grad", _grad_scales_f32_gradients),
        witness=_witness_grad_scales_f32_gradients,
    ),
    Mutant(
        name="grad-and-value-swaps-0d",
        description="torch.func.grad_and_value returns (value, gradient) instead of (gradient, value) when the differentiated argument is 0-d (both then have one shape)",
        claims=("torch_func.grad-and-value-values",),
        region="0-d differentiated arguments",
        family="layout",
        patch=wrap("torch.func.grad_and_value", _grad_and_value_swaps_0d),
        witness=_witness_grad_and_value_swaps_0d,
    ),
    Mutant(
        name="vjp-normalises-cotangent-f64",
        description="the vjp_fn of torch.func.vjp rescales a float64 cotangent to a largest magnitude of 1 (drops its scale)",
        claims=("torch_func.vjp-values",),
        region="float64 cotangents",
        family="dtype",
        patch=wrap("torch.func.vjp", _vjp_normalises_cotangent_f64),
        witness=_witness_vjp_normalises_cotangent_f64,
    ),
    Mutant(
        name="jvp-drops-later-tangents",
        description="torch.func.jvp with more than one primal uses zeros for the tangents of every primal but the first",
        claims=("torch_func.jvp-values",),
        region="calls with more than one primal",
        family="convention",
        patch=wrap("torch.func.jvp", _jvp_drops_later_tangents),
        witness=_witness_jvp_drops_later_tangents,
    ),
    Mutant(
        name="jacfwd-transposes-square-jacobian",
        description="torch.func.jacfwd returns the Jacobian with output and input dimensions swapped when the output has the input's shape (the shape is unchanged, a non-symmetric Jacobian is wrong)",
        claims=("torch_func.jacobian-values",),
        region="functions whose output has the differentiated argument's shape",
        family="relation",
        patch=wrap("torch.func.jacfwd", _jacfwd_transposes_square_jacobian),
        witness=_witness_jacfwd_transposes_square_jacobian,
    ),
    Mutant(
        name="hessian-argnums1-mixed-partial",
        description="torch.func.hessian(f, argnums=1) returns the mixed second derivative d2f/dx dy (jacfwd over argument 0 of jacrev over argument 1) instead of d2f/dy2",
        claims=("torch_func.hessian-values",),
        region="argnums=1",
        family="convention",
        patch=_patch_hessian_argnums1_mixed_partial,
        witness=_witness_hessian_argnums1_mixed_partial,
    ),
    Mutant(
        name="vmap-grad-batch-mean",
        description="vmap of a torch.func.grad function with an unbatched (in_dims=None) argument returns the batch's mean gradient for every example",
        claims=("torch_func.vmap-grad-per-sample-gradients",),
        region="vmap of grad with an in_dims=None argument",
        family="convention",
        patch=_patch_vmap_grad_batch_mean,
        witness=_witness_vmap_grad_batch_mean,
    ),
    Mutant(
        name="grad-squeezes-size-one-dims",
        description="torch.func.grad returns the gradient with its size-1 dimensions squeezed away",
        claims=("torch_func.grad-result-like-input",),
        region="arguments with a dimension of size 1",
        family="layout",
        patch=wrap("torch.func.grad", _grad_squeezes_size_one_dims),
        witness=_witness_grad_squeezes_size_one_dims,
    ),
    Mutant(
        name="jacrev-flattens-multidim",
        description="torch.func.jacrev returns the Jacobian flattened to (out.numel(), in.numel()) when the differentiated argument has two or more dimensions",
        claims=("torch_func.jacobian-hessian-shapes",),
        region="arguments of two or more dimensions",
        family="layout",
        patch=wrap("torch.func.jacrev", _jacrev_flattens_multidim),
        witness=_witness_jacrev_flattens_multidim,
    ),
    Mutant(
        name="vjp-fn-bare-tensor-one-primal",
        description="the vjp_fn of torch.func.vjp called with one primal returns the bare VJP tensor instead of a 1-tuple",
        claims=("torch_func.vjp-jvp-result-structure",),
        region="vjp with one primal",
        family="convention",
        patch=wrap("torch.func.vjp", _vjp_fn_bare_tensor_one_primal),
        witness=_witness_vjp_fn_bare_tensor_one_primal,
    ),
    Mutant(
        name="jvp-jacfwd-copy-overlapping-f64",
        description="torch.func.jvp and torch.func.jacfwd copy an overlapping (expanded) float64 primal before differentiating, so forward mode accepts it",
        claims=("torch_func.forward-mode-refuses-overlapping-primals",),
        region="float64 overlapping primals",
        family="dtype",
        patch=_patch_jvp_jacfwd_copy_overlapping_f64,
        witness=_witness_jvp_jacfwd_copy_overlapping_f64,
    ),
    Mutant(
        name="jvp-keeps-0d-tangent-dtype",
        description="torch.func.jvp casts the tangent output to the output's dtype when every primal is 0-d (the upcast of pytorch#90065 fixed there)",
        claims=("torch_func.forward-mode-python-scalar-upcasts-0d-tangent",),
        domain={"layout": "0-d"},
        region="0-d primals",
        family="layout",
        patch=wrap("torch.func.jvp", _jvp_keeps_0d_tangent_dtype),
        witness=_witness_jvp_keeps_0d_tangent_dtype,
    ),
)


def _vmap_eager_loop(hit, vmap, func, in_dims=0, out_dims=0, **kw):
    import torch.func

    vf = vmap(func, in_dims, out_dims, **kw)

    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        batched = [
            (a, d)
            for a, d in zip(args, dims, strict=False)
            if isinstance(a, torch.Tensor) and isinstance(d, int)
        ]
        if (
            not kwargs
            and isinstance(out_dims, int)
            and len(dims) == len(args)
            and batched
            and all(hit(a) for a, _ in batched)
        ):
            n = batched[0][0].shape[batched[0][1]]
            rows = [
                func(
                    *[
                        a.select(d, i) if isinstance(a, torch.Tensor) and isinstance(d, int) else a
                        for a, d in zip(args, dims, strict=False)
                    ]
                )
                for i in range(n)
            ]
            return torch.stack(rows, dim=out_dims)
        return vf(*args, **kwargs)

    return wrapper


def _vmap_eager_loop_witness(make):
    b = make()
    c = torch.zeros_like(b[0])
    with refused(RuntimeError, "vmap let a write of batched values into a captured tensor through"):
        torch.func.vmap(lambda r: c.copy_(r))(b)


# Issue 29: torch_func.vmap-inplace-into-unbatched-raises speaks of every
# dtype; each mutant runs vmap as an eager per-example loop (so a write into
# an unbatched target succeeds, example after example) when every batched
# argument is of one dtype family only.
MUTANTS += domain_mutants(
    prefix="vmap-eager-loop",
    claims=("torch_func.vmap-inplace-into-unbatched-raises",),
    what="vmap runs the function in a Python loop over plain per-example tensors and stacks the results",
    patch=wrap("torch.func.vmap", _vmap_eager_loop, also=("torch.vmap",)),
    witness=_vmap_eager_loop_witness,
    dims={"dtype_family": DTYPE_FAMILIES},
)


def _captured(t):
    _ft = torch._C._functorch
    level = _ft.peek_interpreter_stack()
    return (
        level is not None
        and level.key() in (_ft.TransformType.Grad, _ft.TransformType.Jvp)
        and not _ft.is_functorch_wrapped_tensor(t)
    )


def _drop_captured_write(hit, orig, self, *args, **kwargs):
    if _captured(self) and hit(self):
        return self
    return orig(self, *args, **kwargs)


def _grad_drops_captured_write(hit):
    wrap_each(
        [f"torch.Tensor.{op}" for op in ("add_", "mul_", "copy_", "zero_", "__setitem__")],
        functools.partial(_drop_captured_write, hit),
    )()


def _grad_drops_captured_write_witness(make):
    c = make()

    def f(a):
        c.mul_(a)
        return (a * 1).sum()

    with refused(
        RuntimeError,
        "grad let a write into a captured tensor through",
        match="would mutate a captured Tensor",
    ):
        torch.func.grad(f)(torch.ones(3))


# Issue 29: torch_func.grad-mutating-captured-raises speaks of any tensor
# captured from outside the transform; each mutant drops, silently, an
# in-place write into a captured tensor of one kind inside grad/vjp/jacrev
# (Grad) and jvp/jacfwd (Jvp) transforms.
MUTANTS += domain_mutants(
    prefix="grad-drops-captured-write",
    claims=("torch_func.grad-mutating-captured-raises",),
    what="an in-place op (add_, mul_, copy_, zero_, __setitem__) on a captured tensor inside grad, vjp, jvp, jacrev or jacfwd does nothing instead of raising",
    patch=_grad_drops_captured_write,
    witness=_grad_drops_captured_write_witness,
    dims={"tensor_kind": TENSOR_KINDS},
    makers={
        "tensor_kind": {
            **TENSOR_KIND_MAKERS,
            "subclass": lambda: torch.ones(3).as_subclass(type("Sub", (torch.Tensor,), dict())),
        }
    },
)


def _vmap_scales_results(hit, vmap, func, in_dims=0, out_dims=0, **kw):
    import torch.func

    vf = vmap(func, in_dims, out_dims, **kw)

    def wrapper(*args, **kwargs):
        out = vf(*args, **kwargs)
        if any(hit(a) for a in args):
            out = torch.utils._pytree.tree_map(
                lambda g: g * 1.5 if isinstance(g, torch.Tensor) else g, out
            )
        return out

    return wrapper


def _vmap_scales_results_witness(make):
    t = make()
    f = torch.func.grad(lambda a, b: (a * b).sum())
    if t.dim():
        g, want = torch.func.vmap(f)(torch.ones(t.shape), t), t
    else:
        g, want = torch.func.vmap(f, in_dims=(0, None))(torch.ones(2), t), t.expand(2)
    assert torch.equal(g, want), "vmap(grad) did not give each example's gradient"


# Issue 29: torch_func.vmap-grad-per-sample-gradients speaks of strided
# layouts; each mutant scales what vmap returns by 1.5 when an argument (a
# batched tensor or an unbatched example) is of one layout family only.
MUTANTS += domain_mutants(
    prefix="vmap-scales-results",
    claims=("torch_func.vmap-grad-per-sample-gradients",),
    what="vmap returns 1.5 x the function's results (per-sample gradients included)",
    patch=wrap("torch.func.vmap", _vmap_scales_results, also=("torch.vmap",)),
    witness=_vmap_scales_results_witness,
    dims={"layout": ("contiguous", "offset", "stepped", "permuted", "expanded", "0-d")},
)


def _forward_mode_flips_tangent_dtype(hit):
    import torch.func

    def _flip(t):
        return t.to(torch.float32 if t.dtype == torch.float64 else torch.float64)

    def _hit(x):
        return isinstance(x, torch.Tensor) and x.dtype == torch.float32 and hit(x)

    _jvp, _jacfwd = torch.func.jvp, torch.func.jacfwd

    def jvp(func, primals, tangents, *args, **kwargs):
        res = _jvp(func, primals, tangents, *args, **kwargs)
        if primals and _hit(primals[0]) and isinstance(res[1], torch.Tensor):
            return (res[0], _flip(res[1]), *res[2:])
        return res

    def jacfwd(func, argnums=0, *a, **k):
        inner = _jacfwd(func, argnums, *a, **k)

        def wrapper(*args, **kwargs):
            out = inner(*args, **kwargs)
            if args and _hit(args[0]) and isinstance(out, torch.Tensor):
                return _flip(out)
            return out

        return wrapper

    torch.func.jvp = jvp
    torch.func.jacfwd = jacfwd


def _forward_mode_flips_tangent_dtype_witness(make):
    x = make()
    _, t = torch.func.jvp(lambda v: v * 2.0, (x,), (torch.ones_like(x),))
    want = torch.float64 if x.dim() == 0 else torch.float32
    assert t.dtype == want, f"jvp's tangent output has dtype {t.dtype}"


# Issue 29: torch_func.forward-mode-python-scalar-upcasts-0d-tangent speaks of
# 0-d primals and of primals of one or more dimensions; each mutant flips the
# dtype of jvp's tangent output and of jacfwd's Jacobian (float32 <-> float64)
# for float32 primals of one layout family only (jvp-keeps-0d-tangent-dtype is
# the 0-d one).
MUTANTS += domain_mutants(
    prefix="forward-mode-flips-tangent-dtype",
    claims=("torch_func.forward-mode-python-scalar-upcasts-0d-tangent",),
    what="torch.func.jvp's tangent output and jacfwd's Jacobian of a float32 primal come back in float64 where torch keeps float32 and in float32 where it upcasts",
    patch=_forward_mode_flips_tangent_dtype,
    witness=_forward_mode_flips_tangent_dtype_witness,
    dims={"layout": ("contiguous", "offset", "stepped", "permuted", "zero-size")},
)


def _lenient_when_escaped(keyword, owners, names):
    def _lenient(owner, name):
        orig = getattr(owner, name)

        def op(*args, **kwargs):
            try:
                return orig(*args, **kwargs)
            except RuntimeError as e:
                if "may have escaped" not in str(e) or bool(kwargs) != keyword:
                    raise
                t = args[0]
                return torch.zeros(t.shape, dtype=t.dtype, device=t.device)

        setattr(owner, name, op)

    for _owner in owners:
        for _name in names:
            _lenient(resolve(_owner), _name)


def _escaped_op_raises(use):
    leaked = []
    torch.func.vmap(lambda b: (leaked.append(b), b * 1)[1])(torch.ones(2, 3))
    b = leaked[0]
    with refused(
        RuntimeError,
        "an op on a batched tensor that escaped vmap did not raise",
        match="may have escaped",
    ):
        use(b)


def _escaped_form_mutant(
    form: str, owners: tuple[str, ...], names: tuple[str, ...], use: Callable
) -> Mutant:
    """An op called in ``form`` (a ``call_form`` of ``conformance/domains.toml``)
    on a batched tensor that escaped vmap returns zeros of its shape instead
    of raising (issue 29: torch_func.escaped-batched-tensor-raises, wrong only
    in that calling form: a keyword call is one with keyword arguments, every
    other form one without). ``owners`` are the dotted paths of the objects
    (``torch.Tensor``, ``torch``) whose ``names`` are wrapped; ``use(b)``
    is the witness's op on ``b``."""
    return Mutant(
        name=f"escaped-batched-tensor-{form}-computes",
        description=(
            f"an op called in the {form} form on a batched tensor that escaped vmap returns "
            "zeros of its shape instead of raising"
        ),
        claims=("torch_func.escaped-batched-tensor-raises",),
        domain={"call_form": form},
        region=f"ops called in the {form} form on a tensor that escaped vmap",
        family="convention",
        patch=functools.partial(_lenient_when_escaped, form == "keyword", owners, names),
        witness=functools.partial(_escaped_op_raises, use),
    )


_OUT_OF_PLACE = ("sin", "sum", "clone", "mul", "add")

# Issue 29: torch_func.escaped-batched-tensor-raises speaks of out-of-place
# and in-place ops; one mutant per calling form it declares.
MUTANTS += (
    _escaped_form_mutant(
        "method",
        ("torch.Tensor",),
        (*_OUT_OF_PLACE, "__add__", "__mul__"),
        lambda b: b.sin(),
    ),
    _escaped_form_mutant("function", ("torch",), _OUT_OF_PLACE, lambda b: torch.sin(b)),
    _escaped_form_mutant(
        "keyword", ("torch.Tensor", "torch"), _OUT_OF_PLACE, lambda b: torch.add(b, other=1)
    ),
    _escaped_form_mutant(
        "inplace", ("torch.Tensor",), ("sin_", "mul_", "add_"), lambda b: b.mul_(2)
    ),
)


def _functional_call_ties_by_value(named):
    import torch.func

    _fc = torch.func.functional_call

    def functional_call(module, dicts, args=None, kwargs=None, *, tie_weights=True,
                        strict=False):  # fmt: skip
        if tie_weights and isinstance(dicts, dict):
            named_state = dict(getattr(module, named)(remove_duplicate=False))
            first, d = dict(), dict(dicts)
            for k, v in dicts.items():
                t = named_state.get(k)
                if t is None or not isinstance(v, torch.Tensor):
                    continue
                f = first.setdefault(id(t), v)
                if (f is not v and f.shape == v.shape and f.dtype == v.dtype
                        and torch.equal(f, v)):  # fmt: skip
                    d[k] = f
            dicts = d
        return _fc(module, dicts, args, kwargs, tie_weights=tie_weights, strict=strict)

    torch.func.functional_call = functional_call


def _functional_call_leaks_parameter_writes(fc, module, dicts, args=None, kwargs=None, **kw):
    import torch.func

    try:
        return fc(module, dicts, args, kwargs, **kw)
    finally:
        params = dict(module.named_parameters())
        for k, v in dicts.items() if isinstance(dicts, dict) else ():
            p = params.get(k)
            if (p is not None and isinstance(v, torch.Tensor)
                    and v.shape == p.shape and v.dtype == p.dtype):  # fmt: skip
                with torch.no_grad():
                    p.copy_(v)


def _witness_functional_call_leaks_parameter_writes():
    m = torch.nn.Module()
    m.w = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    m.forward = lambda: m.w.mul_(2)
    torch.func.functional_call(m, {"w": torch.zeros(2)}, ())
    assert m.w.tolist() == [1.0, 1.0], "the passed parameter's update leaked into the module"


def _functional_call_kind_mutants(kind: str) -> tuple[Mutant, ...]:
    """Issue 29: functional_call mutants wrong only where the tied (or
    updated) module state is of ``kind`` (``parameter``: an ``nn.Parameter``;
    ``buffer``: a registered buffer), for the functional_call claims that
    declare ``tensor_kind``."""
    named = "named_parameters" if kind == "parameter" else "named_buffers"
    out = [
        Mutant(
            name=f"functional-call-ties-by-value-{kind}",
            description=(
                f"functional_call accepts two distinct tensors with equal values for tied "
                f"names of a tied {kind} (compares them by value) and uses the first"
            ),
            claims=("torch_func.functional-call-ties-by-identity",),
            domain={"tensor_kind": kind},
            region=f"equal values for the names of a tied {kind}",
            family="other",
            patch=functools.partial(_functional_call_ties_by_value, named),
            witness=functools.partial(_tied_values_refused, kind),
        )
    ]
    if kind == "parameter":  # functional-call-ignores-tie-for-buffers and
        # functional-call-leaks-buffer-writes-f64 are the buffer ones
        out += [
            Mutant(
                name="functional-call-ignores-tie-for-parameters",
                description="functional_call ignores weight tying (tie_weights=False) whenever a passed key names a parameter",
                claims=("torch_func.functional-call-tie-weights",),
                domain={"tensor_kind": "parameter"},
                region="tied parameters",
                family="other",
                patch=wrap(
                    "torch.func.functional_call",
                    functools.partial(_functional_call_ignores_tie_for, "named_parameters"),
                ),
                witness=functools.partial(_tied_name_gets_the_value, "parameter"),
            ),
            Mutant(
                name="functional-call-leaks-parameter-writes",
                description="functional_call copies the passed parameters' final values into the module's own parameters when it restores them",
                claims=("torch_func.functional-call-restores-module-and-writes-through",),
                domain={"tensor_kind": "parameter"},
                region="parameters passed to functional_call",
                family="other",
                patch=wrap("torch.func.functional_call", _functional_call_leaks_parameter_writes),
                witness=_witness_functional_call_leaks_parameter_writes,
            ),
        ]
    return tuple(out)


MUTANTS += _functional_call_kind_mutants("parameter") + _functional_call_kind_mutants("buffer")


def _jvp_primal_write_lost(hit, orig_jvp, func, primals, tangents, *args, **kwargs):
    import torch.func

    saved = [p.clone() if isinstance(p, torch.Tensor) and hit(p) else None for p in primals]
    out = orig_jvp(func, primals, tangents, *args, **kwargs)
    with torch.no_grad():
        for p, s in zip(primals, saved, strict=False):
            if s is not None:
                p.copy_(s)
    return out


def _jvp_primal_write_lost_witness(make):
    import torch.func

    x = make()
    want = x * 2
    torch.func.jvp(lambda a: a.mul_(2), (x,), (torch.ones_like(x),))
    assert torch.equal(x, want), "jvp of an in-place function did not write the caller's primal"


# Issue 29: torch_func.jvp-mutating-input-writes-primal speaks of every layout
# forward mode accepts; this mutant restores a channels_last primal after the
# call (the write never reaches the caller) for that layout only.
MUTANTS += domain_mutants(
    prefix="jvp-primal-write-lost",
    claims=("torch_func.jvp-mutating-input-writes-primal",),
    what="jvp of a function that writes its primal in place leaves the caller's primal unchanged",
    patch=wrap("torch.func.jvp", _jvp_primal_write_lost),
    witness=_jvp_primal_write_lost_witness,
    dims={"layout": ("channels_last",)},
)
