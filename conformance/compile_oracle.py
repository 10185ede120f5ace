"""Differential oracle for the compile tier: eager is the oracle.

:func:`differential` runs a function twice on *fresh copies of the same
inputs*: once eagerly, once as ``torch.compile(fn, backend=backend,
fullgraph=False)`` after ``torch._dynamo.reset()`` (so every example is
compiled from scratch and examples are independent), and compares what the
two runs did. It follows PyTorch's own ``verify_aot_autograd(test_mutation=True)``
(``test/functorch/test_aotdispatch.py``) and adds what that helper skips,
which is where the known compile bugs live (version counters, Python
identity of outputs, partially overlapping inputs, storage offsets,
``.data``).

Inputs come from a factory called once per run (:class:`Inputs`): the
arguments, which may alias each other (two views of one base, overlapping or
not, or one tensor passed twice), plus *watched* tensors the function never
sees by name - the bases of the argument views and the leaves behind
non-leaf arguments - so mutations through views, and gradients, are
observed where they land. Nothing is shared between the two runs.

What is compared (each item is one *aspect*, checked as its own claim, see
:data:`ASPECTS`):

``errors``
    The compiled call raises iff the eager call raises; when both raise, the
    compiled exception is an instance of the eager one's type (Dynamo wraps
    tracing errors in ``TorchRuntimeError``, a ``RuntimeError``) and of the
    same class of error (:func:`same_error_class`): a compiler crash never
    "matches" eager's refusal by being a ``RuntimeError`` too. Messages
    are not compared: fake-tensor propagation runs the reference
    implementations, whose texts differ (``int.add_(0.5)``: "Promotion of
    int.add/sub_(float) in in-place ops are not possible due to element size
    change." where eager says "result type Float can't be cast to the
    desired output type Long").
``outputs``
    Per output, in order: tensor or not; for a tensor its dtype, shape and
    values - **bit for bit** (:func:`conformance.checks.element_bytes`) when
    the arithmetic is exact, else within the tolerance ``tolerance`` names
    (:data:`TOLERANCES`); a non-tensor output must be equal. Strides of
    fresh outputs are not compared (no doc promises them through compile);
    those of outputs aliasing an input are, under ``aliasing``.
``metadata``
    Per output tensor: ``requires_grad``, ``is_leaf`` and ``grad_fn is None``
    (never the ``grad_fn`` class: compiled graphs carry
    ``CompiledFunctionBackward``, replayed input mutations ``CopyBackwards``).
``aliasing``
    Per output: which watched tensors and which earlier outputs it shares
    storage with, and the memory it covers (storage offset and strides)
    when it shares storage with a watched tensor.
``identity``
    Per output: which watched tensors and which earlier outputs it *is*
    (Python identity: an in-place method returns ``self``, ``contiguous()``
    of a contiguous tensor returns ``self``).
``mutations``
    Every watched tensor after the call: values, dtype, shape, strides,
    storage offset, ``requires_grad``, ``is_leaf``, ``grad_fn is None``, and
    the partition of the watched tensors by storage (a ``.data =``
    assignment re-points a tensor to another storage).
``versions``
    For every watched tensor: its version counter advanced during the call
    iff it advanced in eager. Only the direction is compared - eager promises
    a bump per in-place op, compiled graphs replay all of an input's
    mutations as one ``copy_`` (aot_eager bumps +2, inductor +1), which no
    document rules out. ``_version`` is read outside the compiled region
    (inside it is a compile-time constant).
``gradients``
    ``backward()`` of an exact scalar loss (:func:`strategies.graphs.scalar_loss`
    of every output and watched tensor that requires grad) raises iff eager's
    does, and every watched or output leaf has the eager ``.grad``.
``output-writes``
    After backward, adding a distinct power of two to each output in turn
    (under ``no_grad``) fails iff it fails in eager, and leaves every watched
    tensor and every output with the eager values: a write into an output
    reaches exactly the tensors it reaches in eager.

:func:`differential` returns a :class:`Comparison`; ``Comparison.check()``
asserts every aspect through :func:`conformance.evidence.check` with the
claim id of :data:`ASPECTS`, so a multi-claim test gets one verdict per
aspect. The function's compile statistics (graphs compiled, graph breaks)
are in ``Comparison.stats`` and are tallied per test.

Isolation: :func:`compile_isolation` disables the AOTAutograd cache, which
is keyed without the aliasing relation of the inputs (on torch 2.13 it hands
a graph compiled for non-aliased inputs to aliased ones, in memory across
``torch._dynamo.reset()`` and on disk across processes: pytorch/pytorch
#139789), keeps inductor's FX graph cache (safe: its key is the
post-AOTAutograd graph), and restores every config it touches and
Dynamo's state on exit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import torch

from conformance.checks import element_bytes

__all__ = [
    "ASPECTS",
    "TOLERANCES",
    "EXAMPLE_SHARE",
    "Inputs",
    "Observation",
    "Comparison",
    "compile_isolation",
    "compiled",
    "compare",
    "differential",
    "observe",
    "scaled_examples",
    "BackendError",
    "DEFAULT_BACKENDS",
    "backend_id",
    "registered_backends",
    "resolve_backend",
]

#: Aspect -> the claim id that states it (``conformance/claims/compile.toml``).
ASPECTS: dict[str, str] = {
    "errors": "compile.errors-match-eager",
    "outputs": "compile.outputs-match-eager",
    "metadata": "compile.output-autograd-metadata-matches-eager",
    "aliasing": "compile.output-aliasing-matches-eager",
    "identity": "compile.output-identity-matches-eager",
    "mutations": "compile.input-mutations-match-eager",
    "versions": "compile.version-bumps-match-eager",
    "gradients": "compile.gradients-match-eager",
    "output-writes": "compile.output-writes-propagate-like-eager",
}

#: Value tolerances for outputs of inexact arithmetic (``tolerance="close"``):
#: ``|got - want| <= atol + rtol * |want|`` per element, the defaults of
#: ``torch.testing.assert_close`` for the dtype. ``tolerance="exact"`` (the
#: default) compares bit for bit.
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}

#: Added to output ``k`` in the output-write phase: exact in every dtype used.
_WRITE_BASE = 32


@dataclass
class Inputs:
    """One fresh set of inputs: ``args`` are passed to the function;
    ``watched`` names every tensor whose state is compared after the call
    (normally the arguments as ``a0``, ``a1``, ... plus bases and leaves).
    A tensor may appear under several names (an argument that is its base);
    observations are keyed by name, so both runs must use the same names."""

    args: tuple
    watched: dict[str, torch.Tensor]
    kwargs: dict = field(default_factory=dict)

    @classmethod
    def of(cls, *args, **extra: torch.Tensor) -> Inputs:
        """``args`` watched as ``a0``, ``a1``, ... (tensors only) plus ``extra``."""
        watched = {f"a{i}": a for i, a in enumerate(args) if isinstance(a, torch.Tensor)}
        watched.update(extra)
        return cls(args=tuple(args), watched=watched)


# --------------------------------------------------------------------------- observation


def _storage_key(t: torch.Tensor) -> int | None:
    """An id of ``t``'s storage comparable within one run (``None`` for a
    zero-byte storage, whose sharing is not observable by address)."""
    s = t.untyped_storage()
    return s.data_ptr() if s.nbytes() else None


def _meta(t: torch.Tensor) -> dict:
    return {
        "dtype": str(t.dtype).removeprefix("torch."),
        "shape": tuple(t.shape),
        "stride": tuple(t.stride()),
        "offset": t.storage_offset(),
    }


def _autograd(t: torch.Tensor) -> dict:
    out = {"requires_grad": t.requires_grad}
    try:
        out["is_leaf"] = t.is_leaf
        out["grad_fn_none"] = t.grad_fn is None
    except RuntimeError as e:  # a no_grad view whose base was modified in grad mode
        first = (str(e).splitlines() or [""])[0][:80]
        out["is_leaf"] = out["grad_fn_none"] = f"raised: {first}"
    return out


def _bytes(t: torch.Tensor) -> bytes:
    return element_bytes(t.detach()).tobytes()


#: Raised to the caller only when the compiler itself failed, never as the
#: way a refused program is reported.
COMPILER_INTERNAL = ("InternalTorchDynamoError", "Unsupported")
_COMPILER_MODULES = ("torch._dynamo", "torch._inductor", "torch._functorch")


def _error(e: BaseException) -> dict:
    """The facts of an exception the comparison reads: type, first line (for
    a backend's ``BackendCompilerFailed``, with the wrapped error's line),
    text, and its root cause (``root``: the last exception of its
    ``__cause__``/``__context__`` chain, ``root_is_compiler``: whether that
    is an exception class of Dynamo, Inductor or AOTAutograd)."""
    text = str(e)
    lines = [line for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if first.endswith(" raised:") and len(lines) > 1:
        # BackendCompilerFailed: "backend='inductor' raised:" then the wrapped
        # error's "Type: message" - the part that says which failure it is
        first = f"{first} {lines[1].strip()}"
    root, x, depth = e, e, 0
    while x is not None and depth < 16:
        root, x, depth = x, x.__cause__ or x.__context__, depth + 1
    return {
        "type": type(e),
        "name": type(e).__name__,
        "first": first,
        "text": text,
        "root": type(root),
        "root_is_compiler": type(root).__module__.startswith(_COMPILER_MODULES),
    }


def same_error_class(eager: dict, comp: dict) -> bool:
    """Did the compiled call refuse the program as eager did? Its exception
    is an instance of eager's type, it is not a compiler failure raised to
    the caller (:data:`COMPILER_INTERNAL`), and what it wraps (a backend
    wraps the error it hit in ``BackendCompilerFailed``) is eager's kind of
    error too - an ``AssertionError`` or ``NameError`` inside inductor
    wrapped as a ``RuntimeError`` is a crash, not a refusal."""
    if comp["name"] in COMPILER_INTERNAL or not issubclass(comp["type"], eager["type"]):
        return False
    root = comp.get("root")
    return root is None or comp.get("root_is_compiler") or issubclass(root, eager["type"])


@dataclass
class Observation:
    """What one run did (eager or compiled), keyed by watched names and
    output positions so two runs compare entry by entry."""

    error: dict | None = None
    outputs: list[dict] = field(default_factory=list)
    watched: dict[str, dict] = field(default_factory=dict)
    partition: list[tuple[str, ...]] = field(default_factory=list)
    version_bumped: dict[str, bool] = field(default_factory=dict)
    backward_error: dict | None = None
    grads: dict[str, bytes | None] = field(default_factory=dict)
    write_errors: list[str | None] = field(default_factory=list)
    write_plan: list[int] = field(default_factory=list)
    after_writes: dict[str, bytes] = field(default_factory=dict)
    values: dict[str, torch.Tensor] = field(default_factory=dict)
    #: Copies of every output and watched tensor taken right after the call
    #: (``values`` holds the live tensors, later written by the output phase).
    snapshot: dict[str, torch.Tensor] = field(default_factory=dict)
    #: The gradients read after backward (copies), by leaf name.
    grad_values: dict[str, torch.Tensor | None] = field(default_factory=dict)
    #: The outputs as returned (live objects).
    returned: list = field(default_factory=list)


def _flatten_outputs(result) -> list:
    if isinstance(result, tuple | list):
        out = []
        for r in result:
            out.extend(_flatten_outputs(r))
        return out
    return [result]


def observe(
    fn: Callable,
    inputs: Inputs,
    *,
    ambient: str = "grad",
    backward: bool = True,
    write_outputs: bool = True,
    write_plan: Sequence[int] | None = None,
) -> Observation:
    """Call ``fn(*inputs.args)`` (under ``torch.no_grad()`` when ``ambient``
    is ``"no_grad"``) and record everything :func:`differential` compares.
    Never raises for an error of ``fn``, of backward or of an output write:
    each is recorded."""
    obs = Observation()
    watched = inputs.watched
    before = {n: t._version for n, t in watched.items()}
    ctx = torch.no_grad() if ambient == "no_grad" else contextlib.nullcontext()
    try:
        with ctx:
            result = fn(*inputs.args, **inputs.kwargs)
    except Exception as e:  # noqa: BLE001 - an error is an observation
        obs.error = _error(e)
        for n, t in watched.items():
            obs.watched[n] = {**_meta(t), **_autograd(t), "bytes": _bytes(t)}
            obs.values[n] = t
            obs.snapshot[n] = t.detach().clone()
            obs.version_bumped[n] = t._version != before[n]
        return obs
    outs = _flatten_outputs(result)
    obs.returned = outs
    names = list(watched)
    # Outputs: identity, storage sharing, footprint, metadata, values.
    wkeys = {n: _storage_key(t) for n, t in watched.items()}
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            obs.outputs.append({"tensor": False, "value": o})
            continue
        key = _storage_key(o)
        rec = {
            "tensor": True,
            **_meta(o),
            **_autograd(o),
            "bytes": _bytes(o),
            "is": tuple(n for n in names if watched[n] is o)
            + tuple(f"out{j}" for j in range(i) if outs[j] is o),
            "shares": tuple(n for n in names if key is not None and wkeys[n] == key)
            + tuple(
                f"out{j}"
                for j in range(i)
                if isinstance(outs[j], torch.Tensor)
                and key is not None
                and _storage_key(outs[j]) == key
            ),
        }
        obs.outputs.append(rec)
        obs.values[f"out{i}"] = o
        obs.snapshot[f"out{i}"] = o.detach().clone()
    # Watched tensors after the call.
    for n, t in watched.items():
        obs.watched[n] = {**_meta(t), **_autograd(t), "bytes": _bytes(t)}
        obs.version_bumped[n] = t._version != before[n]
        obs.values[n] = t
        obs.snapshot[n] = t.detach().clone()
    groups: dict = {}
    for n, t in watched.items():
        groups.setdefault(_storage_key(t) or ("empty", n), []).append(n)
    obs.partition = sorted(tuple(g) for g in groups.values())
    # Backward over everything that requires grad.
    tensors = [o for o in outs if isinstance(o, torch.Tensor)] + list(watched.values())
    if backward and any(t.requires_grad for t in tensors):
        from strategies.graphs import scalar_loss

        try:
            losses = [scalar_loss(t) for t in tensors if t.requires_grad]
            total = losses[0]
            for x in losses[1:]:
                total = total + x
            total.backward()
        except Exception as e:  # noqa: BLE001
            obs.backward_error = _error(e)
        leaves = dict(watched)
        leaves.update({f"out{i}": o for i, o in enumerate(outs) if isinstance(o, torch.Tensor)})
        for n, t in leaves.items():
            if t.is_leaf and t.requires_grad:
                obs.grads[n] = None if t.grad is None else _bytes(t.grad)
                obs.grad_values[n] = None if t.grad is None else t.grad.detach().clone()
    # Write into each distinct output, then read everything.
    if write_outputs:
        if write_plan is None:  # each distinct output tensor once, by identity
            seen: list = []
            plan = []
            for k, o in enumerate(outs):
                if isinstance(o, torch.Tensor) and not any(o is x for x in seen):
                    seen.append(o)
                    plan.append(k)
        else:
            plan = list(write_plan)
        obs.write_plan = plan
        for k, o in enumerate(outs):
            if k not in plan or not isinstance(o, torch.Tensor):
                obs.write_errors.append(None)
                continue
            try:
                with torch.no_grad():
                    o.add_(_WRITE_BASE << k)
                obs.write_errors.append(None)
            except Exception as e:  # noqa: BLE001
                obs.write_errors.append(f"{type(e).__name__}: {_error(e)['first']}")
        for n, t in watched.items():
            obs.after_writes[n] = _bytes(t)
        for i, o in enumerate(outs):
            if isinstance(o, torch.Tensor):
                obs.after_writes[f"out{i}"] = _bytes(o)
    return obs


# --------------------------------------------------------------------------- compile


def _patch(obj, name: str, value, saved: list) -> None:
    if obj is not None and hasattr(obj, name):
        saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)


@contextlib.contextmanager
def compile_isolation() -> Iterator[None]:
    """Run the body with compile state that cannot leak between examples.

    ``torch._dynamo.reset()`` before and after (guards, recompiles and
    Dynamo counters start empty); the AOTAutograd cache off (its key ignores
    input aliasing, pytorch/pytorch#139789); inductor compiling in this
    process (``compile_threads = 1``: no worker pool forked from a test
    process); every patched config restored on exit, as are grad mode and
    the default dtype.
    """
    import torch._dynamo

    saved: list = []
    grad = torch.is_grad_enabled()
    dtype = torch.get_default_dtype()
    try:
        import torch._functorch.config as functorch_config
    except ImportError:  # pragma: no cover - very old torch
        functorch_config = None
    try:
        import torch._inductor.config as inductor_config
    except ImportError:  # pragma: no cover
        inductor_config = None
    _patch(functorch_config, "enable_autograd_cache", False, saved)
    _patch(inductor_config, "compile_threads", 1, saved)
    torch._dynamo.reset()
    try:
        yield
    finally:
        torch._dynamo.reset()
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
        # Old inductor kernels set flush-to-zero process-wide when loaded
        # (compile.fp-environment-untouched checks it): never let it leak.
        from conformance.capabilities import restore_subnormals

        restore_subnormals()


# --------------------------------------------------------------------------- backends

#: The backends a run compares by default, the Dynamo-only oracle check first.
DEFAULT_BACKENDS = ("eager", "aot_eager", "inductor")


class BackendError(ValueError):
    """A ``--backends`` name that names no backend: not registered with
    Dynamo, or a ``module:callable`` that cannot be imported. The message
    is one line."""


def backend_id(backend: str) -> str:
    """The form of ``backend`` used in pytest test ids (and so in JUnit and
    ``--xfails-file`` lines and file names): a registered name as it is
    (``aot_eager``), a ``module:callable`` with its colon turned into a dot
    (``mypkg.mod:my_backend`` -> ``mypkg.mod.my_backend``, the callable's
    qualified name). ``results.json``, reports, expectations and ``compare``
    carry the name exactly as given."""
    return backend.replace(":", ".")


def registered_backends() -> list[str]:
    """Every backend name registered with Dynamo, the debug and experimental
    ones included (``list_backends(exclude_tags=())``): from the public
    ``torch.compiler.list_backends`` where the release has it, else
    ``torch._dynamo.list_backends`` (torch 2.1)."""
    import torch.compiler

    from conformance.capabilities import has_api

    if has_api(torch.compiler, "list_backends"):
        return list(torch.compiler.list_backends(exclude_tags=()))
    import torch._dynamo

    return list(torch._dynamo.list_backends(exclude_tags=()))


def _import_callable(spec: str) -> Callable:
    import importlib

    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise BackendError(f"{spec!r}: expected module:callable")
    try:
        obj = importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 - any import failure is one line
        first = (str(e).splitlines() or [""])[0]
        raise BackendError(f"cannot import {module}: {type(e).__name__}: {first}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise BackendError(f"module {module} has no attribute {attr!r}") from None
    if not callable(obj):
        raise BackendError(f"{spec} is not callable (a {type(obj).__name__})")
    return obj


#: ``module:callable`` -> the callable :func:`resolve_backend` imported for it
#: in this process (the plugin resolves every ``--backends`` name when it is
#: configured, in each worker too).
_CALLABLES: dict = {}


def resolve_backend(backend: str) -> str | Callable:
    """What ``torch.compile(backend=...)`` takes for a ``--backends`` name:
    a name registered with Dynamo (:func:`registered_backends`) as it is,
    or for ``module:callable`` (``mypkg.mod:my_backend``, the callable may be
    a dotted attribute path) the callable itself, imported from the module
    (importable from ``sys.path``). Resolved once per process.

    Raises :class:`BackendError` (one line) for an unregistered name or a
    callable that cannot be imported."""
    if ":" in backend:
        if backend not in _CALLABLES:
            _CALLABLES[backend] = _import_callable(backend)
        return _CALLABLES[backend]
    if backend in DEFAULT_BACKENDS or backend in registered_backends():
        return backend
    raise BackendError(
        f"{backend!r} is not a registered torch.compile backend (torch "
        f"{torch.__version__} has {', '.join(registered_backends())}) nor a module:callable"
    )


def compiled(fn: Callable, backend: str) -> Callable:
    """``torch.compile(fn, backend=B, fullgraph=False)`` with ``B`` the
    backend ``backend`` names: a registered name as it is, the callable of
    a ``module:callable`` once :func:`resolve_backend` imported it in this
    process (the plugin does so for every ``--backends`` name). Kept free of
    the import machinery, so torch-only snippets can copy it.

    Raises ``ValueError`` for a ``module:callable`` not resolved here."""
    if ":" in backend and backend not in _CALLABLES:
        raise ValueError(
            f"backend {backend}: call conformance.compile_oracle.resolve_backend first"
        )
    return torch.compile(fn, backend=_CALLABLES.get(backend, backend), fullgraph=False)


def _graph_stats() -> dict:
    from torch._dynamo.utils import counters

    return {
        "graphs": int(counters["stats"].get("unique_graphs", 0)),
        "graph_breaks": int(sum(counters["graph_break"].values())),
    }


# --------------------------------------------------------------------------- comparison


@dataclass
class Comparison:
    """The two observations and what differs, per aspect (:data:`ASPECTS`)."""

    backend: str
    eager: Observation
    compiled: Observation
    differences: dict[str, list[str]]
    stats: dict
    source: str = ""

    @property
    def agree(self) -> bool:
        return not any(self.differences.values())

    def message(self, aspect: str) -> str:
        diffs = self.differences.get(aspect, [])
        text = f"backend {self.backend} differs from eager ({aspect}): " + "; ".join(diffs[:6])
        if len(diffs) > 6:
            text += f"; (+{len(diffs) - 6} more)"
        if self.source:
            text += "\nprogram:\n" + self.source
        return text

    def first_difference(self, aspects: Sequence[str] | None = None) -> str | None:
        """The message of the first aspect (in :data:`ASPECTS` order) that
        differs, or ``None`` when they all agree."""
        for aspect in aspects or ASPECTS:
            if self.differences.get(aspect):
                return self.message(aspect)
        return None

    def check(self, aspects: Sequence[str] | None = None) -> None:
        """Assert each aspect with :func:`conformance.evidence.check` under
        its claim id, and tally the compile statistics."""
        from conformance import evidence

        if self.stats.get("graphs", 0) == 0:
            evidence.tally("examples that compiled no graph")
        evidence.tally("graphs compiled", self.stats.get("graphs", 0))
        evidence.tally("graph breaks", self.stats.get("graph_breaks", 0))
        for aspect in aspects or ASPECTS:
            evidence.check(ASPECTS[aspect], not self.differences.get(aspect), self.message(aspect))


def _close(got: torch.Tensor, want: torch.Tensor) -> bool:
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if not (want.dtype.is_floating_point or want.dtype.is_complex):
        return bool(torch.equal(got, want))
    rtol, atol = TOLERANCES.get(want.dtype, (0.0, 0.0))
    g = got.detach().to(torch.complex128 if want.dtype.is_complex else torch.float64)
    w = want.detach().to(g.dtype)
    nan = w.isnan()
    if not torch.equal(nan, g.isnan()):
        return False
    ok = ((g - w).abs() <= atol + rtol * w.abs()) | nan | (g == w)
    return bool(ok.all())


def _values_match(e: Observation, c: Observation, name: str, tolerance: str) -> bool:
    if tolerance == "exact":
        return True  # bytes are compared by the caller
    return _close(c.snapshot[name], e.snapshot[name])


def compare(
    eager: Observation, comp: Observation, *, tolerance: str = "exact"
) -> dict[str, list[str]]:
    """What differs between two observations, per aspect."""
    d: dict[str, list[str]] = {a: [] for a in ASPECTS}
    if (eager.error is None) != (comp.error is None):
        if comp.error is not None:
            d["errors"].append(f"compiled raised {comp.error['name']}: {comp.error['first']}")
        else:
            d["errors"].append(
                f"eager raised {eager.error['name']}: {eager.error['first']}; compiled did not"
            )
        return d
    if eager.error is not None:
        ee, ce = eager.error, comp.error
        if not same_error_class(ee, ce):
            d["errors"].append(
                f"eager raised {ee['name']}: {ee['first']!r}; compiled raised {ce['name']}: "
                f"{ce['first']!r}"
            )
        _compare_watched(eager, comp, d, tolerance)
        return d
    # outputs
    if len(eager.outputs) != len(comp.outputs):
        d["outputs"].append(f"{len(comp.outputs)} outputs, eager {len(eager.outputs)}")
        return d
    for i, (eo, co) in enumerate(zip(eager.outputs, comp.outputs, strict=True)):
        tag = f"out{i}"
        if eo["tensor"] != co["tensor"]:
            d["outputs"].append(f"{tag} is {'a tensor' if co['tensor'] else 'not a tensor'}")
            continue
        if not eo["tensor"]:
            if eo["value"] != co["value"]:
                d["outputs"].append(f"{tag} = {co['value']!r}, eager {eo['value']!r}")
            continue
        for k in ("dtype", "shape"):
            if eo[k] != co[k]:
                d["outputs"].append(f"{tag}.{k} = {co[k]}, eager {eo[k]}")
        if eo["dtype"] == co["dtype"] and eo["shape"] == co["shape"]:
            if tolerance == "exact":
                if eo["bytes"] != co["bytes"]:
                    d["outputs"].append(
                        f"{tag} values differ bit for bit: {_show(comp, eager, tag)}"
                    )
            elif not _values_match(eager, comp, tag, tolerance):
                d["outputs"].append(f"{tag} values beyond tolerance: {_show(comp, eager, tag)}")
        watched_alias = [s for s in eo["shares"] if not s.startswith("out")]
        if watched_alias and (eo["stride"], eo["offset"]) != (co["stride"], co["offset"]):
            d["aliasing"].append(
                f"{tag} (a view of {watched_alias[0]}) has strides {co['stride']} offset "
                f"{co['offset']}, eager {eo['stride']} offset {eo['offset']}"
            )
        for k in ("requires_grad", "is_leaf", "grad_fn_none"):
            if eo[k] != co[k]:
                d["metadata"].append(f"{tag}.{k} = {co[k]}, eager {eo[k]}")
        if eo["is"] != co["is"]:
            d["identity"].append(f"{tag} is {_names(co['is'])} (eager: {_names(eo['is'])})")
        if eo["shares"] != co["shares"]:
            d["aliasing"].append(
                f"{tag} shares storage with {_names(co['shares'])} (eager: {_names(eo['shares'])})"
            )
    _compare_watched(eager, comp, d, tolerance)
    # versions
    for n, bumped in eager.version_bumped.items():
        if comp.version_bumped.get(n) != bumped:
            d["versions"].append(
                f"{n}._version {'advanced' if comp.version_bumped.get(n) else 'did not advance'} "
                f"(eager: {'advanced' if bumped else 'unchanged'})"
            )
    # gradients
    if (eager.backward_error is None) != (comp.backward_error is None):
        which = comp.backward_error or eager.backward_error
        d["gradients"].append(
            f"backward {'raised' if comp.backward_error else 'did not raise'} "
            f"({which['name']}: {which['first'][:200]}) "
            f"{'where eager did not' if comp.backward_error else 'although eager raised'}"
        )
    elif eager.backward_error is None:
        for n in sorted(set(eager.grads) | set(comp.grads)):
            eg, cg = eager.grads.get(n, "absent"), comp.grads.get(n, "absent")
            if eg != cg:
                d["gradients"].append(f"{n}.grad {_grad_text(cg)} (eager {_grad_text(eg)})")
    # output writes
    for k, (ew, cw) in enumerate(zip(eager.write_errors, comp.write_errors, strict=False)):
        if (ew is None) != (cw is None):
            d["output-writes"].append(
                f"writing into out{k} {'raised ' + cw if cw else 'succeeded'} "
                f"(eager: {'raised ' + ew if ew else 'succeeded'})"
            )
    if not d["output-writes"]:
        for n in eager.after_writes:
            if eager.after_writes[n] != comp.after_writes.get(n):
                d["output-writes"].append(f"after writing into the outputs, {n} differs from eager")
    return d


def _compare_watched(eager: Observation, comp: Observation, d: dict, tolerance: str) -> None:
    for n, ew in eager.watched.items():
        cw = comp.watched.get(n)
        if cw is None:
            d["mutations"].append(f"{n} not observed")
            continue
        for k in ("dtype", "shape", "stride", "offset", "requires_grad", "is_leaf", "grad_fn_none"):
            if ew[k] != cw[k]:
                d["mutations"].append(f"{n}.{k} = {cw[k]} after the call, eager {ew[k]}")
        if ew["dtype"] == cw["dtype"] and ew["shape"] == cw["shape"] and ew["bytes"] != cw["bytes"]:
            if tolerance == "exact" or not _values_match(eager, comp, n, tolerance):
                d["mutations"].append(f"{n} values after the call: {_show(comp, eager, n)}")
    if eager.partition != comp.partition:
        d["mutations"].append(
            f"storage partition of the inputs {comp.partition} (eager {eager.partition})"
        )


def _names(names: tuple) -> str:
    return "{" + ", ".join(names) + "}" if names else "nothing"


def _grad_text(g) -> str:
    return g if isinstance(g, str) else ("None" if g is None else "<values>")


def _show(comp: Observation, eager: Observation, name: str) -> str:
    from conformance.checks import bits_difference

    got, want = comp.snapshot.get(name), eager.snapshot.get(name)
    if got is None or want is None:
        return "values differ"
    try:
        return bits_difference(got.detach(), want.detach()) or "values differ"
    except (TypeError, ValueError):
        return "values differ"


def differential(
    fn: Callable,
    make_inputs: Callable[[], Inputs],
    backend: str,
    *,
    ambient: str = "grad",
    tolerance: str = "exact",
    backward: bool = True,
    write_outputs: bool = True,
    source: str = "",
) -> Comparison:
    """Run ``fn`` eagerly and compiled with ``backend`` on fresh inputs from
    ``make_inputs`` and compare them (see the module docstring).

    ``ambient``: ``"grad"`` or ``"no_grad"`` (the grad mode around the call);
    ``tolerance``: ``"exact"`` (bit for bit) or ``"close"``
    (:data:`TOLERANCES`); ``source``: the program text quoted in failure
    messages. Returns a :class:`Comparison`; raises only for errors of the
    harness itself.
    """
    eager = observe(
        fn, make_inputs(), ambient=ambient, backward=backward, write_outputs=write_outputs
    )
    with compile_isolation():
        from torch._dynamo.utils import counters

        counters.clear()
        comp = observe(
            compiled(fn, backend),
            make_inputs(),
            ambient=ambient,
            backward=backward,
            write_outputs=write_outputs,
            write_plan=eager.write_plan,
        )
        stats = _graph_stats()
    diffs = compare(eager, comp, tolerance=tolerance)
    return Comparison(backend, eager, comp, diffs, stats, source)


# --------------------------------------------------------------------------- per-backend budget

#: Share of the profile's ``max_examples`` a generated-program test runs per
#: backend (``ci``: 100 eager, 100 aot_eager, 30 inductor). Inductor
#: compiles C++ for every new graph (0.6-3.6 s each on two loaded cores).
#: A backend not listed here (any other registered name, a ``module:callable``)
#: runs the full count: only a backend known to be slow gets less.
EXAMPLE_SHARE: dict[str, float] = {"eager": 1.0, "aot_eager": 1.0, "inductor": 0.3}


def scaled_examples(share: float) -> int:
    """``share`` of the loaded Hypothesis profile's ``max_examples`` (at
    least 1), for ``@settings(max_examples=...)`` of a test that runs on an
    expensive backend only: ``ci`` 100 -> 30, ``thorough`` 2000 -> 600.
    Evaluated when the test module is imported, after the plugin loaded the
    profile."""
    from hypothesis import settings

    return max(1, round(settings.default.max_examples * share))
