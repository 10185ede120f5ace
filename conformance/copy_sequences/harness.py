"""The harness of the copy-sequence state machine (:mod:`conformance.copy_sequences`):
the claims it checks, which claim a failing check blames, its limits, and
:class:`Harness` - running one operation on torch and on the reference model
side by side, failing with the claim of the check that failed, making fresh
tensors - which the rule and check mixins extend."""

from __future__ import annotations

import contextlib
import warnings
from functools import cache

import numpy as np
import torch
from hypothesis import reject
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    multiple,
)

from conformance import capabilities as cap
from conformance import evidence
from conformance.checks import element_bytes
from conformance.model import (
    CLAIM_IDS,
    WAIVABLE,
    ArrayModel,
    Model,
    Raises,
    TensorModel,
    bf16_bits,  # noqa: F401 - the printed programs use it
    contiguous_strides,
    infer_dense_strides,
    is_non_overlapping_and_dense,
)
from conformance.model.values import decode, storage_dtype
from strategies.sequences import (
    DTYPES,
    NON_DIFFERENTIABLE,
    Fresh,
    fresh_specs,
)
from strategies.views import VIEWS

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
        "sequences.clone-copies",
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
    "version": (
        "sequences.inference-aliases",
        "sequences.version-counter",
        "sequences.clone-copies",
    ),
    # a write that reached none of the memory it should have changed
    "unwritten": ("sequences.writes-visible",),
}


MAX_TENSORS = 16  # live tensor objects per program (keeps every step cheap)
MAX_ARRAYS = 8
#: Focus rules may exceed MAX_TENSORS by this many tensors they make.
FOCUS_EXTRA = 4


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else ""


@contextlib.contextmanager
def quiet():
    """Hide torch's copy-construct / asarray / complex-cast warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


MODE_CODE = {
    "grad": "",
    "no_grad": "with torch.no_grad(): ",
    "inference": "with torch.inference_mode(): ",
}


def grad_mode_context(mode: str):
    if mode == "no_grad":
        return torch.no_grad()
    if mode == "inference":
        return torch.inference_mode()
    return contextlib.nullcontext()


@cache
def missing_kernels(device: str) -> frozenset[tuple[str, str]] | None:
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


TENSORS = Bundle("tensors")
ARRAYS = Bundle("arrays")


class Harness(RuleBasedStateMachine):
    """Real torch and the reference model, side by side: the plumbing every
    rule uses, and the two rules every program starts with."""

    tensors = TENSORS
    arrays = ARRAYS

    def __init__(self, device: str = "cpu"):
        # a new program: stops the engine once a failing program has shrunk
        # for the suite's budget (the plugin cannot see programs one by one)
        evidence.program_started()
        super().__init__()
        self.device = device
        self.model = Model(device=device, missing_kernels=missing_kernels(device))
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
        #: The claim a domain case checks (set by the case; None in programs).
        self.case_claim: str | None = None

    def teardown(self) -> None:
        """Credit the claims this program checked (one example each)."""
        evidence.credit(self.checked - self.violated)
        evidence.tally("state-machine programs")

    # ---- plumbing ---------------------------------------------------------

    def _blame(self, aspect: str) -> str | None:
        """The claim a failing check of ``aspect`` blames (:data:`ASPECT_CLAIMS`),
        or None for the step's first claim. In a domain case (one operation run
        to check :attr:`case_claim`) the case's claim comes first when it
        speaks of the aspect and the step cites it: a violation there is that
        claim's, whatever other claim the run has already failed."""
        cited = [c for c in ASPECT_CLAIMS[aspect] if c in self.claims]
        if self.case_claim in cited:
            return self.case_claim
        return cited[0] if cited else None

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
            with quiet():
                actual, error = torch_call(), None
        except Exception as e:  # noqa: BLE001 - any torch error is compared with the model
            actual, error = None, e
        name = self._n(predicted) if hasattr(predicted, "id") else "_"
        self.trace.append(code(name) + (f"  # raises {type(error).__name__}" if error else ""))
        if expected_error is None and error is not None:
            self._fail(
                f"torch raised {type(error).__name__}: {first_line(error)!r}; "
                "the model predicts success",
                self.allowed_by,
            )
        if expected_error is not None and error is None:
            return self._performed_anyway(model_call, expected_error), actual
        if expected_error is not None:
            if not expected_error.matches(error):
                self._fail(
                    f"torch raised {type(error).__name__}: {first_line(error)!r}; the model "
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

    def _view(self, t, kind: str, *args, model):
        """View ``t`` by ``strategies.views.VIEWS[kind]`` with ``args`` on the torch
        side (the code printed is the code run) and by ``model()`` on the model's."""
        view = VIEWS[kind]
        return self._op(
            model,
            lambda: view.apply(self.real[t.id], *args),
            lambda o: f"{o} = {view.code(self._n(t), *args)}",
        )

    def _room(self) -> bool:
        return len(self.model.tensors) < MAX_TENSORS

    # ---- creation ---------------------------------------------------------

    def _fresh(self, spec: Fresh):
        def real():
            with grad_mode_context("inference" if spec.inference else "grad"):
                t = spec.tensor(self.device)
            return t.requires_grad_(spec.requires_grad) if spec.requires_grad else t

        ctx = MODE_CODE["inference" if spec.inference else "grad"]
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


def simple_values(dtype: str, n: int) -> tuple:
    """``n`` small exact values of ``dtype`` (0, 1, 2, ... wrapped)."""
    if dtype == "bool":
        return tuple(bool(k % 2) for k in range(n))
    if dtype in NON_DIFFERENTIABLE:
        return tuple(k % 5 for k in range(n))
    if dtype.startswith("complex"):
        return tuple(complex(k % 5, -(k % 3)) for k in range(n))
    return tuple(float(k % 5) - 1.5 for k in range(n))


def reorders_when_copied(t: TensorModel) -> bool:
    """``t`` is not dense, and a preserve_format copy keeps a stride order
    that is not row-major (where the observed and documented rules differ)."""
    if not t.numel or is_non_overlapping_and_dense(t.shape, t.strides):
        return False
    return infer_dense_strides(t.shape, t.strides) != contiguous_strides(t.shape)


def same_op(actual: str, name: str) -> bool:
    """``actual`` (a grad_fn class name) is op ``name`` whatever its overload
    number: ``CloneBackward0`` and ``FillBackward3`` match ``CloneBackward``
    and ``FillBackward``."""
    return actual.startswith(name) and actual[len(name) :].isdigit() or actual == name


def missed_every_change(before: np.ndarray | None, rows: np.ndarray, expected: np.ndarray) -> bool:
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


def same_bytes(rows: np.ndarray, expected: np.ndarray) -> bool:
    """``rows`` (``element_bytes`` of a tensor) hold exactly the bits of
    ``expected`` (the model's values, in logical C order)."""
    flat = np.ascontiguousarray(expected).reshape(-1)
    want = flat.view(np.uint8).reshape(flat.size, flat.itemsize)
    return rows.shape == want.shape and np.array_equal(rows, want)


def equal_bits(actual: np.ndarray, expected: np.ndarray) -> bool:
    """Same shape, dtype and bits of every element (logical C order): a
    -0.0 that became +0.0 or a NaN whose sign or payload changed differs."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False
    return actual.tobytes() == expected.tobytes()
