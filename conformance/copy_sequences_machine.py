"""The copy-sequence state machine: sequences of copy operations checked against
the executable reference model (claims in ``claims/sequences.toml``, model in
``conformance/model/``, argument strategies in :mod:`strategies.sequences`,
tests in ``conformance/test_copy_sequences.py``).

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
(a characterization claim) and small separate tests check the documented
promise (in ``conformance/test_copy_sequences.py``); those are recorded in
``conformance/expectations/sequences.toml``.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from functools import cache

import numpy as np
import torch
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)

from conformance import capabilities as cap
from conformance import evidence
from conformance.checks import element_bytes
from conformance.model import (
    CLAIM_IDS,
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
)
from conformance.model.values import decode, storage_dtype
from strategies.sequences import (
    DTYPES,
    FORMATS,
    GRAD_MODE_STRATEGY,
    MAX_NUMEL,
    NON_DIFFERENTIABLE,
    SCALARS,
    Fresh,
    factorizations,
    fresh_specs,
    values_repr,
)

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


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else ""


@contextlib.contextmanager
def _quiet():
    """Hide torch's copy-construct / asarray / complex-cast warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


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
                        resume=True,  # the class name alone: the model needs no resync
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
