"""The records of the compile tier's generated programs, their renderer and
executor, and the features they report.

A :class:`Program` (bases, arguments, steps, returns, the ambient grad
mode) is drawn by :func:`strategies.programs.programs`, which explains what
a program may contain and why it is valid by construction. This module
holds what the tests, the oracle and the reports need of a program without
drawing one: the frozen records, their runnable ``repr``, the source of the
function and of its inputs, running one step eagerly, and the region
features (:meth:`Program.features`, :meth:`Program.layout_features`,
:func:`arg_layouts`, :func:`output_kind`).
"""

from __future__ import annotations

import contextlib
import linecache
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from strategies._repr import params_repr, tuple_repr
from strategies.dtypes import dtype_name
from strategies.views import VIEWS

__all__ = [
    "Base",
    "Arg",
    "Step",
    "Program",
    "STEP_KINDS",
    "PROGRAM_VIEW_KINDS",
    "STEP_MODES",
    "IN_PLACE",
    "ARG_LAYOUTS",
    "OUTPUT_KINDS",
    "arg_layouts",
    "output_kind",
    "run_step",
    "apply_view",
]

#: View sub-ops of an :class:`Arg` or a ``view`` :class:`Step`: ``("slice", dim, start, step)``
#: (to the end of ``dim``), ``("select", dim, index)``, ``("transpose", d0, d1)``,
#: ``("unsqueeze", dim)``, ``("expand", n, ndim)`` (a new leading dimension of size ``n``
#: with stride 0 over the ``ndim`` existing ones). Not a spec's ``tensors.VIEW_KINDS``.
PROGRAM_VIEW_KINDS: tuple[str, ...] = ("slice", "select", "transpose", "unsqueeze", "expand")
#: In-place step kinds.
IN_PLACE: tuple[str, ...] = ("add_", "sub_", "mul_", "copy_", "zero_", "fill_", "setitem")
#: Every step kind.
STEP_KINDS: tuple[str, ...] = (
    "view", "detach", "data", "clone", "contiguous", "to", "reshape",
    "add", "sub", "scale", "neg", "requires_grad_",
) + IN_PLACE  # fmt: skip
#: Grad-mode blocks a :class:`Step` can run in: ``inherit`` (none: the mode the function is
#: called under, :attr:`Program.ambient`), ``torch.no_grad()``, ``torch.enable_grad()``.
#: Not :data:`strategies.graphs.GRAD_MODES`, the modes a graph op runs in.
STEP_MODES: tuple[str, ...] = ("inherit", "no_grad", "enable_grad")
DTYPES: tuple[torch.dtype, ...] = (torch.float32, torch.float64, torch.int64)
#: The ``arg_layout`` domain values (``conformance/domains.toml``), see :func:`arg_layouts`.
ARG_LAYOUTS: tuple[str, ...] = ("contiguous", "transposed", "offset", "expanded", "aliased")
#: The ``output_kind`` domain values, see :func:`output_kind`.
OUTPUT_KINDS: tuple[str, ...] = ("input", "input_view", "fresh", "intermediate_view")


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Base:
    """A base tensor: ``arange(start, start + numel).reshape(shape).clone()``
    in ``dtype`` (a tensor owning its storage, not a view). ``grad``: ``"none"``, ``"leaf"`` (the base is a leaf that
    requires grad) or ``"nonleaf"`` (the base is ``leaf * 1`` for a hidden
    leaf that requires grad)."""

    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32
    grad: str = "none"
    start: int = 1

    def __repr__(self) -> str:
        parts = [repr(self.shape)]
        if self.dtype != torch.float32:
            parts.append(f"torch.{dtype_name(self.dtype)}")
        if self.grad != "none":
            parts.append(f"grad={self.grad!r}")
        if self.start != 1:
            parts.append(f"start={self.start}")
        return f"Base({', '.join(parts)})"


@dataclass(frozen=True)
class Arg:
    """An argument: base ``base`` viewed through ``views`` (applied left to
    right), or - when ``same_as`` is set - the very object argument
    ``same_as`` is."""

    base: int = 0
    views: tuple[tuple, ...] = ()
    same_as: int | None = None

    def __repr__(self) -> str:
        if self.same_as is not None:
            return f"Arg(same_as={self.same_as})"
        parts = [repr(self.base)]
        if self.views:
            parts.append(repr(self.views))
        return f"Arg({', '.join(parts)})"


@dataclass(frozen=True)
class Step:
    """One statement of the function. ``kind`` is one of :data:`STEP_KINDS`;
    ``args`` name earlier values (``a0``.. arguments, ``t0``.. results);
    ``params`` depend on the kind (a view tuple, a dtype, a scalar);
    ``mode`` is the grad-mode block it runs in (:data:`STEP_MODES`)."""

    kind: str
    args: tuple[str, ...]
    params: tuple = ()
    mode: str = "inherit"

    def __repr__(self) -> str:
        parts = [repr(self.kind), repr(self.args)]
        if self.params:
            parts.append(params_repr(self.params))
        if self.mode != "inherit":
            parts.append(f"mode={self.mode!r}")
        return f"Step({', '.join(parts)})"

    @property
    def binds(self) -> bool:
        """True when the step binds a new name (every kind but ``setitem``)."""
        return self.kind != "setitem"


@dataclass(frozen=True)
class Program:
    """A generated function and its inputs (see the module docstring)."""

    bases: tuple[Base, ...]
    args: tuple[Arg, ...]
    steps: tuple[Step, ...]
    returns: tuple[str, ...]
    ambient: str = "grad"
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __repr__(self) -> str:
        parts = [
            f"bases={tuple_repr(self.bases)}",
            f"args={tuple_repr(self.args)}",
            f"steps={tuple_repr(self.steps)}",
            f"returns={self.returns!r}",
        ]
        if self.ambient != "grad":
            parts.append(f"ambient={self.ambient!r}")
        return f"Program({', '.join(parts)})"

    # ------------------------------------------------------------------ names

    @property
    def arg_names(self) -> list[str]:
        return [f"a{i}" for i in range(len(self.args))]

    def step_names(self) -> list[str | None]:
        """The name each step binds (``None`` for ``setitem``)."""
        out: list[str | None] = []
        k = 0
        for s in self.steps:
            if s.binds:
                out.append(f"t{k}")
                k += 1
            else:
                out.append(None)
        return out

    # ------------------------------------------------------------------ rendering

    def inputs_source(self) -> str:
        """``def make_inputs(device="cpu"):`` returning the argument tuple."""
        lines = ['def make_inputs(device="cpu"):']
        for i, b in enumerate(self.bases):
            numel = math.prod(b.shape)
            expr = (
                f"torch.arange({b.start}, {b.start + numel}, dtype=torch.{dtype_name(b.dtype)}, "
                f"device=device).reshape({b.shape!r}).clone()"
            )
            if b.grad == "leaf":
                lines.append(f"    b{i} = {expr}.requires_grad_()")
            elif b.grad == "nonleaf":
                lines.append(f"    l{i} = {expr}.requires_grad_()")
                lines.append(f"    b{i} = l{i} * 1")
            else:
                lines.append(f"    b{i} = {expr}")
        for i, a in enumerate(self.args):
            if a.same_as is not None:
                lines.append(f"    a{i} = a{a.same_as}")
            else:
                lines.append(f"    a{i} = {_view_expr(f'b{a.base}', a.views)}")
        names = ", ".join(self.arg_names)
        lines.append(f"    return ({names},)" if len(self.args) == 1 else f"    return ({names})")
        return "\n".join(lines)

    def function_source(self) -> str:
        """``def f(a0, ...):`` - the function under test."""
        lines = [f"def f({', '.join(self.arg_names)}):"]
        names = self.step_names()
        block: str | None = None
        for step, name in zip(self.steps, names, strict=True):
            if step.mode != block:
                block = step.mode
            stmt = _statement(step, name)
            if step.mode == "inherit":
                lines.append(f"    {stmt}")
            else:
                ctx = "torch.no_grad()" if step.mode == "no_grad" else "torch.enable_grad()"
                if not (lines[-1].startswith("        ") and _last_ctx(lines) == ctx):
                    lines.append(f"    with {ctx}:")
                lines.append(f"        {stmt}")
        ret = ", ".join(self.returns)
        lines.append(f"    return {ret}," if len(self.returns) == 1 else f"    return {ret}")
        return "\n".join(lines)

    def source(self) -> str:
        """A runnable script: imports, ``make_inputs``, ``f`` and the call."""
        call = "f(*make_inputs())"
        if self.ambient == "no_grad":
            call_lines = ["with torch.no_grad():", f"    out = {call}"]
        else:
            call_lines = [f"out = {call}"]
        return "\n".join(
            [
                "import torch",
                "",
                self.inputs_source(),
                "",
                self.function_source(),
                "",
                "# compare: torch.compile(f, backend=..., fullgraph=False)(*make_inputs())",
                *call_lines,
            ]
        )

    # ------------------------------------------------------------------ execution

    def function(self):
        """The function ``f``, compiled from :meth:`function_source` (a new
        code object on every call; the source is registered with
        ``linecache`` so tracebacks and Dynamo show it)."""
        src = self.function_source()
        filename = f"<program {abs(hash(src)) & 0xFFFFFFFF:08x}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        scope: dict = {"torch": torch}
        exec(compile(src, filename, "exec"), scope)  # noqa: S102 - our own generated source
        return scope["f"]

    def make_inputs(self, device: str | torch.device = "cpu"):
        """A fresh :class:`conformance.compile_oracle.Inputs` (the tensors
        ``make_inputs`` in :meth:`source` builds): the arguments, watched as
        ``a0``.., plus the bases ``b0``.. and the hidden leaves ``l0``.."""
        return _inputs(self, device)

    def inputs(self, device: str | torch.device = "cpu"):
        """:meth:`make_inputs` as a zero-argument factory (for the oracle)."""
        return lambda: _inputs(self, device)

    # ------------------------------------------------------------------ features

    def features(self) -> dict:
        """Region features of the program (see :mod:`conformance.evidence`)."""
        kinds = {s.kind for s in self.steps}
        aliased = _aliased_args(self)
        return {
            "aliased_inputs": bool(aliased),
            "duplicate_input": any(a.same_as is not None for a in self.args),
            "mutates_input": any(
                s.kind in IN_PLACE and s.args and s.args[0] in self.arg_names for s in self.steps
            ),
            "inplace": bool(kinds & set(IN_PLACE)),
            "no_grad_block": any(s.mode == "no_grad" for s in self.steps),
            "requires_grad_input": any(b.grad != "none" for b in self.bases),
            "ambient": self.ambient,
            "step_kinds": frozenset(kinds),
            "no_grad_write_into_grad_view_with_grad_output": _no_grad_write_feeds_grad_output(self),
            "enable_grad_output_in_no_grad_call": _enable_grad_output_in_no_grad_call(self),
            **self.layout_features(),
        }

    def layout_features(self) -> dict:
        """The compile tier's domain features (issue 29): ``arg_layout``, the
        :func:`arg_layouts` of every argument; ``output_kind``, the
        :func:`output_kind` of every returned tensor; and ``layout_output``,
        the ``"<layout>/<kind>"`` pairs the program relates - an output of
        kind ``input`` or ``input_view`` with the layouts of the arguments
        it shares storage with, a ``fresh`` or ``intermediate_view`` output
        with the layouts of the arguments it was computed from. Decided by
        running the program eagerly (memoized per program)."""
        if "layout" not in self._cache:
            self._cache["layout"] = _layout_features(self)
        return dict(self._cache["layout"])


def _last_ctx(lines: list[str]) -> str | None:
    for line in reversed(lines):
        if line.startswith("    with "):
            return line.strip()[5:-1]
        if not line.startswith("        "):
            return None
    return None


def _view_expr(name: str, views: tuple) -> str:
    expr = name
    for v in views:
        expr = _one_view(expr, v)
    return expr


def _view_call(v: tuple) -> tuple[str, tuple]:
    """A program's view sub-op (:data:`PROGRAM_VIEW_KINDS`: ``("slice", dim,
    start, step)``, to the end of ``dim``; ``("expand", size, n)``, a new leading
    ``size`` over ``n`` kept dims; the others as :data:`strategies.views.VIEWS`
    takes them) as a ``VIEWS`` kind and its arguments."""
    kind = v[0]
    if kind not in PROGRAM_VIEW_KINDS:
        raise ValueError(f"unknown view {v!r}")
    if kind == "slice":
        _, dim, start, step = v
        return kind, (dim, start, None, step)
    if kind == "expand":
        return kind, ((v[1], *[-1] * v[2]),)
    return kind, tuple(v[1:])


def _one_view(expr: str, v: tuple) -> str:
    """The code :func:`apply_view` runs on the tensor named ``expr``."""
    kind, args = _view_call(v)
    return VIEWS[kind].code(expr, *args)


def apply_view(t: torch.Tensor, v: tuple) -> torch.Tensor:
    """Apply one view sub-op (:func:`_view_call`; the code :func:`_one_view`
    prints) through :data:`strategies.views.VIEWS`."""
    kind, args = _view_call(v)
    return VIEWS[kind].apply(t, *args)


def _scalar(x) -> str:
    return repr(x)


def _statement(step: Step, name: str | None) -> str:
    k, a, p = step.kind, step.args, step.params
    x = a[0] if a else None
    if k == "view":
        rhs = _one_view(x, p)
    elif k == "detach":
        rhs = f"{x}.detach()"
    elif k == "data":
        rhs = f"{x}.data"
    elif k == "clone":
        rhs = f"{x}.clone()"
    elif k == "contiguous":
        rhs = f"{x}.contiguous()"
    elif k == "to":
        rhs = f"{x}.to(torch.{dtype_name(p[0])})"
    elif k == "reshape":
        rhs = f"{x}.reshape(-1)"
    elif k == "add":
        rhs = f"{x} + {a[1]}"
    elif k == "sub":
        rhs = f"{x} - {a[1]}"
    elif k == "scale":
        rhs = f"{x} * {_scalar(p[0])}"
    elif k == "neg":
        rhs = f"-{x}"
    elif k == "requires_grad_":
        rhs = f"{x}.requires_grad_()"
    elif k in ("add_", "sub_", "copy_"):
        other = a[1] if len(a) > 1 else _scalar(p[0])
        rhs = f"{x}.{k}({other})"
    elif k == "mul_":
        rhs = f"{x}.mul_({_scalar(p[0])})"
    elif k == "zero_":
        rhs = f"{x}.zero_()"
    elif k == "fill_":
        rhs = f"{x}.fill_({_scalar(p[0])})"
    elif k == "setitem":
        index = _index_text(p[0])
        value = a[1] if len(a) > 1 else _scalar(p[1])
        return f"{x}[{index}] = {value}"
    else:
        raise ValueError(f"unknown step kind {k!r}")
    return f"{name} = {rhs}"


def _index_text(index: tuple) -> str:
    """``("slice", start, stop)`` -> ``1:3``; ``("int", i)`` -> ``i``;
    ``("ellipsis",)`` -> ``...``."""
    if index[0] == "slice":
        return f"{index[1] or ''}:{'' if index[2] is None else index[2]}"
    if index[0] == "int":
        return str(index[1])
    return "..."


def _index_value(index: tuple):
    if index[0] == "slice":
        return slice(index[1], index[2])
    if index[0] == "int":
        return index[1]
    return Ellipsis


def run_step(step: Step, env: dict[str, torch.Tensor]) -> torch.Tensor | None:
    """Execute ``step`` eagerly on ``env`` (the code :func:`_statement` prints);
    returns the bound value (``None`` for ``setitem``)."""
    ctx = {
        "inherit": contextlib.nullcontext(),
        "no_grad": torch.no_grad(),
        "enable_grad": torch.enable_grad(),
    }[step.mode]
    with ctx:
        return _execute(step, env)


def _execute(step: Step, env: dict) -> torch.Tensor | None:
    k, a, p = step.kind, step.args, step.params
    x = env[a[0]] if a else None
    y = env[a[1]] if len(a) > 1 else None
    if k == "view":
        return apply_view(x, p)
    if k == "detach":
        return x.detach()
    if k == "data":
        return x.data
    if k == "clone":
        return x.clone()
    if k == "contiguous":
        return x.contiguous()
    if k == "to":
        return x.to(p[0])
    if k == "reshape":
        return x.reshape(-1)
    if k == "add":
        return x + y
    if k == "sub":
        return x - y
    if k == "scale":
        return x * p[0]
    if k == "neg":
        return -x
    if k == "requires_grad_":
        return x.requires_grad_()
    if k in ("add_", "sub_", "copy_"):
        return getattr(x, k)(y if y is not None else p[0])
    if k == "mul_":
        return x.mul_(p[0])
    if k == "zero_":
        return x.zero_()
    if k == "fill_":
        return x.fill_(p[0])
    if k == "setitem":
        x[_index_value(p[0])] = y if y is not None else p[1]
        return None
    raise ValueError(f"unknown step kind {k!r}")


def _inputs(program: Program, device="cpu"):
    """Build the inputs of ``program`` (the same tensors ``make_inputs`` builds)."""
    from conformance.compile_oracle import Inputs

    watched: dict[str, torch.Tensor] = {}
    bases = []
    for i, b in enumerate(program.bases):
        numel = math.prod(b.shape)
        t = torch.arange(b.start, b.start + numel, dtype=b.dtype, device=device)
        t = t.reshape(b.shape).clone()  # not a view: the base owns its storage
        if b.grad == "leaf":
            t = t.requires_grad_()
        elif b.grad == "nonleaf":
            leaf = t.requires_grad_()
            watched[f"l{i}"] = leaf
            t = leaf * 1
        bases.append(t)
        watched[f"b{i}"] = t
    args: list[torch.Tensor] = []
    for a in program.args:
        if a.same_as is not None:
            args.append(args[a.same_as])
            continue
        t = bases[a.base]
        for v in a.views:
            t = apply_view(t, v)
        args.append(t)
    arg_watch = {f"a{i}": t for i, t in enumerate(args)}
    return Inputs(args=tuple(args), watched={**arg_watch, **watched})


# --------------------------------------------------------------------------- static helpers


def _footprint(t: torch.Tensor) -> frozenset[int]:
    """The storage element indices ``t`` covers."""
    idx = torch.full((), t.storage_offset(), dtype=torch.int64)
    for size, stride in zip(t.shape, t.stride(), strict=True):
        idx = idx.unsqueeze(-1) + torch.arange(size) * stride
    return frozenset(idx.reshape(-1).tolist())


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _overlapping_self(t: torch.Tensor) -> bool:
    return len(_footprint(t)) < t.numel()


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _distinct(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    for t in tensors:
        if not any(t is o for o in out):
            out.append(t)
    return out


def _autograd_readable(t: torch.Tensor) -> None:
    """Read ``t``'s autograd metadata: raises for a view made under
    ``no_grad`` whose base was then modified in place with grad enabled
    (eager refuses such a view lazily, on its first ``grad_fn`` read)."""
    _ = t.grad_fn, t.is_leaf


def _no_grad_view(t: torch.Tensor) -> bool:
    """A view taken with grad disabled of a tensor that requires grad."""
    return t._is_view() and t.grad_fn is None and t._base.requires_grad


def _effective_grad(step: Step, ambient: str) -> bool:
    if step.mode == "no_grad":
        return False
    if step.mode == "enable_grad":
        return True
    return ambient == "grad"


def _no_grad_write_feeds_grad_output(program: Program) -> bool:
    """True when the storage of an argument that is a view of a base requiring
    grad is written in place only inside ``torch.no_grad()`` blocks, and a
    returned tensor that does not share that storage is computed from it with
    grad enabled (through any chain of steps but ``detach``/``data``), the
    function called with grad on.

    The compiled function then mutates an input view and has more than one
    differentiable output; AOTAutograd on torch 2.4 refuses that ("If your
    Function modifies inplace an input that is a view of another Tensor, your
    Function cannot return more than one Tensor"). Decided by running the
    program eagerly (eager is the oracle; nothing is compiled). Measured on
    2.4.1 over generated programs with a write under no_grad (see
    ``conformance/expectations/compile.toml``).
    """
    if program.ambient != "grad":
        return False
    args = _inputs(program).args
    views = {
        _storage(t)
        for a, t in zip(program.args, args, strict=True)
        if a.same_as is None and a.views and program.bases[a.base].grad != "none"
    }
    if not views:
        return False
    env: dict[str, torch.Tensor] = dict(zip(program.arg_names, args, strict=True))
    written: dict[int, set[str]] = {s: set() for s in views}
    derived: dict[int, set[str]] = {s: set() for s in views}
    try:
        for step, name in zip(program.steps, program.step_names(), strict=True):
            target = env[step.args[0]] if step.args else None
            if step.kind in IN_PLACE and target is not None and _storage(target) in views:
                written[_storage(target)].add(step.mode)
            out = run_step(step, env)
            if name is None or out is None:
                continue
            env[name] = out
            if step.kind in ("detach", "data") or not _effective_grad(step, program.ambient):
                continue
            for s in views:
                feeds = any(_storage(env[n]) == s or n in derived[s] for n in step.args)
                if feeds and _storage(out) != s:
                    derived[s].add(name)
    except Exception:  # eager refuses the program: no compile refusal to expect
        return False
    returned = set(program.returns)
    return any(written[s] == {"no_grad"} and derived[s] & returned for s in views)


def _enable_grad_output_in_no_grad_call(program: Program) -> bool:
    """True when the function is called under ``torch.no_grad()`` and returns
    a tensor that a step inside a ``torch.enable_grad()`` block made or
    wrote in place (not an argument itself) and that requires grad in eager.

    aot_eager and inductor on torch 2.4 return such an output with
    ``requires_grad`` False (a leaf without ``grad_fn``): the enable_grad
    block inside a function called without grad is not honoured. Decided by
    running the program eagerly (eager is the oracle; nothing is compiled).
    Measured on 2.4.1 over 300 generated programs called under no_grad with
    an enable_grad step (see ``conformance/expectations/compile.toml``).
    """
    if program.ambient != "no_grad" or not any(s.mode == "enable_grad" for s in program.steps):
        return False
    args = _inputs(program).args
    env: dict[str, torch.Tensor] = dict(zip(program.arg_names, args, strict=True))
    made: list[torch.Tensor] = []  # by identity: an in-place step returns its input
    try:
        with torch.no_grad():
            for step, name in zip(program.steps, program.step_names(), strict=True):
                out = run_step(step, env)
                if name is None or out is None:
                    continue
                env[name] = out
                if step.mode == "enable_grad" and out.requires_grad:
                    if not any(out is a for a in args):
                        made.append(out)
    except Exception:  # eager refuses the program: no compile deviation to expect
        return False
    returned = [env[r] for r in program.returns if isinstance(env.get(r), torch.Tensor)]
    return any(r is m for r in returned for m in made)


def arg_layouts(args: Sequence[torch.Tensor]) -> list[frozenset[str]]:
    """The ``arg_layout`` values (:data:`ARG_LAYOUTS`) of each argument of a
    call, from the tensors themselves: ``contiguous`` (contiguous at storage
    offset 0), ``transposed`` (two dimensions of size > 1 whose strides
    increase, as after ``transpose``), ``offset`` (storage offset > 0),
    ``expanded`` (a zero stride on a dimension of size > 1), ``aliased``
    (shares storage with another argument: one object passed twice, or two
    views of one base). An argument may be several at once (an offset,
    transposed view), or none (a stepped slice at offset 0)."""
    out = []
    for i, t in enumerate(args):
        kinds = set()
        dims = [(n, s) for n, s in zip(t.shape, t.stride(), strict=True) if n > 1]
        if any(s == 0 for _, s in dims):
            kinds.add("expanded")
        strides = [s for _, s in dims if s != 0]
        if any(a < b for a, b in zip(strides, strides[1:], strict=False)):
            kinds.add("transposed")
        if t.storage_offset() > 0:
            kinds.add("offset")
        elif t.is_contiguous():
            kinds.add("contiguous")
        key = _storage_key(t)
        if key is not None and any(j != i and _storage_key(o) == key for j, o in enumerate(args)):
            kinds.add("aliased")
        out.append(frozenset(kinds))
    return out


def output_kind(
    t: torch.Tensor, args: Sequence[torch.Tensor], earlier: Sequence[torch.Tensor] = ()
) -> str:
    """The ``output_kind`` (:data:`OUTPUT_KINDS`) of a returned tensor ``t`` of
    a call with arguments ``args``: ``input`` (``t`` is an argument object),
    ``input_view`` (it shares storage with an argument: a view, ``detach()``
    or ``.data`` of an input), ``intermediate_view`` (a view - ``_is_view()``
    - of a tensor made in the call, or an alias of such a tensor made
    before it: ``earlier``, the distinct tensors the function bound before
    ``t``), else ``fresh`` (a new tensor owning its storage)."""
    if any(t is a for a in args):
        return "input"
    key = _storage_key(t)
    if key is not None and any(_storage_key(a) == key for a in args):
        return "input_view"
    if t._is_view() or (
        key is not None and any(e is not t and _storage_key(e) == key for e in earlier)
    ):
        return "intermediate_view"
    return "fresh"


def _storage_key(t: torch.Tensor) -> int | None:
    s = t.untyped_storage()
    return s.data_ptr() if s.nbytes() else None


def _layout_features(program: Program) -> dict:
    """:meth:`Program.layout_features`, computed (see there)."""
    args = list(_inputs(program).args)
    layouts = arg_layouts(args)
    arg_layout = frozenset().union(*layouts)
    env: dict[str, torch.Tensor] = dict(zip(program.arg_names, args, strict=True))
    deps: dict[str, frozenset[int]] = {n: frozenset({i}) for i, n in enumerate(program.arg_names)}
    try:
        with _ambient(program.ambient):
            for step, name in zip(program.steps, program.step_names(), strict=True):
                out = run_step(step, env)
                if name is None or out is None:
                    continue
                env[name] = out
                deps[name] = frozenset().union(*(deps[a] for a in step.args))
    except Exception:  # noqa: BLE001 - eager refuses the program: its inputs only
        return {"arg_layout": arg_layout, "output_kind": frozenset(), "layout_output": frozenset()}
    order: list[torch.Tensor] = []  # distinct objects, in the order first bound
    for t in env.values():
        if not any(t is o for o in order):
            order.append(t)
    kinds, pairs = set(), set()
    for r in program.returns:
        t = env.get(r)
        if not isinstance(t, torch.Tensor):
            continue  # t.requires_grad / t.is_leaf read inside the function
        pos = next(i for i, o in enumerate(order) if o is t)
        kind = output_kind(t, args, order[:pos])
        kinds.add(kind)
        if kind in ("input", "input_view"):
            key = _storage_key(t)
            related = [i for i, a in enumerate(args) if key is not None and _storage_key(a) == key]
        else:
            related = sorted(deps[r])
        pairs.update(f"{lay}/{kind}" for i in related for lay in layouts[i])
    return {
        "arg_layout": arg_layout,
        "output_kind": frozenset(kinds),
        "layout_output": frozenset(pairs),
    }


def _aliased_args(program: Program) -> bool:
    seen: dict[int, int] = {}
    for a in program.args:
        if a.same_as is not None:
            return True
        seen[a.base] = seen.get(a.base, 0) + 1
    return any(n > 1 for n in seen.values())


def _ambient(ambient: str):
    return torch.no_grad() if ambient == "no_grad" else contextlib.nullcontext()
