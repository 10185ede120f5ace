"""Sequences of copy operations checked against the executable reference model
(claims in ``claims/sequences.toml``, model in ``conformance/model/``).

:class:`CopySequences` is a Hypothesis ``RuleBasedStateMachine`` that drives
real torch and :class:`conformance.model.Model` side by side: one rule per
operation (copies, aliases, views, in-place writes under grad mode and
``no_grad``, ``requires_grad_``, ``backward``, NumPy interop). Every rule first
asks the model - which predicts the result or the exception - then runs torch,
and fails when torch raises where the model predicts success or the other way
round. After every step the invariant compares every live tensor and ndarray
with the model: dtype, shape, strides, storage offset, the partition by
storage (``untyped_storage().data_ptr()``), memory addresses, exact
``_version`` and the partition by version counter (bump one counter with
``torch.autograd.graph.increment_version`` and observe the others, the model
accounting for the bump), ``requires_grad``, ``grad_fn is None``, ``is_leaf``,
``_is_view()``/``_base``, and the values (the model's shadow memory).

A failure shrinks to a short program, printed by Hypothesis as runnable
Python (``state = CopySequences()`` then one ``state.<rule>(...)`` per step;
``Fresh(...)`` arguments are runnable reprs). The assertion message starts
with the claim the failing rule cites, and ends with the same program as
plain torch calls.

Where torch departs from its docs the machine follows the observed behaviour
(a characterization claim) and small separate tests below check the
documented promise; those are recorded in ``expectations.toml``.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import warnings
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, example, given, reject, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable, UnsatisfiedAssumption
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from conformance import capabilities as cap
from conformance import evidence
from conformance.checks import element_bytes
from conformance.model import (
    CLAIM_IDS,
    DIFFERENTIABLE,
    DTYPES,
    MSG,
    UNSIGNED,
    WAIVABLE,
    ArrayModel,
    Model,
    Raises,
    TensorModel,
    bf16_bits,  # noqa: F401 - the printed programs use it
    contiguous_strides,
    infer_dense_strides,
    is_contiguous,
    is_non_overlapping_and_dense,
    storage_values,
)
from conformance.model.values import decode, storage_dtype
from conformance.registry import CLAIMS_DIR, load_file
from strategies.dtypes import dtype_family
from strategies.graphs import GRAD_MODES
from strategies.tensors import layout_kinds, tensor_kind_of

#: Claims the machine checks (the documented-but-deviating ones have their own tests).
DOCS_ONLY = ("sequences.clone-non-dense-contiguous", "sequences.detach-is-view")
MACHINE_CLAIMS = tuple(c for c in CLAIM_IDS if c not in DOCS_ONLY)

#: The claims about the history an operation records. A tensor whose
#: requires_grad, grad_fn or is_leaf differs from the model's after a step that
#: cites one of them fails that claim, not the step's first claim: a failure
#: is blamed on the claim of the check that failed alone, so an unrecorded
#: copy_ into a view is a violation of sequences.inplace-records-history even
#: when sequences.copy-in-place (the step's first claim) failed earlier.
HISTORY_CLAIMS = (
    "sequences.inplace-records-history",
    "sequences.no-grad-untracked",
    "sequences.view-autograd-follows-base",
)

#: Which claim a failing check of the invariant blames: the first claim of
#: its aspect's list that the step cites, else the step's first claim (the
#: operation's own). Each list holds the claims whose statements speak of
#: that aspect, the most specific first; a check of an aspect the step's
#: other claims do not state is never blamed on them (issue 28, item 3).
ASPECT_CLAIMS: dict[str, tuple[str, ...]] = {
    # shape, strides, storage offset of a result (its dtype is the operation's)
    "geometry": ("sequences.clone-non-dense-keeps-stride-order", "sequences.clone-memory-format"),
    # the partition by storage, addresses, memory kept apart
    "storage": (
        "sequences.asarray-0d-ndarray-copies",
        "sequences.asarray-ndarray-shares",
        "sequences.from-numpy-shares",
        "sequences.numpy-shares",
    ),
    # _is_view() and _base
    "view": (
        "sequences.detach-untracked-alias",
        "sequences.data-untracked-alias",
        "sequences.inference-aliases",
        "sequences.views-alias-base",
    ),
    # requires_grad, grad_fn is None, is_leaf
    "history": HISTORY_CLAIMS,
    # the exact _version of a tensor
    "version": ("sequences.inference-aliases", "sequences.version-counter"),
    # a write that reached none of the memory it should have changed
    "unwritten": ("sequences.writes-visible",),
}

MAX_TENSORS = 16  # live tensor objects per program (keeps every step cheap)
MAX_ARRAYS = 8
#: Focus rules may exceed MAX_TENSORS by this many tensors they make.
FOCUS_EXTRA = 4
MAX_NUMEL = 12

FORMATS = {
    "preserve": torch.preserve_format,
    "contiguous": torch.contiguous_format,
    "channels_last": torch.channels_last,
}
SCALARS = (1, -1, 2, 0.5, -1.5)

# --------------------------------------------------------------------------
# Argument strategies (their reprs are runnable)
# --------------------------------------------------------------------------

SHAPES_BY_NDIM = {
    n: [s for s in itertools.product(range(1, 4), repeat=n) if math.prod(s) <= MAX_NUMEL]
    for n in range(5)
}
#: Zero-size shapes (one or more dims of size 0), drawn one time in nine.
SHAPES_BY_NDIM["zero-size"] = [(0,), (0, 2), (3, 0), (2, 0, 3), (1, 0, 2, 2)]
shapes = st.sampled_from([0, 1, 2, 2, 3, 3, 3, 4, "zero-size"]).flatmap(
    lambda n: st.sampled_from(SHAPES_BY_NDIM[n])
)
#: Special values (exact in float32, float64 and each complex64 part) that
#: replace the outermost halves, so the choice sequence Hypothesis draws for a
#: program is the same as with plain halves: the programs (rules, tensors)
#: stay the same and only values change. Every copy must keep them bit for
#: bit; in-place arithmetic by SCALARS keeps them or overflows identically
#: in the model (NumPy) and torch.
_F32 = torch.finfo(torch.float32)
_SPECIAL_HALVES = {
    -8: -0.0,
    8: math.inf,
    -7: -math.inf,
    7: math.nan,
    -6: -math.nan,
    6: _F32.tiny * _F32.eps,  # the smallest float32 subnormal
    -5: -_F32.max,
    5: _F32.max,
}


def _halves_of(dtype: torch.dtype):
    """Halves in [-4, 4] and the special values of ``dtype`` (its smallest
    subnormal and largest finite value; exact in it)."""
    info = torch.finfo(dtype)
    special = dict(_SPECIAL_HALVES)
    special[6] = info.smallest_normal * info.eps  # the smallest subnormal
    special[5], special[-5] = info.max, -info.max
    return st.integers(-8, 8).map(lambda k: special.get(k, k / 2))


def _integers_of(dtype: str):
    """Small integers and the extremes of ``dtype``."""
    info = torch.iinfo(getattr(torch, dtype))
    low = max(info.min, -4)
    return st.integers(low - 1, 5).map(
        lambda k: info.min if k == low - 1 else info.max if k == 5 else k
    )


_halves = _halves_of(torch.float32)
ELEMENTS = {
    "bool": st.booleans(),
    **{d: _integers_of(d) for d in ("int8", "int16", "int32", "int64")},
    **{d: _integers_of(d) for d in ("uint8", "uint16", "uint32", "uint64") if hasattr(torch, d)},
    "float16": _halves_of(torch.float16),
    "bfloat16": _halves_of(torch.bfloat16),
    "float32": _halves,
    "float64": _halves,
    "complex64": st.builds(complex, _halves, _halves),
    "complex128": st.builds(complex, _halves, _halves),
}
#: bool and the integral dtypes.
#: The model knows every dtype; the machine draws those this torch has
#: (uint16/uint32/uint64 exist from torch 2.3 on).
DTYPES = tuple(d for d in DTYPES if hasattr(torch, d))
NON_DIFFERENTIABLE = tuple(d for d in DTYPES if d not in DIFFERENTIABLE)
#: dtypes NumPy has (arrays are drawn from these).
NUMPY_DTYPES = tuple(d for d in DTYPES if d != "bfloat16")


def _values_repr(values) -> str:
    """Runnable Python for a list of values (NaN, Inf, -0.0 and complex
    values with special parts included; see ``strategies.scalar_repr``)."""
    from strategies.tensors import scalar_repr

    return f"[{', '.join(scalar_repr(v) for v in values)}]"


@dataclass(frozen=True)
class Fresh:
    """A fresh tensor or array: ``np.array(values, dtype).reshape(shape)``
    (bfloat16: built from its bits), made inside inference_mode when
    ``inference``."""

    dtype: str
    shape: tuple[int, ...]
    values: tuple
    requires_grad: bool = False
    inference: bool = False

    def __repr__(self) -> str:
        return (
            f"Fresh(dtype={self.dtype!r}, shape={self.shape!r}, values={_values_repr(self.values)}, "
            f"requires_grad={self.requires_grad!r}, inference={self.inference!r})"
        )

    def array(self) -> np.ndarray:
        return storage_values(self.dtype, self.values).reshape(self.shape)

    def tensor(self, device: str) -> torch.Tensor:
        """The tensor, bit for bit (NaN signs and payloads included); a
        zero-size one by ``torch.empty`` (``torch.tensor`` would keep the
        all-zero strides NumPy 2 gives empty arrays)."""
        if 0 in self.shape:
            return torch.empty(self.shape, dtype=getattr(torch, self.dtype), device=device)
        if self.dtype == "bfloat16":
            bits = torch.from_numpy(self.array().view(np.int16).copy())
            return bits.view(torch.bfloat16).clone().to(device)
        return torch.tensor(self.array(), device=device)

    def code(self) -> str:
        """The torch call that builds it (for the printed program)."""
        if 0 in self.shape:
            return f"torch.empty({self.shape!r}, dtype=torch.{self.dtype})"
        if self.dtype == "bfloat16":
            return (
                f"torch.from_numpy(bf16_bits(np.array({_values_repr(self.values)}, dtype='float32'))"
                f".view(np.int16)).view(torch.bfloat16).reshape({self.shape!r}).clone()"
            )
        return (
            f"torch.tensor(np.array({_values_repr(self.values)}, dtype={self.dtype!r})"
            f".reshape({self.shape!r}))"
        )


@st.composite
def fresh_specs(
    draw, *, arrays: bool = False, requires_grad: bool | None = None, shape=None,
    inference: bool = False, dtypes: tuple[str, ...] | None = None,
) -> Fresh:  # fmt: skip
    """Fresh tensors of every dtype (``requires_grad=True``: differentiable
    leaves that require grad; ``None``: either, for differentiable dtypes),
    of a drawn shape or the given ``shape``; arrays of every NumPy dtype;
    ``dtypes`` narrows the pool; ``inference``: maybe made inside
    inference_mode (then never requiring grad)."""
    pool = sorted(DIFFERENTIABLE) if requires_grad else NUMPY_DTYPES if arrays else DTYPES
    if dtypes is not None:
        pool = [d for d in pool if d in dtypes]
    dtype = draw(st.sampled_from(pool))
    shape = draw(shapes) if shape is None else shape
    n = math.prod(shape)
    values = tuple(draw(st.lists(ELEMENTS[dtype], min_size=n, max_size=n)))
    inf = inference and draw(st.sampled_from([False, False, False, True]))
    if requires_grad is None:
        rg = not arrays and not inf and dtype in DIFFERENTIABLE and draw(st.booleans())
    else:
        rg = requires_grad
    return Fresh(dtype, tuple(shape), values, rg, inf)


@cache
def factorizations(numel: int) -> tuple[tuple[int, ...], ...]:
    """Every shape of 0-4 dims with ``numel`` elements (the view/reshape targets)."""

    def split(n: int, dims: int):
        if dims == 0:
            if n == 1:
                yield ()
            return
        for d in range(1, n + 1):
            if n % d == 0:
                for rest in split(n // d, dims - 1):
                    yield (d, *rest)

    if numel == 0:
        return ((0,), (0, 1), (1, 0), (0, 2), (2, 0), (0, 3), (3, 0), (2, 0, 3), (0, 0))
    return tuple(s for dims in range(5) for s in split(numel, dims))


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else ""


@contextlib.contextmanager
def _quiet():
    """Hide torch's copy-construct / asarray / complex-cast warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


#: The grad mode an operation runs in: one of the graphs' :data:`GRAD_MODES`, grad
#: enabled drawn twice as often (``["grad", "grad", "no_grad", "inference"]``).
GRAD_MODE_STRATEGY = st.sampled_from([GRAD_MODES[0], *GRAD_MODES])
_MODE_CODE = {
    "grad": "",
    "no_grad": "with torch.no_grad(): ",
    "inference": "with torch.inference_mode(): ",
}


def _mode(mode: str):
    if mode == "no_grad":
        return torch.no_grad()
    if mode == "inference":
        return torch.inference_mode()
    return contextlib.nullcontext()


@cache
def _missing_kernels(device: str) -> frozenset[tuple[str, str]] | None:
    """The ``(op, dtype)`` pairs without an add_/mul_ kernel on ``device``:
    ``None`` on the CPU (the model encodes those gaps itself, as claims), the
    probed gaps on CUDA (uint16/32/64 arithmetic there varies by release), so
    on CUDA sequences.dtype-support is not checked for add_/mul_: the
    prediction comes from the op itself, and a gap is never reported red."""
    if device == "cpu":
        return None
    return frozenset(
        (op, d)
        for op in ("add_", "mul_")
        for d in DTYPES
        if not cap.kernel_available(op, getattr(torch, d), device)
    )


# --------------------------------------------------------------------------
# The state machine
# --------------------------------------------------------------------------


class CopySequences(RuleBasedStateMachine):
    """Real torch and the reference model, side by side (see the module docstring)."""

    tensors = Bundle("tensors")
    arrays = Bundle("arrays")

    def __init__(self, device: str = "cpu"):
        # a new program: stops the engine once a failing program has shrunk
        # for the suite's budget (the plugin cannot see programs one by one)
        evidence.program_started()
        super().__init__()
        self.device = device
        self.model = Model(device=device, missing_kernels=_missing_kernels(device))
        # region feature: an operation of this example is predicted to meet
        # a dtype without a kernel (uint16/32/64 add_; the error type of a
        # missing kernel changed from RuntimeError to NotImplementedError in 2.8)
        evidence.features(missing_kernel=False)
        self.real: dict[int, torch.Tensor] = {}
        self.real_arrays: dict[int, np.ndarray] = {}
        self.claims: list[str] = ["sequences.tensor-copies"]
        self.trace: list[str] = []
        #: Claims whose steps this program checked and found agreeing with the model.
        self.checked: set[str] = set()
        #: Claims this program violated after the run had failed them (recorded,
        #: never credited).
        self.violated: set[str] = set()
        #: The element bytes each tensor held at the last check, by model id.
        self._seen: dict[int, np.ndarray] = {}
        #: The torch ``.grad`` objects, by the model's gradient id.
        self.real_grads: dict[int, torch.Tensor] = {}
        #: Operations run since the state was last checked.
        self._ops_in_step = 0
        #: The claim whose sentence allows the operations run now (set by a
        #: domain case of a refusal claim where the operation is allowed:
        #: add_ inside inference_mode). Torch refusing one where the model
        #: predicts success violates that claim, not the operation's own.
        self.allowed_by: str | None = None

    def teardown(self) -> None:
        """Credit the claims this program checked (one example each)."""
        evidence.credit(self.checked - self.violated)
        evidence.tally("state-machine programs")

    # ---- plumbing ---------------------------------------------------------

    def _blame(self, aspect: str) -> str | None:
        """The claim a failing check of ``aspect`` blames (:data:`ASPECT_CLAIMS`),
        or None for the step's first claim."""
        return next((c for c in ASPECT_CLAIMS[aspect] if c in self.claims), None)

    def _fail(self, message: str, claim: str | None = None, *, resume: bool = False) -> None:
        """A check of the step failed: a violation of ``claim`` (the check's
        own claim, see :meth:`_blame`; default the step's first claim) and of
        no other claim.

        The message starts with ``[claim]`` - the one claim the plugin
        blames - and lists the claims the step cites for the reader. When the
        run already failed ``claim`` (the test is being re-run with it
        muted), the violation is recorded with its signature instead
        (:func:`conformance.evidence.violation_of_muted`: the plugin requires
        each to match the entry that explains the claim) and, with
        ``resume``, the step goes on: the caller brings the model to the
        state torch is in and the step's other claims are still checked.
        Without ``resume`` the program ends here (the model cannot follow
        torch from here on); what it checked before still counts."""
        own = claim or self.claims[0]
        claims = list(dict.fromkeys([own, *self.claims]))
        text = f"[{own}] {message} (the step cites {', '.join(claims)})"
        if evidence.muted(own):
            evidence.violation_of_muted(own, text)
            self.violated.add(own)
            if resume:
                return
            evidence.tally("programs ended at a violation of a failed claim")
            reject()
        error = AssertionError(
            text + "\n--- the program as torch calls ---\n" + "\n".join(self.trace)
        )
        evidence.program_failed(error)
        raise error

    @staticmethod
    def _n(h) -> str:
        return f"a{h.id}" if isinstance(h, ArrayModel) else f"t{h.id}"

    def _run(self, model_call, torch_call, code):
        """One operation on both sides. Returns ``(prediction, actual)``, or
        ``None`` when both raised alike. ``code(out_name)`` is the torch call.

        In a rule of several operations (a focus rule, copy_element_) the
        state is checked after each, so a failure is attributed to the
        operation that caused it."""
        if self._ops_in_step:
            self.agrees_with_model()
        self._ops_in_step += 1
        try:
            predicted, expected_error = model_call(), None
        except Raises as r:
            predicted, expected_error = None, r
            if r.exc == "NotImplementedError" and r.claim == "sequences.dtype-support":
                evidence.features(missing_kernel=True)
        cited = ([expected_error.claim] if expected_error else []) + list(self.model.cited)
        self.claims = list(dict.fromkeys(cited)) or self.claims
        try:
            with _quiet():
                actual, error = torch_call(), None
        except Exception as e:  # noqa: BLE001 - any torch error is compared with the model
            actual, error = None, e
        name = self._n(predicted) if hasattr(predicted, "id") else "_"
        self.trace.append(code(name) + (f"  # raises {type(error).__name__}" if error else ""))
        if expected_error is None and error is not None:
            self._fail(
                f"torch raised {type(error).__name__}: {_first_line(error)!r}; "
                "the model predicts success",
                self.allowed_by,
            )
        if expected_error is not None and error is None:
            return self._performed_anyway(model_call, expected_error), actual
        if expected_error is not None:
            if not expected_error.matches(error):
                self._fail(
                    f"torch raised {type(error).__name__}: {_first_line(error)!r}; the model "
                    f"predicts {expected_error.exc} ({' | '.join(expected_error.match)})"
                )
            self._resync()  # an op that raises after writing (inference tensors)
            return None
        return predicted, actual

    def _performed_anyway(self, model_call, refusal: Raises):
        """torch performed an operation the model predicts it refuses: a
        violation of the refusal's claim. Once the run has failed that claim
        (it is muted) and the refusal is one the model can predict without
        (:data:`conformance.model.WAIVABLE`), the model predicts what the
        operation does when it runs, and the step goes on checking its other
        claims - the values written, the version bump - against that; any
        other refusal ends the program. Returns the waived prediction."""
        waived: list[str] = []
        while True:
            self._fail(
                f"the model predicts {refusal.exc} ({' | '.join(refusal.match)}) "
                "but torch did not raise",
                refusal.claim,
                resume=refusal.claim in WAIVABLE,
            )
            waived.append(refusal.claim)
            with contextlib.ExitStack() as stack:
                for c in waived:
                    stack.enter_context(self.model.waiving(c))
                try:
                    predicted = model_call()
                except Raises as r:
                    if r.claim in waived:  # a refusal the waiver does not reach
                        raise AssertionError(
                            f"the model refuses again under the waiver of {r.claim}"
                        ) from None
                    refusal = r
                    self.claims = list(dict.fromkeys([r.claim, *self.model.cited]))
                    continue
            self.claims = list(dict.fromkeys(self.model.cited)) or self.claims
            return predicted

    def _tensor(self, predicted: TensorModel, actual) -> TensorModel:
        """Register a tensor result: the very object the model predicts, or a
        new object when the model predicts a new tensor."""
        if not isinstance(actual, torch.Tensor):
            self._fail(f"returned {type(actual).__name__}, not a tensor")
        if predicted.id in self.real:
            if actual is not self.real[predicted.id]:
                self._fail(
                    f"returned a new tensor object; the model predicts {self._n(predicted)} itself"
                )
        else:
            for tid, known in self.real.items():
                if actual is known:
                    self._fail(
                        f"returned the existing object t{tid}; the model predicts a new tensor"
                    )
            self.real[predicted.id] = actual
        self._resync()
        return predicted

    def _resync(self) -> None:
        """Take torch's values where the last operation left them to torch,
        after checking that a NaN the model predicts there is a NaN (only its
        sign and payload are left open)."""
        for owner, positions in self.model.unspecified:
            if owner.id in self.real:
                actual = self._values(self.real[owner.id])
                self._check_nans(owner, positions, actual)
                self.model.resync(owner, actual)

    def _check_nans(self, owner, positions, actual: np.ndarray) -> None:
        """Fail where the model predicts a NaN at ``positions`` of ``owner``
        and torch holds a number (``actual``: storage representation)."""
        if owner.dtype not in ("float16", "bfloat16", "float32", "float64"):
            return
        pos = owner.positions()
        mask = np.isin(pos, np.fromiter(positions, dtype=np.int64))
        want = decode(self.model.values(owner), owner.dtype)[mask]
        got = decode(actual, owner.dtype)[mask]
        lost = np.isnan(want) & ~np.isnan(got)
        if lost.any():
            self._fail(
                f"{self._n(owner)} holds {got[lost].tolist()} where the model predicts a NaN "
                "(of any sign and payload)"
            )

    def _values(self, t: torch.Tensor) -> np.ndarray:
        """``t``'s values in the model's storage representation (bfloat16 as
        bits), read from its storage (no torch operation involved)."""
        dtype = str(t.dtype).removeprefix("torch.")
        rows = element_bytes(t)
        flat = np.ascontiguousarray(rows).reshape(-1).view(storage_dtype(dtype))
        return flat.reshape(tuple(t.shape))

    def _op(self, model_call, torch_call, code):
        """Run an op with a tensor result; returns the model handle or ``multiple()``."""
        out = self._run(model_call, torch_call, code)
        if out is None:
            return multiple()
        predicted, actual = out
        return self._tensor(predicted, actual)

    def _room(self) -> bool:
        return len(self.model.tensors) < MAX_TENSORS

    # ---- creation ---------------------------------------------------------

    def _fresh(self, spec: Fresh):
        def real():
            with _mode("inference" if spec.inference else "grad"):
                t = spec.tensor(self.device)
            return t.requires_grad_(spec.requires_grad) if spec.requires_grad else t

        ctx = _MODE_CODE["inference" if spec.inference else "grad"]
        code = lambda o: (  # noqa: E731
            f"{ctx}{o} = {spec.code()}" + (".requires_grad_()" if spec.requires_grad else "")
        )
        return self._op(
            lambda: self.model.fresh(
                spec.dtype, spec.shape, spec.values, spec.requires_grad, spec.inference
            ),
            real,
            code,
        )

    @initialize(target=tensors, spec=fresh_specs(dtypes=NON_DIFFERENTIABLE, inference=True))
    def init_tensor(self, spec):
        """Every program starts with a bool or integral tensor (maybe made
        inside inference_mode) ..."""
        return self._fresh(spec)

    @initialize(target=tensors, spec=fresh_specs(requires_grad=True))
    def init_leaf(self, spec):
        """... and a floating or complex leaf that requires grad, so that
        every program has tensors of two dtype families (each op meets every
        dtype often); ``fresh`` adds tensors of any dtype."""
        return self._fresh(spec)

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

    @precondition(_room)
    @rule(target=tensors, spec=fresh_specs(inference=True))
    def fresh(self, spec):
        """A fresh tensor, sometimes made inside inference_mode."""
        return self._fresh(spec)

    # ---- copies -----------------------------------------------------------

    def clone(self, t, memory_format, mode):
        r = self.real[t.id]

        def real():
            with _mode(mode):
                return r.clone(memory_format=FORMATS[memory_format])

        grad, inference = mode == "grad", mode == "inference"
        return self._op(
            lambda: self.model.clone(t, memory_format, grad=grad, inference=inference),
            real,
            lambda o: (
                f"{_MODE_CODE[mode]}{o} = {self._n(t)}.clone(memory_format={FORMATS[memory_format]})"
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

    @precondition(_room)
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
        index = (slice(None),) * d + (slice(s, None, step),)
        # a trailing comma keeps the index a tuple, as run: t[0::1,] (an
        # alias on recent torch) and t[0::1] (a SliceBackward0 view) differ
        text = ", ".join([":"] * d + [f"{s}::{step}"]) + ("," if d == 0 else "")
        return self._op(
            lambda: self.model.slice(t, d, s, step),
            lambda: self.real[t.id][index],
            lambda o: f"{o} = {self._n(t)}[{text}]",
        )

    @precondition(_room)
    @rule(target=tensors, t=tensors, dim=st.integers(0, 3), index=st.integers(-3, 3))
    def select(self, t, dim, index):
        d = dim % t.ndim if t.ndim else 0
        return self._op(
            lambda: self.model.select(t, d, index),
            lambda: self.real[t.id].select(d, index),
            lambda o: f"{o} = {self._n(t)}.select({d}, {index})",
        )

    @precondition(_room)
    @rule(target=tensors, t=tensors, dim0=st.integers(0, 3), dim1=st.integers(0, 3))
    def transpose(self, t, dim0, dim1):
        d0, d1 = (dim0 % t.ndim, dim1 % t.ndim) if t.ndim else (0, 0)
        return self._op(
            lambda: self.model.transpose(t, d0, d1),
            lambda: self.real[t.id].transpose(d0, d1),
            lambda o: f"{o} = {self._n(t)}.transpose({d0}, {d1})",
        )

    @precondition(_room)
    @rule(target=tensors, t=tensors, order=st.permutations(range(4)))
    def permute(self, t, order):
        """``t.permute(dims)``: ``order`` restricted to t's dims (extra dims stay last)."""
        dims = tuple(d for d in order if d < t.ndim) + tuple(range(4, t.ndim))
        return self._op(
            lambda: self.model.permute(t, dims),
            lambda: self.real[t.id].permute(dims),
            lambda o: f"{o} = {self._n(t)}.permute({dims})",
        )

    @precondition(_room)
    @rule(target=tensors, t=tensors, dim=st.integers(0, 4))
    def unsqueeze(self, t, dim):
        d = dim % (t.ndim + 1)
        return self._op(
            lambda: self.model.unsqueeze(t, d),
            lambda: self.real[t.id].unsqueeze(d),
            lambda o: f"{o} = {self._n(t)}.unsqueeze({d})",
        )

    @precondition(_room)
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
        return self._op(
            lambda: self.model.expand(t, sizes),
            lambda: self.real[t.id].expand(sizes),
            lambda o: f"{o} = {self._n(t)}.expand({sizes})",
        )

    @precondition(_room)
    @rule(target=tensors, t=tensors, choice=st.integers(0, 40))
    def view(self, t, choice):
        options = factorizations(t.numel)
        shape = options[choice % len(options)]
        return self._op(
            lambda: self.model.view(t, shape),
            lambda: self.real[t.id].view(shape),
            lambda o: f"{o} = {self._n(t)}.view({shape})",
        )

    @precondition(_room)
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
            with _mode(mode):
                return self.real[dst.id].copy_(self.real[src.id])

        grad, inference = mode == "grad", mode == "inference"
        self._op(
            lambda: self.model.copy_(dst, src, grad=grad, inference=inference),
            real,
            lambda o: f"{_MODE_CODE[mode]}{self._n(dst)}.copy_({self._n(src)})",
        )

    @precondition(_room)
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
            with _mode(mode):
                return getattr(self.real[t.id], op)(*args)

        grad, inference = mode == "grad", mode == "inference"
        self._op(
            lambda: self.model.inplace(t, op, value, grad=grad, inference=inference),
            real,
            lambda o: f"{_MODE_CODE[mode]}{self._n(t)}.{op}({', '.join(map(repr, args))})",
        )

    @rule(
        t=tensors, index=st.integers(0, 3), value=st.sampled_from(SCALARS), mode=GRAD_MODE_STRATEGY
    )
    def setitem(self, t, index, value, mode):
        i = index % t.shape[0] if t.ndim and t.shape[0] else None
        key = Ellipsis if i is None else i

        def real():
            with _mode(mode):
                self.real[t.id][key] = value
            return self.real[t.id]

        grad, inference = mode == "grad", mode == "inference"
        self._op(
            lambda: self.model.setitem(t, i, value, grad=grad, inference=inference),
            real,
            lambda o: f"{_MODE_CODE[mode]}{self._n(t)}[{'...' if i is None else i}] = {value!r}",
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
            u = self._fresh(Fresh(t.dtype, (3, 4), _simple_values(t.dtype, 12)))
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
            t = self._pick(choice, _reorders_when_copied, self._make_non_dense)
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
        u = self._fresh(Fresh(t.dtype, (3, 4), _simple_values(t.dtype, 12)))
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
                f"{o} = np.array({_values_repr(spec.values)}, dtype={spec.dtype!r})"
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

    # ---- the invariant ----------------------------------------------------

    @invariant()
    def agrees_with_model(self):
        """Every live tensor and ndarray agrees with the model (module docstring)."""
        try:
            with _quiet():
                self._check_versions()
                addresses: dict[int, int] = {}
                self._check_tensors(addresses)
                self._check_grads()
                self._check_arrays(addresses)
                self._check_disjoint(addresses)
                # last: a bump rebuilds views' grad_fn, whose names (and all
                # else) were checked as the step left them
                self._probe_counters()
        except Exception as e:  # noqa: BLE001 - a torch observation that raised
            if isinstance(e, AssertionError) or type(e).__module__.startswith("hypothesis"):
                raise
            self._fail(f"observing the state raised {type(e).__name__}: {_first_line(e)!r}")
        self.checked.update(c for c in self.claims if c not in self.violated)
        self._ops_in_step = 0

    def _check_versions(self) -> None:
        """Exact ``_version`` of every tensor (an inference tensor without a
        counter must refuse to tell), then the partition by counter: bump the
        counter of the newest tensor (sharing is fixed when a tensor is made,
        so checking each new tensor's class checks the partition) and,
        round-robin, one more, and observe who moves."""
        m = self.model
        # Every step's version checks also check the version-counter claim.
        self.claims = list(dict.fromkeys([*self.claims, "sequences.version-counter"]))
        live = [(t, self.real[t.id]) for t in m.tensors]
        for t, r in live:
            if t.counter is None:
                try:
                    v = r._version
                except RuntimeError as e:
                    if MSG["inference_version"] not in str(e):
                        self._fail(f"t{t.id}._version raised {e!r}", "sequences.inference-tensors")
                    self.checked.add("sequences.inference-tensors")
                    continue
                self._fail(
                    f"t{t.id}._version is {v}; the model says an inference tensor has no counter",
                    "sequences.inference-tensors",
                )
            if r._version != t.counter.version:
                self._fail(
                    f"t{t.id}._version is {r._version}; the model says {t.counter.version}",
                    self._blame("version"),
                    resume=True,
                )
                t.counter.version = r._version  # (muted: go on from torch's count)

    def _probe_counters(self) -> None:
        """The partition by version counter (see :meth:`_check_versions`)."""
        m = self.model
        # increment_version does not move inference tensors' counters
        live = [(t, self.real[t.id]) for t in m.tensors if not t.inference]
        if not live:
            return
        pinned = m.pinned_counters()
        self._probe_index = (getattr(self, "_probe_index", -1) + 1) % len(live)
        for t, r in {
            live[-1][0].id: live[-1],
            live[self._probe_index][0].id: live[self._probe_index],
        }.values():
            c = t.counter
            if c.id in pinned:
                continue  # a tensor saved for backward at this version: leave it
            torch.autograd.graph.increment_version(r)
            m.bump(c)
            for u, ru in live:
                if ru._version != u.counter.version:
                    shared = u.counter is c
                    self._fail(
                        f"bumping t{t.id}'s version counter {'did not move' if shared else 'moved'} "
                        f"t{u.id}._version; the model says they "
                        f"{'share' if shared else 'do not share'} a version counter"
                    )

    def _check_tensors(self, addresses: dict[int, int]) -> None:
        m = self.model
        ptr_of: dict[tuple, int] = {}
        key_of: dict[int, tuple] = {}
        history = self._blame("history")
        storage = self._blame("storage")
        view = self._blame("view")
        geometry_claim = self._blame("geometry")
        for t in m.tensors:
            r = self.real[t.id]
            n = f"t{t.id}"
            if str(r.dtype) != f"torch.{t.dtype}":
                self._fail(f"{n}.dtype is {r.dtype}; the model says {t.dtype}")
            geometry = (tuple(r.shape), r.stride(), r.storage_offset())
            if geometry != (t.shape, t.strides, t.offset):
                self._fail(
                    f"{n} has shape/strides/offset {geometry}; the model says "
                    f"{(t.shape, t.strides, t.offset)}",
                    geometry_claim,
                )
            if r.is_inference() != t.inference:
                self._fail(
                    f"{n}.is_inference() is {r.is_inference()}; the model says {t.inference}",
                    "sequences.inference-tensors",
                )
            if t.inference:
                self.checked.add("sequences.inference-tensors")
            if t.buffer.values.size:  # empty memory has no address (data_ptr 0)
                ptr = r.untyped_storage().data_ptr()
                key = t.storage.key
                if ptr_of.setdefault(key, ptr) != ptr or key_of.setdefault(ptr, key) != key:
                    self._fail(
                        f"{n}: the partition of tensors by storage differs from the model's",
                        storage,
                    )
                if t.numel:
                    addr = r.data_ptr() - t.start * r.element_size()
                    if addresses.setdefault(t.buffer.id, addr) != addr:
                        self._fail(
                            f"{n} addresses memory other than the model's shared buffer", storage
                        )
            rg = m.requires_grad(t)
            if r.requires_grad != rg:
                self._fail(f"{n}.requires_grad is {r.requires_grad}; the model says {rg}", history)
            names = m.grad_fn_names(t)
            if (r.grad_fn is None) != (not names):
                self._fail(
                    f"{n}.grad_fn is {r.grad_fn}; the model says {'set' if names else 'None'}",
                    history,
                )
            if names:
                actual = type(r.grad_fn).__name__
                if not any(_same_op(actual, name) for name in names):
                    self._fail(
                        f"{n}.grad_fn is a {actual}; the model says {' or '.join(names)}",
                        "sequences.grad-fn-type",
                    )
                self.checked.add("sequences.grad-fn-type")
            if r.is_leaf != m.is_leaf(t):
                self._fail(f"{n}.is_leaf is {r.is_leaf}; the model says {m.is_leaf(t)}", history)
            if r._is_view() != m.is_view(t):
                self._fail(f"{n}._is_view() is {r._is_view()}; the model says {m.is_view(t)}", view)
            base = self.real[t.base.id] if t.base is not None else None
            if r._base is not base:
                expected = f"t{t.base.id}" if t.base is not None else "None"
                self._fail(f"{n}._base is not {expected} as the model says", view)
            # Bit for bit, read straight from the storage (no torch op involved).
            expected = m.values(t)
            rows = element_bytes(r)
            if not _same_bytes(rows, expected):
                actual = self._values(r)
                unwritten = _unwritten(self._seen.get(t.id), rows, expected)
                self._fail(
                    f"{n} holds {actual.tolist()}; the model's memory says {expected.tolist()}"
                    " (compared bit for bit)"
                    + (" - the write reached none of the elements it changes" if unwritten else ""),
                    self._blame("unwritten") if unwritten else None,
                    resume=True,
                )
                m.adopt_values(t, actual)  # (muted: go on from torch's values)
            self._seen[t.id] = rows

    def _check_grads(self) -> None:
        """``.grad`` and ``retains_grad`` of every live tensor: None where the
        model has none; else the very object the model says (a leaf keeps
        accumulating into one), its dtype, shape, documented layout, and values
        bit for bit (except where the model leaves them to torch)."""
        m = self.model
        for t in m.tensors:
            r = self.real[t.id]
            n = f"t{t.id}"
            if r.retains_grad != (t.retains_grad and not m.is_leaf(t)):
                self._fail(
                    f"{n}.retains_grad is {r.retains_grad}; the model says {t.retains_grad}",
                    "sequences.retain-grad",
                )
            g = r.grad
            known = self.real_grads.get(t.grad.id) if t.grad is not None else None
            if t in m.grad_unspecified or (t.grad is not None and t.grad.unspecified.any()):
                m.resync_grad(
                    t, None if g is None else self._values(g), g is known and g is not None
                )
                if t.grad is not None and t.grad.id not in self.real_grads:
                    self.real_grads[t.grad.id] = g
                known = self.real_grads.get(t.grad.id) if t.grad is not None else None
            claim = "sequences.retain-grad" if t.retains_grad else "sequences.grad-accumulates"
            if t.grad is None:
                if g is not None:
                    self._fail(f"{n}.grad is set; the model says None", claim)
                continue
            if g is None:
                self._fail(f"{n}.grad is None; the model says it holds a gradient", claim)
            if known is None:
                for other in self.real_grads.values():
                    if g is other:
                        self._fail(
                            f"{n}.grad is an earlier gradient object; the model says a new one",
                            claim,
                        )
                self.real_grads[t.grad.id] = g
            elif g is not known:
                self._fail(
                    f"{n}.grad is a new tensor object; the model says the gradient accumulated "
                    "in place into the previous one",
                    claim,
                )
            if str(g.dtype) != f"torch.{t.grad.dtype}" or tuple(g.shape) != t.grad.shape:
                self._fail(
                    f"{n}.grad has dtype/shape {g.dtype}/{tuple(g.shape)}; the model says "
                    f"{t.grad.dtype}/{t.grad.shape}",
                    claim,
                )
            layout = t.grad.layout
            if layout is not None:
                strides = g.stride()
                if layout[0] == "strides":
                    ok = all(
                        st == want if size != 1 else st != 0 or st == want
                        for size, st, want in zip(g.shape, strides, layout[1], strict=True)
                    )
                else:
                    ok = is_contiguous(tuple(g.shape), strides)
                if not ok:
                    self._fail(
                        f"{n}.grad has strides {strides}; the documented layout is {layout}",
                        "sequences.grad-layout",
                    )
                self.checked.add("sequences.grad-layout")
            if not _same_bytes(element_bytes(g), t.grad.values):
                self._fail(
                    f"{n}.grad holds {self._values(g).tolist()}; the model says "
                    f"{t.grad.values.tolist()} (compared bit for bit)",
                    claim,
                )
            self.checked.add(claim)

    def _check_disjoint(self, addresses: dict[int, int]) -> None:
        """Memory the model keeps apart is apart: the address ranges of
        distinct buffers (all alive) do not overlap, so a copy that shares
        memory with an ndarray or a tensor is seen at once."""
        m = self.model
        owners = {}
        for h in [*m.tensors, *m.arrays]:
            owners.setdefault(h.buffer.id, (h, h.buffer))
        spans = []
        for bid, addr in addresses.items():
            h, buf = owners[bid]
            if buf.values.size:
                spans.append((addr, addr + buf.values.size * buf.values.itemsize, h))
        spans.sort(key=lambda x: x[0])
        end, h0 = -1, None
        for b0, b1, h1 in spans:
            if b0 < end:
                self._fail(
                    f"{self._n(h0)} and {self._n(h1)} share memory; the model says "
                    "they are in separate memory",
                    self._blame("storage"),
                )
            if b1 > end:
                end, h0 = b1, h1

    def _check_arrays(self, addresses: dict[int, int]) -> None:
        m = self.model
        for a in m.arrays:
            arr = self.real_arrays[a.id]
            n = f"a{a.id}"
            strides = tuple(s // arr.itemsize for s in arr.strides)
            if (arr.shape, strides) != (a.shape, a.strides):
                self._fail(
                    f"{n} has shape/strides {(arr.shape, strides)}; the model says {(a.shape, a.strides)}"
                )
            if arr.size:
                addr = arr.__array_interface__["data"][0] - a.start * arr.itemsize
                if addresses.setdefault(a.buffer.id, addr) != addr:
                    self._fail(
                        f"{n} addresses memory other than the model's shared buffer",
                        self._blame("storage"),
                    )
            expected = m.values(a)
            if not _equal(arr, expected):
                self._fail(f"{n} holds {arr.tolist()}; the model's memory says {expected.tolist()}")


def _simple_values(dtype: str, n: int) -> tuple:
    """``n`` small exact values of ``dtype`` (0, 1, 2, ... wrapped)."""
    if dtype == "bool":
        return tuple(bool(k % 2) for k in range(n))
    if dtype in NON_DIFFERENTIABLE:
        return tuple(k % 5 for k in range(n))
    if dtype.startswith("complex"):
        return tuple(complex(k % 5, -(k % 3)) for k in range(n))
    return tuple(float(k % 5) - 1.5 for k in range(n))


def _reorders_when_copied(t: TensorModel) -> bool:
    """``t`` is not dense, and a preserve_format copy keeps a stride order
    that is not row-major (where the observed and documented rules differ)."""
    if not t.numel or is_non_overlapping_and_dense(t.shape, t.strides):
        return False
    return infer_dense_strides(t.shape, t.strides) != contiguous_strides(t.shape)


def _same_op(actual: str, name: str) -> bool:
    """``actual`` (a grad_fn class name) is op ``name`` whatever its overload
    number: ``CloneBackward0`` and ``FillBackward3`` match ``CloneBackward``
    and ``FillBackward``."""
    return actual.startswith(name) and actual[len(name) :].isdigit() or actual == name


def _unwritten(before: np.ndarray | None, rows: np.ndarray, expected: np.ndarray) -> bool:
    """True when a tensor whose values disagree with the model kept every
    element the model says changed since the last check (``before``: its
    element bytes then; ``rows``: now), and there are at least two: the write
    reached none of the memory it should have changed (blamed on
    sequences.writes-visible), rather than computing a wrong value (blamed on
    the operation's claim). One element cannot tell the two apart (a wrong
    value equal to the old one), nor can a bool tensor (a wrong conversion
    gives the old value half the time), so those are the operation's."""
    if before is None or before.shape != rows.shape or expected.dtype == np.bool_:
        return False
    flat = np.ascontiguousarray(expected).reshape(-1)
    want = flat.view(np.uint8).reshape(flat.size, flat.itemsize)
    if want.shape != rows.shape:
        return False
    should = (want != before).any(axis=1)
    return int(should.sum()) >= 2 and bool((rows[should] == before[should]).all())


def _same_bytes(rows: np.ndarray, expected: np.ndarray) -> bool:
    """``rows`` (``element_bytes`` of a tensor) hold exactly the bits of
    ``expected`` (the model's values, in logical C order)."""
    flat = np.ascontiguousarray(expected).reshape(-1)
    want = flat.view(np.uint8).reshape(flat.size, flat.itemsize)
    return rows.shape == want.shape and np.array_equal(rows, want)


def _equal(actual: np.ndarray, expected: np.ndarray) -> bool:
    """Same shape, dtype and bits of every element (logical C order): a
    -0.0 that became +0.0 or a NaN whose sign or payload changed differs."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False
    return actual.tobytes() == expected.tobytes()


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


def _run_chain(device, spec, steps):
    """Build ``spec`` and apply the view ``steps`` through the state machine
    (so every step is checked against the model); returns (machine, handle).
    Reports the feature ``full_slice``: ``spec`` requires grad and a step
    slices a whole dimension (start 0, step 1), which indexing returns as an
    alias (grad_fn AliasBackward0) on recent torch."""
    evidence.features(
        full_slice=spec.requires_grad
        and any(n == "slice" and a["start"] == 0 and a["step"] == 1 for n, a in steps)
    )
    machine = CopySequences(device)
    h = machine.init_tensor(spec)
    for name, kwargs in steps:
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
def _non_dense_chains(draw):
    """``(spec, dim, step, steps)``: a fresh tensor whose ``dim`` is sliced
    with ``step`` (two or more rows kept), then view ``steps`` that keep that
    dim with two or more rows - so the result is non-dense by construction
    (it holds the slice's first row and skips the next, which lies inside its
    memory span). Transpose/permute/unsqueeze move the dim (tracked here);
    select is drawn on the other dims only, a slice of the dim keeps it whole."""
    shape, dim, step = draw(st.sampled_from(_STEPPABLE))
    spec = draw(fresh_specs(shape=shape))
    sizes = list(shape)
    sizes[dim] = -(-sizes[dim] // step)
    p = dim  # where the stepped dim is now
    steps = []
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
    return spec, dim, step, steps


@pytest.mark.claim("sequences.clone-non-dense-contiguous")
@pytest.mark.observes("backward", "clone", "copy_", "detach", "numpy", "tensor", "to")
@given(chain=_non_dense_chains())
def test_clone_of_non_dense_view_chain_is_contiguous(device, chain):
    """The documented promise, in sequences: after a stepped slice and a chain
    of view ops, a preserve_format clone of a non-dense result is row-major
    (the model's documented rule). Torch keeps the stride order instead
    (recorded deviation; the machine encodes the observed rule). The chains
    are non-dense by construction (:func:`_non_dense_chains`).

    Kills: a clone that keeps non-dense strides, or one that is not dense."""
    spec, dim, step, steps = chain
    machine, h = _run_chain(
        device, spec, [("slice", {"dim": dim, "start": 0, "step": step}), *steps]
    )
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
@given(spec=fresh_specs(), steps=st.lists(_VIEW_STEPS, max_size=3))
def test_detach_of_view_chain_is_a_view(device, spec, steps):
    """The documented promise, in sequences: detach() of a tensor reached by
    any chain of view ops is a view of the chain's root (detach is on the
    Tensor Views list). Torch makes it an untracked alias (recorded
    deviation; the machine encodes the observed rule).

    Kills: a detach that is tracked as a view of the wrong base."""
    machine, h = _run_chain(device, spec, steps)
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
def test_asarray_copy_false_of_ndarray_shares(device, spec, via_numpy):
    """The documented promise, in sequences: ``torch.asarray(a, copy=False)``
    of an ndarray - fresh, or ``t.numpy()`` of a tensor - shares its memory
    (or raises). Torch silently copies 0-d ndarrays (recorded deviation; the
    machine encodes the observed rule, sequences.asarray-0d-ndarray-copies).
    Empty arrays are left out: their memory has no address to compare.

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
    arr = machine.real_arrays[a.id]
    machine.model.docs = True
    predicted = machine.model.asarray_array(a, copy=False)
    with _quiet():
        got = torch.asarray(arr, copy=False)
    expected = arr.__array_interface__["data"][0] + (predicted.start - a.start) * arr.itemsize
    assert predicted.buffer is a.buffer  # the documented rule: shared memory
    assert got.data_ptr() == expected, (
        "asarray(ndarray, copy=False) does not share the array's memory"
    )


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
    """``(Fresh, layout)`` of an operand: small exact values (:func:`_simple_values`)."""
    return Fresh(dtype, shape, _simple_values(dtype, math.prod(shape)), **kw), layout


#: An operand of each value of the domain dimensions the sequences claims
#: declare (issue 29; ``claims/sequences.toml``): ``(dimension, value) ->
#: (spec, layout)`` for :func:`_operand`, each at that value by construction
#: (the test reports what it built: :func:`_report_domain`). The dtype
#: families' operands are contiguous (3,) tensors, the layouts' and tensor
#: kinds' float32 ones.
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
    :func:`strategies.tensors.layout_kinds` of the real tensor),
    ``dtype_family`` and ``tensor_kind`` (:func:`strategies.tensors.tensor_kind_of`)."""
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
def test_asarray_of_ndarray_shares(device, spec, via_numpy, layout, copy):
    """``torch.asarray(a)`` and ``torch.asarray(a, copy=False)`` of an
    ndarray of 1 or more dimensions (fresh or ``t.numpy()``, C-ordered,
    transposed or flipped) share a's memory, or raise for copy=False where
    torch cannot (as the model predicts; 0-d ndarrays are the recorded
    deviation of :func:`test_asarray_copy_false_of_ndarray_shares`).

    Kills: an asarray that copies ndarrays of some ranks or layouts."""
    machine, a = _array_operand(device, spec, via_numpy, layout)
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
    exact values (see :func:`_simple_values`) with ``kwargs`` - so every dtype
    is met whatever the derandomized draws are (a dtype is drawn about seven
    times in a hundred examples, some of them holding only Inf or NaN, which
    arithmetic keeps)."""

    def add(test):
        for d in DTYPES:
            test = example(spec=Fresh(d, (3,), _simple_values(d, 3)), **kwargs)(test)
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


def _domain_cases():
    """``(claim, spec, layout, mode)``: one case per value each claim of the
    machine declares - the operand of :data:`_DOMAIN_OPERANDS` in grad
    mode, or for a grad_mode value a float32 (2, 3) tensor (an inference one
    for sequences.inference-inplace-raises) in that mode."""
    for claim in MACHINE_CLAIMS:
        if claim not in _SEQUENCES_DOMAINS:
            continue
        for spec, layout in _claim_operands(claim):
            yield claim, spec, layout, "grad"
        for dim, values in _SEQUENCES_DOMAINS[claim]:
            if dim == "grad_mode":
                inference = claim == "sequences.inference-inplace-raises"
                spec, layout = _domain_operand("float32", (2, 3), inference=inference)
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
    the unsigned family only)."""
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
    else:
        raise AssertionError(f"test bug: no domain case for {claim}")
    machine.agrees_with_model()
