"""An executable reference model of PyTorch's copy, aliasing and autograd semantics.

Pure Python + NumPy: the model never calls torch to make a prediction. It is
driven side by side with real torch by the state machine in
``conformance/copy_sequences/`` and unit-tested on its own in
``tests/test_model.py``.

What it tracks
--------------
Memory is a set of :class:`Buffer` s - flat NumPy arrays holding the *values*
(the shadow of the real memory). A :class:`Storage` is one torch storage object
over a buffer, starting at an element position (``from_numpy(t.numpy())`` makes
a second storage object over the same memory). Every live tensor is a
:class:`TensorModel`: dtype, shape, strides, storage offset, storage, version
counter (:class:`Counter`), the autograd state (``requires_grad`` flag, whether
its ``grad_fn`` is set, the root base and view tracking, the saved tensors
reachable from its graph) - and NumPy arrays are :class:`ArrayModel` s over the
same buffers. A tensor's values are read from the buffer at the element
positions its geometry addresses, so a write through one alias is seen by
every alias of the same memory, overlapping and expanded ones included.

Every operation predicts the result (a new :class:`TensorModel`, or an existing
one when torch returns the very same object) or raises :class:`Raises` with the
exception type and the stable message substring(s) torch raises with; a raising
prediction leaves the model untouched. Each prediction cites the claim id it
encodes (``Model.claim`` after the call; every id is in :data:`CLAIM_IDS` and
registered in ``claims/sequences.toml``).

Where torch departs from its documentation the model encodes the *observed*
behaviour (the claim it cites is a characterization); ``Model(docs=True)``
switches those rules to the documented promise, for the small tests that
check the documented claims (and are recorded as known deviations).

Layout
------
One module per concern, each readable on its own:

- :mod:`~conformance.model.claims`: claim ids, torch's message substrings, :class:`Raises`;
- :mod:`~conformance.model.geometry`: stride geometry (ports of the ATen helpers);
- :mod:`~conformance.model.values`: dtypes and value conversion;
- :mod:`~conformance.model.state`: buffers, storages, version counters, tensor/array models;
- :mod:`~conformance.model.graph`: grad_fn nodes and the backward engine;
- :mod:`~conformance.model.core`: bookkeeping shared by the rules (:class:`ModelCore`);
- rule modules, one per op family: :mod:`~conformance.model.autograd`,
  :mod:`~conformance.model.construct` (construction, NumPy interop),
  :mod:`~conformance.model.copies` (copies, conversions), :mod:`~conformance.model.views`
  (aliases, views), :mod:`~conformance.model.writes` (in-place writes).

:class:`Model` combines the rule modules; everything public is re-exported
here, so ``from conformance.model import ...`` is the one import to use.
"""

from __future__ import annotations

from conformance.model.autograd import AutogradRules
from conformance.model.claims import CLAIM_IDS, MSG, WAIVABLE, Raises
from conformance.model.construct import InteropRules, storage_values
from conformance.model.copies import CopyRules
from conformance.model.core import ModelCore
from conformance.model.geometry import (
    broadcast_shapes,
    channels_last_strides,
    contiguous_strides,
    expand_geometry,
    infer_dense_strides,
    is_contiguous,
    is_non_overlapping_and_dense,
    positions,
    view_strides,
)
from conformance.model.state import ArrayModel, Buffer, Counter, Grad, Saved, Storage, TensorModel
from conformance.model.values import DIFFERENTIABLE, DTYPES, UNSIGNED, bf16_bits, convert
from conformance.model.views import ViewRules
from conformance.model.writes import WriteRules

__all__ = [
    "CLAIM_IDS",
    "DTYPES",
    "DIFFERENTIABLE",
    "MSG",
    "WAIVABLE",
    "Raises",
    "Buffer",
    "Storage",
    "Counter",
    "Saved",
    "Grad",
    "TensorModel",
    "ArrayModel",
    "Model",
    "contiguous_strides",
    "channels_last_strides",
    "is_contiguous",
    "is_non_overlapping_and_dense",
    "infer_dense_strides",
    "view_strides",
    "expand_geometry",
    "broadcast_shapes",
    "positions",
    "convert",
    "bf16_bits",
    "storage_values",
    "UNSIGNED",
]


class Model(InteropRules, CopyRules, ViewRules, WriteRules, AutogradRules, ModelCore):
    """The reference model: a set of live tensors and arrays plus one method
    per operation. ``docs=True`` encodes documented promises where torch
    deviates from them (see the module docstring)."""
