"""The copy-sequence claims (``claims/sequences.toml``): the state machine of
:mod:`conformance.copy_sequences` run as one test, and small tests of
the documented promises torch departs from (recorded in
``conformance/expectations/sequences.toml``) and of every dtype and layout
one operation at a time, each against the same reference model
(``conformance/model/``).
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable, UnsatisfiedAssumption
from hypothesis.stateful import (
    run_state_machine_as_test,
)

from conformance import evidence
from conformance.copy_sequences import (
    MACHINE_CLAIMS,
    CopySequences,
    quiet,
    simple_values,
)
from conformance.model import (
    DIFFERENTIABLE,
    ArrayModel,
    Model,
    TensorModel,
    bf16_bits,  # noqa: F401 - the printed programs use it
    is_contiguous,
    is_non_overlapping_and_dense,
)
from conformance.registry import CLAIMS_DIR, load_file
from strategies.domains import layout_kinds, tensor_kind_of
from strategies.dtypes import dtype_family
from strategies.sequences import (
    DTYPES,
    FORMATS,
    GRAD_MODE_STRATEGY,
    MAX_NUMEL,
    SCALARS,
    Fresh,
    fresh_specs,
)


@pytest.mark.claim(*MACHINE_CLAIMS)
# The programs' steps include every copy op of the model (the ops under test
# in combination): a broken one explains failures across the machine's claims.
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
def test_copy_sequences(device):
    """Programs of up to 30 copy/alias/view/in-place/NumPy/autograd steps agree
    with the reference model after every step (one program per example of the
    loaded Hypothesis profile).

    Kills: any single-op bug the rules cover, and those only chains show - a
    contiguous() or .to() that copies when nothing changes (caught by object
    identity and storage), a transpose that copies for some ranks, an expand
    that materialises, a copy_ that loses the graph for view destinations, a
    detach/.data with the wrong version counter, a view whose grad_fn is not
    rebuilt after its base changes.

    Evidence is per claim: each program credits the claims its steps checked.
    A failure is blamed on the claim of the check that failed (its message
    starts with ``[claim]``), never on the other claims its step cites; the
    plugin then re-runs the machine with that claim muted. A violation of a
    muted claim is recorded with its signature (each must match the entry
    that explains the claim) and the program goes on where the model can
    follow torch - a write performed despite a predicted refusal, a version
    count or values that differ - so the step's other claims are still
    checked; elsewhere the program ends there. Every other claim gets a
    verdict over a full run of programs.

    After the programs, one fixed case per value of each claim's declared
    domain (:func:`_check_domain_cases`; issue 29): the programs meet
    layouts, dtype families, tensor kinds and grad modes by chance, the
    cases meet each declared one in every run, each case an example of its
    own crediting its claim alone."""
    led = evidence.current_ledger()
    muted = bool(led and led.muted)
    suppress = list(settings.default.suppress_health_check)
    if muted:
        # Programs that reach a muted claim end there (rejected by design).
        suppress.append(HealthCheck.filter_too_much)
    try:
        run_state_machine_as_test(
            lambda: CopySequences(device),
            settings=settings(
                settings.default, stateful_step_count=30, suppress_health_check=suppress
            ),
        )
    except Unsatisfiable:
        if not muted:
            raise
        # Every program reached a muted claim; the others keep the evidence
        # their steps gathered before it.
    # every value the machine's claims declare, once each, by construction
    _check_domain_cases(device)


# --------------------------------------------------------------------------
# One operation on every kind of input
# --------------------------------------------------------------------------
# The machine's programs meet each (operation, dtype, layout, mode) only by
# chance: with the ci profile's 100 programs some combinations are never
# drawn (a torch.tensor of an integral tensor, an as_tensor of a one-element
# one, an add_ of a float16 one). The tests below run one operation of a
# claim on a fresh tensor (or a view of it) of every dtype, layout and mode,
# through the machine - the model predicts, torch runs, and the whole state
# is compared as after any step (bit for bit) - so each claim's operations
# meet each kind of input in every run.

#: Layouts of the operand (see :meth:`CopySequences._view_in`).
_LAYOUTS = st.sampled_from(
    ["contiguous", "contiguous", "transposed", "stepped", "expanded", "element", "non-dense"]
)
#: Views a write can go through (a 0-d or 1-d tensor may stay itself).
_VIEW_LAYOUTS = st.sampled_from(["transposed", "stepped", "element", "non-dense"])


def _operand(device: str, spec: Fresh, layout: str) -> tuple[CopySequences, TensorModel]:
    """A machine holding ``spec`` in ``layout`` (checked against the model)."""
    machine = CopySequences(device)
    t = machine._laid_out(spec, layout)
    assert t is not None, f"test bug: {spec!r} in layout {layout!r} raised"
    machine.agrees_with_model()
    return machine, t


def _domain_operand(dtype: str, shape: tuple[int, ...], layout: str = "contiguous", **kw):
    """``(Fresh, layout)`` of an operand: small exact values (:func:`simple_values`)."""
    return Fresh(dtype, shape, simple_values(dtype, math.prod(shape)), **kw), layout


#: An operand of each value of the domain dimensions the sequences claims
#: declare (issue 29; ``claims/sequences.toml``): ``(dimension, value) ->
#: (spec, layout)`` for :func:`_operand`, each at that value by construction
#: (the test reports what it built: :func:`_report_domain`). The dtype
#: families' operands are contiguous (3,) tensors, the layouts' and tensor
#: kinds' float32 ones; an ndarray kind's is a float32 tensor whose
#: ``t.numpy()`` is an array of that kind.
_DOMAIN_OPERANDS: dict[tuple[str, str], tuple[Fresh, str]] = {
    ("layout", "contiguous"): _domain_operand("float32", (2, 3)),
    ("layout", "offset"): _domain_operand("float32", (3, 2), "offset"),
    ("layout", "stepped"): _domain_operand("float32", (2, 4), "stepped"),
    ("layout", "permuted"): _domain_operand("float32", (2, 3), "transposed"),
    ("layout", "expanded"): _domain_operand("float32", (1, 3), "expanded"),
    ("layout", "channels_last"): _domain_operand("float32", (1, 2, 2, 2), "channels_last"),
    ("layout", "zero-size"): _domain_operand("float32", (0, 2)),
    ("layout", "0-d"): _domain_operand("float32", ()),
    ("dtype_family", "bool"): _domain_operand("bool", (3,)),
    ("dtype_family", "signed"): _domain_operand("int32", (3,)),
    ("dtype_family", "unsigned"): _domain_operand("uint8", (3,)),
    ("dtype_family", "reduced_float"): _domain_operand("float16", (3,)),
    ("dtype_family", "float"): _domain_operand("float64", (3,)),
    ("dtype_family", "complex"): _domain_operand("complex64", (3,)),
    ("tensor_kind", "plain"): _domain_operand("float32", (2, 3)),
    ("tensor_kind", "leaf"): _domain_operand("float32", (2, 3), requires_grad=True),
    # a view of a leaf that requires grad has a grad_fn (TransposeBackward0)
    ("tensor_kind", "non_leaf"): _domain_operand(
        "float32", (2, 3), "transposed", requires_grad=True
    ),
    ("tensor_kind", "inference"): _domain_operand("float32", (2, 3), inference=True),
    # tensors whose t.numpy() is an array of that ndarray_kind
    ("ndarray_kind", "plain"): _domain_operand("float32", (2, 3)),
    ("ndarray_kind", "non_contiguous"): _domain_operand("float32", (2, 4), "stepped"),
    ("ndarray_kind", "0-d"): _domain_operand("float32", ()),
}


#: Operands at a layout family, a dtype family and a tensor kind at once:
#: ``({dimension: value}, (spec, layout))``. A claim that declares all three
#: dimensions draws them with these eight operands (every layout family,
#: dtype family and tensor kind among them), and :data:`_DOMAIN_OPERANDS`
#: only for the values its exclusions leave uncovered (:func:`_claim_operands`).
_COMBINED_OPERANDS: tuple[tuple[dict[str, str], tuple[Fresh, str]], ...] = (
    (
        {"layout": "contiguous", "dtype_family": "float", "tensor_kind": "leaf"},
        _domain_operand("float64", (2, 3), requires_grad=True),
    ),
    (
        {"layout": "offset", "dtype_family": "signed", "tensor_kind": "plain"},
        _domain_operand("int32", (3, 2), "offset"),
    ),
    (
        {"layout": "stepped", "dtype_family": "complex", "tensor_kind": "non_leaf"},
        _domain_operand("complex64", (2, 4), "stepped", requires_grad=True),
    ),
    (
        {"layout": "permuted", "dtype_family": "bool", "tensor_kind": "plain"},
        _domain_operand("bool", (2, 3), "transposed"),
    ),
    (
        {"layout": "expanded", "dtype_family": "unsigned", "tensor_kind": "inference"},
        _domain_operand("uint8", (1, 3), "expanded", inference=True),
    ),
    (
        {"layout": "channels_last", "dtype_family": "reduced_float", "tensor_kind": "non_leaf"},
        _domain_operand("float16", (1, 2, 2, 2), "channels_last", requires_grad=True),
    ),
    (
        {"layout": "zero-size", "dtype_family": "float", "tensor_kind": "plain"},
        _domain_operand("float32", (0, 2)),
    ),
    (
        {"layout": "0-d", "dtype_family": "reduced_float", "tensor_kind": "leaf"},
        _domain_operand("bfloat16", (), requires_grad=True),
    ),
)
_COMBINED_DIMS = {"layout", "dtype_family", "tensor_kind"}


@cache
def _claim_operands(claim: str) -> tuple[tuple[Fresh, str], ...]:
    """The operands ``(spec, layout)`` that draw every value ``claim``
    declares for its layout, dtype_family and tensor_kind dimensions: the
    :data:`_COMBINED_OPERANDS` wholly inside its domain when it declares all
    three, then the :data:`_DOMAIN_OPERANDS` of each value they leave out
    (grad_mode values are the caller's)."""
    domain = {dim: {str(v) for v in values} for dim, values in _SEQUENCES_DOMAINS[claim]}
    out: list[tuple[Fresh, str]] = []
    covered: set[tuple[str, str]] = set()
    if _COMBINED_DIMS <= set(domain):
        for values, operand in _COMBINED_OPERANDS:
            if all(values[d] in domain[d] for d in _COMBINED_DIMS):
                out.append(operand)
                covered.update(values.items())
    for dim, values in domain.items():
        if dim == "grad_mode":
            continue
        for value in sorted(values):
            if (dim, value) not in covered:
                out.append(_DOMAIN_OPERANDS[(dim, value)])
                covered.add((dim, value))
    return tuple(out)


#: claim id -> its declared domain, read from the shipped claims file (not
#: the registry a run may point elsewhere with TORCH_CONFORMANCE_CLAIMS_DIR).
_SEQUENCES_DOMAINS = {
    c.id: c.domain for c in load_file(CLAIMS_DIR / "sequences.toml")[2] if c.domain
}


def _domain_examples(claim: str, **fixed):
    """Decorator adding one explicit ``@example(spec=..., layout=..., **fixed)``
    per operand of :func:`_claim_operands` (every layout family, dtype
    family and tensor kind ``claim`` declares in ``claims/sequences.toml``,
    several at once where one operand is at them all): every declared value
    is drawn in every Hypothesis profile. Place it above ``@given``. Raises
    ``KeyError`` for a declared value without an operand (a test bug)."""

    def decorate(test):
        for spec, layout in _claim_operands(claim):
            test = example(spec=spec, layout=layout, **fixed)(test)
        return test

    return decorate


def _report_domain(machine: CopySequences, t: TensorModel) -> None:
    """Report the domain values (``conformance/domains.toml``) of the operand
    ``t`` as features: ``layout`` (the set of
    :func:`strategies.domains.layout_kinds` of the real tensor),
    ``dtype_family`` and ``tensor_kind`` (:func:`strategies.domains.tensor_kind_of`)."""
    real = machine.real[t.id]
    evidence.features(
        layout=layout_kinds(real),
        dtype_family=dtype_family(real.dtype),
        tensor_kind=tensor_kind_of(real),
    )


@pytest.mark.claim("sequences.tensor-copies")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(spec=fresh_specs(inference=True), layout=_LAYOUTS)
@example(spec=Fresh("int32", (2,), (1, -2)), layout="contiguous")
@_domain_examples("sequences.tensor-copies")
def test_tensor_of_every_dtype_copies(device, spec, layout):
    """``torch.tensor(t)`` of a tensor of every dtype and layout is a new
    leaf in new memory holding t's values (as the model predicts); every
    declared layout family, dtype family and tensor kind is an explicit
    example (:func:`_domain_examples`).

    Kills: a torch.tensor that aliases (or keeps the history of) some dtypes."""
    machine, t = _operand(device, spec, layout)
    _report_domain(machine, t)
    machine.tensor_of(t)
    machine.agrees_with_model()


@pytest.mark.claim("sequences.as-tensor")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(spec=fresh_specs(inference=True), layout=_LAYOUTS, dtype=st.sampled_from(DTYPES))
@example(spec=Fresh("float32", (1,), (1.5,)), layout="contiguous", dtype="float64")
@_domain_examples("sequences.as-tensor", dtype="float64")
def test_as_tensor_of_every_dtype(device, spec, layout, dtype):
    """``torch.as_tensor(t, dtype=d)`` of a tensor of every dtype, size
    (one-element ones included) and layout: t itself for t's dtype, else a
    copy converted to ``d`` (as the model predicts); every declared layout
    family, dtype family and tensor kind is an explicit example, converted
    to float64 (a copy, except for the float64 operand).

    Kills: an as_tensor that ignores the requested dtype for some inputs."""
    machine, t = _operand(device, spec, layout)
    _report_domain(machine, t)
    machine.convert_as_tensor(t, dtype)
    machine.agrees_with_model()


@pytest.mark.claim("sequences.asarray")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(
    spec=fresh_specs(inference=True),
    layout=_LAYOUTS,
    copy=st.sampled_from([None, False, True]),
    dtype=st.one_of(st.none(), st.sampled_from(DTYPES)),
)
@example(spec=Fresh("int32", (2,), (1, -2)), layout="contiguous", copy=True, dtype=None)
@_domain_examples("sequences.asarray", copy=True, dtype=None)
def test_asarray_of_every_dtype(device, spec, layout, copy, dtype):
    """``torch.asarray(t, dtype=d, copy=c)`` of a tensor of every dtype and
    layout, for every ``copy`` (as the model predicts: t itself, a copy, or
    an error); every declared layout family, dtype family and tensor kind is
    an explicit example, with ``copy=True`` (a copy in t's dtype).

    Kills: an asarray that aliases when told to copy for some dtypes."""
    machine, t = _operand(device, spec, layout)
    _report_domain(machine, t)
    target = dtype or spec.dtype
    real = machine.real[t.id]
    from_grad = real.requires_grad and not (copy is False and target != spec.dtype)
    evidence.features(
        operand_leaf=real.is_leaf,
        returns_input=copy is not True and target == spec.dtype,
        # t requires grad and asarray returns t or a copy (not an error) ...
        # ... that requires grad (t itself, or a copy to a differentiable dtype)
        grad_result=from_grad and target in DIFFERENTIABLE,
        # ... to a dtype that cannot require grad (the model predicts an error)
        grad_to_integral=from_grad and target not in DIFFERENTIABLE,
    )
    machine.convert_asarray(t, copy, dtype)
    machine.agrees_with_model()


#: One NumPy dtype of each dtype family (bfloat16 has none: float16 is the
#: reduced float).
_ARRAY_FAMILY_DTYPES = ("bool", "int32", "uint8", "float16", "float64", "complex64")


def _array_family_examples(shape=(2, 3), **fixed):
    """Decorator adding one explicit ``@example(spec=..., **fixed)`` per
    dtype family, ``spec`` an array of ``shape`` of small exact values: the
    ndarray tests draw every family their claims declare in every profile."""

    def decorate(test):
        for dtype in _ARRAY_FAMILY_DTYPES:
            spec = Fresh(dtype, shape, simple_values(dtype, math.prod(shape)))
            test = example(spec=spec, **fixed)(test)
        return test

    return decorate


def _report_array_domain(machine: CopySequences, a: ArrayModel) -> None:
    """Report the domain values of the ndarray ``a`` as features:
    ``ndarray_kind`` (:func:`conformance.evidence.ndarray_kinds` of the real
    array) and ``dtype_family`` (of the torch dtype of its NumPy dtype)."""
    real = machine.real_arrays[a.id]
    evidence.features(
        ndarray_kind=evidence.ndarray_kinds(real),
        # NumPy's dtype names are torch's for the dtypes both have
        dtype_family=dtype_family(getattr(torch, real.dtype.name)),
    )


@pytest.mark.claim("sequences.asarray-ndarray-shares")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(
    spec=fresh_specs(arrays=True).filter(lambda s: s.shape and 0 not in s.shape),
    via_numpy=st.booleans(),
    layout=st.sampled_from([None, "T", "flip"]),
    copy=st.sampled_from([None, False]),
)
@example(
    spec=Fresh("float64", (2, 3), (0.5,) * 6), via_numpy=False, layout=None, copy=None
)  # fmt: skip
@_array_family_examples(via_numpy=False, layout=None, copy=False)
@_array_family_examples(via_numpy=True, layout="T", copy=None)
def test_asarray_of_ndarray_shares(device, spec, via_numpy, layout, copy):
    """``torch.asarray(a)`` and ``torch.asarray(a, copy=False)`` of an
    ndarray of 1 or more dimensions (fresh or ``t.numpy()``, C-ordered,
    transposed or flipped) share a's memory, or raise for copy=False where
    torch cannot (as the model predicts; 0-d ndarrays are the recorded
    deviation of :func:`test_asarray_copy_false_of_ndarray_shares`); a
    C-ordered and a transposed array of each dtype family are explicit
    examples (:func:`_array_family_examples`).

    Kills: an asarray that copies ndarrays of some ranks or layouts."""
    machine, a = _array_operand(device, spec, via_numpy, layout)
    _report_array_domain(machine, a)
    machine.from_array(a, "asarray" if copy is None else "asarray-no-copy")
    machine.agrees_with_model()


def _array_operand(device: str, spec: Fresh, via_numpy: bool, layout: str | None):
    """A machine and one ndarray in it: ``spec`` made by NumPy or taken as
    ``t.numpy()`` of a tensor (``via_numpy``), then transposed (``"T"``) or
    flipped (``"flip"``); checked against the model. Skips off the CPU
    (NumPy interop is CPU-only)."""
    if device != "cpu":
        pytest.skip("NumPy interop is CPU-only")
    machine = CopySequences(device)
    if via_numpy:
        a = machine.numpy(t=machine.init_tensor(spec))
    else:
        a = machine.make_array(spec=spec)
    if layout == "T":
        a = machine.np_transpose(a)
    elif layout == "flip":
        a = machine.np_flip(a)
    machine.agrees_with_model()
    return machine, a


@pytest.mark.claim("sequences.from-numpy-shares")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(
    spec=fresh_specs(arrays=True).filter(lambda s: 0 not in s.shape),
    via_numpy=st.booleans(),
    layout=st.sampled_from([None, "T"]),
    how=st.sampled_from(["from_numpy", "as_tensor"]),
)
@example(spec=Fresh("float64", (2, 3), (0.5,) * 6), via_numpy=False, layout="T", how="from_numpy")
@example(spec=Fresh("int16", (3, 2), (1,) * 6), via_numpy=True, layout="T", how="as_tensor")
def test_from_numpy_and_as_tensor_share_ndarrays(device, spec, via_numpy, layout, how):
    """``torch.from_numpy(a)`` and ``torch.as_tensor(a)`` of an ndarray of
    any rank, 0-d included (fresh or ``t.numpy()``, C-ordered or transposed)
    share a's memory with a's strides (a flipped one is refused:
    sequences.numpy-negative-strides-raise; the state machine meets both,
    but a run that failed the refusal ends the programs that flip, so this
    test draws the transposed ones directly).

    Kills: a from_numpy or as_tensor that copies ndarrays of some layouts."""
    machine, a = _array_operand(device, spec, via_numpy, layout)
    machine.from_array(a, how)
    machine.agrees_with_model()


@pytest.mark.claim("sequences.write-overlap-raises")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(
    spec=fresh_specs(inference=True),
    op=st.sampled_from(["add_", "mul_", "copy_", "setitem", "fill_", "zero_"]),
    mode=GRAD_MODE_STRATEGY,
    choice=st.integers(0, 15),
)
@example(spec=Fresh("float32", (1, 3), (0.5,) * 3), op="add_", mode="grad", choice=1)
def test_write_to_expanded_tensor(device, spec, op, mode, choice):
    """A write to ``t.expand(2, ...)`` (a stride-0 dimension of size 2) of
    a tensor of every dtype, in every mode: add_, mul_, copy_ and index
    assignment raise, changing nothing; fill_ and zero_ write (as the model
    predicts).

    Kills: an in-place op that skips (or half-does) a write it must refuse."""
    machine, t = _operand(device, spec, "expanded")
    # index assignment t[i] = v writes the row t[i]: do its elements overlap?
    row = list(zip(t.shape[1:], t.strides[1:], strict=True))
    evidence.features(
        overlapping_row=any(n > 1 and s == 0 for n, s in row),
        # an inference tensor written outside inference mode (an error of its own)
        inference_outside=spec.inference and mode != "inference",
    )
    machine._apply(t, op, mode, choice, None)
    machine.agrees_with_model()


def _each_dtype(**kwargs):
    """Explicit examples: one per dtype, a contiguous (3,) tensor of small
    exact values (see :func:`simple_values`) with ``kwargs`` - so every dtype
    is met whatever the derandomized draws are (a dtype is drawn about seven
    times in a hundred examples, some of them holding only Inf or NaN, which
    arithmetic keeps)."""

    def add(test):
        for d in DTYPES:
            test = example(spec=Fresh(d, (3,), simple_values(d, 3)), **kwargs)(test)
        return test

    return add


@pytest.mark.claim("sequences.inplace-arithmetic")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@pytest.mark.parametrize("op", ["add_", "mul_", "fill_", "zero_"])
@given(
    spec=fresh_specs(inference=True),
    layout=_LAYOUTS,
    value=st.sampled_from(SCALARS),
    mode=GRAD_MODE_STRATEGY,
)
@_each_dtype(layout="contiguous", value=2, mode="grad")
@_each_dtype(layout="stepped", value=-1.5, mode="no_grad")
def test_inplace_arithmetic_every_dtype(device, op, spec, layout, value, mode):
    """``op`` with a Python scalar on a tensor of every dtype (each one also
    in explicit examples), layout and mode: computed in the tensor's dtype,
    bit for bit, or refused (as the model predicts).

    Kills: an in-place op that computes wrongly for one dtype."""
    machine, t = _operand(device, spec, layout)
    # every dtype family is drawn by the explicit examples (_each_dtype)
    evidence.features(dtype_family=dtype_family(getattr(torch, spec.dtype)))
    machine.inplace(t, op, value, mode)
    machine.agrees_with_model()


@pytest.mark.claim("sequences.no-grad-untracked")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(
    spec=fresh_specs(requires_grad=True),
    layout=_LAYOUTS,
    op=st.sampled_from(
        ["clone", "copy_", "copy_element_", "fill_", "add_", "mul_", "zero_", "setitem"]
    ),
    choice=st.integers(0, 15),
)
@example(spec=Fresh("float32", (2,), (0.5, 1.0), True), layout="contiguous", op="clone", choice=0)
@_domain_examples("sequences.no-grad-untracked", op="clone", choice=0)
@_domain_examples("sequences.no-grad-untracked", op="add_", choice=0)
def test_no_grad_ops_on_tensor_requiring_grad(device, spec, layout, op, choice):
    """Under ``no_grad``, copies and in-place writes of a tensor that
    requires grad (a leaf or a view of one) record nothing and run no leaf
    check, while writes still bump version counters (as the model predicts);
    a leaf and a non-leaf view are explicit examples (clone and add_).

    Kills: an operation that records history under no_grad."""
    machine, t = _operand(device, spec, layout)
    _report_domain(machine, t)
    machine._apply(t, op, "no_grad", choice, None)
    machine.agrees_with_model()


@pytest.mark.claim("sequences.inplace-records-history")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(
    spec=fresh_specs(),
    non_leaf=st.booleans(),
    layout=_VIEW_LAYOUTS,
    src=fresh_specs(requires_grad=True),
    op=st.sampled_from(["copy_", "copy_element_", "copy_element_", "add_", "mul_", "fill_"]),
)
@example(
    spec=Fresh("float32", (3,), (0.0,) * 3), non_leaf=False, layout="stepped",
    src=Fresh("float32", (2,), (1.0, 1.0), True), op="copy_",
)  # fmt: skip
def test_grad_mode_write_into_view(device, spec, non_leaf, layout, src, op):
    """In grad mode, a write into a view - of a leaf, or of a non-leaf
    ``t * t`` when ``non_leaf`` and t requires grad - from a source that
    requires grad (copy_) or of a scalar: the view's root base gets the new
    history and requires grad, the view's grad_fn is rebuilt from it; a view
    of a leaf that requires grad refuses the write (as the model predicts).

    Kills: a write into a view that records nothing (or skips the leaf check)."""
    machine = CopySequences(device)
    t = machine._fresh(spec)
    if non_leaf and machine.model.requires_grad(t):
        t = machine.square(t)
    dst = machine._view_in(t, layout)
    s = machine._fresh(src)
    assert dst is not None and isinstance(s, TensorModel), "test bug: the operands raised"
    machine.agrees_with_model()
    if op == "copy_":
        machine.copy_(dst, s, "grad")
    elif op == "copy_element_":
        machine.copy_element_(dst, s, "grad")
    else:
        machine.inplace(dst, op, 2, "grad")
    machine.agrees_with_model()


# --------------------------------------------------------------------------
# Documented promises torch departs from (recorded in expectations.toml)
# --------------------------------------------------------------------------

#: View steps for the chains of the deviation tests: (rule, kwargs).
_VIEW_STEPS = st.one_of(
    st.tuples(
        st.just("transpose"),
        st.fixed_dictionaries({"dim0": st.integers(0, 3), "dim1": st.integers(0, 3)}),
    ),
    st.tuples(st.just("permute"), st.fixed_dictionaries({"order": st.permutations(range(4))})),
    st.tuples(
        st.just("slice"),
        st.fixed_dictionaries(
            {"dim": st.integers(0, 3), "start": st.integers(0, 2), "step": st.integers(1, 3)}
        ),
    ),
    st.tuples(st.just("unsqueeze"), st.fixed_dictionaries({"dim": st.integers(0, 4)})),
    st.tuples(
        st.just("select"),
        st.fixed_dictionaries({"dim": st.integers(0, 3), "index": st.integers(0, 1)}),
    ),
)


def _run_chain(device, spec, steps, layout="contiguous"):
    """Build ``spec`` in ``layout`` (:func:`_operand`) and apply the view
    ``steps`` through the state machine (so every step is checked against
    the model); returns (machine, handle).
    Reports the feature ``full_slice``: ``spec`` requires grad and a step
    slices a whole dimension as it runs (start 0 after the machine clamps it
    to the dimension, step 1), which indexing returns as an alias (grad_fn
    AliasBackward0) on recent torch; set before the step runs."""
    evidence.features(full_slice=False)
    machine, h = _operand(device, spec, layout)
    for name, kwargs in steps:
        if name == "slice" and spec.requires_grad and kwargs["step"] == 1:
            # the start the machine's slice rule runs (see CopySequences.slice)
            d = kwargs["dim"] % h.ndim if h.ndim else 0
            start = min(kwargs["start"], max(h.shape[d] - 1, 0)) if h.ndim else kwargs["start"]
            if start == 0:
                evidence.features(full_slice=True)
        out = getattr(machine, name)(t=h, **kwargs)
        if isinstance(out, TensorModel):
            h = out
        machine.agrees_with_model()
    return machine, h


#: (shape, dim, step) with ``shape[dim] > step``: a stepped slice of ``dim``
#: keeps at least two rows and skips the ones between (sides up to 4).
_STEPPABLE = [
    (shape, d, k)
    for n in range(1, 5)
    for shape in itertools.product(range(1, 5), repeat=n)
    if math.prod(shape) <= MAX_NUMEL
    for d in range(n)
    for k in (2, 3)
    if shape[d] > k
]


@st.composite
def _stepped_chains(draw):
    """``(spec, steps)``: a fresh tensor whose ``dim`` is sliced with
    ``step`` (two or more rows kept: the first of ``steps``), then view
    steps that keep that dim with two or more rows - so the result is
    non-dense by construction
    (it holds the slice's first row and skips the next, which lies inside its
    memory span). Transpose/permute/unsqueeze move the dim (tracked here);
    select is drawn on the other dims only, a slice of the dim keeps it whole."""
    shape, dim, step = draw(st.sampled_from(_STEPPABLE))
    spec = draw(fresh_specs(shape=shape))
    sizes = list(shape)
    sizes[dim] = -(-sizes[dim] // step)
    p = dim  # where the stepped dim is now
    steps = [("slice", {"dim": dim, "start": 0, "step": step})]
    for _ in range(draw(st.integers(0, 3))):
        nd = len(sizes)
        others = [d for d in range(nd) if d != p]
        name = draw(st.sampled_from(["transpose", "permute", "slice", "unsqueeze", "select"]))
        if name == "transpose":
            d0, d1 = draw(st.integers(0, nd - 1)), draw(st.integers(0, nd - 1))
            sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
            p = d1 if p == d0 else d0 if p == d1 else p
            steps.append((name, {"dim0": d0, "dim1": d1}))
        elif name == "permute":
            order = draw(st.permutations(range(4)))
            dims = tuple(d for d in order if d < nd) + tuple(range(4, nd))
            sizes, p = [sizes[d] for d in dims], dims.index(p)
            steps.append((name, {"order": order}))
        elif name == "slice":
            d = draw(st.integers(0, nd - 1))
            start, k = (0, 1) if d == p else (draw(st.integers(0, 2)), draw(st.integers(1, 3)))
            start = min(start, sizes[d] - 1)
            sizes[d] = -(-(sizes[d] - start) // k)
            steps.append((name, {"dim": d, "start": start, "step": k}))
        elif name == "unsqueeze":
            d = draw(st.integers(0, nd))
            sizes.insert(d, 1)
            p += d <= p
            steps.append((name, {"dim": d}))
        elif others:  # select on another dim (an out-of-range index raises on both sides)
            d, index = draw(st.sampled_from(others)), draw(st.integers(0, 1))
            if index < sizes[d]:
                del sizes[d]
                p -= d < p
            steps.append((name, {"dim": d, "index": index}))
    return spec, steps


@st.composite
def _expanded_chains(draw):
    """``(spec, steps)``: a fresh tensor with elements expanded with a new
    leading dimension of size 2 (stride 0: overlapping, so non-dense), then
    transpose, permute and unsqueeze steps (which keep that dimension)."""
    spec = draw(fresh_specs().filter(lambda s: 0 not in s.shape))
    nd = len(spec.shape) + 1
    steps: list = [("expand", {"lead": (2,), "grow": 1, "keep_as_minus_one": False, "bad": None})]
    for _ in range(draw(st.integers(0, 2))):
        name = draw(st.sampled_from(["transpose", "permute", "unsqueeze"]))
        if name == "transpose":
            d0, d1 = draw(st.integers(0, nd - 1)), draw(st.integers(0, nd - 1))
            steps.append((name, {"dim0": d0, "dim1": d1}))
        elif name == "permute":
            steps.append((name, {"order": draw(st.permutations(range(4)))}))
        else:
            steps.append((name, {"dim": draw(st.integers(0, nd))}))
            nd += 1
    return spec, steps


def _non_dense_examples(test):
    """Explicit examples of :func:`test_clone_of_non_dense_view_chain_is_contiguous`:
    a stepped and transposed (2, 4) tensor of each declared dtype family and
    an expanded one (every value of the claim's domain, by construction)."""
    stepped = [("slice", {"dim": 1, "start": 0, "step": 2}), ("transpose", {"dim0": 0, "dim1": 1})]
    expanded = [("expand", {"lead": (2,), "grow": 1, "keep_as_minus_one": False, "bad": None})]
    for dtype in ("bool", "int32", "uint8", "float16", "float64", "complex64"):
        spec = Fresh(dtype, (2, 4), simple_values(dtype, 8))
        test = example(chain=(spec, stepped))(test)
    return example(chain=(Fresh("float32", (3,), simple_values("float32", 3)), expanded))(test)


@pytest.mark.claim("sequences.clone-non-dense-contiguous")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(chain=st.one_of(_stepped_chains(), _expanded_chains()))
@_non_dense_examples
def test_clone_of_non_dense_view_chain_is_contiguous(device, chain):
    """The documented promise, in sequences: after a stepped slice and a chain
    of view ops, a preserve_format clone of a non-dense result is row-major
    (the model's documented rule). Torch keeps the stride order instead
    (recorded deviation; the machine encodes the observed rule). The chains
    are non-dense by construction: stepped (:func:`_stepped_chains`) or
    expanded (:func:`_expanded_chains`).

    Kills: a clone that keeps non-dense strides, or one that is not dense."""
    spec, steps = chain
    machine, h = _run_chain(device, spec, steps)
    _report_domain(machine, h)
    assert not is_non_overlapping_and_dense(h.shape, h.strides), (
        f"test bug: the chain's result is dense (shape {h.shape}, strides {h.strides})"
    )
    evidence.features(
        observed_rule_row_major=is_contiguous(
            h.shape, Model().preserve_format_strides(h.shape, h.strides)
        )
    )
    documented = Model(docs=True).preserve_format_strides(h.shape, h.strides)
    assert is_contiguous(h.shape, documented)  # the documented rule: row-major
    got = machine.real[h.id].clone().stride()
    assert is_contiguous(h.shape, got), (
        f"clone() of a non-dense tensor is not contiguous: strides {got} for shape {h.shape}"
    )


@pytest.mark.claim("sequences.detach-is-view")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(spec=fresh_specs(), layout=_LAYOUTS, steps=st.lists(_VIEW_STEPS, max_size=3))
@_domain_examples("sequences.detach-is-view", steps=[])
def test_detach_of_view_chain_is_a_view(device, spec, layout, steps):
    """The documented promise, in sequences: detach() of a tensor in any
    layout reached by any chain of view ops is a view of the chain's root
    (detach is on the Tensor Views list); every declared layout family,
    dtype family and tensor kind is an explicit example. Torch makes it an
    untracked alias (recorded deviation; the machine encodes the observed
    rule).

    Kills: a detach that is tracked as a view of the wrong base."""
    machine, h = _run_chain(device, spec, steps, layout)
    _report_domain(machine, h)
    machine.model.docs = True
    predicted = machine.model.detach(h)
    d = machine.real[h.id].detach()
    assert d._is_view() == machine.model.is_view(predicted), "detach() result is not a view"
    assert d._base is machine.real[predicted.base.id], (
        "detach() result is not a view of the root base"
    )


@pytest.mark.claim("sequences.asarray-ndarray-shares")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(spec=fresh_specs(arrays=True).filter(lambda s: 0 not in s.shape), via_numpy=st.booleans())
@_array_family_examples(via_numpy=False)
@_array_family_examples(shape=(), via_numpy=True)
def test_asarray_copy_false_of_ndarray_shares(device, spec, via_numpy):
    """The documented promise, in sequences: ``torch.asarray(a, copy=False)``
    of an ndarray - fresh, or ``t.numpy()`` of a tensor - shares its memory
    (or raises). Torch silently copies 0-d ndarrays (recorded deviation; the
    machine encodes the observed rule, sequences.asarray-0d-ndarray-copies).
    Empty arrays are left out: their memory has no address to compare. An
    array of each dtype family, C-ordered and 0-d, is an explicit example.

    Kills: an asarray that copies an ndarray it was told to alias."""
    if device != "cpu":
        pytest.skip("NumPy interop is CPU-only")
    machine = CopySequences(device)
    evidence.features(ndim=len(spec.shape))
    if via_numpy:
        a = machine.numpy(t=machine.init_tensor(spec))
    else:
        a = machine.make_array(spec=spec)
    machine.agrees_with_model()
    _report_array_domain(machine, a)
    arr = machine.real_arrays[a.id]
    machine.model.docs = True
    predicted = machine.model.asarray_array(a, copy=False)
    with quiet():
        got = torch.asarray(arr, copy=False)
    expected = arr.__array_interface__["data"][0] + (predicted.start - a.start) * arr.itemsize
    assert predicted.buffer is a.buffer  # the documented rule: shared memory
    assert got.data_ptr() == expected, (
        "asarray(ndarray, copy=False) does not share the array's memory"
    )


# --------------------------------------------------------------------------
# Each declared domain value of the machine's claims, once (issue 29)
# --------------------------------------------------------------------------
# The machine's programs meet every layout family, dtype family, tensor kind
# and grad mode only by chance. After its programs, test_copy_sequences runs
# one fixed case per value each of its claims declares (claims/sequences.toml):
# the claim's operation, through a fresh machine (the model predicts, torch
# runs, the whole state is compared as after any step), on an operand at
# that value - the same cases in every profile, so every run of the machine
# draws its claims' whole declared domain by construction. Each case is an
# example of its own (its features, its claim); a failure is the machine's,
# blamed and muted like a program's.

#: The grad mode an operation runs in (:data:`GRAD_MODES`), by grad_mode domain value.
_MODE_BY_GRAD_MODE_VALUE = {"enabled": "grad", "no_grad": "no_grad", "inference_mode": "inference"}
#: The int32 source of new_tensor and copy_ (exact in every dtype, bool included).
_CASE_SOURCE = Fresh("int32", (3,), (0, 1, 2))
#: A 0-d source that requires grad (broadcasts to every operand).
_GRAD_SOURCE = Fresh("float32", (), (2.0,), requires_grad=True)
#: A source whose shape broadcasts to no operand's (copy-broadcast-raises).
_UNBROADCASTABLE_SOURCE = Fresh("int32", (5,), (0, 1, 2, 3, 4))


#: The float32 (2, 3) operand of a claim's grad_mode cases, where not a
#: plain tensor: an inference tensor, or a leaf that requires grad.
_GRAD_MODE_OPERAND = {
    "sequences.inference-inplace-raises": {"inference": True},
    "sequences.inference-aliases": {"inference": True},
    "sequences.inference-tensors": {"inference": True},
    "sequences.leaf-and-grad-fn": {"requires_grad": True},
}


#: Machine claims whose declared domain their own tests draw (explicit
#: examples), not :func:`_domain_cases`: claim -> why.
_DOMAIN_BY_OWN_TESTS = {
    "sequences.asarray-ndarray-shares": (
        "the machine encodes the observed rule, under which torch.asarray copies a 0-d"
        " ndarray (sequences.asarray-0d-ndarray-copies), so a case of its own could not"
        " check the documented sharing at 0-d; test_asarray_of_ndarray_shares and"
        " test_asarray_copy_false_of_ndarray_shares check the documented rule and draw"
        " every declared dtype family and ndarray kind as explicit examples"
    ),
}


def _domain_cases():
    """``(claim, spec, layout, mode)``: one case per value each claim of the
    machine declares - the operand of :data:`_DOMAIN_OPERANDS` in grad
    mode, or for a grad_mode value a float32 (2, 3) tensor (an inference one
    or a leaf that requires grad: :data:`_GRAD_MODE_OPERAND`) in that mode."""
    for claim in MACHINE_CLAIMS:
        if claim not in _SEQUENCES_DOMAINS or claim in _DOMAIN_BY_OWN_TESTS:
            continue
        for spec, layout in _claim_operands(claim):
            yield claim, spec, layout, "grad"
        for dim, values in _SEQUENCES_DOMAINS[claim]:
            if dim == "grad_mode":
                spec, layout = _domain_operand(
                    "float32", (2, 3), **_GRAD_MODE_OPERAND.get(claim, {})
                )
                for value in values:
                    yield claim, spec, layout, _MODE_BY_GRAD_MODE_VALUE[value]


def _check_domain_cases(device: str) -> None:
    """Run every case of :func:`_domain_cases`, each as an example of its own
    (:func:`conformance.evidence.example_frame`) folded into the running
    test's ledger: it credits its claim alone, with the domain values of its
    operand as features. A case that ends at a violation of a claim the run
    already failed (muted) is recorded by the machine and credits nothing;
    any other failure raises, as a program's would."""
    led = evidence.current_ledger()
    for claim, spec, layout, mode in _domain_cases():
        with evidence.example_frame() as ex:
            checked = _domain_case(device, claim, spec, layout, mode)
        if checked and led is not None:
            led.finish_example(ex, passed=True)


def _domain_case(device: str, claim: str, spec: Fresh, layout: str, mode: str) -> bool:
    """One case: ``claim``'s operation (:func:`_run_case`) on ``spec`` in
    ``layout``, in ``mode``. Returns whether it checked ``claim`` and found
    it held; raises AssertionError where torch and the model disagree (the
    message starts with the claim of the check that failed) and, as a test
    bug, where the steps did not check ``claim``."""
    machine, t = _operand(device, spec, layout)
    _report_domain(machine, t)
    evidence.features(grad_mode={v: k for k, v in _MODE_BY_GRAD_MODE_VALUE.items()}[mode])
    machine.checked.clear()
    # The claims of refusals, where the operation is allowed (add_ inside
    # inference_mode; fill_(-1.5) of a dtype it does not overflow: every
    # family but the unsigned one): the model predicts success and its step
    # cites the operation's claims, not the refusal's. Torch agreeing checks
    # the claim; torch raising violates it (not the operation's claims).
    allowed = (claim == "sequences.inference-inplace-raises" and mode == "inference") or (
        claim == "sequences.dtype-support" and not spec.dtype.startswith("uint")
    )
    machine.allowed_by = claim if allowed else None
    machine.case_claim = claim
    try:
        _run_case(machine, claim, t, mode)
    except UnsatisfiedAssumption:
        return False  # the machine recorded a violation of a muted claim and stopped
    except AssertionError as e:
        refused = allowed and "the model predicts success" in str(e)
        if isinstance(e, evidence.ClaimViolation) or not refused:
            raise
        evidence.check(claim, False, str(e))
        return False  # recorded: the claim is muted
    if claim in machine.violated:
        return False
    assert claim in machine.checked or allowed, f"test bug: the case did not check {claim}"
    evidence.checked(claim)
    return True


def _run_case(machine: CopySequences, claim: str, t: TensorModel, mode: str) -> None:
    """The operation of ``claim`` on ``t`` (in ``mode`` where it has one),
    the state checked after each step: ``t.clone()`` (clone-copies, and
    clone-non-dense-keeps-stride-order of a stepped or expanded ``t``),
    ``t.clone`` in each memory format, ``torch.tensor(t)``,
    ``t.new_tensor(int32 source)``, ``torch.as_tensor(t, dtype=torch.float64)``,
    ``torch.asarray(t, copy=True)``, ``t.to(t.dtype)`` and
    ``t.to(t.dtype, copy=True)``, ``t.contiguous()``, ``t.detach()``,
    ``t.data``, ``t.copy_(int32 source)``, ``t[0] = 2``, ``t.mul_(2)``,
    ``t.clone()`` under no_grad (no-grad-untracked), ``.grad`` of a leaf
    ``t.detach().requires_grad_()`` after two ``leaf.sum().backward()``
    (grad-layout), ``t.add_(1)`` of an inference tensor
    (inference-inplace-raises), ``t.fill_(-1.5)`` (dtype-support: refused for
    the unsigned family only), ``t.sum().backward()`` (backward-needs-grad),
    ``t.requires_grad_(True)`` then ``(False)`` (requires-grad-flag),
    ``t.detach_()`` (detach-inplace: refused for a view), ``t.retain_grad()``
    then ``t.sum().backward()`` (retain-grad), ``d = t.detach()``, a view of
    ``d`` and ``d.detach_()`` (detach-untracked-alias), ``t.numpy()``
    (numpy-shares), ``t.expand`` valid then with a leading -1
    (expand-geometry), ``t.view`` and ``t.reshape`` to three factorizations
    of its size (view-compatibility, reshape-view-or-copy), ``t.transpose(0,
    1)`` and ``t.unsqueeze(0)`` (views-alias-base), ``t.copy_`` of a (5,)
    source (copy-broadcast-raises), ``t.select(0, 3)`` past every operand's
    first dimension, and a slice of a 0-d ``t`` (view-index-errors),
    ``t.detach().fill_(1)`` (version-counter, writes-visible), and on ``t``
    when it requires grad, else on ``t.detach().requires_grad_()``: index
    assignment and ``mul_(2)`` (leaf-inplace-raises: a leaf or a view of
    one), two ``sum().backward()`` (grad-accumulates), ``t.clone()`` and
    ``t.to(torch.int64)`` (leaf-and-grad-fn), ``t.clone()`` and ``t.mul_(2)``
    (inference-tensors), ``t.detach().fill_(1)`` and ``t.clone()`` of an
    inference ``t`` (inference-aliases), ``t.copy_`` of a 0-d source that
    requires grad then ``t.mul_(2)``, through ``t.detach()`` where ``t`` is a
    leaf that requires grad or a view of one (inplace-records-history), a
    view ``t.transpose(0, 1)``, ``t.requires_grad_(True)``,
    ``t.detach().fill_(1)`` and ``t.detach_()`` (view-autograd-follows-base),
    ``e = t.expand(2, *t.shape)``, ``e.copy_(int32 source)`` (refused) and
    ``e.fill_(1)`` (allowed; write-overlap-raises), ``a = t.numpy()`` then
    ``torch.from_numpy(a)``, ``torch.as_tensor(a)``, ``torch.asarray(a,
    copy=True)`` and ``torch.tensor(a)`` (from-numpy-shares), the same four
    calls (``asarray`` without ``copy``) of ``t.numpy()[::-1]`` and
    ``t.unsqueeze(0).numpy()[::-1]`` (numpy-negative-strides-raise), and
    of the 0-d ``t[0].numpy()`` (``t.numpy()`` of a 0-d ``t``):
    ``torch.asarray`` with ``copy`` None and False, ``torch.from_numpy`` and
    ``torch.as_tensor`` (asarray-0d-ndarray-copies)."""
    if claim in ("sequences.clone-copies", "sequences.clone-non-dense-keeps-stride-order"):
        machine.clone(t, "preserve", mode)
    elif claim == "sequences.clone-memory-format":
        for memory_format in FORMATS:
            machine.clone(t, memory_format, mode)
            machine.agrees_with_model()
    elif claim == "sequences.tensor-copies":
        machine.tensor_of(t)
    elif claim == "sequences.new-tensor-copies":
        machine.new_tensor(t, machine._fresh(_CASE_SOURCE))
    elif claim == "sequences.as-tensor":
        machine.convert_as_tensor(t, "float64")
    elif claim == "sequences.asarray":
        machine.convert_asarray(t, True, None)
    elif claim == "sequences.to-self-or-copy":
        machine.to(t, None, False)
        machine.agrees_with_model()
        machine.to(t, None, True)
    elif claim == "sequences.contiguous-self-or-copy":
        machine.contiguous(t)
    elif claim == "sequences.detach-shares":
        machine.detach(t)
    elif claim == "sequences.data-untracked-alias":
        machine.data(t)
    elif claim == "sequences.copy-in-place":
        machine.copy_(t, machine._fresh(_CASE_SOURCE), mode)
    elif claim == "sequences.index-assignment-in-place":
        machine.setitem(t, 0, 2, mode)
    elif claim == "sequences.inplace-arithmetic":
        machine.inplace(t, "mul_", 2, mode)
    elif claim == "sequences.no-grad-untracked":
        machine.clone(t, "preserve", "no_grad")
    elif claim == "sequences.grad-layout":
        leaf = machine.detach(t)
        assert isinstance(leaf, TensorModel), "test bug: detach() raised"
        machine.autograd(leaf, "requires_grad_(True)")
        for _ in range(2):
            machine.agrees_with_model()
            machine.autograd(leaf, "sum().backward()")
    elif claim == "sequences.inference-inplace-raises":
        machine.inplace(t, "add_", 1, mode)
    elif claim == "sequences.dtype-support":
        machine.inplace(t, "fill_", -1.5, mode)
    elif claim == "sequences.backward-needs-grad":
        machine.autograd(t, "sum().backward()")
    elif claim == "sequences.requires-grad-flag":
        machine.autograd(t, "requires_grad_(True)")
        machine.agrees_with_model()
        machine.autograd(t, "requires_grad_(False)")
    elif claim == "sequences.detach-inplace":
        machine.autograd(t, "detach_()")
    elif claim == "sequences.retain-grad":
        machine.autograd(t, "retain_grad()")
        machine.agrees_with_model()
        machine.autograd(t, "sum().backward()")
    elif claim == "sequences.detach-untracked-alias":
        alias = machine.detach(t)
        assert isinstance(alias, TensorModel), "test bug: detach() raised"
        machine.agrees_with_model()
        machine.transpose(alias, 0, 1)
        machine.agrees_with_model()
        machine.autograd(alias, "detach_()")
    elif claim == "sequences.numpy-shares":
        machine.numpy(t)
    elif claim == "sequences.expand-geometry":
        machine.expand(t, (2,), 2, True, None)
        machine.agrees_with_model()
        machine.expand(t, (), 1, False, "leading-minus-one")
    elif claim == "sequences.view-compatibility":
        for choice in range(3):
            machine.view(t, choice)
            machine.agrees_with_model()
    elif claim == "sequences.reshape-view-or-copy":
        for choice in range(3):
            machine.reshape(t, choice)
            machine.agrees_with_model()
    elif claim == "sequences.views-alias-base":
        machine.transpose(t, 0, 1)
        machine.agrees_with_model()
        machine.unsqueeze(t, 0)
    elif claim == "sequences.copy-broadcast-raises":
        machine.copy_(t, machine._fresh(_UNBROADCASTABLE_SOURCE), mode)
    elif claim == "sequences.view-index-errors":
        machine.select(t, 0, 3)
        if not t.ndim:
            machine.agrees_with_model()
            machine.slice(t, 0, 0, 1)
    elif claim in ("sequences.version-counter", "sequences.writes-visible"):
        alias = machine.detach(t)
        assert isinstance(alias, TensorModel), "test bug: detach() raised"
        machine.agrees_with_model()
        machine.inplace(alias, "fill_", 1, mode)
    elif claim == "sequences.leaf-and-grad-fn":
        machine.clone(t, "preserve", mode)
        machine.agrees_with_model()
        machine.to(t, "int64", False)
    elif claim == "sequences.inference-tensors":
        machine.clone(t, "preserve", mode)
        machine.agrees_with_model()
        machine.inplace(t, "mul_", 2, mode)
    elif claim == "sequences.inference-aliases":
        alias = machine.detach(t)
        assert isinstance(alias, TensorModel), "test bug: detach() raised"
        machine.agrees_with_model()
        machine.inplace(alias, "fill_", 1, mode)
        machine.agrees_with_model()
        machine.clone(t, "preserve", mode)
    elif claim == "sequences.inplace-records-history":
        # a leaf that requires grad and its views refuse writes in grad mode
        # (leaf-inplace-raises): such a t is written through t.detach()
        real = machine.real[t.id]
        root = real if real._base is None else real._base
        dst = t
        if real.requires_grad and root.is_leaf:
            dst = machine.detach(t)
            assert isinstance(dst, TensorModel), "test bug: detach() raised"
            _report_domain(machine, dst)  # what is written
            machine.agrees_with_model()
        machine.copy_(dst, machine._fresh(_GRAD_SOURCE), mode)
        machine.agrees_with_model()
        machine.inplace(dst, "mul_", 2, mode)
    elif claim == "sequences.view-autograd-follows-base":
        machine.transpose(t, 0, 1)
        machine.agrees_with_model()
        machine.autograd(t, "requires_grad_(True)")
        machine.agrees_with_model()
        alias = machine.detach(t)
        assert isinstance(alias, TensorModel), "test bug: detach() raised"
        machine.agrees_with_model()
        machine.inplace(alias, "fill_", 1, mode)
        machine.agrees_with_model()
        machine.autograd(t, "detach_()")
    elif claim == "sequences.write-overlap-raises":
        # a new leading dimension of size 2 has stride 0: t expanded, whatever t is
        written = machine.expand(t, (2,), 1, False, None)
        assert isinstance(written, TensorModel), "test bug: expand() raised"
        _report_domain(machine, written)  # what is written
        machine.agrees_with_model()
        machine.copy_(written, machine._fresh(_CASE_SOURCE), mode)
        machine.agrees_with_model()
        machine.inplace(written, "fill_", 1, mode)
    elif claim == "sequences.from-numpy-shares":
        a = machine.numpy(t)
        assert isinstance(a, ArrayModel), "test bug: numpy() raised"
        evidence.features(ndarray_kind=evidence.ndarray_kinds(machine.real_arrays[a.id]))
        for how in ("from_numpy", "as_tensor", "asarray-copy", "tensor"):
            machine.agrees_with_model()
            machine.from_array(a, how)
    elif claim == "sequences.numpy-negative-strides-raise":
        # a[::-1] of t.numpy() (non-contiguous for a first dimension of size
        # > 1) and of t.unsqueeze(0).numpy() (reversed along a size-1 axis: a
        # negative stride, yet C-contiguous to NumPy for a contiguous t)
        kinds: set[str] = set()
        for u in (t, machine.unsqueeze(t, 0)):
            assert isinstance(u, TensorModel), "test bug: unsqueeze() raised"
            machine.agrees_with_model()
            a = machine.numpy(u)
            assert isinstance(a, ArrayModel), "test bug: numpy() raised"
            flipped = machine.np_flip(a)
            assert isinstance(flipped, ArrayModel), "test bug: a[::-1] raised"
            kinds |= evidence.ndarray_kinds(machine.real_arrays[flipped.id])
            for how in ("from_numpy", "as_tensor", "asarray", "tensor"):
                machine.agrees_with_model()
                machine.from_array(flipped, how)
        evidence.features(ndarray_kind=frozenset(kinds))
    elif claim == "sequences.asarray-0d-ndarray-copies":
        element = machine.select(t, 0, 0) if t.ndim else t
        assert isinstance(element, TensorModel), "test bug: select() raised"
        machine.agrees_with_model()
        a = machine.numpy(element)
        assert isinstance(a, ArrayModel), "test bug: numpy() raised"
        evidence.features(ndarray_kind=evidence.ndarray_kinds(machine.real_arrays[a.id]))
        for how in ("asarray", "asarray-no-copy", "from_numpy", "as_tensor"):
            machine.agrees_with_model()
            machine.from_array(a, how)
    elif claim in ("sequences.leaf-inplace-raises", "sequences.grad-accumulates"):
        # leaf-inplace-raises writes a leaf that requires grad or a view of
        # one; a t that is neither (a channels_last copy of a leaf) is made one
        real = machine.real[t.id]
        root = real if real._base is None else real._base
        leaf = t
        if not real.requires_grad or (claim.endswith("raises") and not root.is_leaf):
            leaf = machine.detach(t)
            assert isinstance(leaf, TensorModel), "test bug: detach() raised"
            machine.autograd(leaf, "requires_grad_(True)")
            _report_domain(machine, leaf)  # what is written or reached
        for _ in range(2):
            machine.agrees_with_model()
            if claim == "sequences.leaf-inplace-raises":
                machine.setitem(leaf, 0, 2, mode)
                machine.agrees_with_model()
                machine.inplace(leaf, "mul_", 2, mode)
            else:
                machine.autograd(leaf, "sum().backward()")
    else:
        raise AssertionError(f"test bug: no domain case for {claim}")
    machine.agrees_with_model()
