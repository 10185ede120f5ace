"""The operation rules of the copy-sequence state machine: probes, copies,
aliases and views, in-place writes, autograd actions."""

from __future__ import annotations

import math

import torch
from hypothesis import strategies as st
from hypothesis.stateful import (
    initialize,
    multiple,
    precondition,
    rule,
)

from conformance.copy_sequences.harness import (
    ARRAYS,
    MODE_CODE,
    TENSORS,
    Harness,
    grad_mode_context,
)
from conformance.model import (
    TensorModel,
    bf16_bits,  # noqa: F401 - the printed programs use it
)
from strategies.sequences import (
    DTYPES,
    FORMATS,
    GRAD_MODE_STRATEGY,
    MAX_NUMEL,
    SCALARS,
    Fresh,
    factorizations,
    fresh_specs,
)


class OperationRules(Harness):
    """One rule per operation on live tensors."""

    tensors = TENSORS
    arrays = ARRAYS

    # ---- probes -------------------------------------------------------------
    # Hypothesis enables a random subset of the rules in each program (swarm
    # testing), so a rule meets a given kind of input in few programs. Every
    # program also runs the probes below once each (initialize rules are
    # never disabled): one operation, drawn from all of them, on a fresh
    # tensor of any dtype, in a drawn layout and grad mode - so that each
    # operation meets each kind of input in many programs of every run.

    def _probe(self, spec: Fresh, layout: str, op: str, mode: str, choice: int, other):
        t = self._laid_out(spec, layout)
        if t is None:
            return multiple()
        out = self._apply(t, op, mode, choice, other)
        return out if isinstance(out, TensorModel) and out is not t else multiple()

    def _laid_out(self, spec: Fresh, layout: str) -> TensorModel | None:
        """A fresh tensor of ``spec``, or a view of it in ``layout`` (None
        when either step raised alike on both sides)."""
        t = self._fresh(spec)
        return self._view_in(t, layout) if isinstance(t, TensorModel) else None

    def _view_in(self, t: TensorModel, layout: str) -> TensorModel | None:
        """``t`` itself (``contiguous``) or a view of it in ``layout`` (a
        fresh (3, 4) tensor's for ``non-dense``). ``offset`` (``t[1:]`` of a
        ``t`` with two or more rows) and ``channels_last`` (a channels_last
        clone of a 4-D ``t``, made in grad mode) are drawn by explicit
        examples only (:data:`_DOMAIN_OPERANDS`)."""
        if layout == "offset" and t.ndim and t.shape[0] > 1:
            t = self.slice(t, 0, 1, 1)
        elif layout == "channels_last" and t.ndim == 4:
            t = self.clone(t, "channels_last", "grad")
        elif layout == "transposed" and t.ndim >= 2:
            t = self.transpose(t, 0, t.ndim - 1)
        elif layout == "stepped" and t.ndim:
            t = self.slice(t, t.ndim - 1, 0, 2)
        elif layout == "expanded":
            t = self.expand(t, (2,), 2, False, None)
        elif layout == "element":
            t = self.select(t, 0, 0) if t.ndim and t.shape[0] else t
        elif layout == "non-dense":
            t = self._make_non_dense(t)
        return t if isinstance(t, TensorModel) else None

    def _apply(self, t: TensorModel, op: str, mode: str, choice: int, other):
        """Run ``op`` on ``t`` (the probes' operations)."""
        m = self.model
        dt = other or DTYPES[choice % len(DTYPES)]
        if op == "clone":
            return self.clone(t, ("preserve", "contiguous", "channels_last")[choice % 3], mode)
        if op in ("to", "to-copy"):
            return self.to(t, other, op == "to-copy")
        if op == "as_tensor":
            return self.convert_as_tensor(t, dt)
        if op in ("asarray", "asarray-copy"):
            return self.convert_asarray(t, True if op == "asarray-copy" else None, other)
        if op == "new_tensor":
            return self.new_tensor(m.tensors[choice % len(m.tensors)], t)
        if op == "tensor":
            return self.tensor_of(t)
        if op == "contiguous":
            return self.contiguous(t)
        if op == "detach":
            return self.detach(t)
        if op == "data":
            return self.data(t)
        if op == "square":
            return self.square(t)
        if op in ("view", "reshape"):
            return getattr(self, op)(t, choice)
        if op == "numpy":
            return self.numpy(t) if self._array_room() else None
        if op in ("fill_", "add_", "mul_", "zero_"):
            return self.inplace(t, op, SCALARS[choice % len(SCALARS)], mode)
        if op == "setitem":
            return self.setitem(t, choice, SCALARS[choice % len(SCALARS)], mode)
        if op == "copy_":
            return self.copy_(t, m.tensors[choice % len(m.tensors)], mode)
        if op == "copy_element_":
            return self.copy_element_(m.tensors[choice % len(m.tensors)], t, mode)
        if op == "backward":
            self.backward_graph(choice, None, choice % 2 == 1, False)
            return self.autograd(t, "sum().backward()")
        return self.autograd(t, op)

    _PROBE_ARGS = dict(
        spec=fresh_specs(),
        layout=st.sampled_from(
            ["contiguous", "contiguous", "transposed", "stepped", "expanded", "element", "non-dense"]
        ),
        op=st.sampled_from(
            ["clone", "clone", "to", "to-copy", "as_tensor", "asarray", "asarray-copy",
             "new_tensor", "tensor", "contiguous", "detach", "data", "square", "view",
             "reshape", "numpy", "fill_", "add_", "mul_", "zero_", "setitem", "copy_",
             "copy_element_", "backward", "retain_grad()", "requires_grad_(False)",
             "requires_grad_(True)", "detach_()"]
        ),
        mode=GRAD_MODE_STRATEGY,
        choice=st.integers(0, 15),
        other=st.sampled_from((None, None, *DTYPES)),
    )  # fmt: skip

    @initialize(target=tensors, **_PROBE_ARGS)
    def probe_a(self, spec, layout, op, mode, choice, other):
        return self._probe(spec, layout, op, mode, choice, other)

    @initialize(target=tensors, **_PROBE_ARGS)
    def probe_b(self, spec, layout, op, mode, choice, other):
        return self._probe(spec, layout, op, mode, choice, other)

    @precondition(Harness._room)
    @rule(target=tensors, spec=fresh_specs(inference=True))
    def fresh(self, spec):
        """A fresh tensor, sometimes made inside inference_mode."""
        return self._fresh(spec)

    # ---- copies -----------------------------------------------------------

    def clone(self, t, memory_format, mode):
        r = self.real[t.id]

        def real():
            with grad_mode_context(mode):
                return r.clone(memory_format=FORMATS[memory_format])

        grad, inference = mode == "grad", mode == "inference"
        return self._op(
            lambda: self.model.clone(t, memory_format, grad=grad, inference=inference),
            real,
            lambda o: (
                f"{MODE_CODE[mode]}{o} = {self._n(t)}.clone(memory_format={FORMATS[memory_format]})"
            ),
        )

    def to(self, t, dtype, copy):
        target = t.dtype if dtype is None else dtype
        return self._op(
            lambda: self.model.to(t, target, copy),
            lambda: self.real[t.id].to(getattr(torch, target), copy=copy),
            lambda o: f"{o} = {self._n(t)}.to(torch.{target}, copy={copy})",
        )

    def contiguous(self, t):
        return self._op(
            lambda: self.model.contiguous(t),
            lambda: self.real[t.id].contiguous(),
            lambda o: f"{o} = {self._n(t)}.contiguous()",
        )

    def tensor_of(self, t):
        return self._op(
            lambda: self.model.tensor_of(t),
            lambda: torch.tensor(self.real[t.id]),
            lambda o: f"{o} = torch.tensor({self._n(t)})",
        )

    def new_tensor(self, x, t):
        return self._op(
            lambda: self.model.new_tensor(x, t),
            lambda: self.real[x.id].new_tensor(self.real[t.id]),
            lambda o: f"{o} = {self._n(x)}.new_tensor({self._n(t)})",
        )

    def convert_as_tensor(self, t, dtype):
        """``torch.as_tensor(t, dtype=dtype)``."""
        tdt = None if dtype is None else getattr(torch, dtype)
        return self._op(
            lambda: self.model.as_tensor(t, dtype),
            lambda: torch.as_tensor(self.real[t.id], dtype=tdt),
            lambda o: f"{o} = torch.as_tensor({self._n(t)}, dtype={tdt})",
        )

    def convert_asarray(self, t, copy, dtype):
        """``torch.asarray(t, dtype=dtype, copy=copy)``."""
        tdt = None if dtype is None else getattr(torch, dtype)
        return self._op(
            lambda: self.model.asarray(t, copy, dtype),
            lambda: torch.asarray(self.real[t.id], dtype=tdt, copy=copy),
            lambda o: f"{o} = torch.asarray({self._n(t)}, dtype={tdt}, copy={copy})",
        )

    # ---- aliases ----------------------------------------------------------

    def detach(self, t):
        return self._op(
            lambda: self.model.detach(t),
            lambda: self.real[t.id].detach(),
            lambda o: f"{o} = {self._n(t)}.detach()",
        )

    def data(self, t):
        return self._op(
            lambda: self.model.data(t),
            lambda: self.real[t.id].data,
            lambda o: f"{o} = {self._n(t)}.data",
        )

    @precondition(Harness._room)
    @rule(
        target=tensors,
        t=tensors,
        dim=st.integers(0, 3),
        start=st.integers(0, 2),
        step=st.integers(1, 3),
    )
    def slice(self, t, dim, start, step):
        d = dim % t.ndim if t.ndim else 0
        s = min(start, max(t.shape[d] - 1, 0)) if t.ndim else start
        return self._view(
            t, "slice", d, s, None, step, model=lambda: self.model.slice(t, d, s, step)
        )

    @precondition(Harness._room)
    @rule(target=tensors, t=tensors, dim=st.integers(0, 3), index=st.integers(-3, 3))
    def select(self, t, dim, index):
        d = dim % t.ndim if t.ndim else 0
        return self._view(t, "select", d, index, model=lambda: self.model.select(t, d, index))

    @precondition(Harness._room)
    @rule(target=tensors, t=tensors, dim0=st.integers(0, 3), dim1=st.integers(0, 3))
    def transpose(self, t, dim0, dim1):
        d0, d1 = (dim0 % t.ndim, dim1 % t.ndim) if t.ndim else (0, 0)
        return self._view(t, "transpose", d0, d1, model=lambda: self.model.transpose(t, d0, d1))

    @precondition(Harness._room)
    @rule(target=tensors, t=tensors, order=st.permutations(range(4)))
    def permute(self, t, order):
        """``t.permute(dims)``: ``order`` restricted to t's dims (extra dims stay last)."""
        dims = tuple(d for d in order if d < t.ndim) + tuple(range(4, t.ndim))
        return self._view(t, "permute", dims, model=lambda: self.model.permute(t, dims))

    @precondition(Harness._room)
    @rule(target=tensors, t=tensors, dim=st.integers(0, 4))
    def unsqueeze(self, t, dim):
        d = dim % (t.ndim + 1)
        return self._view(t, "unsqueeze", d, model=lambda: self.model.unsqueeze(t, d))

    @precondition(Harness._room)
    @rule(
        target=tensors,
        t=tensors,
        lead=st.lists(st.integers(1, 3), max_size=2).map(tuple),
        grow=st.integers(1, 3),
        keep_as_minus_one=st.booleans(),
        bad=st.sampled_from([None, None, None, "mismatch", "leading-minus-one"]),
    )
    def expand(self, t, lead, grow, keep_as_minus_one, bad):
        """``t.expand(*sizes)`` with sizes built from the arguments: ``lead`` new
        leading sizes, ``grow`` for every size-1 dim, -1 for the kept dims when
        ``keep_as_minus_one``; ``bad`` makes an invalid request."""
        if t.numel * grow ** t.shape.count(1) * math.prod(lead) > 4 * MAX_NUMEL:
            lead, grow = (), 1  # keep tensors small
        sizes = [grow if s == 1 else (-1 if keep_as_minus_one else s) for s in t.shape]
        if bad == "mismatch":
            for i, s in enumerate(t.shape):
                if s != 1:
                    sizes[i] = s + 1
                    break
        sizes = list(lead) + sizes
        if bad == "leading-minus-one":
            sizes = [-1] + sizes
        sizes = tuple(sizes)
        return self._view(t, "expand", sizes, model=lambda: self.model.expand(t, sizes))

    @precondition(Harness._room)
    @rule(target=tensors, t=tensors, choice=st.integers(0, 40))
    def view(self, t, choice):
        options = factorizations(t.numel)
        shape = options[choice % len(options)]
        return self._view(t, "view", shape, model=lambda: self.model.view(t, shape))

    @precondition(Harness._room)
    @rule(target=tensors, t=tensors, choice=st.integers(0, 40))
    def reshape(self, t, choice):
        options = factorizations(t.numel)
        return self._reshape_to(t, options[choice % len(options)])

    def _reshape_to(self, t, shape):
        return self._op(
            lambda: self.model.reshape(t, shape),
            lambda: self.real[t.id].reshape(shape),
            lambda o: f"{o} = {self._n(t)}.reshape({shape})",
        )

    # ---- writes -----------------------------------------------------------

    @rule(dst=tensors, src=tensors, mode=GRAD_MODE_STRATEGY)
    def copy_(self, dst, src, mode):
        def real():
            with grad_mode_context(mode):
                return self.real[dst.id].copy_(self.real[src.id])

        grad, inference = mode == "grad", mode == "inference"
        self._op(
            lambda: self.model.copy_(dst, src, grad=grad, inference=inference),
            real,
            lambda o: f"{MODE_CODE[mode]}{self._n(dst)}.copy_({self._n(src)})",
        )

    @precondition(Harness._room)
    @rule(dst=tensors, src=tensors, mode=GRAD_MODE_STRATEGY)
    def copy_element_(self, dst, src, mode):
        """``e = src.reshape(-1)[0]; dst.copy_(e)``: a 0-d source broadcasts to
        any destination, so the copy (and its autograd) is reached often."""
        if src.numel == 0:
            return self.copy_(dst, src, mode)
        flat = self._op(
            lambda: self.model.reshape(src, (src.numel,)),
            lambda: self.real[src.id].reshape(-1),
            lambda o: f"{o} = {self._n(src)}.reshape(-1)",
        )
        element = self._op(
            lambda: self.model.select(flat, 0, 0),
            lambda: self.real[flat.id][0],
            lambda o: f"{o} = {self._n(flat)}[0]",
        )
        if isinstance(element, TensorModel):
            self.copy_(dst, element, mode)

    @rule(
        t=tensors,
        op=st.sampled_from(["add_", "mul_", "fill_", "zero_"]),
        value=st.sampled_from(SCALARS),
        mode=GRAD_MODE_STRATEGY,
    )
    def inplace(self, t, op, value, mode):
        args = () if op == "zero_" else (value,)

        def real():
            with grad_mode_context(mode):
                return getattr(self.real[t.id], op)(*args)

        grad, inference = mode == "grad", mode == "inference"
        self._op(
            lambda: self.model.inplace(t, op, value, grad=grad, inference=inference),
            real,
            lambda o: f"{MODE_CODE[mode]}{self._n(t)}.{op}({', '.join(map(repr, args))})",
        )

    @rule(
        t=tensors, index=st.integers(0, 3), value=st.sampled_from(SCALARS), mode=GRAD_MODE_STRATEGY
    )
    def setitem(self, t, index, value, mode):
        i = index % t.shape[0] if t.ndim and t.shape[0] else None
        key = Ellipsis if i is None else i

        def real():
            with grad_mode_context(mode):
                self.real[t.id][key] = value
            return self.real[t.id]

        grad, inference = mode == "grad", mode == "inference"
        self._op(
            lambda: self.model.setitem(t, i, value, grad=grad, inference=inference),
            real,
            lambda o: f"{MODE_CODE[mode]}{self._n(t)}[{'...' if i is None else i}] = {value!r}",
        )

    # ---- autograd ---------------------------------------------------------

    @rule(
        t=tensors,
        action=st.sampled_from(
            [
                "requires_grad_(True)",
                "requires_grad_(False)",
                "detach_()",
                "sum().backward()",
                "sum().backward()",
                "retain_grad()",
            ]
        ),
    )
    def autograd(self, t, action):
        """``t.requires_grad_(flag)``, ``t.detach_()``, ``t.retain_grad()`` or
        ``t.sum().backward()`` (``.real`` of the sum when complex)."""
        r = self.real[t.id]
        n = self._n(t)
        if action == "sum().backward()":

            def real():
                s = r.sum()
                (s.real if s.is_complex() else s).backward()

            self._run(lambda: self.model.backward(t), real, lambda o: f"{n}.sum().backward()")
        elif action == "retain_grad()":
            self._run(
                lambda: self.model.retain_grad(t), r.retain_grad, lambda o: f"{n}.retain_grad()"
            )
        elif action == "detach_()":
            self._op(lambda: self.model.detach_(t), r.detach_, lambda o: f"{n}.detach_()")
        else:
            flag = action == "requires_grad_(True)"
            self._op(
                lambda: self.model.requires_grad_(t, flag),
                lambda: r.requires_grad_(flag),
                lambda o: f"{n}.{action}",
            )
