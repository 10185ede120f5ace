"""Construction and NumPy interop: fresh tensors and arrays, ``numpy()``,
``from_numpy`` / ``as_tensor`` / ``asarray`` / ``torch.tensor`` of an ndarray,
and NumPy-side views and writes."""

from __future__ import annotations

import numpy as np

from conformance.model.claims import MSG
from conformance.model.geometry import contiguous_strides
from conformance.model.state import ArrayModel, TensorModel
from conformance.model.values import DIFFERENTIABLE, bf16_bits, convert, storage_dtype


def storage_values(dtype: str, values) -> np.ndarray:
    """Python scalars of a fresh tensor as storage values, bit for bit
    (bfloat16: the bits of the exactly representable values, NaN signs kept)."""
    if dtype == "bfloat16":
        return bf16_bits(np.array(values, dtype=np.float32))
    return np.array(values, dtype=storage_dtype(dtype))


__all__ = ["InteropRules"]


class InteropRules:
    """Rules that make tensors from values or arrays, and arrays from tensors."""

    # ---- creation ---------------------------------------------------------

    def fresh(
        self,
        dtype: str,
        shape: tuple[int, ...],
        values,
        requires_grad: bool = False,
        inference: bool = False,
    ):
        """``torch.tensor(np.array(values).reshape(shape), dtype=...)`` (for
        bfloat16 built from its bits), then ``requires_grad_(requires_grad)``:
        a contiguous leaf in new memory; made inside inference_mode
        (``inference``), an inference tensor without a version counter."""
        self._begin("sequences.tensor-copies")
        if requires_grad and dtype not in DIFFERENTIABLE:
            raise self._raise("RuntimeError", MSG["rg_dtype"], claim="sequences.requires-grad-flag")
        raw = storage_values(dtype, values).reshape(shape)
        t = self._alloc(dtype, shape, contiguous_strides(shape), raw, dtype, inference=inference)
        if inference:
            self._cite("sequences.inference-tensors")
        t.rg_flag = requires_grad
        return t

    def make_array(self, dtype: str, shape: tuple[int, ...], values) -> ArrayModel:
        """``np.array(values, dtype).reshape(shape)``: a C-contiguous array."""
        self._begin("sequences.from-numpy-shares")
        buf = self._buffer(storage_values(dtype, values))
        a = ArrayModel(next(self._ids), dtype, tuple(shape), contiguous_strides(shape), 0, buf)
        self.arrays.append(a)
        return a

    # ---- NumPy interop ----------------------------------------------------

    def take_array_strides(self, a: ArrayModel, strides: tuple[int, ...]) -> None:
        """Take the strides NumPy gave an *empty* array: they are NumPy's
        choice (all zero or row-major, by construction path and version),
        not torch's, and tensors made from the array inherit them."""
        a.strides = tuple(strides)
        a.__dict__.pop("_pos", None)

    def numpy(self, t: TensorModel) -> ArrayModel:
        """``t.numpy()`` in grad mode: refuses a tensor that requires grad, then
        a bfloat16 tensor (NumPy has no bfloat16); else an array over the same
        memory with the same geometry."""
        self._begin("sequences.numpy-shares")
        if self.requires_grad(t):
            raise self._raise("RuntimeError", MSG["numpy_rg"], claim="sequences.numpy-shares")
        if t.dtype == "bfloat16":
            raise self._raise("TypeError", MSG["numpy_bf16"], claim="sequences.dtype-support")
        a = ArrayModel(next(self._ids), t.dtype, t.shape, t.strides, t.start, t.buffer)
        self.arrays.append(a)
        return a

    def _check_strides(self, a: ArrayModel) -> None:
        if any(s < 0 for s in a.strides):
            raise self._raise(
                "ValueError",
                MSG["negative_strides"],
                claim="sequences.numpy-negative-strides-raise",
            )

    def from_numpy(self, a: ArrayModel):
        """``torch.from_numpy(a)`` (also ``as_tensor(a)``, ``asarray(a)``): a
        new storage object over the array's memory, offset 0, same strides,
        a new version counter, a leaf."""
        self._begin("sequences.from-numpy-shares")
        return self._from_numpy(a)

    def _from_numpy(self, a: ArrayModel) -> TensorModel:
        self._check_strides(a)
        storage = self._storage(a.buffer, a.start)
        t = TensorModel(next(self._ids), a.dtype, a.shape, a.strides, 0, storage, self._counter())
        return self._add(t)

    def tensor_of_array(self, a: ArrayModel, copy_kind: str = "tensor"):
        """``torch.tensor(a)`` (``copy_kind="tensor"``) or ``torch.asarray(a,
        copy=True)`` (``"asarray"``): a copy in new memory that keeps the
        array's stride order; negative strides raise."""
        self._begin("sequences.tensor-copies" if copy_kind == "tensor" else "sequences.asarray")
        self._check_strides(a)
        if 0 in a.shape:
            # observed: an empty array's strides are kept as they are
            strides = a.strides
        else:
            strides = self.preserve_format_strides(a.shape, a.strides)
        return self._alloc(a.dtype, a.shape, strides, self.values(a), a.dtype)

    def asarray_array(self, a: ArrayModel, copy: bool | None = None):
        """``torch.asarray(a, copy=copy)`` of an ndarray: a copy for ``copy=True``;
        otherwise ``from_numpy`` sharing - except that torch copies a 0-d
        ndarray (even with ``copy=False``, without an error), which the docs
        promise to share (``docs=True`` encodes the documented sharing)."""
        if copy is True:
            return self.tensor_of_array(a, "asarray")
        self._begin("sequences.asarray")
        if a.ndim == 0 and not self.docs:
            self._cite("sequences.asarray-0d-ndarray-copies")
            return self._alloc(a.dtype, (), (), self.values(a), a.dtype)
        self._cite("sequences.asarray-ndarray-shares")
        return self._from_numpy(a)

    def np_write(self, a: ArrayModel, index: int | None, value) -> None:
        """``a[index] = value`` (``a[...] = value`` when ``index`` is None):
        NumPy writes the memory directly; no version counter moves."""
        self._begin("sequences.from-numpy-shares")
        self._cite("sequences.writes-visible")
        pos = a.positions() if index is None else a.positions()[index]
        a.buffer.values[pos] = convert(value, a.dtype)

    def np_flip(self, a: ArrayModel) -> ArrayModel:
        """``a[::-1]``: a view with a negative first stride."""
        self._begin("sequences.numpy-negative-strides-raise")
        if a.ndim == 0:
            raise self._raise(
                "IndexError", MSG["np_index"], claim="sequences.numpy-negative-strides-raise"
            )
        start = a.start + max(a.shape[0] - 1, 0) * a.strides[0]
        strides = (-a.strides[0],) + a.strides[1:]
        out = ArrayModel(next(self._ids), a.dtype, a.shape, strides, start, a.buffer)
        self.arrays.append(out)
        return out

    def np_transpose(self, a: ArrayModel) -> ArrayModel:
        """``a.T``: a view with reversed dimensions."""
        self._begin("sequences.from-numpy-shares")
        strides = a.strides[::-1]
        out = ArrayModel(next(self._ids), a.dtype, a.shape[::-1], strides, a.start, a.buffer)
        self.arrays.append(out)
        return out
