"""The focus rules of the copy-sequence state machine (one operation on a
tensor built for it: graphs, gradient edges, conversions, non-dense copies)
and its NumPy rules."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.stateful import (
    multiple,
    precondition,
    rule,
)

from conformance.copy_sequences.harness import (
    ARRAYS,
    FOCUS_EXTRA,
    MAX_ARRAYS,
    MAX_TENSORS,
    TENSORS,
    Harness,
    reorders_when_copied,
    simple_values,
)
from conformance.model import (
    UNSIGNED,
    ArrayModel,
    TensorModel,
    bf16_bits,  # noqa: F401 - the printed programs use it
)
from strategies.sequences import (
    DTYPES,
    GRAD_MODE_STRATEGY,
    SCALARS,
    Fresh,
    fresh_specs,
    values_repr,
)


class FocusRules(Harness):
    """Rules that build the input they need, and the NumPy interop rules."""

    tensors = TENSORS
    arrays = ARRAYS

    # ---- focus rules ------------------------------------------------------
    # Each drives one family of rules that needs a particular kind of tensor
    # (a non-leaf, an inference tensor, a non-dense view, a dtype torch
    # supports partially): it picks one among the live tensors, or first makes
    # one from a live tensor, so that every program reaches these rules
    # whichever of its rules Hypothesis enabled.

    def _pick(self, choice: int, wanted, make) -> TensorModel | None:
        """A live tensor satisfying ``wanted`` (the ``choice``-th), else the
        result of ``make(t)`` on a live tensor when it satisfies ``wanted``."""
        m = self.model
        pool = [t for t in m.tensors if wanted(t)]
        if pool:
            return pool[choice % len(pool)]
        if len(m.tensors) >= MAX_TENSORS + FOCUS_EXTRA or not m.tensors:
            return None
        made = make(m.tensors[choice % len(m.tensors)])
        return made if isinstance(made, TensorModel) and wanted(made) else None

    @rule(
        choice=st.integers(0, 15),
        between=st.sampled_from([None, None, "no_grad add_", ".data add_"]),
        twice=st.booleans(),
        permuted_leaf=st.booleans(),
    )
    def backward_graph(self, choice, between, twice, permuted_leaf):
        """``s = t * t`` of a tensor ``t`` that requires grad (room allowing;
        with ``permuted_leaf``, ``t`` is first replaced by a new leaf,
        ``u.t().detach().requires_grad_()`` of a fresh (3, 4) ``u`` of its
        dtype: dense, not contiguous), maybe a write to ``t`` between (under no_grad: the saved
        tensor goes stale; through ``.data``: unnoticed, the gradient uses
        the new values), then ``s.sum().backward()``, twice when ``twice``:
        reaches the gradient, layout, saved-tensor and freed-graph rules often."""
        m = self.model
        t = self._pick(choice, m.requires_grad, lambda t: None)
        if t is None:
            return
        if permuted_leaf and len(m.tensors) < MAX_TENSORS + FOCUS_EXTRA - 3:
            u = self._fresh(Fresh(t.dtype, (3, 4), simple_values(t.dtype, 12)))
            v = self.transpose(u, 0, 1) if isinstance(u, TensorModel) else None
            d = self.detach(v) if isinstance(v, TensorModel) else None
            if isinstance(d, TensorModel):
                self.autograd(d, "requires_grad_(True)")
                t = d
        if len(m.tensors) < MAX_TENSORS + FOCUS_EXTRA:
            s = self.square(t)
            if between == "no_grad add_":
                self.inplace(t, "add_", 1, "no_grad")
            elif between == ".data add_":
                d = self.data(t)
                if isinstance(d, TensorModel):
                    self.inplace(d, "add_", 1, "grad")
            t = s if isinstance(s, TensorModel) else t
        for _ in range(1 + twice):
            self.autograd(t, "sum().backward()")

    @rule(
        choice=st.integers(0, 15),
        op=st.sampled_from(
            ["transpose", "select", "slice", "unsqueeze", "expand", "view", "permute",
             "clone", "fill_", "setitem", "copy_"]
        ),
        mode=GRAD_MODE_STRATEGY,
        a=st.integers(-3, 3),
        b=st.integers(0, 3),
    )  # fmt: skip
    def grad_edge(self, choice, op, mode, a, b):
        """A view (in grad mode) or a clone / write (in ``mode``) of a tensor
        that requires grad: the history, grad_fn and grad-mode rules meet
        tensors that require grad often."""
        m = self.model
        t = self._pick(choice, m.requires_grad, lambda t: None)
        if t is None or len(m.tensors) >= MAX_TENSORS + FOCUS_EXTRA:
            return
        n = max(t.ndim, 1)
        if op == "transpose":  # often of one dim with itself (an identity view)
            self.transpose(t, b, b if a % 2 == 0 else abs(a))
        elif op == "select":
            self.select(t, b, a)
        elif op == "slice":
            self.slice(t, b, abs(a), 1 + b % 3)
        elif op == "unsqueeze":
            self.unsqueeze(t, b)
        elif op == "expand":
            self.expand(t, (2,) if a > 0 else (), 2, a < 0, None)
        elif op == "view":
            self.view(t, choice + b)
        elif op == "permute":
            k = min(n, 4)
            self.permute(t, list(range(k))[::-1] + list(range(k, 4)))
        elif op == "clone":
            self.clone(t, "preserve", mode)
        elif op == "fill_":
            self.inplace(t, "fill_", 1, mode)
        elif op == "setitem":
            self.setitem(t, b, 1, mode)
        else:
            self.copy_(t, m.tensors[choice % len(m.tensors)], mode)

    @rule(
        choice=st.integers(0, 15),
        op=st.sampled_from(
            ["add_", "mul_", "copy_", "setitem", "retain_grad", "requires_grad_(False)"]
        ),
    )
    def recorded_inplace(self, choice, op):
        """A recorded in-place op in grad mode (or retain_grad) on a non-leaf
        that requires grad (a clone of a tensor that requires grad when there
        is none): the history rules (CopySlices, rebuilt views, the new
        grad_fn, retained gradients) are reached often."""
        m = self.model
        t = self._pick(
            choice,
            lambda t: m.requires_grad(t) and not m.is_leaf(t),
            lambda t: self.clone(t, "preserve", "grad") if m.requires_grad(t) else None,
        )
        if t is None:
            return
        if op == "copy_":
            self.copy_(t, m.tensors[choice % len(m.tensors)], "grad")
        elif op == "setitem":
            self.setitem(t, choice, 2, "grad")
        elif op == "retain_grad":
            self.autograd(t, "retain_grad()")
        elif op == "requires_grad_(False)":
            self.autograd(t, op)
        else:
            self.inplace(t, op, 2, "grad")

    @rule(
        choice=st.integers(0, 15),
        action=st.sampled_from(["fill_", "zero_", "setitem", "add_", "detach", "data", "clone"]),
        mode=GRAD_MODE_STRATEGY,
    )
    def inference_edge(self, choice, action, mode):
        """On an inference tensor (a clone made inside inference_mode when
        there is none): an in-place op in ``mode``, ``detach()``, ``.data``,
        or a clone outside the mode, then an in-place op on what it made:
        the rules for inference tensors outside and inside inference_mode
        are reached often."""
        m = self.model
        t = self._pick(
            choice,
            lambda t: t.inference and (t.counter is None or action in ("detach", "data")),
            lambda t: self.clone(t, "preserve", "inference"),
        )
        if t is None:
            return
        if action in ("detach", "data", "clone"):
            if len(m.tensors) >= MAX_TENSORS + FOCUS_EXTRA:
                return
            made = {"detach": self.detach, "data": self.data}.get(action)
            a = made(t) if made else self.clone(t, "preserve", "grad")
            if isinstance(a, TensorModel):
                self.inplace(a, "fill_", 1, mode)
        elif action == "setitem":
            self.setitem(t, choice, 1, mode)
        else:
            self.inplace(t, action, 1, mode)

    @rule(
        target=tensors,
        choice=st.integers(0, 15),
        dtype=st.sampled_from(DTYPES),
        how=st.sampled_from(
            ["clone", "clone", "to", "to-copy", "as_tensor", "asarray", "asarray-copy",
             "new_tensor", "tensor", "contiguous", "detach", "data", "square"]
        ),
        other=st.sampled_from((None, None, None, *DTYPES)),
        mode=GRAD_MODE_STRATEGY,
    )  # fmt: skip
    def convert_edge(self, choice, dtype, how, other, mode):
        """A copy, conversion or alias of a tensor of ``dtype`` (a conversion
        of a live tensor to ``dtype`` when there is none): ``clone`` (in
        ``mode``, one of the memory formats), ``to`` / ``as_tensor`` /
        ``asarray`` (to ``other``), ``new_tensor``, ``torch.tensor``,
        ``contiguous``, ``detach``, ``.data`` or the square ``t * t``: every
        copy rule meets every dtype often."""
        m = self.model
        t = self._pick(choice, lambda t: t.dtype == dtype, lambda t: self.to(t, dtype, False))
        if t is None or len(m.tensors) >= MAX_TENSORS + FOCUS_EXTRA:
            return multiple()
        if how == "clone":
            fmt = ("preserve", "contiguous", "preserve", "channels_last")[choice % 4]
            out = self.clone(t, fmt, mode)
        elif how in ("to", "to-copy"):
            out = self.to(t, other, how == "to-copy")
        elif how == "as_tensor":
            out = self.convert_as_tensor(t, DTYPES[choice % len(DTYPES)])
        elif how == "asarray":
            out = self.convert_asarray(t, None, other)
        elif how == "asarray-copy":
            out = self.convert_asarray(t, True, None)
        elif how == "new_tensor":
            out = self.new_tensor(m.tensors[choice % len(m.tensors)], t)
        elif how == "tensor":
            out = self.tensor_of(t)
        elif how == "contiguous":
            out = self.contiguous(t)
        elif how in ("detach", "data"):
            out = self.detach(t) if how == "detach" else self.data(t)
        else:
            out = self.square(t)
        return out if isinstance(out, TensorModel) and out is not t else multiple()

    @rule(
        choice=st.integers(0, 15),
        dtype=st.sampled_from([d for d in (*sorted(UNSIGNED), "bfloat16") if d in DTYPES]),
    )
    def dtype_edge(self, choice, dtype):
        """What some dtypes lack, on a tensor of such a dtype (a conversion
        to ``dtype`` when there is none): ``add_`` of a wide unsigned tensor,
        ``fill_(-1.5)`` of an unsigned one, ``numpy()`` of a bfloat16 one."""
        t = self._pick(choice, lambda t: t.dtype == dtype, lambda t: self.to(t, dtype, False))
        if t is None:
            return
        if t.dtype == "bfloat16":
            if self._array_room():
                self.numpy(t)
        elif t.dtype == "uint8" or choice % 2:
            self.inplace(t, "fill_", -1.5, "grad")
        else:
            self.inplace(t, "add_", 1, "grad")

    @rule(
        choice=st.integers(0, 15),
        how=st.sampled_from(
            [
                "clone",
                "clone",
                "to",
                "tensor",
                "contiguous",
                "reshape",
                "view",
                "view",
                "fill_",
                "detach_",
                "copy_",
                "add_",
            ]
        ),
        memory_format=st.sampled_from(["preserve", "preserve", "contiguous", "channels_last"]),
        dtype=st.sampled_from(DTYPES),
    )
    def copy_non_dense(self, choice, how, memory_format, dtype):
        """A copy of a non-dense tensor (a stepped, expanded or permuted-and-
        stepped view whose dense stride order is not row-major; when there is
        none, ``u.t()[::2]`` of a fresh (3, 4) tensor ``u``), or a copy_
        or add_ into an expanded one (``t.expand(2, ...)`` when there is
        none): the stride rules of preserve_format copies
        (infer_dense_strides), of contiguous/reshape copies, and the overlap
        errors of writes."""
        m = self.model
        if how in ("copy_", "add_"):
            t = self._pick(
                choice,
                lambda t: any(st == 0 and n > 1 for n, st in zip(t.shape, t.strides, strict=True)),
                lambda t: self.expand(t, (2,), 1, False, None),
            )
        else:
            t = self._pick(choice, reorders_when_copied, self._make_non_dense)
        if t is None or len(m.tensors) >= MAX_TENSORS + FOCUS_EXTRA:
            return
        if how == "clone":
            self.clone(t, memory_format if choice % 2 else "preserve", "grad")
        elif how == "to":
            self.to(t, dtype, False)
        elif how == "tensor":
            self.tensor_of(t)
        elif how == "contiguous":
            self.contiguous(t)
        elif how == "copy_":
            self.copy_(t, m.tensors[choice % len(m.tensors)], "no_grad")
        elif how == "add_":
            self.inplace(t, "add_", 1, "no_grad")
        elif how == "fill_":
            self.inplace(t, "fill_", 2, "no_grad")
        elif how == "view":  # to one dim (of a non-dense tensor: impossible)
            self.view(t, 0)
        elif how == "detach_":
            self.autograd(t, "detach_()")
        else:
            self.reshape(t, choice)

    def _make_non_dense(self, t: TensorModel):
        """``u.t()[::2]`` of a fresh (3, 4) tensor ``u`` of ``t``'s dtype (a
        transposed view stepped over its rows: non-dense, its stride order
        not row-major)."""
        u = self._fresh(Fresh(t.dtype, (3, 4), simple_values(t.dtype, 12)))
        if not isinstance(u, TensorModel):
            return None
        tr = self.transpose(u, 0, 1)
        if not isinstance(tr, TensorModel):
            return None
        return self.slice(tr, 0, 0, 2)

    def square(self, t):
        """``t * t`` (saves t for backward), cloned row-major (the layout of an
        element-wise result is not part of the model)."""
        r = self.real[t.id]
        fmt = torch.contiguous_format
        return self._op(
            lambda: self.model.square(t),
            lambda: (r * r).clone(memory_format=fmt),
            lambda o: f"{o} = ({self._n(t)} * {self._n(t)}).clone(memory_format={fmt})",
        )

    # ---- NumPy ------------------------------------------------------------

    def _cpu(self) -> bool:
        return self.device == "cpu"

    def _array_room(self) -> bool:
        return self.device == "cpu" and len(self.model.arrays) < MAX_ARRAYS

    def _array(self, predicted, actual):
        if not isinstance(actual, np.ndarray):
            self._fail(f"returned {type(actual).__name__}, not an ndarray")
        self.real_arrays[predicted.id] = actual
        if actual.size == 0:
            self.model.take_array_strides(
                predicted, tuple(s // actual.itemsize for s in actual.strides)
            )
        return predicted

    def _array_op(self, model_call, np_call, code):
        out = self._run(model_call, np_call, code)
        if out is None:
            return multiple()
        return self._array(*out)

    @precondition(_array_room)
    @rule(target=arrays, spec=fresh_specs(arrays=True))
    def make_array(self, spec):
        return self._array_op(
            lambda: self.model.make_array(spec.dtype, spec.shape, spec.values),
            spec.array,
            lambda o: (
                f"{o} = np.array({values_repr(spec.values)}, dtype={spec.dtype!r})"
                f".reshape({spec.shape!r})"
            ),
        )

    @precondition(_array_room)
    @rule(target=arrays, t=tensors)
    def numpy(self, t):
        return self._array_op(
            lambda: self.model.numpy(t),
            lambda: self.real[t.id].numpy(),
            lambda o: f"{o} = {self._n(t)}.numpy()",
        )

    def np_flip(self, a):
        return self._array_op(
            lambda: self.model.np_flip(a),
            lambda: self.real_arrays[a.id][::-1],
            lambda o: f"{o} = {self._n(a)}[::-1]",
        )

    def np_transpose(self, a):
        return self._array_op(
            lambda: self.model.np_transpose(a),
            lambda: self.real_arrays[a.id].T,
            lambda o: f"{o} = {self._n(a)}.T",
        )

    @precondition(_cpu)
    @rule(a=arrays, index=st.integers(0, 3), value=st.sampled_from(SCALARS))
    def np_write(self, a, index, value):
        """``a[i] = value`` (NumPy's own conversion; unsigned arrays get
        non-negative values, which NumPy accepts)."""
        i = index % a.shape[0] if a.ndim and a.shape[0] else None
        arr = self.real_arrays[a.id]
        if a.dtype in UNSIGNED:
            value = abs(value)

        def real():
            arr[... if i is None else i] = value

        self._run(
            lambda: self.model.np_write(a, i, value),
            real,
            lambda o: f"{self._n(a)}[{'...' if i is None else i}] = {value!r}",
        )

    def _cpu_room(self) -> bool:
        return self.device == "cpu" and self._room()

    @precondition(lambda self: self._cpu() and len(self.model.tensors) < MAX_TENSORS + FOCUS_EXTRA)
    @rule(
        target=tensors,
        choice=st.integers(0, 15),
        layout=st.sampled_from([None, "T", "flip", "flip"]),
        how=st.sampled_from(
            ["asarray", "asarray-no-copy", "asarray-copy", "from_numpy", "as_tensor", "tensor"]
        ),
    )
    def numpy_round_trip(self, choice, layout, how):
        """``a = t.numpy()`` (``a.T`` or ``a[::-1]`` per ``layout``) of a
        tensor that numpy() accepts, if any, then a tensor from ``a`` (``how``
        as in :meth:`from_array`): the NumPy round trip (a 0-d ``t`` gives a
        0-d ndarray, which torch.asarray copies; a transposed one is not
        C-contiguous; a flipped one has a negative stride)."""
        m = self.model
        pool = [t for t in m.tensors if not m.requires_grad(t) and t.dtype != "bfloat16"]
        if not pool or len(m.arrays) >= MAX_ARRAYS + FOCUS_EXTRA:
            return multiple()
        a = self.numpy(pool[choice % len(pool)])
        if layout == "T" and isinstance(a, ArrayModel):
            a = self.np_transpose(a)
        elif layout == "flip" and isinstance(a, ArrayModel):
            a = self.np_flip(a)
        if not isinstance(a, ArrayModel):
            return multiple()
        return self.from_array(a, how)

    @precondition(lambda self: self._array_room() and self._room())
    @rule(
        target=tensors,
        spec=fresh_specs(arrays=True, shape=()),
        copy=st.sampled_from([None, False, True]),
    )
    def scalar_asarray(self, spec, copy):
        """``torch.asarray(np.array(v), copy=copy)`` of a 0-d ndarray."""
        a = self.make_array(spec)
        m = self.model
        return self._op(
            lambda: m.asarray_array(a, copy),
            lambda: torch.asarray(self.real_arrays[a.id], copy=copy),
            lambda o: f"{o} = torch.asarray({self._n(a)}, copy={copy})",
        )

    @precondition(_cpu_room)
    @rule(
        target=tensors,
        a=arrays,
        how=st.sampled_from(
            ["from_numpy", "as_tensor", "asarray", "asarray-copy", "asarray-no-copy", "tensor"]
        ),
    )
    def from_array(self, a, how):
        """A tensor from an ndarray: ``torch.from_numpy(a)``, ``torch.as_tensor(a)``,
        ``torch.asarray(a, copy=None|True|False)`` or ``torch.tensor(a)``."""
        arr = self.real_arrays[a.id]
        m = self.model
        calls = {
            "from_numpy": (m.from_numpy, torch.from_numpy, "torch.from_numpy({})"),
            "as_tensor": (m.from_numpy, torch.as_tensor, "torch.as_tensor({})"),
            "asarray": (m.asarray_array, torch.asarray, "torch.asarray({})"),
            "asarray-copy": (
                lambda a: m.asarray_array(a, True),
                lambda arr: torch.asarray(arr, copy=True),
                "torch.asarray({}, copy=True)",
            ),
            "asarray-no-copy": (
                lambda a: m.asarray_array(a, False),
                lambda arr: torch.asarray(arr, copy=False),
                "torch.asarray({}, copy=False)",
            ),
            "tensor": (m.tensor_of_array, torch.tensor, "torch.tensor({})"),
        }
        model_call, torch_call, text = calls[how]
        return self._op(
            lambda: model_call(a),
            lambda: torch_call(arr),
            lambda o: f"{o} = " + text.format(self._n(a)),
        )
