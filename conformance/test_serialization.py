"""Properties of serialization (claims in ``claims/serialization.toml``): ``torch.save`` /
``torch.load`` (zipfile and legacy formats, ``weights_only`` True and False, ``mmap``)
and plain ``pickle`` of tensors and Parameters.

Round trips go through ``io.BytesIO`` (``mmap=True`` needs a file: a temporary one,
removed right after loading). Every ``torch.load`` passes ``weights_only`` explicitly, so
the properties mean the same on torch 2.1 (default False) and >= 2.6 (default True);
the default itself is checked only where torch has the new one (2.6), elsewhere the
example is *not applicable*. Values are compared bit for bit against the originals.
What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import pickle
import tempfile

import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st

from conformance import evidence
from conformance.capabilities import save_supports
from conformance.checks import (
    assert_same_bits,
    capture_warnings,
    first_index,
    raises_with,
    same_bits,
    sentinel_for,
    shares_storage,
)
from strategies import (
    ALL_DTYPES,
    ARITHMETIC,
    COMPLEX,
    DIFFERENTIABLE,
    NON_OVERLAPPING_VIEWS,
    TensorSpec,
    grid_examples,
    shapes,
    tensor_specs,
)
from strategies.domains import DOMAIN_SPEC, domain_examples, math_bit_of, non_empty, value_examples
from strategies.dtypes import dtype_name

#: The new default of ``torch.load``: ``weights_only=True`` from torch 2.6.
_RELEASE = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
WEIGHTS_ONLY_DEFAULT = _RELEASE >= (2, 6)
#: ``torch.serialization.safe_globals`` (a context manager) from torch 2.5.
HAS_SAFE_GLOBALS = hasattr(torch.serialization, "safe_globals")
#: uint16/uint32/uint64 (torch >= 2.3): the legacy format and pickle save them but cannot
#: load them on torch 2.13 (serialization.wide-unsigned-legacy-load-fails), so the other
#: claims cover them in the zip format only.
WIDE_UNSIGNED = tuple(
    getattr(torch, n) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n)
)
#: Every dtype the legacy format and pickle can round-trip.
LEGACY_DTYPES = tuple(d for d in ALL_DTYPES if d not in WIDE_UNSIGNED)


def _loadable(dtype: torch.dtype, how: str) -> bool:
    """Whether ``how`` (a format, ``pickle``) is claimed to round-trip ``dtype``."""
    return how not in ("legacy", "pickle") or dtype not in WIDE_UNSIGNED


def _needs(ok: bool, what: str) -> None:
    """Declare the example not applicable on this torch when ``ok`` is false."""
    if not ok:
        from conformance.evidence import not_applicable

        not_applicable(what)


#: How an object is saved and loaded.
FORMATS = ("zip", "legacy", "mmap")


def _tensors_in(obj) -> list[torch.Tensor]:
    """The tensors of ``obj`` (a tensor, a list/tuple/dict of them, a module)."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, torch.nn.Module):
        obj = list(obj.parameters()) + list(obj.buffers())
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, list | tuple):
        return [t for x in obj for t in _tensors_in(x)]
    return []


def _require_saveable(obj) -> None:
    """Not applicable where this torch cannot save (or pickle) one of obj's
    dtypes at all (:func:`capabilities.save_supports`: torch 2.3-2.5 and the
    wide unsigned dtypes)."""
    for dt in dict.fromkeys(t.dtype for t in _tensors_in(obj)):
        _needs(
            save_supports(dt),
            f"torch {torch.__version__} cannot save or pickle {dtype_name(dt)} tensors (KeyError)",
        )


def _saved(obj, fmt: str = "zip") -> bytes:
    """``torch.save(obj)`` in format ``fmt`` (see :func:`_require_saveable`)."""
    _require_saveable(obj)
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=fmt != "legacy")
    return buf.getvalue()


def _roundtrip(obj, fmt: str = "zip", *, weights_only: bool = True):
    """``torch.load(torch.save(obj))`` in format ``fmt`` (``mmap``: a zip file on disk
    loaded with ``mmap=True``)."""
    data = _saved(obj, fmt)
    if fmt != "mmap":
        return torch.load(io.BytesIO(data), weights_only=weights_only)
    fd, path = tempfile.mkstemp(prefix="bound-serialization-", suffix=".pt")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return torch.load(path, mmap=True, weights_only=weights_only)
    finally:
        os.unlink(path)


def _pickled(obj, protocol: int = pickle.HIGHEST_PROTOCOL):
    _require_saveable(obj)
    return pickle.loads(pickle.dumps(obj, protocol=protocol))


def _meta(t: torch.Tensor) -> tuple:
    return (t.dtype, tuple(t.shape), t.stride(), t.storage_offset())


# ============================================================ shared storages


#: Further tensors on the storage of a spec's tensor ``t`` (built from ``base``).
COMPANIONS = ("base", "flat-offset", "sub-view", "same-object")


def _companion(kind: str, base: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    if kind == "base":
        return base
    if kind == "flat-offset":  # the storage seen as 1-d from element 1 on
        n = base.untyped_storage().nbytes() // base.element_size()
        return base.as_strided((max(n - 1, 0),), (1,), min(1, n))
    if kind == "sub-view":  # a view of the view
        return t[1:] if t.dim() and t.shape[0] > 1 else t.unsqueeze(0)
    if kind == "same-object":
        return t
    raise ValueError(kind)


def _pack(tensors: list, container: str):
    if container == "list":
        return list(tensors)
    if container == "tuple":
        return tuple(tensors)
    if container == "dict":
        return collections.OrderedDict((f"k{i}", x) for i, x in enumerate(tensors))
    return {"outer": [{"t": x} for x in tensors]}  # nested


def _unpack(obj, container: str) -> list:
    if container in ("list", "tuple"):
        return list(obj)
    if container == "dict":
        return list(obj.values())
    return [d["t"] for d in obj["outer"]]


def _family(spec, device, companions, view_first):
    """The spec's tensor and its companions, all on the one storage of its base."""
    base = spec.build_base(device)
    t = spec.apply_views(base)
    others = [_companion(k, base, t) for k in companions]
    return [t, *others] if view_first else [*others, t]


def _check_shared_load(objs: list, loaded: list, what: str) -> None:
    """``loaded`` mirrors ``objs``: same metadata and bits, one storage, writes
    through one seen in the others (the same write applied to the originals is
    the oracle), the same object loaded once."""
    for i, (o, x) in enumerate(zip(objs, loaded, strict=True)):
        assert _meta(x) == _meta(o), f"{what}: tensor {i} has {_meta(x)}, saved {_meta(o)}"
        assert_same_bits(x, o, f"{what} keeps the values of tensor {i}")
    for i, o in enumerate(objs):
        for j in range(i):
            if objs[j] is o:
                assert loaded[j] is loaded[i], f"{what}: one tensor object loaded as two"
    if objs[0].untyped_storage().nbytes() == 0:
        return  # nothing to share: no element, no byte to write
    for i in range(1, len(loaded)):
        assert shares_storage(loaded[i], loaded[0]), (
            f"{what} did not preserve storage sharing (tensors 0 and {i})"
        )
    k = next((i for i, o in enumerate(objs) if o.numel()), None)
    if k is None:
        return
    value = sentinel_for(objs[k])
    with torch.no_grad():
        objs[k][first_index(objs[k])] = value
        loaded[k][first_index(loaded[k])] = value
    for i, (o, x) in enumerate(zip(objs, loaded, strict=True)):
        assert same_bits(x, o), (
            f"{what} did not preserve storage sharing: a write through loaded tensor {k} "
            f"is not seen in loaded tensor {i}"
        )


@pytest.mark.claim("serialization.preserves-storage-sharing")
@grid_examples(companions=("base",), view_first=True, container="list", fmt="zip",
               weights_only=True)  # fmt: skip
@given(
    spec=tensor_specs(values="all"),
    companions=st.lists(st.sampled_from(COMPANIONS), min_size=1, max_size=2).map(tuple),
    view_first=st.booleans(),
    container=st.sampled_from(["list", "tuple", "dict", "nested"]),
    fmt=st.sampled_from(FORMATS),
    weights_only=st.booleans(),
)
def test_save_preserves_storage_sharing(
    device, spec, companions, view_first, container, fmt, weights_only
):
    """Tensors saved together that share a storage load sharing one storage, with their
    shape, strides, storage offset, dtype and bits.

    Kills: a save that materialises some view (a copy for a layout, dtype or format), a
    load that gives each tensor its own storage, or one that loses offsets or strides."""
    assume(_loadable(spec.dtype, fmt))
    objs = _family(spec, device, companions, view_first)
    loaded = _unpack(_roundtrip(_pack(objs, container), fmt, weights_only=weights_only), container)
    _check_shared_load(objs, loaded, "torch.save/load")


@pytest.mark.claim("serialization.view-saves-whole-storage")
@pytest.mark.observes("clone")
@domain_examples(fmt="zip")  # issue 29: every layout and dtype family
@given(spec=tensor_specs(), fmt=st.sampled_from(["zip", "legacy"]))
def test_view_saves_its_whole_storage(device, spec, fmt):
    """``torch.save(v)`` writes ``v``'s whole storage (the loaded storage has the same
    number of bytes, the file is at least that large); ``torch.save(v.clone())`` writes
    only ``numel * element_size`` bytes of storage.

    Kills: a save that trims a view to its elements (the documented behaviour is to keep
    the storage), or that writes more than the storage (e.g. materialising an expanded
    tensor)."""
    assume(_loadable(spec.dtype, fmt))
    t = spec.build(device)
    nbytes = t.untyped_storage().nbytes()
    data = _saved(t, fmt)
    loaded = torch.load(io.BytesIO(data), weights_only=True)
    assert loaded.untyped_storage().nbytes() == nbytes, (
        f"torch.save of a view wrote {loaded.untyped_storage().nbytes()} storage bytes, "
        f"its storage has {nbytes}"
    )
    assert len(data) >= nbytes, f"the file ({len(data)} B) is smaller than the storage"
    assert len(data) < nbytes + 4096, f"the file ({len(data)} B) is far larger than the storage"
    c = t.clone()
    lc = torch.load(io.BytesIO(_saved(c, fmt)), weights_only=True)
    want = t.numel() * t.element_size()
    assert lc.untyped_storage().nbytes() == want, (
        f"torch.save of a clone wrote {lc.untyped_storage().nbytes()} storage bytes, want {want}"
    )


@pytest.mark.claim("serialization.loaded-views-are-not-autograd-views")
# Issue 29: every dtype family and view layout, by construction (a float32-only
# regression survived when random draws missed float32 views).
@domain_examples(
    where=lambda s: (
        bool(s.views) and not any(v[0] == "expand" for v in s.views) and all(n > 0 for n in s.shape)
    ),
    fmt="zip",
)
@given(
    spec=tensor_specs(views=NON_OVERLAPPING_VIEWS, shape=shapes(min_side=1)),
    fmt=st.sampled_from(["zip", "legacy", "pickle"]),
)
def test_loaded_views_are_not_autograd_views(device, spec, fmt):
    """A view saved with its base loads as an independent tensor over the shared
    storage: ``_base is None``, not ``_is_view()``, and its version counter is its own
    (a write through the loaded view leaves the loaded base's ``_version``; bumping the
    base's leaves the view's).

    Kills: a load that rebuilds views as autograd views of the first tensor on the
    storage (sharing the version counter), for some dtype or layout."""
    assume(spec.views and _loadable(spec.dtype, fmt))
    base = spec.build_base(device)
    v = spec.apply_views(base)
    assume(v.numel() > 0)
    if fmt == "pickle":
        lb, lv = _pickled([base, v])
    else:
        lb, lv = _roundtrip([base, v], fmt, weights_only=True)
    assert lv._base is None and not lv._is_view(), "a loaded view is an autograd view"
    before_b, before_v = lb._version, lv._version
    with torch.no_grad():
        lv[first_index(lv)] = sentinel_for(lv)
    after_v = lv._version
    assert after_v > before_v, "a write did not bump the loaded view's version"
    assert lb._version == before_b, (
        "a write through the loaded view bumped the loaded base's version counter"
    )
    torch.autograd.graph.increment_version(lb)
    assert lv._version == after_v, (
        "bumping the loaded base's version counter changed the loaded view's"
    )


# ============================================================ autograd state


#: A float32 (2, 3) spec: the explicit examples of each state of a domain (issue 29).
_F32_SPEC = TensorSpec(
    dtype=torch.float32, base_shape=(2, 3), storage=(1.0, -0.0, 3.5, 4.0, 5.0, 6.0)
)


@pytest.mark.claim("serialization.requires-grad-and-leaf-after-load")
@example(spec=_F32_SPEC, state="no-grad", how="zip")
@example(spec=_F32_SPEC, state="leaf", how="legacy")
@example(spec=_F32_SPEC, state="non-leaf-op", how="zip")
@example(spec=_F32_SPEC, state="non-leaf-view", how="pickle")
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    state=st.sampled_from(["no-grad", "leaf", "non-leaf-op", "non-leaf-view"]),
    how=st.sampled_from(["zip", "legacy", "zip-unsafe", "pickle"]),
)
def test_load_gives_leaves_with_saved_requires_grad(device, spec, state, how):
    """Every loaded tensor is a leaf with ``grad_fn`` None and the saved
    ``requires_grad``: a non-leaf that required grad (``r * 3``, a view of ``r``) loads
    as a leaf that requires grad.

    Kills: a load that drops ``requires_grad`` (for some dtype or for non-leaves), or
    that rebuilds a grad_fn."""
    if state == "no-grad":
        t = spec.build(device)
    elif state == "leaf":
        t = spec.build(device, requires_grad=True, leaf=True)
    elif state == "non-leaf-op":
        t = spec.build(device, requires_grad=True) * 3
    else:
        t = spec.build(device, requires_grad=True).expand(spec.shape)  # a view, non-leaf
    evidence.features(
        tensor_kind="non_leaf" if t.grad_fn is not None else "leaf" if t.requires_grad else "plain"
    )
    if how == "pickle":
        lt = _pickled(t)
    else:
        lt = _roundtrip(t, "legacy" if how == "legacy" else "zip", weights_only=how != "zip-unsafe")
    assert lt.is_leaf and lt.grad_fn is None, f"a loaded tensor has grad_fn {lt.grad_fn}"
    assert lt.requires_grad == t.requires_grad, (
        f"a loaded tensor has requires_grad={lt.requires_grad}, saved {t.requires_grad}"
    )
    assert type(lt) is torch.Tensor, f"a plain tensor loaded as {type(lt).__name__}"


@pytest.mark.claim("serialization.parameter-type-kept")
@domain_examples(requires_grad=False, container="bare", weights_only=True, attr=None)  # issue 29
@given(
    spec=tensor_specs(dtype=ALL_DTYPES, values="all"),
    requires_grad=st.booleans(),
    container=st.sampled_from(["bare", "state_dict", "list"]),
    weights_only=st.booleans(),
    attr=st.sampled_from([None, 1, "tag", (2, 3)]),
)
def test_parameter_loads_as_parameter(device, spec, requires_grad, container, weights_only, attr):
    """An ``nn.Parameter`` loads as an ``nn.Parameter`` with its ``requires_grad`` and
    values; a Python attribute set on it survives.

    Kills: a load that returns a plain tensor for (frozen, integer, ...) Parameters, that
    flips ``requires_grad``, or that drops the Parameter's ``__dict__``."""
    requires_grad = requires_grad and spec.dtype in DIFFERENTIABLE
    evidence.features(attr_kind=type(attr).__name__.lower(), requires_grad=requires_grad)
    p = torch.nn.Parameter(spec.build(device), requires_grad=requires_grad)
    if attr is not None:
        p.tag = attr
    obj = {"bare": p, "state_dict": collections.OrderedDict(w=p), "list": [p]}[container]
    out = _roundtrip(obj, weights_only=weights_only)
    if container == "bare":
        lp = out
    elif container == "state_dict":
        lp = out["w"]
    else:
        lp = out[0]
    assert type(lp) is torch.nn.Parameter, f"a Parameter loaded as {type(lp).__name__}"
    assert lp.requires_grad == requires_grad, (
        f"a Parameter with requires_grad={requires_grad} loaded with {lp.requires_grad}"
    )
    assert_same_bits(lp, spec.build(device), "a loaded Parameter keeps its values")
    if attr is not None:
        assert getattr(lp, "tag", None) == attr, "an attribute set on a Parameter was not saved"


@pytest.mark.claim("serialization.grad-not-saved")
@domain_examples(dtypes=DIFFERENTIABLE, kind="tensor", how="zip")  # issue 29
@value_examples("kind", ("tensor", "parameter"), spec=DOMAIN_SPEC, how="legacy")
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    kind=st.sampled_from(["tensor", "parameter"]),
    how=st.sampled_from(["zip", "legacy", "zip-unsafe", "pickle"]),
)
def test_grad_is_not_saved(device, spec, kind, how):
    """Kills: a save that carries ``.grad`` along (for Parameters or plain leaves, in
    one format), so a reloaded checkpoint would start with stale gradients."""
    evidence.features(tensor_kind="parameter" if kind == "parameter" else "leaf")
    t = spec.build(device, requires_grad=True, leaf=True)
    if kind == "parameter":
        t = torch.nn.Parameter(spec.build(device))
    t.grad = torch.ones_like(t)
    if how == "pickle":
        lt = _pickled(t)
    else:
        lt = _roundtrip(t, "legacy" if how == "legacy" else "zip", weights_only=how != "zip-unsafe")
    assert lt.grad is None, "a loaded tensor has a .grad"
    assert t.grad is not None, "saving cleared the original's .grad"


@pytest.mark.claim("serialization.hooks-dropped-with-warning")
@domain_examples(dtypes=DIFFERENTIABLE, kind="tensor", hooks=1, fmt="zip")  # issue 29
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    kind=st.sampled_from(["tensor", "parameter"]),
    hooks=st.integers(1, 2),
    fmt=st.sampled_from(["zip", "legacy"]),
)
def test_backward_hooks_are_dropped(device, spec, kind, hooks, fmt):
    """A tensor with backward hooks saves; the loaded tensor has none. A plain tensor's
    save warns "backward hook ... will not be serialized" (UserWarning, once per hook); a
    Parameter's save drops them silently.

    Kills: a save that raises on hooked tensors, that serializes hooks, or that changes
    which kind of tensor warns."""
    if kind == "parameter":
        t = torch.nn.Parameter(spec.build(device))
    else:
        t = spec.build(device, requires_grad=True, leaf=True)
    for _ in range(hooks):
        t.register_hook(lambda g: g)
    with capture_warnings() as caught:
        data = _saved(t, fmt)
    lt = torch.load(io.BytesIO(data), weights_only=True)
    assert not lt._backward_hooks, f"a loaded tensor has hooks {lt._backward_hooks}"
    warned = [w for w in caught if "will not be serialized" in str(w.message)]
    if kind == "tensor":
        assert len(warned) == hooks, f"{len(warned)} warnings for {hooks} unserializable hooks"
        assert all(issubclass(w.category, UserWarning) for w in warned), "not a UserWarning"
    else:
        assert not warned, "saving a hooked Parameter warned"


# ======================================================= conj/neg, dtypes


#: The real dtypes drawn as negative views (torch._neg_view).
_REAL_ARITHMETIC = tuple(d for d in ARITHMETIC if d not in COMPLEX)


@pytest.mark.claim("serialization.conj-neg-bits-kept")
# Issue 29: conjugate views (complex) and negative views (real) over every
# layout, with and without their base, in each of the three formats.
@domain_examples(dtypes=COMPLEX, with_base=True, how="zip")
@domain_examples(dtypes=COMPLEX, with_base=False, how="pickle")
@domain_examples(dtypes=_REAL_ARITHMETIC, with_base=False, how="legacy")
@domain_examples(dtypes=_REAL_ARITHMETIC, with_base=True, how="pickle")
@given(
    spec=tensor_specs(dtype=ARITHMETIC, values="all"),
    with_base=st.booleans(),
    how=st.sampled_from(["zip", "legacy", "pickle"]),
)
def test_conj_and_neg_bits_are_kept(device, spec, with_base, how):
    """A conjugate view (``c.conj()``) and a negative view (``c.conj().imag``,
    ``torch._neg_view(x)``) load with the bit set and the same values, sharing the
    storage of their base when saved with it (``torch.save``).

    Kills: a save or load that resolves or drops the bit (values of the storage, or a
    copy that loses sharing), for one dtype, rank or format."""
    base = spec.build(device)
    if spec.dtype in COMPLEX:
        v = base.conj()
        if not with_base and spec.dtype == torch.complex128:
            # conj + neg: the imaginary part of a conjugate view. Saved alone only:
            # torch.save refuses a complex tensor and a real view of its storage in
            # one file ("view the same data as different types").
            v = v.imag
    else:
        v = torch._neg_view(base)
    evidence.features(math_bit=math_bit_of(v))
    objs = [base, v] if with_base else [v]
    if how == "pickle":
        loaded = _pickled(objs)
    else:
        loaded = _roundtrip(objs, how, weights_only=True)
    lv = loaded[-1]
    assert (lv.is_conj(), lv.is_neg()) == (v.is_conj(), v.is_neg()), (
        f"loaded (is_conj, is_neg) = {(lv.is_conj(), lv.is_neg())}, saved "
        f"{(v.is_conj(), v.is_neg())}"
    )
    assert_same_bits(lv, v, "a loaded conjugate/negative view keeps its values")
    if with_base and how != "pickle" and base.numel():
        assert shares_storage(lv, loaded[0]), "a loaded conj/neg view lost its base's storage"


def _same_size_dtypes(dtype: torch.dtype) -> list[torch.dtype]:
    size = torch.empty((), dtype=dtype).element_size()
    return [d for d in ALL_DTYPES if d != dtype and torch.empty((), dtype=d).element_size() == size]


@pytest.mark.claim("serialization.mixed-dtype-views-raise")
@domain_examples(where=non_empty, pick=0, fmt="zip", view_first=False)  # issue 29
@given(
    spec=tensor_specs(shape=shapes(min_side=1)),
    pick=st.integers(0, 10),
    fmt=st.sampled_from(["zip", "legacy"]),
    view_first=st.booleans(),
)
def test_mixed_dtype_views_raise(device, spec, pick, fmt, view_first):
    """``torch.save`` of two tensors viewing one non-empty storage as different dtypes
    (``t`` and ``t.view(other dtype of the same size)``, a complex tensor and
    ``view_as_real`` of it) raises RuntimeError "Cannot save multiple tensors or storages
    that view the same data as different types"; plain ``pickle`` of the same list works.

    Kills: a save that silently writes the storage twice (or once, for one of the
    dtypes), for some dtype pair, order or format."""
    t = spec.build(device)
    if t.is_complex() and pick % 2:
        other = torch.view_as_real(t)
    else:
        choices = _same_size_dtypes(t.dtype)
        assume(choices)
        other = t.view(choices[pick % len(choices)])
    pair = [other, t] if view_first else [t, other]
    with raises_with(RuntimeError, "view the same data as different types"):
        _saved(pair, fmt)
    if not all(_loadable(x.dtype, "pickle") for x in pair):
        return
    a, b = _pickled(pair)
    assert_same_bits(a, pair[0], "pickle of a mixed-dtype pair keeps the first tensor")
    assert_same_bits(b, pair[1], "pickle of a mixed-dtype pair keeps the second tensor")


# ============================================================ weights_only


class Payload:
    """A user class: a global ``weights_only`` loading refuses."""

    def __init__(self, x=1):
        self.x = x

    def __eq__(self, other):
        return type(other) is Payload and other.x == self.x


class PayloadTensor(torch.Tensor):
    """A tensor subclass: refused by ``weights_only`` unless allow-listed."""


def _payload(kind: str, t: torch.Tensor):
    """A payload built around tensor ``t``: (object, allowed by weights_only?)."""
    allowed = {
        "tensor": t, "parameter": torch.nn.Parameter(t.detach().clone(), requires_grad=False),
        "odict": collections.OrderedDict(w=t), "dict": {"w": t, "n": 1}, "list": [t, None],
        "tuple": (t, 1.5), "set": {1, 2}, "size": torch.Size(t.shape), "dtype": t.dtype,
        "device": t.device, "layout": t.layout, "complex": complex(1, 2), "bytes": b"ab",
        "bytearray": bytearray(b"ab"), "inf": float("inf"),
    }  # fmt: skip
    refused = {
        "user-class": Payload(3), "subclass": t.detach().clone().as_subclass(PayloadTensor),
        "module": torch.nn.Identity(), "slice": slice(1, 2), "range": range(3),
        "frozenset": frozenset({1}), "return_types": torch.max(torch.zeros(2, 2), 0),
    }  # fmt: skip
    if kind in allowed:
        return allowed[kind], True
    return refused[kind], False


def _same_payload(a, b) -> bool:
    """Equal payloads, tensors compared bit for bit."""
    if isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and same_bits(a, b)
    if isinstance(b, dict):
        return list(a) == list(b) and all(_same_payload(a[k], b[k]) for k in b)
    if isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same_payload(x, y) for x, y in zip(a, b, strict=True))
    return a == b


PAYLOADS = ("tensor", "parameter", "odict", "dict", "list", "tuple", "set", "size", "dtype",
            "device", "layout", "complex", "bytes", "bytearray", "inf", "user-class",
            "subclass", "module", "slice", "range", "frozenset", "return_types")  # fmt: skip


@pytest.mark.claim("serialization.weights-only-rejects-arbitrary-globals")
@pytest.mark.observes("clone", "detach")
@given(
    spec=tensor_specs(
        dtype=(torch.float32, torch.int64, torch.complex64),
        shape=shapes(max_dims=2, max_side=3),
        views=False,
        values="all",
    ),
    kind_mode=st.one_of(
        st.tuples(
            st.sampled_from(PAYLOADS),
            st.sampled_from(["weights_only=True", "default", "weights_only=False"]),
        ),
        st.tuples(st.sampled_from(["user-class", "subclass"]), st.just("allow-listed")),
    ),
)
def test_weights_only_refuses_other_globals(device, spec, kind_mode):
    """``torch.load(weights_only=True)`` - and, from torch 2.6, ``torch.load`` without
    the argument - loads tensors, Parameters, dict/OrderedDict/list/tuple/set,
    ``torch.Size``/``dtype``/``device``/``layout``, complex, bytes, bytearray and inf,
    and raises ``pickle.UnpicklingError`` "Weights only load failed ... Unsupported
    global: GLOBAL <name>" for any other global (a user class, a tensor subclass, an
    ``nn.Module``, slice, range, frozenset, ``torch.return_types``); allow-listing the
    class (``torch.serialization.safe_globals``) or ``weights_only=False`` loads it.

    Kills: a weights_only unpickler that lets an arbitrary global through (for one call
    form, e.g. without the argument), or that refuses one of the allowed types."""
    kind, mode = kind_mode
    evidence.features(kind=kind, mode=mode)
    t = spec.build(device)
    obj, allowed = _payload(kind, t)
    data = _saved(obj)
    evidence.features(allowed=allowed)
    if mode == "default":
        _needs(WEIGHTS_ONLY_DEFAULT, "torch < 2.6 defaults to weights_only=False")
        load = lambda: torch.load(io.BytesIO(data))  # noqa: E731
    elif mode == "weights_only=False":
        load = lambda: torch.load(io.BytesIO(data), weights_only=False)  # noqa: E731
    elif mode == "allow-listed":
        _needs(HAS_SAFE_GLOBALS, "torch < 2.5 has no torch.serialization.safe_globals")
        cls = Payload if kind == "user-class" else PayloadTensor

        def load():
            with torch.serialization.safe_globals([cls]):
                return torch.load(io.BytesIO(data), weights_only=True)
    else:
        load = lambda: torch.load(io.BytesIO(data), weights_only=True)  # noqa: E731
    if allowed or mode in ("weights_only=False", "allow-listed"):
        out = load()
        assert type(out) is type(obj), f"{kind} loaded as {type(out).__name__}"
        if kind not in ("module", "return_types"):
            assert _same_payload(out, obj), f"a loaded {kind} differs from the saved one"
        return
    with raises_with(pickle.UnpicklingError, "Weights only load failed") as e:
        load()
    assert "Unsupported global: GLOBAL" in str(e.value), str(e.value)[:300]


# ================================================================== pickle


@pytest.mark.claim("serialization.pickle-duplicates-storage")
# Issue 29: every non-empty layout and every dtype family the sentence keeps.
@domain_examples(dtypes=LEGACY_DTYPES, where=non_empty, companions=("base",), protocol=2)
@given(
    spec=tensor_specs(dtype=LEGACY_DTYPES, shape=shapes(min_side=1), values="all"),
    companions=st.lists(
        st.sampled_from(["base", "flat-offset", "sub-view"]), min_size=1, max_size=2
    ).map(tuple),
    protocol=st.integers(2, pickle.HIGHEST_PROTOCOL),
)
def test_pickle_duplicates_shared_storage(device, spec, companions, protocol):
    """Plain ``pickle`` (not ``torch.save``) of tensors sharing a storage gives each its
    own copy of the whole storage (offset, strides and values kept): a write through one
    unpickled tensor is not seen in the others. The same tensor object listed twice
    unpickles as one object.

    Kills: a pickle that starts to dedupe storages (a behaviour change users of
    multiprocessing queues would see), or that trims or shifts a view's storage."""
    objs = _family(spec, device, companions, view_first=True)
    loaded = _pickled([*objs, objs[0]], protocol)
    assert loaded[-1] is loaded[0], "the same tensor object unpickled as two objects"
    loaded = loaded[:-1]
    for i, (o, x) in enumerate(zip(objs, loaded, strict=True)):
        assert _meta(x) == _meta(o), f"pickle: tensor {i} has {_meta(x)}, pickled {_meta(o)}"
        assert_same_bits(x, o, f"pickle keeps the values of tensor {i}")
        assert x.untyped_storage().nbytes() == o.untyped_storage().nbytes(), (
            f"pickle trimmed tensor {i}'s storage"
        )
    for i in range(1, len(loaded)):
        if loaded[i].untyped_storage().nbytes() and objs[i] is not objs[0]:
            assert not shares_storage(loaded[i], loaded[0]), (
                f"pickle preserved storage sharing (tensors 0 and {i})"
            )


# ====================================================== metadata and values


@pytest.mark.claim("serialization.metadata-and-values-round-trip")
@grid_examples(grid_values="all", how="zip", inference=False)
@grid_examples(dtypes=(torch.float32,), grid_values="all", how="zip", inference=True)
@given(
    spec=tensor_specs(values="all"),
    how=st.sampled_from(["zip", "legacy", "mmap", "zip-unsafe", "pickle"]),
    inference=st.booleans(),
)
def test_round_trip_keeps_metadata_and_bits(device, spec, how, inference):
    """One tensor round-trips with its dtype, shape, strides, storage offset and bits
    (NaN payloads, -0.0, subnormals), for every dtype and strided layout; an inference
    tensor loads as a normal tensor.

    Kills: a save or load that converts a dtype, canonicalises NaNs or flushes
    subnormals (for one dtype or format), or that makes the loaded tensor contiguous."""
    if inference:
        with torch.inference_mode():
            t = spec.build(device)
    else:
        t = spec.build(device)
    want = spec.build(device)
    evidence.features(
        wide_unsigned=spec.dtype in WIDE_UNSIGNED,
        tensor_kind="inference" if inference else "plain",
    )
    if how == "pickle":
        lt = _pickled(t)
    else:
        fmt = "zip" if how == "zip-unsafe" else how
        lt = _roundtrip(t, fmt, weights_only=how != "zip-unsafe")
    assert _meta(lt) == _meta(want), f"round trip changed metadata {_meta(want)} -> {_meta(lt)}"
    assert_same_bits(lt, want, "torch.save/load keeps the values")
    assert not lt.is_inference(), "a loaded tensor is an inference tensor"


@pytest.mark.claim("serialization.wide-unsigned-legacy-load-fails")
# Issue 29: every layout of the three dtypes, each way of saving.
@domain_examples(dtypes=WIDE_UNSIGNED or (torch.uint8,), how="legacy")
@domain_examples(dtypes=WIDE_UNSIGNED or (torch.uint8,), how="legacy-unsafe")
@domain_examples(dtypes=WIDE_UNSIGNED or (torch.uint8,), how="pickle")
@domain_examples(dtypes=WIDE_UNSIGNED or (torch.uint8,), how="zip")
@given(
    spec=tensor_specs(dtype=WIDE_UNSIGNED or (torch.uint8,), values="all"),
    how=st.sampled_from(["legacy", "legacy-unsafe", "pickle", "zip"]),
)
def test_wide_unsigned_legacy_and_pickle_cannot_load(device, spec, how):
    """Pins torch 2.13: a uint16/uint32/uint64 tensor saves in the legacy format and
    pickles, but loading raises AttributeError "type object 'torch.storage.UntypedStorage'
    has no attribute 'dtype'" (the legacy reader asks the storage class for a dtype these
    dtypes have no typed storage class for); the zip format round-trips them bit for bit.

    Kills: a change of this (a fix shows up here and as an unexpected pass of
    ``serialization.metadata-and-values-round-trip``), or a zip format that breaks them
    too, for one of the three dtypes."""
    _needs(bool(WIDE_UNSIGNED), "torch < 2.3 has no uint16/uint32/uint64")
    t = spec.build(device)
    if how == "zip":
        assert_same_bits(_roundtrip(t, "zip"), t, "the zip format keeps a wide unsigned tensor")
        return
    if how == "pickle":
        _require_saveable(t)
        data = pickle.dumps(t)
        load = lambda: pickle.loads(data)  # noqa: E731
    else:
        data = _saved(t, "legacy")
        wo = how == "legacy"
        load = lambda: torch.load(io.BytesIO(data), weights_only=wo)  # noqa: E731
    with raises_with(AttributeError, "has no attribute 'dtype'"):
        load()


# ==================================================== shared memory, grad modes


def _save_bytes(obj, how: str) -> bytes:
    """``obj`` saved by ``how``: ``zip``, ``legacy``, ``mmap`` and ``zip-unsafe`` write the
    format they load (zip but for ``legacy``), ``pickle`` pickles."""
    if how == "pickle":
        _require_saveable(obj)
        return pickle.dumps(obj)
    return _saved(obj, "legacy" if how == "legacy" else "zip")


def _load_bytes(data: bytes, how: str):
    """``data`` from :func:`_save_bytes` loaded by ``how`` (``zip-unsafe``: the zip format
    loaded with ``weights_only=False``; ``mmap``: from a temporary file with ``mmap=True``)."""
    if how == "pickle":
        return pickle.loads(data)
    if how != "mmap":
        return torch.load(io.BytesIO(data), weights_only=how != "zip-unsafe")
    fd, path = tempfile.mkstemp(prefix="bound-serialization-", suffix=".pt")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return torch.load(path, mmap=True, weights_only=True)
    finally:
        os.unlink(path)


def _plain_2x3(spec) -> bool:
    """The grid's plain contiguous layout: with ``grid_examples``, one example per dtype."""
    return spec.base_shape == (2, 3) and not spec.views


@pytest.mark.claim("serialization.loaded-not-shared")
@grid_examples(where=_plain_2x3, grid_values="all", kind="tensor", shared=True, how="zip")
@example(spec=_F32_SPEC, kind="parameter", shared=True, how="zip")
@example(spec=_F32_SPEC, kind="parameter", shared=False, how="legacy")
@given(
    spec=tensor_specs(values="all"),
    kind=st.sampled_from(["tensor", "parameter"]),
    shared=st.booleans(),
    how=st.sampled_from(["zip", "legacy", "mmap", "zip-unsafe", "pickle"]),
)
def test_loaded_tensor_is_not_in_shared_memory(device, spec, kind, shared, how):
    """A tensor or Parameter loaded by ``torch.load`` (any format) or ``pickle`` is not in
    shared memory, whether the saved one was (``share_memory_()``) or not; the values
    round-trip and the source stays as it was.

    Kills: a load that puts the storage into shared memory (or one that hands back the
    source's shared storage itself), for one dtype or format; a save that changes the
    source's memory."""
    assume(_loadable(spec.dtype, how))
    t = spec.build(device)
    if kind == "parameter":
        t = torch.nn.Parameter(t, requires_grad=False)
    evidence.features(tensor_kind="parameter" if kind == "parameter" else "plain")
    if shared:
        t.share_memory_()
    assert t.is_shared() == shared, "share_memory_() did not put the source in shared memory"
    lt = _load_bytes(_save_bytes(t, how), how)
    assert type(lt) is type(t), f"a {type(t).__name__} loaded as a {type(lt).__name__}"
    assert not lt.is_shared(), (
        f"a tensor loaded by {how} is in shared memory (saved shared={shared})"
    )
    assert t.is_shared() == shared, "saving changed whether the source is in shared memory"
    assert_same_bits(lt, spec.build(device), "a tensor saved from shared memory keeps its values")


#: Where ``torch.no_grad()`` / ``torch.inference_mode()`` wraps the round trip.
SAVE_LOAD_GRAD_MODES = ("save-no-grad", "load-no-grad", "both-no-grad", "save-inference-mode")
#: The tensor_kind domain value (issue 29) of each ``state`` of the test below.
_STATE_KIND = {"leaf": "leaf", "non-leaf": "non_leaf", "parameter": "parameter"}


@pytest.mark.claim("serialization.grad-mode-independent")
@pytest.mark.observes("detach", "clone")
# Issue 29: every layout and differentiable family, tensor kind and mode.
@domain_examples(dtypes=DIFFERENTIABLE, state="leaf", mode="both-no-grad", how="zip")
@value_examples("state", tuple(_STATE_KIND), spec=DOMAIN_SPEC, mode="save-no-grad", how="zip")
@value_examples("mode", SAVE_LOAD_GRAD_MODES, spec=DOMAIN_SPEC, state="leaf", how="zip")
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, values="all"),
    state=st.sampled_from(["leaf", "non-leaf", "parameter"]),
    mode=st.sampled_from(SAVE_LOAD_GRAD_MODES),
    how=st.sampled_from(["zip", "legacy", "zip-unsafe", "pickle"]),
)
def test_grad_mode_does_not_change_save_and_load(device, spec, state, mode, how):
    """The same round trip as outside any mode: a tensor that requires grad loads as a
    leaf that requires grad (a non-leaf ``r * 2`` included, a Parameter as a Parameter),
    not an inference tensor, with the saved values.

    Kills: a save or load that reads grad mode: drops ``requires_grad`` of what is saved
    or loaded under ``no_grad``, or makes inference tensors of what is saved in
    inference mode."""
    assume(_loadable(spec.dtype, how))
    evidence.features(
        tensor_kind=_STATE_KIND[state],
        grad_mode="inference_mode" if mode == "save-inference-mode" else "no_grad",
    )
    if state == "parameter":
        t = torch.nn.Parameter(spec.build(device))
    else:
        t = spec.build(device, requires_grad=True, leaf=True)
        if state == "non-leaf":
            t = t * 2
    want = t.detach().clone()
    no_grad_save = mode in ("save-no-grad", "both-no-grad")
    no_grad_load = mode in ("load-no-grad", "both-no-grad")
    if mode == "save-inference-mode":
        with torch.inference_mode():
            data = _save_bytes(t, how)
    else:
        with torch.no_grad() if no_grad_save else contextlib.nullcontext():
            data = _save_bytes(t, how)
    with torch.no_grad() if no_grad_load else contextlib.nullcontext():
        lt = _load_bytes(data, how)
    want_type = torch.nn.Parameter if state == "parameter" else torch.Tensor
    assert type(lt) is want_type, f"a {want_type.__name__} loaded as {type(lt).__name__} ({mode})"
    assert lt.requires_grad, f"a tensor that requires grad loaded without it ({mode})"
    assert lt.is_leaf and lt.grad_fn is None, f"a loaded tensor has grad_fn {lt.grad_fn} ({mode})"
    assert not lt.is_inference(), f"a tensor loaded outside inference mode is one ({mode})"
    assert_same_bits(lt, want, f"a round trip with {mode} keeps the values")


@pytest.mark.claim("serialization.load-in-inference-mode")
@grid_examples(where=_plain_2x3, grid_values="all", kind="tensor", how="zip")
@domain_examples(kind="tensor", how="zip")  # issue 29: every layout and dtype family
@value_examples("kind", ("tensor", "requires-grad", "parameter"), spec=DOMAIN_SPEC, how="zip")
@given(
    spec=tensor_specs(values="all"),
    kind=st.sampled_from(["tensor", "requires-grad", "parameter", "view-with-base"]),
    how=st.sampled_from(["zip", "legacy", "mmap", "zip-unsafe", "pickle"]),
)
def test_load_in_inference_mode_gives_inference_tensors(device, spec, kind, how):
    """Saved outside any mode, loaded inside ``torch.inference_mode()``: inference tensors
    (a view saved with its base by ``torch.save`` still shares its storage), leaves with the saved
    ``requires_grad`` and values; an in-place write outside the mode is refused.

    Kills: a load that builds normal tensors inside inference mode (for one format, dtype
    or for Parameters), that drops ``requires_grad`` there, or that stops sharing a view's
    storage with its base."""
    assume(_loadable(spec.dtype, how))
    grad = kind in ("requires-grad", "parameter") and spec.dtype in DIFFERENTIABLE
    base = spec.build_base(device)
    t = spec.apply_views(base)
    if kind == "parameter":
        t = torch.nn.Parameter(t, requires_grad=grad)
    elif kind == "requires-grad" and grad:
        t = spec.build(device, requires_grad=True, leaf=True)
    objs = [base, t] if kind == "view-with-base" else [t]
    evidence.features(
        requires_grad=grad,
        tensor_kind={"parameter": "parameter", "requires-grad": "leaf" if grad else "plain"}.get(
            kind, "plain"
        ),
    )
    data = _save_bytes(objs, how)
    with torch.inference_mode():
        loaded = _load_bytes(data, how)
    for i, (o, x) in enumerate(zip(objs, loaded, strict=True)):
        assert x.is_inference(), f"tensor {i} loaded inside inference mode is a normal tensor"
        assert type(x) is type(o), f"a {type(o).__name__} loaded as a {type(x).__name__}"
        assert x.requires_grad == o.requires_grad, (
            f"loaded in inference mode, requires_grad={x.requires_grad}, saved {o.requires_grad}"
        )
        assert x.is_leaf and x.grad_fn is None, f"a loaded tensor has grad_fn {x.grad_fn}"
        assert_same_bits(x, o, f"loading in inference mode keeps the values of tensor {i}")
    lt = loaded[-1]
    if kind == "view-with-base" and how != "pickle" and base.untyped_storage().nbytes():
        # (plain pickle gives each tensor its own storage: serialization.pickle-duplicates-storage)
        assert shares_storage(lt, loaded[0]), "a view loaded in inference mode lost its storage"
    if lt.numel():
        with raises_with(RuntimeError, "Inplace update to inference tensor outside InferenceMode"):
            with torch.no_grad():
                lt[first_index(lt)] = sentinel_for(lt)
