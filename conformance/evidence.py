"""Per-example evidence a property test hands to the gate.

The plugin (:mod:`reports.plugin`) runs every Hypothesis example inside an
*example frame* and every test inside a *test ledger*; a property test talks
to them through three calls, all no-ops outside a conformance run:

:func:`features`
    Name the part of the input space the current example lies in (``dtype``,
    ``layout``, ``form``, ...). A known deviation in ``expectations.toml`` may
    carve out a ``region`` over these features: inside it the test must fail
    with the recorded signature, outside it the claim itself must hold.
    Features derived from the test's arguments are added automatically
    (see :func:`auto_features`); call this for the rest.
:func:`check`
    Assert one claim of a test that checks several. A violation raises
    :class:`ClaimViolation` naming the claim, so the failure is attributed to
    that claim alone; once a claim has failed the plugin re-runs the test with
    that claim *muted* (its violations are counted, not raised), so every
    other claim still gets its verdict over the full example count.
:func:`not_applicable`
    Declare that the current example (or the whole test, when called
    outside any example) *cannot exercise its claim on the installed torch*:
    a helper op lacks the dtype, an API or argument form does not exist yet,
    sharing is not observable through public APIs. The example is counted
    per reason and gives no evidence either way; a test all of whose
    examples were not applicable gets the verdict ``not-applicable``, with
    the reasons, never a failure. Use it only for what is not the claim:
    a claim whose own operation misbehaves must fail.
:func:`tally`
    Count something about the inputs that the report should state, e.g.
    ``tally("ill-conditioned")`` for a gradient example too ill-conditioned to
    judge in its dtype. Tallies are shown per test; nothing is dropped silently.

Example::

    @pytest.mark.claim("a.one", "a.two")
    @given(spec=tensor_specs())
    def test_two_claims(device, spec):
        t = spec.build(device)
        evidence.features(form="method")
        evidence.check("a.one", t.clone() is not t, "clone() returned its input")
        evidence.check("a.two", t.detach().dtype == t.dtype, "detach() changed the dtype")
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from conformance.registry import domain_value

__all__ = [
    "ClaimViolation",
    "NotApplicable",
    "not_applicable",
    "Example",
    "Ledger",
    "features",
    "check",
    "checked",
    "credit",
    "muted",
    "violation_of_muted",
    "tally",
    "program_started",
    "program_failed",
    "current_example",
    "current_ledger",
    "auto_features",
]


class ClaimViolation(AssertionError):
    """A claim of a multi-claim test was violated; ``claim`` names it.

    The message starts with ``[claim-id]`` so a reader (and the plugin's
    attribution) sees which claim failed.
    """

    def __init__(self, claim: str, message: str):
        super().__init__(f"[{claim}] {message}")
        self.claim = claim


class NotApplicable(Exception):
    """Raised by :func:`not_applicable`: this example cannot exercise its
    claim on the installed torch; ``reason`` says why (one line)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def not_applicable(reason: str):
    """Stop the current example: it cannot exercise its claim on this torch.

    ``reason`` is one line naming what is missing (``"torch.where has no
    uint16 kernel on cpu"``) - the plugin prefixes the torch version. Raises
    :class:`NotApplicable`; never returns.
    """
    raise NotApplicable(" ".join(str(reason).split()))


@dataclass
class Example:
    """What one Hypothesis example reported: its features and checked claims."""

    features: dict = field(default_factory=dict)
    checked: set[str] = field(default_factory=set)
    muted_violations: list[tuple[str, str]] = field(default_factory=list)
    #: Set when the example credited claims itself (:func:`credit`).
    credited: bool = False


@dataclass
class Ledger:
    """Evidence of one test run (all its examples), kept by the plugin.

    Attributes:
        claims: the claim ids the test carries.
        muted: claims whose violations are counted instead of raised (they
            already failed in an earlier pass of this test).
        claim_examples: claim id -> number of examples that checked it and
            did not violate it.
        tallies: name -> count, from :func:`tally`.
        muted_counts: claim id -> number of violations of a muted claim (one
            per example for :func:`check`; a state-machine program can record
            several).
        muted_signatures: claim id -> Counter of ``(exception type name,
            message)`` of those violations: the plugin
            requires each to have the signature of the entry that explains
            the claim's failure (a different one is a regression).
        not_applicable: reason -> number of examples that could not exercise
            the test's claims on this torch (:func:`not_applicable`).
        region: deviation key -> {"inside": n, "outside": m} (filled by the plugin).
        domains: claim id -> its declared domain ``((dimension, values), ...)``
            (set by the plugin from the registry).
        coverage: claim id -> Counter of ``(dimension, value name)``: the
            examples that checked the claim, held, and reported that value of
            a declared dimension as a feature.
        program_clock: set by the plugin: the shrinking budget of a test
            that runs a Hypothesis engine of its own (see
            :func:`program_started`, :func:`program_failed`).
    """

    claims: tuple[str, ...] = ()
    muted: set[str] = field(default_factory=set)
    claim_examples: Counter = field(default_factory=Counter)
    tallies: Counter = field(default_factory=Counter)
    muted_counts: Counter = field(default_factory=Counter)
    muted_signatures: dict = field(default_factory=dict)
    not_applicable: Counter = field(default_factory=Counter)
    region: dict = field(default_factory=dict)
    domains: dict = field(default_factory=dict)
    coverage: dict = field(default_factory=dict)
    #: claim id -> Counter of ``(dimension, value name)`` drawn by examples
    #: that were not applicable on this torch (:func:`not_applicable`): a
    #: declared value only such examples drew is "not applicable here", not
    #: "never checked".
    na_coverage: dict = field(default_factory=dict)
    #: ``(deviated, features)`` of each example of a test with a whole-test
    #: entry: whether it deviated as the entry records, and what it reported
    #: (the plugin proposes a region from them: :func:`conformance.expectations.propose_region`).
    whole_examples: list = field(default_factory=list)
    program_clock: Callable[[BaseException | None], None] | None = None

    def note_violation(self, claim: str, exception: str, message: str) -> None:
        """Keep the signature of one violation of the muted ``claim``."""
        self.muted_signatures.setdefault(claim, Counter())[(exception, message[:2000])] += 1

    def reset_counts(self) -> None:
        """Forget the counts of a previous pass (the muted set stays)."""
        self.claim_examples.clear()
        self.tallies.clear()
        self.muted_counts.clear()
        self.muted_signatures.clear()
        self.not_applicable.clear()
        self.na_coverage.clear()
        self.region.clear()
        self.coverage.clear()
        self.whole_examples.clear()

    def finish_example(self, ex: Example, *, passed: bool) -> None:
        """Fold one example into the counts. An example that passed credits
        every claim it checked with :func:`check`/:func:`checked`; one that
        named none credits every claim of the test that is not muted (all
        its assertions ran and held)."""
        if not passed or ex.credited:
            return
        violated = {c for c, _ in ex.muted_violations}
        for c, message in ex.muted_violations:
            self.muted_counts[c] += 1
            self.note_violation(c, "ClaimViolation", f"[{c}] {message}")
        checked = ex.checked or (set(self.claims) - self.muted)
        for c in checked - violated:
            self.claim_examples[c] += 1
            self._count_domain(self.coverage, c, ex)

    def note_not_applicable(self, ex: Example) -> None:
        """Count the declared domain values a not-applicable example drew, for
        every claim of the test (see :attr:`na_coverage`)."""
        for c in self.claims:
            self._count_domain(self.na_coverage, c, ex)

    def _count_domain(self, into: dict, claim: str, ex: Example) -> None:
        for dim, _values in self.domains.get(claim, ()):
            if dim in ex.features:
                drawn = ex.features[dim]
                # a set-valued feature (a layout's kinds) draws each member
                members = drawn if isinstance(drawn, set | frozenset) else (drawn,)
                for value in {domain_value(v) for v in members}:
                    into.setdefault(claim, Counter())[(dim, value)] += 1


_LEDGER: list[Ledger] = []
_EXAMPLE: list[Example] = []


def current_ledger() -> Ledger | None:
    """The ledger of the running test, or ``None`` outside a conformance run."""
    return _LEDGER[-1] if _LEDGER else None


def current_example() -> Example | None:
    """The frame of the running example, or ``None`` outside one."""
    return _EXAMPLE[-1] if _EXAMPLE else None


@contextlib.contextmanager
def ledger(claims: Iterable[str]) -> Iterator[Ledger]:
    """Run a test under a fresh :class:`Ledger` (used by the plugin)."""
    led = Ledger(claims=tuple(claims))
    _LEDGER.append(led)
    try:
        yield led
    finally:
        _LEDGER.pop()


@contextlib.contextmanager
def example_frame(initial: dict | None = None) -> Iterator[Example]:
    """Run one example under a fresh :class:`Example` (used by the plugin)."""
    ex = Example(features=dict(initial or {}))
    _EXAMPLE.append(ex)
    try:
        yield ex
    finally:
        _EXAMPLE.pop()


def features(**kw) -> None:
    """Record features of the current example (str, bool, int, ``None`` or a
    set/frozenset of str). A region of a known deviation is a predicate over
    them; see :mod:`conformance.expectations`. Later calls override earlier
    keys. A no-op outside a conformance run."""
    ex = current_example()
    if ex is not None:
        ex.features.update(kw)


def checked(*claims: str) -> None:
    """Record that the current example checked ``claims`` and found them held
    (for checks that are not plain booleans, e.g. a state-machine step)."""
    ex = current_example()
    if ex is not None:
        ex.checked.update(claims)


def credit(claims: Iterable[str]) -> None:
    """Count one example of evidence for each of ``claims`` directly.

    For a test whose single pytest example runs many programs of its own (a
    ``hypothesis.stateful`` machine run by ``run_state_machine_as_test``):
    each program credits the claims its steps checked, once, on teardown.
    """
    led = current_ledger()
    ex = current_example()
    if ex is not None:
        ex.credited = True
    if led is not None:
        for c in set(claims):
            led.claim_examples[c] += 1


def check(claim: str, ok: bool, message: str) -> None:
    """Assert ``claim`` for the current example.

    Raises :class:`ClaimViolation` (an ``AssertionError``) when ``ok`` is
    false, unless the plugin muted ``claim`` after an earlier failure; then
    the violation is counted and the example goes on checking the others.
    """
    ex = current_example()
    led = current_ledger()
    if ok:
        if ex is not None:
            ex.checked.add(claim)
        return
    if led is not None and claim in led.muted:
        if ex is not None:
            ex.muted_violations.append((claim, message))
        return
    raise ClaimViolation(claim, message)


def violation_of_muted(claim: str, message: str, exception: str = "AssertionError") -> None:
    """Record a violation of ``claim``, which the running test muted (it
    already failed), instead of raising it: counted, and its signature kept
    for the plugin to compare with the entry that explains the claim.

    For a check that goes on after the violation itself (the state machine:
    one program checks many claims and keeps going where it can); a
    :func:`check` of a muted claim records its violations the same way.
    ``message`` is the text the violation would have been raised with."""
    led = current_ledger()
    if led is not None:
        led.muted_counts[claim] += 1
        led.note_violation(claim, exception, message)


def muted(claim: str) -> bool:
    """True when the running test has muted ``claim`` (it already failed)."""
    led = current_ledger()
    return led is not None and claim in led.muted


def program_started() -> None:
    """Call first in each program of a Hypothesis engine that a test runs
    itself (a ``hypothesis.stateful`` machine under
    ``run_state_machine_as_test``, whose programs the plugin does not see
    one by one).

    Once a program of the engine failed (:func:`program_failed`) and the
    engine has shrunk it for the suite's shrinking budget
    (``TORCH_CONFORMANCE_SHRINK_BUDGET``, as for ``@given`` tests), this
    raises the plugin's ``ShrinkBudgetSpent`` (a ``KeyboardInterrupt``,
    which Hypothesis lets through without recording the program): the test
    then reports the smallest failing program found by then. A failure that
    does not pass through :func:`program_failed` starts no clock. A no-op
    outside a conformance run."""
    led = current_ledger()
    if led is not None and led.program_clock is not None:
        led.program_clock(None)


def program_failed(error: BaseException) -> None:
    """Call with the error a program of such an engine is about to raise
    (a falsifying program): starts the shrinking budget's clock at the
    first one, and keeps ``error`` as the failure to report if the budget
    stops the shrinking. A no-op outside a conformance run."""
    led = current_ledger()
    if led is not None and led.program_clock is not None:
        led.program_clock(error)


def tally(name: str, n: int = 1) -> None:
    """Add ``n`` to the running test's counter ``name`` (shown in the report)."""
    led = current_ledger()
    if led is not None:
        led.tallies[name] += n


def ndarray_kinds(a) -> frozenset[str]:
    """The ``ndarray_kind`` domain values (``conformance/domains.toml``) of a
    NumPy array or scalar ``a``: ``numpy_scalar`` for a ``numpy.generic``;
    otherwise any of ``read_only`` (``flags.writeable`` False), ``byteswapped``
    (non-native byte order), ``misaligned`` (``flags.aligned`` False),
    ``non_contiguous`` (neither C- nor F-contiguous), ``zero_size`` and
    ``0-d``, or ``plain`` when none applies."""
    import numpy as np

    if isinstance(a, np.generic):
        return frozenset({"numpy_scalar"})
    kinds = set()
    if not a.flags.writeable:
        kinds.add("read_only")
    if not a.dtype.isnative:
        kinds.add("byteswapped")
    if not a.flags.aligned:
        kinds.add("misaligned")
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        kinds.add("non_contiguous")
    if a.size == 0:
        kinds.add("zero_size")
    if a.ndim == 0:
        kinds.add("0-d")
    return frozenset(kinds or {"plain"})


def auto_features(kwargs: dict) -> dict:
    """Features derived from a test's generated arguments.

    - a :class:`~strategies.TensorSpec` argument ``x`` (or a tuple ``x`` whose
      first item is one: ``x[0].dtype`` and so on) gives ``x.dtype`` (name),
      ``x.layout`` (the set of :func:`~strategies.layout_kinds` of the built
      tensor, computed on the meta device), ``x.ndim``, ``x.numel``, ``x.view``
      (bool), ``x.channels_last`` and ``x.dtype_family``
      (:func:`~strategies.dtypes.dtype_family`); the first such argument also
      gives the unprefixed ``dtype``, ``dtype_family``, ``layout``, ``ndim``
      and ``numel``;
    - a ``numpy.ndarray`` (or NumPy scalar) argument ``a`` gives ``a.dtype``
      (NumPy's name, which is torch's for the dtypes both have), ``a.ndim``,
      ``a.numel``, ``a.writeable`` and ``a.ndarray_kind`` (:func:`ndarray_kinds`);
      the first tensor-like argument also gives the unprefixed ``dtype``,
      ``ndim``, ``numel`` and ``ndarray_kind``;
    - a recipe whose ``dtype`` is a str (the sequences machine's ``Fresh``) gives
      ``x.dtype`` (and the unprefixed ``dtype`` when it comes first);
    - a ``torch.dtype`` or ``numpy.dtype`` argument gives its name (a ``torch.dtype``
      also gives ``dtype_family`` unless a tensor argument gave it), ``None`` gives ``"none"``;
    - str, bool and int arguments are taken as they are;
    - ``everywhere`` is always ``True``: a region ``{ everywhere = true }``
      says that every example of the test deviates (and each must).
    """
    import numpy as np
    import torch

    from strategies.domains import layout_kinds
    from strategies.dtypes import dtype_family, dtype_name
    from strategies.tensors import TensorSpec

    def _family(dtype) -> str:
        try:
            return dtype_family(dtype)
        except ValueError:  # quantized, float8: in no family a domain names
            return "other"

    out: dict = {"everywhere": True}
    first = True
    for name, value in kwargs.items():
        if isinstance(value, tuple) and value and isinstance(value[0], TensorSpec):
            name, value = f"{name}[0]", value[0]  # a (spec, ...) case drawn together
        if isinstance(value, TensorSpec):
            meta = torch.empty((), device="meta")
            try:
                base = torch.empty(value.base_shape, dtype=value.dtype, device="meta")
                if value.channels_last:
                    base = base.contiguous(memory_format=torch.channels_last)
                meta = value.apply_views(base)
            except (RuntimeError, ValueError):
                pass
            f = {
                "dtype": dtype_name(value.dtype),
                "dtype_family": _family(value.dtype),
                "layout": layout_kinds(meta),
                "ndim": meta.dim(),
                "numel": meta.numel(),
                "view": value.is_view,
                "channels_last": value.channels_last,
            }
            out.update({f"{name}.{k}": v for k, v in f.items()})
            if first:
                out.update({k: f[k] for k in ("dtype", "dtype_family", "layout", "ndim", "numel")})
                first = False
        elif isinstance(getattr(value, "dtype", None), str):
            # a recipe naming its dtype (the sequences machine's Fresh)
            out[f"{name}.dtype"] = value.dtype
            if first:
                out["dtype"] = value.dtype
                first = False
        elif isinstance(value, np.ndarray | np.generic):
            f = {"dtype": value.dtype.name, "ndim": value.ndim, "numel": value.size,
                 "writeable": bool(value.flags.writeable),
                 "ndarray_kind": ndarray_kinds(value)}  # fmt: skip
            out.update({f"{name}.{k}": v for k, v in f.items()})
            if first:
                out.update({k: f[k] for k in ("dtype", "ndim", "numel", "ndarray_kind")})
                first = False
        elif isinstance(value, torch.dtype):
            out[name] = dtype_name(value)
            if "dtype_family" not in out and _family(value) != "other":
                out["dtype_family"] = _family(value)
        elif isinstance(value, np.dtype):
            out[name] = value.name
        elif value is None:
            out[name] = "none"
        elif isinstance(value, str | bool | int):
            out[name] = value
    return out
