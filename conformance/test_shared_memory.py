"""Properties of ``Tensor.share_memory_``, ``is_shared`` and ``torch.multiprocessing``
(claims in ``claims/shared_memory.toml``).

What each property kills (the broken torch it would catch) is in its docstring.

Sending a tensor "to another process" is observed in process through the
reducers ``torch.multiprocessing`` registers on
``multiprocessing.reduction.ForkingPickler`` - exactly what ``Queue.put`` and
``Process`` arguments use - so the properties stay fast; one test spawns a real
child process, and the sharing-strategy property forks a few cheap children
that receive from a torch.multiprocessing ``Queue`` (each strategy is set for
the example and restored). Resizing a shared tensor can kill the interpreter
(SIGSEGV on torch 2.13), so each resize runs in a forked child and a crash
becomes an ordinary, recorded failure.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import math
import os
import pickle
import select
import signal
import time
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
import torch
import torch.multiprocessing  # noqa: F401  (registers the tensor reducers)
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from conformance import evidence
from conformance.capabilities import require
from conformance.checks import (
    assert_same_bits,
    capture_warnings,
    element_bytes,
    raises_with,
    sentinel_for,
    shares_storage,
    writes_visible,
)
from strategies import (
    ALL_DTYPES,
    COMPLEX,
    DIFFERENTIABLE,
    TensorSpec,
    grid_examples,
    numpy_dtype,
    shapes,
    tensor_specs,
)
from strategies.domains import domain_examples, math_bit_of, non_empty

#: Examples per property that forks a child per example (each fork costs
#: tens of milliseconds): a quarter of the profile's count, at least 20.
_FORK_EXAMPLES = max(20, settings().max_examples // 4)

#: The autograd states a tensor under test can be in.
AUTOGRAD_STATES = ("none", "leaf", "nonleaf", "parameter")


def _with_state(spec, device, state: str) -> torch.Tensor:
    """Build ``spec`` in autograd ``state``: a plain tensor, a leaf that
    requires grad, a non-leaf (a view of a base that requires grad, or
    ``leaf * 1`` when the spec has no views), or an ``nn.Parameter`` of the
    built tensor (requiring grad where the dtype can)."""
    differentiable = spec.dtype in DIFFERENTIABLE
    if state == "parameter":
        return torch.nn.Parameter(spec.build(device), requires_grad=differentiable)
    if not differentiable or state == "none":
        return spec.build(device)
    if state == "leaf":
        return spec.build(device, requires_grad=True, leaf=True)
    t = spec.build(device, requires_grad=True)
    return t if not t.is_leaf else t * 1


def _assert_bytes_kept(t: torch.Tensor, before: np.ndarray, what: str) -> None:
    after = element_bytes(t)
    if not np.array_equal(after, before):
        differs = int(np.flatnonzero((after != before).any(axis=1))[0])
        raise AssertionError(f"{what}: element {differs} changed bit for bit")


def _meta(t: torch.Tensor) -> tuple:
    return (type(t), t.dtype, tuple(t.shape), t.stride(), t.storage_offset())


def _round_trip(t: torch.Tensor) -> torch.Tensor:
    """Send ``t`` the way ``torch.multiprocessing`` does and rebuild it (in this process)."""
    return pickle.loads(ForkingPickler.dumps(t))


def _flat_alias(base: torch.Tensor) -> torch.Tensor:
    """A 1-D view of all of ``base``'s storage in memory order (``base`` is a
    fresh contiguous or channels_last tensor): element ``k`` is storage element ``k``."""
    if base.dim() == 4 and not base.is_contiguous():
        base = base.permute(0, 2, 3, 1)  # channels_last memory order, contiguous
    return base.view(-1)


def _tensor_kind(t: torch.Tensor) -> str:
    """The ``tensor_kind`` domain value of ``t`` (``conformance/domains.toml``)
    among those :func:`_with_state` builds: ``parameter``, ``non_leaf``,
    ``leaf`` (requires grad) or ``plain``."""
    if isinstance(t, torch.nn.Parameter):
        return "parameter"
    if t.grad_fn is not None:
        return "non_leaf"
    return "leaf" if t.requires_grad else "plain"


#: A float32 (2, 3) spec: the explicit examples of each state of a domain (issue 29).
_F32_SPEC = TensorSpec(
    dtype=torch.float32, base_shape=(2, 3), storage=(1.0, -0.0, 3.5, 4.0, 5.0, 6.0)
)


def _contiguous_only(spec) -> bool:
    """The grid's plain contiguous layout: with ``grid_examples``, one example per dtype."""
    return spec.base_shape == (2, 3) and not spec.views


# --------------------------------------------------------------- share_memory_


@pytest.mark.claim("shared_memory.share-returns-self-keeps-values")
@grid_examples(grid_values="all", state="none")
@grid_examples(dtypes=(torch.float32,), grid_values="all", state="leaf")
@grid_examples(dtypes=(torch.float32,), grid_values="all", state="nonleaf")
@grid_examples(dtypes=(torch.float32,), grid_values="all", state="parameter")
@given(spec=tensor_specs(values="all"), state=st.sampled_from(AUTOGRAD_STATES))
def test_share_memory_returns_self_and_keeps_values(device, spec, state):
    """The expected values are the tensor's own bytes read from its storage
    before the call.

    Kills: a share_memory_ that returns a (shared) copy instead of ``t``, does
    not mark the storage shared, changes dtype/strides/offset, alters values
    (a flushed -0.0, a canonicalised NaN) or drops requires_grad / grad_fn /
    the Parameter type."""
    t = _with_state(spec, device, state)
    evidence.features(tensor_kind=_tensor_kind(t))
    before = _meta(t)
    autograd = (t.requires_grad, t.is_leaf, t.grad_fn)
    values = element_bytes(t)
    out = t.share_memory_()
    assert out is t, "share_memory_() did not return the tensor itself"
    assert t.is_shared(), "is_shared() is False after share_memory_()"
    assert _meta(t) == before, f"share_memory_() changed the tensor: {before} -> {_meta(t)}"
    assert (t.requires_grad, t.is_leaf) == autograd[:2], "share_memory_() changed autograd state"
    assert t.grad_fn is autograd[2], "share_memory_() replaced grad_fn"
    _assert_bytes_kept(t, values, "share_memory_() keeps the values")


@pytest.mark.claim("shared_memory.already-shared-noop")
@domain_examples(via="tensor")  # issue 29: every layout and dtype family
@given(spec=tensor_specs(values="all"), via=st.sampled_from(["tensor", "storage"]))
def test_share_memory_of_shared_tensor_is_noop(device, spec, via):
    """Kills: a share_memory_ that moves an already-shared storage again
    (new memory, so other processes holding the old mapping stop seeing writes)."""
    t = spec.build(device)
    if via == "tensor":
        t.share_memory_()
    else:
        t.untyped_storage().share_memory_()
    assert t.is_shared(), f"share_memory_() via {via} did not share the storage"
    ptr = t.untyped_storage().data_ptr()
    values = element_bytes(t)
    out = t.share_memory_()
    assert out is t, "share_memory_() of a shared tensor did not return it"
    assert t.untyped_storage().data_ptr() == ptr, "share_memory_() moved an already-shared storage"
    assert t.is_shared(), "a shared tensor is no longer shared after share_memory_()"
    _assert_bytes_kept(t, values, "share_memory_() of a shared tensor keeps the values")


@pytest.mark.claim("shared_memory.view-shares-whole-storage")
@grid_examples(grid_values="all", on="view", direction="from-view")
@given(
    spec=tensor_specs(values="all"),
    on=st.sampled_from(["view", "base", "sibling"]),
    direction=st.sampled_from(["from-view", "into-view"]),
)
def test_share_memory_moves_whole_storage(device, spec, on, direction):
    """``spec`` is a view chain on a fresh base; ``sibling`` is another view
    of the whole storage made before the call. One of the three is shared;
    all three must then be shared, still alias each other, and keep values
    and view metadata.

    Kills: a share_memory_ that moves only the called tensor's elements (a
    private shared copy for views, for views with an offset, for some dtype)
    and so cuts the view off from its base."""
    base = spec.build_base(device)
    t = spec.apply_views(base)
    sibling = _flat_alias(base)
    meta = (tuple(t.shape), t.stride(), t.storage_offset())
    values = element_bytes(base)
    {"view": t, "base": base, "sibling": sibling}[on].share_memory_()
    for name, x in (("base", base), ("view", t), ("sibling view", sibling)):
        assert x.is_shared(), f"share_memory_() on the {on}: the {name} is not shared"
    assert shares_storage(t, base), f"share_memory_() on the {on} cut the view off from its base"
    assert shares_storage(sibling, base), f"share_memory_() on the {on} cut the sibling off"
    assert (tuple(t.shape), t.stride(), t.storage_offset()) == meta, "the view's metadata changed"
    if spec.is_view:
        assert t._base is base, "the view's _base is no longer its base"
    _assert_bytes_kept(base, values, f"share_memory_() on the {on} keeps the base's values")
    if t.numel() == 0:
        return
    again = spec.apply_views(base)  # the same view, made after the move
    at = sibling[t.storage_offset() :]  # starts at t's first element
    if direction == "from-view":
        assert writes_visible(t, again), "a write through the view is not seen by the base"
        assert writes_visible(t, at), "a write through the view is not seen by a sibling view"
    else:
        assert writes_visible(at, t), "a write through a sibling view is not seen by the view"


#: dtypes NumPy has (every dtype but bfloat16).
NUMPY_DTYPES = tuple(d for d in ALL_DTYPES if d != torch.bfloat16)


def _array_backed_non_empty(spec) -> bool:
    """The grid's layouts a view of an ndarray's tensor can take (an array
    has no channels_last base) with at least one element (an empty array has
    no memory to share), issue 29."""
    return not spec.channels_last and math.prod(spec.shape) > 0


@pytest.mark.claim("shared_memory.breaks-foreign-aliases")
@grid_examples(dtypes=NUMPY_DTYPES, where=_array_backed_non_empty, form="from_numpy")
@given(
    spec=tensor_specs(dtype=NUMPY_DTYPES, values="all", channels_last=False,
                      shape=shapes(min_side=1)),
    form=st.sampled_from(["from_numpy", "as_tensor", "asarray"]),
)  # fmt: skip
def test_share_memory_ends_numpy_aliasing(device, spec, form):
    """The array is built from the spec's storage values; the tensor is the
    spec's view chain applied to ``form(array)``.

    Kills: a share_memory_ that leaves a tensor on memory it does not own
    (foreign storage) while reporting it shared, or that loses values in the
    copy into shared memory."""
    a = np.array(spec.storage, dtype=numpy_dtype(spec.dtype)).reshape(spec.base_shape)
    # asarray copies a 0-d ndarray (a deviation of the numpy area): not this claim's subject.
    assume(not (form == "asarray" and a.ndim == 0))
    base = {"from_numpy": torch.from_numpy, "as_tensor": torch.as_tensor,
            "asarray": torch.asarray}[form](a)  # fmt: skip
    assert base.data_ptr() == a.ctypes.data, f"torch.{form}(ndarray) does not share the array"
    t = spec.apply_views(base)
    values = element_bytes(t)
    t.share_memory_()
    assert t.is_shared(), f"share_memory_() of a torch.{form}(ndarray) tensor is not shared"
    _assert_bytes_kept(t, values, "share_memory_() keeps the values of an array's tensor")
    flat = a.reshape(-1).view(np.uint8)
    flat ^= 1  # every byte of the array changes
    _assert_bytes_kept(t, values, "after share_memory_() a write to the array reached the tensor")
    array_bytes = flat.copy()
    if t.numel():
        with torch.no_grad():
            t[(0,) * t.dim()] = 0 if spec.dtype != torch.bool else not t.reshape(-1)[0].item()
        assert np.array_equal(flat, array_bytes), (
            "after share_memory_() a write to the tensor reached the array"
        )


# -------------------------------------------------------------------- resize_

#: What the forked child does after share_memory_(): resize the tensor within
#: its storage, grow it beyond the storage, or resize the untyped storage.
RESIZE_OPS = ("tensor-within", "tensor-grow", "storage-grow", "storage-shrink", "storage-zero")


def _in_forked_child(fn, timeout: float = 30.0) -> tuple[int | None, tuple | None]:
    """Run ``fn()`` in a forked child; return ``(status, result)``.

    ``status`` is the child's exit status (negative: killed by that signal;
    ``None``: it hung past ``timeout`` and was killed). ``result`` is
    ``("ok", fn())`` or ``("raised", type name, message)``, or ``None`` when
    the child died before reporting. The child writes nothing to the test's
    output and never runs the parent's exit handlers.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            os.close(r)
            faulthandler.disable()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            try:
                payload = pickle.dumps(("ok", fn()))
            except Exception as e:
                payload = pickle.dumps(("raised", type(e).__name__, str(e)))
            view = memoryview(payload)
            while view:
                view = view[os.write(w, view) :]
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    os.close(w)
    chunks, deadline, hung = [], time.monotonic() + timeout, False
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([r], [], [], max(left, 0))
            if not ready:
                hung = True
                break
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        if hung:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if hung:
        return None, None
    data = b"".join(chunks)
    return os.waitstatus_to_exitcode(status), (pickle.loads(data) if data else None)


def _resize_plan(spec, op: str, extra: int) -> int | None:
    """The size argument of ``op`` for a shared ``spec`` tensor (elements for
    a tensor resize, bytes for a storage resize), or ``None`` when ``op``
    does not apply (nothing to shrink, or no room to stay within)."""
    t = spec.build("cpu")
    item, nbytes = t.element_size(), t.untyped_storage().nbytes()
    room = nbytes // item - t.storage_offset()
    if op == "tensor-within":
        return min(extra, room) if room > 0 else None
    if op == "tensor-grow":  # more elements than the storage holds, and than t has
        return max(room, t.numel()) + extra
    if op == "storage-grow":
        return nbytes + extra * item
    if op == "storage-shrink":
        return nbytes - item if nbytes > item else None
    return 0 if nbytes > 0 else None  # storage-zero


def _resize_shared(spec, op: str, n: int):
    """In the child: build, share, resize; the resulting sizes."""
    t = spec.build("cpu")
    t.share_memory_()
    if op.startswith("tensor"):
        t.resize_(n)
        return ("tensor", tuple(t.shape))
    s = t.untyped_storage()
    s.resize_(n)
    return ("storage", s.nbytes())


def _resize_case(spec, op: str, extra: int) -> tuple[int, tuple[int | None, tuple | None]]:
    n = _resize_plan(spec, op, extra)
    assume(n is not None)
    evidence.features(op=op)
    return n, _in_forked_child(lambda: _resize_shared(spec, op, n))


#: One explicit example per resize op, so every op (and each deviation region) is reached.
_RESIZE_SPEC = TensorSpec(dtype=torch.float32, base_shape=(3,), storage=(1.0, -0.0, 3.5))


def _every_resize_op(fn):
    for op in RESIZE_OPS:
        fn = example(spec=_RESIZE_SPEC, op=op, extra=2)(fn)
    return fn


def _signal_name(status: int) -> str:
    try:
        return signal.Signals(-status).name
    except ValueError:
        return f"signal {-status}"


@pytest.mark.claim("shared_memory.resize-raises")
@_every_resize_op
@domain_examples(op="storage-zero", extra=2)  # issue 29: every layout and dtype family of t
@settings(max_examples=_FORK_EXAMPLES)
@given(spec=tensor_specs(), op=st.sampled_from(RESIZE_OPS), extra=st.integers(1, 64))
def test_resize_of_shared_tensor_raises(device, spec, op, extra):
    """Each case runs in a forked child (``op`` is a feature of the example).

    Kills: a torch that resizes shared memory (silently reallocating it
    privately, or writing past the mapping) or refuses a resize within the storage."""
    n, (status, result) = _resize_case(spec, op, extra)
    if status is None:
        raise AssertionError(f"resizing a shared-memory tensor ({op}) hung")
    if status < 0:
        raise AssertionError(
            f"resizing a shared-memory tensor ({op} to {n}) killed the process with "
            f"{_signal_name(status)}"
        )
    assert status == 0 and result is not None, f"the child failed (exit status {status})"
    if op == "tensor-within":
        assert result == ("ok", ("tensor", (n,))), f"resize_({n}) within the storage: {result}"
        return
    if result[0] == "ok":
        raise AssertionError(
            f"resizing a shared-memory tensor ({op} to {n}) was accepted: {result}"
        )
    assert result[1] == "RuntimeError" and "not resizable" in result[2], (
        f"resizing a shared-memory tensor ({op}) raised {result[1]}: {result[2]}"
    )


@pytest.mark.claim("shared_memory.resize-crashes")
@_every_resize_op
@domain_examples(op="storage-zero", extra=2)  # issue 29: every layout and dtype family of t
@settings(max_examples=_FORK_EXAMPLES)
@given(spec=tensor_specs(), op=st.sampled_from(RESIZE_OPS), extra=st.integers(1, 64))
def test_resize_of_shared_tensor_crashes(device, spec, op, extra):
    """Pins torch 2.13 where ``shared_memory.resize-raises`` deviates.

    Kills: a change in what resizing shared memory does (a fix that raises,
    a resize to zero that starts raising, a resize within the storage that
    breaks)."""
    n, (status, result) = _resize_case(spec, op, extra)
    assert status is not None, f"resizing a shared-memory tensor ({op}) hung"
    if op in ("tensor-grow", "storage-grow", "storage-shrink"):
        assert status == -signal.SIGSEGV, (
            f"{op} to {n} of a shared-memory tensor no longer crashes: status {status}, {result}"
        )
    elif op == "storage-zero":
        assert (status, result) == (0, ("ok", ("storage", 0))), f"storage resize_(0): {result}"
    else:
        assert (status, result) == (0, ("ok", ("tensor", (n,)))), f"resize_({n}) within: {result}"


# --------------------------------------------------------- torch.multiprocessing


@pytest.mark.claim("shared_memory.sending-moves-to-shared")
@grid_examples(grid_values="all")
@given(spec=tensor_specs(values="all"))
def test_sending_moves_sender_to_shared_memory(device, spec):
    """Kills: a reducer that sends a copy (of every tensor, or of
    non-contiguous ones), so the sender stays private and later writes are
    not shared; or one that breaks the sender's view relation or values."""
    base = spec.build_base(device)
    t = spec.apply_views(base)
    meta = _meta(t)
    values = element_bytes(base)
    empty = t.untyped_storage().nbytes() == 0
    ForkingPickler.dumps(t)
    if empty:
        assert not t.is_shared(), "a zero-byte storage was moved to shared memory"
    else:
        assert t.is_shared(), "sending a tensor did not move it to shared memory"
        assert base.is_shared(), "sending a view did not move its base's storage"
    assert _meta(t) == meta, "sending a tensor changed its metadata"
    assert shares_storage(t, base), "after sending, the view no longer aliases its base"
    _assert_bytes_kept(base, values, "sending a tensor keeps the sender's values")


def _lazy_layouts(spec) -> bool:
    """A few grid layouts for the conj/neg examples: contiguous, stepped,
    transposed, expanded and 0-d (both complex dtypes, each lazy bit)."""
    return spec.base_shape in ((2, 3), (2, 6), (3, 2), (1, 3), ())


def _lazy(t: torch.Tensor, lazy: str) -> torch.Tensor:
    """``t`` itself, its conjugate view, or a negative view (``conj().imag``)."""
    if lazy == "none" or not t.dtype.is_complex:
        return t
    return t.conj() if lazy == "conj" else t.conj().imag


@pytest.mark.claim("shared_memory.received-shares-data")
@grid_examples(grid_values="all", lazy="none", as_parameter=False)
@grid_examples(
    dtypes=COMPLEX, where=_lazy_layouts, grid_values="all", lazy="conj", as_parameter=False
)
@grid_examples(
    dtypes=COMPLEX, where=_lazy_layouts, grid_values="all", lazy="neg", as_parameter=True
)
@example(spec=_F32_SPEC, lazy="none", as_parameter=True)
@given(
    spec=tensor_specs(values="all"),
    lazy=st.sampled_from(["none", "conj", "neg"]),
    as_parameter=st.booleans(),
)
def test_received_tensor_shares_data(device, spec, lazy, as_parameter):
    """``lazy`` makes complex tensors conjugate or negative views; the
    feature ``lazy_bit`` says whether the sent tensor (non-empty) carries such
    a bit. Expected values: the sent tensor's meaning, read from its bytes
    with the bits resolved (``element_bytes``).

    Kills: a reducer that sends a copy (of every tensor, of non-contiguous
    ones), loses strides/offset or the Parameter type, or delivers other values."""
    t = _lazy(spec.build(device), lazy)
    if as_parameter:
        t = torch.nn.Parameter(t, requires_grad=False)
    evidence.features(
        lazy_bit=bool((t.is_conj() or t.is_neg()) and t.numel() > 0),
        tensor_kind="parameter" if as_parameter else "plain",
    )
    u = _round_trip(t)
    assert _meta(u) == _meta(t), f"the received tensor differs: {_meta(u)} vs {_meta(t)}"
    assert_same_bits(u, t, "the received tensor keeps the sent values")
    if t.untyped_storage().nbytes() == 0:
        return
    assert shares_storage(u, t), "the received tensor does not share the sender's memory"
    if t.numel():
        assert writes_visible(u, t), "a write to the received tensor is not seen by the sender"
        assert writes_visible(t, u), "a write to the sender is not seen by the received tensor"


@pytest.mark.claim("shared_memory.lazy-bits-dropped")
# Issue 29: each lazy bit over every layout of the complex tensor viewed.
@domain_examples(dtypes=COMPLEX, lazy="conj")
@domain_examples(dtypes=COMPLEX, lazy="neg")
@given(spec=tensor_specs(dtype=COMPLEX, values="all"), lazy=st.sampled_from(["conj", "neg"]))
def test_received_conj_and_neg_views_lose_their_bit(device, spec, lazy):
    """Pins torch 2.13 where ``shared_memory.received-shares-data`` deviates:
    the received tensor is a plain tensor over the same memory. The
    expected values are that memory read without any bit.

    Kills: a reducer that restores the bits (a fix), or that copies."""
    t = _lazy(spec.build(device), lazy)
    evidence.features(math_bit=math_bit_of(t))
    physical = torch.empty(0, dtype=t.dtype, device=device)
    physical.set_(t.untyped_storage(), t.storage_offset(), t.shape, t.stride())
    u = _round_trip(t)
    assert not (u.is_conj() or u.is_neg()), f"the received {lazy} view kept its bit"
    assert_same_bits(u, physical, "the received tensor holds the raw memory")
    if t.untyped_storage().nbytes():
        assert shares_storage(u, t), "the received view does not share the sender's memory"


def _spawn_child(base, view, parent_wrote, child_wrote, queue):
    """Target of the spawn child (importable by name)."""
    try:
        rec = {
            "base_shared": base.is_shared(),
            "view_shared": view.is_shared(),
            "same_storage": view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr(),
            "view_meta": [list(view.shape), list(view.stride()), view.storage_offset()],
        }
        parent_wrote.wait(60)
        rec["sees_parent_write"] = base[0].item()
        view[0] = 11.0  # base[2]
        base[7] = 22.0
        queue.put(rec)
    except Exception as e:  # reported, not raised: the parent asserts
        queue.put({"error": repr(e)})
    finally:
        child_wrote.set()


@pytest.mark.claim("shared_memory.child-writes-visible-both-ways")
def test_spawn_child_shares_tensor_and_view(device):
    """One real spawn child (a fresh interpreter: seconds), with a base and a
    stepped offset view of it as separate arguments.

    Kills: a reducer that sends copies (of views, of non-contiguous tensors),
    so the child's writes are lost or its view no longer aliases its base."""
    ctx = torch.multiprocessing.get_context("spawn")
    base = torch.zeros(8)
    view = base[2:6:2]
    parent_wrote, child_wrote, queue = ctx.Event(), ctx.Event(), ctx.Queue()
    proc = ctx.Process(
        target=_spawn_child, args=(base, view, parent_wrote, child_wrote, queue), daemon=True
    )
    proc.start()
    try:
        base[0] = 5.0
        parent_wrote.set()
        deadline = time.monotonic() + 120
        while not child_wrote.wait(0.2):  # stop waiting as soon as the child is gone
            assert proc.is_alive(), f"the spawn child died (exit code {proc.exitcode})"
            assert time.monotonic() < deadline, "the spawn child did not answer"
        rec = queue.get(timeout=60)
    finally:
        proc.join(30)
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join()
        queue.close()
    assert "error" not in rec, f"the child failed: {rec}"
    assert rec["base_shared"] and rec["view_shared"], f"the child got private tensors: {rec}"
    assert rec["same_storage"], "in the child, the view no longer shares its base's storage"
    assert rec["view_meta"] == [[2], [2], 2], f"the view arrived as {rec['view_meta']}"
    assert rec["sees_parent_write"] == 5.0, "the child did not see the parent's write"
    assert base[2].item() == 11.0, "the parent did not see the child's write through the view"
    assert base[7].item() == 22.0, "the parent did not see the child's write through the base"
    assert proc.exitcode == 0, f"the child exited with {proc.exitcode}"


@pytest.mark.claim("shared_memory.nonleaf-requires-grad-refused")
@example(spec=_F32_SPEC, state="none")
@example(spec=_F32_SPEC, state="leaf")
@example(spec=_F32_SPEC, state="nonleaf")
@example(spec=_F32_SPEC, state="view-of-leaf")
@example(spec=_F32_SPEC, state="parameter")
@example(spec=_F32_SPEC, state="frozen")
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    state=st.sampled_from(["none", "leaf", "nonleaf", "view-of-leaf", "parameter", "frozen"]),
)
def test_sending_nonleaf_requiring_grad_is_refused(device, spec, state):
    """Kills: a reducer that sends non-leaf tensors (or views of leaves)
    that require grad as detached data, or that drops requires_grad or the
    Parameter type of what it does send."""
    if state in ("parameter", "frozen"):
        t = torch.nn.Parameter(spec.build(device), requires_grad=state == "parameter")
    elif state == "none":
        t = spec.build(device)
    else:
        t = spec.build(device, requires_grad=True, leaf=True)
        t = {"leaf": t, "nonleaf": t * 1, "view-of-leaf": t[...]}[state]
    evidence.features(tensor_kind=_tensor_kind(t))
    if state in ("nonleaf", "view-of-leaf"):
        with raises_with(RuntimeError, "Cowardly refusing to serialize non-leaf tensor"):
            ForkingPickler.dumps(t)
        return
    u = _round_trip(t)
    assert type(u) is type(t), f"a {type(t).__name__} arrived as a {type(u).__name__}"
    assert u.requires_grad == t.requires_grad, "requires_grad changed on the way"
    assert u.is_leaf, "the received tensor is not a leaf"


@pytest.mark.claim("shared_memory.grad-shared")
# Issue 29: every layout of every differentiable dtype as a leaf, and a Parameter.
@grid_examples(dtypes=DIFFERENTIABLE, as_parameter=False)
@example(spec=_F32_SPEC, as_parameter=True)
@given(spec=tensor_specs(dtype=DIFFERENTIABLE, values="all"), as_parameter=st.booleans())
def test_sent_grad_is_shared(device, spec, as_parameter):
    """The multiprocessing note's sentence as stated (stale: recorded in
    expectations, pinned by ``shared_memory.grad-not-sent``).

    Kills: a reducer that sends a copy of ``.grad`` instead of sharing it."""
    evidence.features(tensor_kind="parameter" if as_parameter else "leaf")
    x = _leaf_with_grad(spec, device, as_parameter)
    u = _round_trip(x)
    assert u.grad is not None, ".grad was not sent to the other process"
    assert shares_storage(u.grad, x.grad), "the received .grad is not shared with the sender's"


def _leaf_with_grad(spec, device, as_parameter: bool) -> torch.Tensor:
    if as_parameter:
        x = torch.nn.Parameter(spec.build(device))
    else:
        x = spec.build(device, requires_grad=True, leaf=True)
    x.grad = spec.build(device)
    return x


@pytest.mark.claim("shared_memory.grad-not-sent")
# Issue 29: every layout of every differentiable dtype as a leaf, and a Parameter.
@grid_examples(dtypes=DIFFERENTIABLE, as_parameter=False)
@example(spec=_F32_SPEC, as_parameter=True)
@given(spec=tensor_specs(dtype=DIFFERENTIABLE, values="all"), as_parameter=st.booleans())
def test_sent_grad_is_dropped(device, spec, as_parameter):
    """Pins torch 2.13 where ``shared_memory.grad-shared`` deviates.

    Kills: a reducer that starts sending ``.grad`` (shared or copied), or
    that moves or alters the sender's ``.grad``."""
    evidence.features(tensor_kind="parameter" if as_parameter else "leaf")
    x = _leaf_with_grad(spec, device, as_parameter)
    g = x.grad
    values = element_bytes(g)
    u = _round_trip(x)
    assert u.grad is None, "the received tensor has a .grad"
    assert x.grad is g, "sending replaced the sender's .grad"
    assert not g.is_shared(), "sending moved the sender's .grad to shared memory"
    _assert_bytes_kept(g, values, "sending keeps the sender's .grad")


# -------------------------------------------------------------- autograd, nn


@pytest.mark.claim("shared_memory.autograd-unaffected")
@pytest.mark.observes("backward")
# Issue 29: every layout of every differentiable dtype, and a Parameter.
@grid_examples(dtypes=DIFFERENTIABLE, share="y", parameter=False)
@example(spec=_F32_SPEC, share="both", parameter=True)
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, values="finite"),
    share=st.sampled_from(["x", "y", "both"]),
    parameter=st.booleans(),
)
def test_share_memory_of_saved_tensor_keeps_graph(device, spec, share, parameter):
    """``x`` and ``y`` are leaves requiring grad (``x`` an nn.Parameter when
    ``parameter``); ``(x * y)`` saves both. The expected gradients come from
    the same graph built again without share_memory_.

    Kills: a share_memory_ that bumps the version counter (backward then
    raises 'modified by an inplace operation') or changes saved values."""

    def leaves():
        x = spec.build(device, requires_grad=True, leaf=True)
        if parameter:
            x = torch.nn.Parameter(spec.build(device))
        return x, spec.build(device, requires_grad=True, leaf=True)

    def loss(x, y):
        out = x * y
        return (out.real if out.is_complex() else out).sum()

    evidence.features(tensor_kind=frozenset({"leaf", "parameter"} if parameter else {"leaf"}))
    x0, y0 = leaves()
    loss(x0, y0).backward()
    x, y = leaves()
    out = loss(x, y)
    versions = (x._version, y._version)
    for name, t in (("x", x), ("y", y)):
        if share in (name, "both"):
            t.share_memory_()
    assert (x._version, y._version) == versions, "share_memory_() bumped the version counter"
    out.backward()
    assert_same_bits(x.grad, x0.grad, "the gradient after share_memory_() is unchanged")
    assert_same_bits(y.grad, y0.grad, "the gradient after share_memory_() is unchanged")


@pytest.mark.claim("shared_memory.module-share-memory")
@given(
    spec=tensor_specs(values="all"),
    buffer=tensor_specs(values="all"),
    tied=st.booleans(),
    with_grad=st.booleans(),
)
def test_module_share_memory_shares_everything(device, spec, buffer, tied, with_grad):
    """Kills: a Module.share_memory that skips buffers, grads or submodules,
    replaces parameter objects (unties tied ones) or alters values."""
    evidence.features(tensor_kind={"parameter", "buffer"})  # every module holds both
    differentiable = spec.dtype in DIFFERENTIABLE
    m = torch.nn.Module()
    m.p = torch.nn.Parameter(spec.build(device), requires_grad=differentiable)
    m.register_buffer("buf", buffer.build(device))
    m.sub = torch.nn.Module()
    m.sub.q = m.p if tied else torch.nn.Parameter(spec.build(device), requires_grad=differentiable)
    if with_grad and differentiable:
        m.p.grad = spec.build(device)
    params = (m.p, m.sub.q)
    tensors = {"p": m.p, "sub.q": m.sub.q, "buf": m.buf}
    if m.p.grad is not None:
        tensors["p.grad"] = m.p.grad
    values = {k: element_bytes(v) for k, v in tensors.items()}
    assert m.share_memory() is m, "Module.share_memory() did not return the module"
    now = {"p": m.p, "sub.q": m.sub.q, "buf": m.buf, "p.grad": m.p.grad}
    for k in tensors:
        assert now[k].is_shared(), f"Module.share_memory() left {k} unshared"
        _assert_bytes_kept(now[k], values[k], f"Module.share_memory() keeps the values of {k}")
    assert m.p is params[0] and m.sub.q is params[1], "Module.share_memory() replaced a parameter"
    assert m.p.requires_grad == differentiable, "Module.share_memory() changed requires_grad"


# ---------------------------------------------- sharing strategies, NumPy memory

#: The sharing strategies of torch.multiprocessing (those the platform offers:
#: ``get_all_sharing_strategies()``; a missing one is not applicable).
STRATEGIES = ("file_descriptor", "file_system")

#: Examples per property that starts a child process per example (a fork and two
#: queue round trips: tens of milliseconds): a tenth of the profile's count, at least 8.
_CHILD_EXAMPLES = max(8, settings().max_examples // 10)


@contextlib.contextmanager
def _sharing_strategy(name: str):
    """The body runs under sharing strategy ``name``, restored afterwards; not
    applicable where the platform does not offer it."""
    require(
        name in torch.multiprocessing.get_all_sharing_strategies(),
        f"the {name} sharing strategy is not available on this platform",
    )
    old = torch.multiprocessing.get_sharing_strategy()
    torch.multiprocessing.set_sharing_strategy(name)
    try:
        yield
    finally:
        torch.multiprocessing.set_sharing_strategy(old)


def _queue_child(inbox, outbox, received, parent_wrote):
    """Target of the fork child of the Queue property: receive ``(base, t)``, report
    what arrived, read the parent's write, write through ``t``."""
    try:
        base, t = inbox.get(timeout=60)
        first = (0,) * t.dim()
        rec = {
            "shared": (base.is_shared(), t.is_shared()),
            "same_storage": t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr(),
            "meta": _meta(t),
            "bytes": element_bytes(t).tobytes(),
        }
        received.set()
        parent_wrote.wait(60)
        rec["after_parent_write"] = t[first].item()
        rec["child_wrote"] = sentinel_for(t)
        with torch.no_grad():
            t[first] = rec["child_wrote"]
        outbox.put(rec)
    except Exception as e:  # reported, not raised: the parent asserts
        outbox.put({"error": repr(e)})
    finally:
        received.set()


def _wait_for(event, proc, what: str, timeout: float = 120) -> None:
    """Wait for ``event``, failing as soon as ``proc`` is gone or ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    while not event.wait(0.05):
        assert proc.is_alive(), f"the child died before it {what} (exit code {proc.exitcode})"
        assert time.monotonic() < deadline, f"the child never {what}"


def _stop(proc) -> None:
    proc.join(30)
    if proc.is_alive():
        proc.terminate()
        proc.join(5)
    if proc.is_alive():
        proc.kill()
        proc.join()


_STRATEGY_SPEC = TensorSpec(dtype=torch.float32, base_shape=(4,), storage=(1.0, -0.0, 3.5, 4.0))


def _every_strategy(fn):
    for strategy in STRATEGIES:
        fn = example(spec=_STRATEGY_SPEC, strategy=strategy)(fn)
    return fn


@pytest.mark.claim("shared_memory.queue-child-every-strategy")
@pytest.mark.observes("tensor")
@_every_strategy
# Issue 29: every non-empty layout and every dtype family, one per strategy in turn.
@domain_examples(where=non_empty, strategy=STRATEGIES[0])
@domain_examples(where=non_empty, strategy=STRATEGIES[1])
@settings(max_examples=_CHILD_EXAMPLES)
@given(
    spec=tensor_specs(values="all", shape=shapes(min_side=1)),
    strategy=st.sampled_from(STRATEGIES),
)
def test_queue_to_child_shares_under_every_strategy(device, spec, strategy):
    """One fork child per example receives ``(base, t)`` from a torch.multiprocessing
    Queue, with ``t`` the spec's tensor on ``base``; the Queue pickles them (in its feeder
    thread) under ``strategy``, which stays set until the child has them.

    Kills: a reducer that sends copies under one strategy (the child's writes are lost,
    the view no longer shares its base's storage), or rebuilds other metadata or values."""
    require(
        "fork" in torch.multiprocessing.get_all_start_methods(),
        "a cheap child process needs the fork start method",
    )
    ctx = torch.multiprocessing.get_context("fork")
    base = spec.build_base(device)
    t = spec.apply_views(base)
    first = (0,) * t.dim()
    meta, values = _meta(t), element_bytes(t)
    inbox, outbox = ctx.Queue(), ctx.Queue()
    received, parent_wrote = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_queue_child, args=(inbox, outbox, received, parent_wrote))
    proc.daemon = True
    with _sharing_strategy(strategy):
        proc.start()
        try:
            inbox.put((base, t))
            _wait_for(received, proc, "received the tensors")
            sender_shared = (base.is_shared(), t.is_shared())
            parent_value = sentinel_for(t)
            with torch.no_grad():
                t[first] = parent_value
            parent_wrote.set()
            rec = outbox.get(timeout=120)
        finally:
            _stop(proc)
            for q in (inbox, outbox):
                q.close()
                q.join_thread()
    assert "error" not in rec, f"the child failed under {strategy}: {rec}"
    assert sender_shared == (True, True), f"sending under {strategy} left the sender private"
    assert rec["shared"] == (True, True), f"under {strategy} the child got private tensors"
    assert rec["same_storage"], f"under {strategy} the tensor no longer shares its base's storage"
    assert rec["meta"] == meta, f"under {strategy} the tensor arrived as {rec['meta']}, sent {meta}"
    assert rec["bytes"] == values.tobytes(), f"under {strategy} the child got other values"
    want = torch.tensor(parent_value, dtype=t.dtype).item()
    assert rec["after_parent_write"] == want, (
        f"under {strategy} the child missed the parent's write"
    )
    want = torch.tensor(rec["child_wrote"], dtype=t.dtype).item()
    assert t[first].item() == want, f"under {strategy} the parent missed the child's write"
    assert proc.exitcode == 0, f"the child exited with {proc.exitcode}"


#: How the NumPy properties send a tensor: ``ForkingPickler(buf).dump``,
#: ``ForkingPickler.dumps``, or ``SimpleQueue.put`` (each received in this process).
SEND_PATHS = ("dump", "dumps", "simple-queue")

#: NumPy to torch without a copy.
FROM_ARRAY = {"from_numpy": torch.from_numpy, "as_tensor": torch.as_tensor,
              "asarray": torch.asarray}  # fmt: skip


def _send_and_receive(t: torch.Tensor, how: str) -> torch.Tensor:
    """Send ``t`` the way ``how`` says and rebuild it here (which consumes the handle)."""
    if how == "dump":
        buf = io.BytesIO()
        ForkingPickler(buf).dump(t)
        return pickle.loads(buf.getvalue())
    if how == "dumps":
        return pickle.loads(ForkingPickler.dumps(t))
    q = torch.multiprocessing.get_context().SimpleQueue()
    try:
        q.put(t)
        return q.get()
    finally:
        q.close()


def _array_tensor(spec, form: str) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
    """``(a, base, t)``: an ndarray of the spec's storage values, ``form(a)`` and the
    spec's view chain on it (the caller asserts that ``base`` shares ``a``)."""
    a = np.array(spec.storage, dtype=numpy_dtype(spec.dtype)).reshape(spec.base_shape)
    # asarray copies a 0-d ndarray (a deviation of the numpy area): not this claim's subject.
    assume(not (form == "asarray" and a.ndim == 0))
    base = FROM_ARRAY[form](a)
    return a, base, spec.apply_views(base)


_NUMPY_SPECS = tensor_specs(
    dtype=NUMPY_DTYPES, values="all", channels_last=False, shape=shapes(min_side=1)
)


@pytest.mark.claim("shared_memory.numpy-tensor-sent-shares-with-sender")
@pytest.mark.observes("tensor")
@grid_examples(dtypes=NUMPY_DTYPES, where=_array_backed_non_empty, form="from_numpy", how="dumps",
               strategy="file_descriptor")  # fmt: skip
@given(
    spec=_NUMPY_SPECS,
    form=st.sampled_from(tuple(FROM_ARRAY)),
    how=st.sampled_from(SEND_PATHS),
    strategy=st.sampled_from(STRATEGIES),
)
def test_sent_numpy_tensor_shares_with_sender(device, spec, form, how, strategy):
    """Before sending, ``form(a)`` shares ``a``'s memory (a write to ``a`` is seen);
    the received tensor holds the values ``a`` held, with the sender's metadata, and
    shares the sender's memory both ways.

    Kills: a reducer that sends a copy of a tensor over foreign (NumPy) memory, or that
    delivers other values or metadata for one dtype or strategy."""
    a, base, t = _array_tensor(spec, form)
    assert base.data_ptr() == a.ctypes.data, f"torch.{form}(ndarray) does not share the array"
    value = sentinel_for(base)
    a.reshape(-1)[0] = value
    want = torch.tensor(value, dtype=base.dtype).item()
    assert base.reshape(-1)[0].item() == want, f"a write to the array is not seen by {form}(a)"
    meta, values = _meta(t), element_bytes(t)
    with _sharing_strategy(strategy):
        u = _send_and_receive(t, how)
    assert _meta(u) == meta, f"the received tensor is {_meta(u)}, the sender {meta}"
    _assert_bytes_kept(u, values, "the received tensor holds the values the array held")
    assert shares_storage(u, t), f"under {strategy} the received tensor does not share the sender's"
    assert writes_visible(u, t), "a write to the received tensor is not seen by the sender"
    assert writes_visible(t, u), "a write to the sender is not seen by the received tensor"


@pytest.mark.claim("shared_memory.sending-severs-numpy-alias")
@grid_examples(dtypes=NUMPY_DTYPES, where=_array_backed_non_empty, form="from_numpy", how="dump",
               strategy="file_descriptor")  # fmt: skip
@given(
    spec=_NUMPY_SPECS,
    form=st.sampled_from(tuple(FROM_ARRAY)),
    how=st.sampled_from(SEND_PATHS),
    strategy=st.sampled_from(STRATEGIES),
)
def test_sending_severs_numpy_alias(device, spec, form, how, strategy):
    """Pins torch 2.13 (probe ``conformance/probes/sending_severs_numpy_alias.py``):
    after sending, the sender's tensor is in shared memory with its values, no warning
    was issued, and it no longer shares memory with the array either way.

    Kills: a reducer that leaves a tensor on foreign memory while sending a shared copy
    (the array's aliasing kept, the receiver cut off), that loses values when it moves
    the storage, or that starts warning."""
    a, base, t = _array_tensor(spec, form)
    assert base.data_ptr() == a.ctypes.data, f"torch.{form}(ndarray) does not share the array"
    values = element_bytes(t)
    with capture_warnings() as caught, _sharing_strategy(strategy):
        _send_and_receive(t, how)
    assert not caught, f"sending a {form}(ndarray) tensor warned: {caught[0].message}"
    assert t.is_shared() and base.is_shared(), f"after sending ({how}) the tensor is not shared"
    _assert_bytes_kept(t, values, "sending keeps the values of an array's tensor")
    flat = a.reshape(-1).view(np.uint8)
    flat ^= 1  # every byte of the array changes
    _assert_bytes_kept(t, values, f"after sending ({how}) a write to the array reached the tensor")
    array_bytes = flat.copy()
    with torch.no_grad():
        t[(0,) * t.dim()] = sentinel_for(t)
    assert np.array_equal(flat, array_bytes), (
        f"after sending ({how}) a write to the tensor reached the array"
    )
