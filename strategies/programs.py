"""Generated programs for the compile tier: small functions over aliased inputs.

A :class:`Program` is a frozen description of a short Python function and of
the inputs it is called with:

- *bases* (:class:`Base`): small tensors with exact integer values
  (``arange`` + an offset), float32/float64/int64, each either plain, a leaf
  that requires grad, or a non-leaf that requires grad (``leaf * 1``, so the
  function may mutate it and gradients still reach the leaf);
- *arguments* (:class:`Arg`): a base, a chain of views of a base (slices
  with offsets and steps, ``select``, ``transpose``, ``unsqueeze``,
  ``expand``), or the very object another argument is. Two arguments may
  therefore be views of one base, overlapping or not, or be the same tensor;
- *steps* (:class:`Step`): views of inputs and intermediates, ``detach()``,
  ``.data``, ``clone()``, ``contiguous()``, ``to(dtype)`` (the input itself
  when the dtype is unchanged), ``reshape(-1)`` (a view or a copy), exact
  arithmetic (``+``, ``-``, ``* 2``, negation), in-place ops on inputs and
  on views of inputs (``add_``, ``sub_``, ``mul_``, ``copy_``, ``zero_``,
  ``fill_``, ``x[i] = v``), ``requires_grad_()``; each step runs in the
  function's grad mode, inside a ``torch.no_grad()`` block, or inside a
  ``torch.enable_grad()`` block;
- *returns*: inputs, views of them, intermediates (possibly the same tensor
  twice), and ``t.requires_grad`` / ``t.is_leaf`` read inside the function;
- *ambient*: the grad mode the function is called under.

Programs are **valid by construction**: :func:`programs` draws each step,
runs it eagerly on a scratch copy of the inputs and keeps it only if eager
accepts it; in-place ops never write into internally overlapping
(expanded) memory nor read a tensor that partially overlaps the one they
write (both undefined or refused in eager). Values stay small integers, so
every float result is exact and eager and compiled runs can be compared bit
for bit.

``repr(program)`` is runnable Python rebuilding the description (given
``import torch`` and ``from strategies.programs import Arg, Base, Program,
Step``); :meth:`Program.source` renders the program as a script a reviewer
can paste: ``make_inputs()``, the function ``f`` and the call.
:meth:`Program.function` compiles ``f`` from that source (a fresh code
object per call, so Dynamo's per-code caches are never shared), and
:meth:`Program.inputs` builds a fresh :class:`conformance.compile_oracle.Inputs`.
"""

from __future__ import annotations

import collections
import contextlib
import linecache
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st

from strategies._repr import params_repr, tuple_repr
from strategies.dtypes import dtype_name
from strategies.tensors import VIEW_FUNCTIONS

__all__ = [
    "Base",
    "Arg",
    "Step",
    "Program",
    "programs",
    "STEP_KINDS",
    "PROGRAM_VIEW_KINDS",
    "STEP_MODES",
    "IN_PLACE",
    "ARG_LAYOUTS",
    "OUTPUT_KINDS",
    "LAYOUT_GRID",
    "arg_layouts",
    "output_kind",
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


def _one_view(expr: str, v: tuple) -> str:
    kind = v[0]
    if kind == "slice":
        _, dim, start, step = v
        return (
            f"{expr}[{':, ' * dim}{start or ''}::{step}]"
            if step != 1
            else (f"{expr}[{':, ' * dim}{start or ''}:]")
        )
    if kind == "select":
        return f"{expr}.select({v[1]}, {v[2]})"
    if kind == "transpose":
        return f"{expr}.transpose({v[1]}, {v[2]})"
    if kind == "unsqueeze":
        return f"{expr}.unsqueeze({v[1]})"
    if kind == "expand":
        return f"{expr}.expand({', '.join([str(v[1])] + ['-1'] * v[2])})"
    raise ValueError(f"unknown view {v!r}")


def apply_view(t: torch.Tensor, v: tuple) -> torch.Tensor:
    """Apply one view sub-op, a tuple of :data:`PROGRAM_VIEW_KINDS` (the code
    :func:`_one_view` prints), through ``tensors.VIEW_FUNCTIONS``."""
    kind = v[0]
    if kind == "slice":
        _, dim, start, step = v
        return VIEW_FUNCTIONS["slice"](t, dim, start, None, step)
    if kind == "expand":
        return VIEW_FUNCTIONS["expand"](t, (v[1], *[-1] * v[2]))
    if kind in PROGRAM_VIEW_KINDS:
        return VIEW_FUNCTIONS[kind](t, *v[1:])
    raise ValueError(f"unknown view {v!r}")


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


#: Where the strategy steers clear of a known compile bug, and the claim
#: whose own test checks it there (see :class:`_Scratch`).
STEERING: dict[str, str] = {
    "zero-dim-float64-argument": "compile.zero-dim-float64-mutation-dropped",
    "write-into-view-of-grad-leaf": "compile.inplace-on-grad-leaf-view-fails",
    "write-into-aliased-grad-argument": "compile.inplace-on-grad-leaf-view-fails",
    "grad-write-into-detached-alias": "compile.detached-alias-history-dropped",
    "write-through-data": "compile.data-write-bumps-version",
    "requires-grad-through-alias-name": "compile.requires-grad-through-alias-dropped",
    "requires-grad-with-other-names": "compile.requires-grad-through-alias-dropped",
    "write-after-requires-grad-through-other-name": "compile.requires-grad-through-alias-dropped",
    "reads-no-grad-view": "compile.output-view-grad-mode-regenerated",
    "view-output-made-in-other-mode": "compile.output-view-grad-mode-regenerated",
    "enable-grad-write-into-grad-argument": "compile.mixed-mode-input-mutation-gradient",
    "view-of-aliased-written-argument": "compile.issue-198095-view-of-aliased-input",
    "copy-of-aliased-written-argument": "compile.clone-of-aliased-input-aliases",
    "written-argument-returned-beside-grad-argument": "compile.returned-input-write-misrouted",
    "same-object-returned-twice": "compile.output-identity-matches-eager",
    "grad-scalar-written-into-integer-tensor": "compile.grad-scalar-into-integer-tensor-refused",
    "no-grad-view-of-grad-view": "compile.no-grad-view-of-written-tensor-fails",
    "enable-grad-write-of-grad-operand-into-argument": "compile.enable-grad-write-history-dropped",
    "copy-of-setitem-written-tensor": "compile.clone-after-setitem-returns-input",
    "argument-view-beside-detached-aliased-write": "compile.view-output-offset-lost",
    "argument-view-beside-write-between-aliases": "compile.view-output-offset-lost",
    "view-of-non-contiguous-intermediate": "compile.view-of-non-contiguous-intermediate-materialized",
    "self-copied-non-contiguous-grad-tensor": "compile.self-copy-of-non-contiguous-grad-output-backward-fails",
}
#: Step kinds that may return a copy of their operand.
_COPIES = frozenset({"clone", "contiguous", "to", "reshape"})


class _Scratch:
    """The program being drawn, executed eagerly on scratch inputs, with the
    provenance the strategy needs to keep it valid and to steer clear of the
    compile bugs the tier checks with claims of their own (:data:`STEERING`):

    - in-place writes into a view of a leaf that requires grad (also through
      its ``detach()``), or into storage two distinct arguments share while
      one requires grad;
    - a write, through another name, into the storage of a tensor that
      ``requires_grad_()`` was called on;
    - a write with an operand that requires grad into a ``detach()`` alias
      of an argument;
    - a write reaching an argument's memory without advancing its version
      counter (through ``.data``);
    - ``requires_grad_()`` through another name of an argument, or of a tensor
      that has other names (an in-place result, a view);
    - reading a view taken under ``no_grad`` of a tensor that requires grad;
    - writes into storage of an argument that requires grad, or with an
      operand that requires grad into storage of any argument, inside an
      ``enable_grad`` block (the function being called under ``no_grad``);
    - returning a tensor that shares storage with an argument, or a view of
      an intermediate, when it (or a view it was taken from) was made under a
      grad mode other than the call's, or when two distinct arguments share
      that storage and the program wrote into it (pytorch/pytorch#198095), or a copy
      (``clone``, ``contiguous``, ``to``, ``reshape``) of such storage
      (inductor returns an alias of the input);
    - returning an argument the program wrote into when it also wrote into
      another argument and one of them requires grad (the write is copied
      back into the wrong argument);
    - returning one tensor object twice;
    - ``x[i] = y`` into an integer tensor with a 0-d ``y`` that requires grad,
      grad enabled (eager makes ``x`` require grad; compiled, it raises);
    - reading or returning a view taken with grad disabled of a tensor that
      required grad then, also when the view's base does not (the tensor was
      itself a view that ``requires_grad_()`` was called on);
    - returning a copy of a tensor written by ``x[i] = ...`` (not ``x[...]``):
      inductor returns the tensor itself;
    - returning a view argument when two aliasing arguments were written and
      one of them was detached, or both were operands of the program (e.g.
      ``a0.copy_(a1)``): the view comes back with storage offset 0;
    - returning a view of an intermediate whose base is not contiguous
      (``a0.clone().expand(2, -1, -1)`` for a transposed ``a0``): inductor
      returns a new dense tensor, so an expanded output becomes writable and
      two such views stop sharing storage;
    - returning a tensor that requires grad and is not contiguous after
      ``t.copy_(t)`` wrote it (or any tensor of its storage): inductor's
      backward fails a stride assertion.
    """

    def __init__(self, partial: Program):
        self.partial = partial
        self.steps: list[Step] = []
        self.refused: collections.Counter = collections.Counter()
        self.rebuild()

    def rebuild(self) -> None:
        grad = self.partial.ambient == "grad"
        self.env = {f"a{i}": t for i, t in enumerate(_inputs(self.partial).args)}
        self.fresh = _inputs(self.partial).args
        self.modes: dict[str, frozenset] = {n: frozenset({grad}) for n in self.env}
        self.write_modes: dict[int, set] = {}
        self.copy_of: dict[str, int] = {}
        self.grad_enabled: dict[int, list[torch.Tensor]] = {}
        self.no_grad_views: set[str] = set()
        self.setitem_written: set[int] = set()
        self.detached: set[int] = set()
        self.used_args: set[int] = set()  # ids of every tensor a step took as operand
        self.self_copied: set[int] = set()  # storages of non-contiguous grad t in t.copy_(t)
        steps, self.steps = self.steps, []
        for step in steps:
            assert self.run(step), f"replay of an accepted step failed: {step!r}"

    @property
    def args(self) -> list[torch.Tensor]:
        return [self.env[n] for n in self.partial.arg_names]

    def _refuse(self, why: str) -> bool:
        self.refused[why] += 1
        return False

    def admissible(self, step: Step) -> bool:
        env, args = self.env, self.args
        if any(_no_grad_view(env[a]) for a in step.args):
            return self._refuse("reads-no-grad-view")
        if any(a in self.no_grad_views for a in step.args):
            return self._refuse("no-grad-view-of-grad-view")
        x = env[step.args[0]]
        if step.kind == "requires_grad_":
            if step.args[0] not in self.partial.arg_names and any(
                _storage(x) == _storage(a) for a in args
            ):
                return self._refuse("requires-grad-through-alias-name")
            if any(n != step.args[0] and _storage(t) == _storage(x) for n, t in env.items()):
                # t2 = t1.sub_(a0) (t2 is t1) or t2 = t1.view(-1), then
                # t1.requires_grad_(): compiled, the other name comes back
                # without requires_grad (dev seed 8 on 2.13; checked on fixed forms
                # by test_requires_grad_with_other_names)
                return self._refuse("requires-grad-with-other-names")
            return True
        if step.kind not in IN_PLACE:
            return True
        if x._is_view() and x._base.is_leaf and x._base.requires_grad:
            return self._refuse("write-into-view-of-grad-leaf")
        grad_leaves = {
            _storage(a)
            for a in args
            if (a.is_leaf and a.requires_grad)
            or (a._is_view() and a._base.is_leaf and a._base.requires_grad)
        }
        if _storage(x) in grad_leaves and not any(x is a and a.is_leaf for a in args):
            return self._refuse("write-into-view-of-grad-leaf")  # e.g. through x.detach()
        if _storage(x) in self.grad_enabled and not any(
            x is t for t in self.grad_enabled[_storage(x)]
        ):
            return self._refuse("write-after-requires-grad-through-other-name")
        shared = _distinct([a for a in args if _storage(a) == _storage(x)])
        if len(shared) > 1 and any(a.requires_grad for a in shared):
            return self._refuse("write-into-aliased-grad-argument")
        y = env[step.args[1]] if len(step.args) > 1 else None
        if (
            y is not None
            and y.requires_grad
            and not x.requires_grad
            and not x._is_view()
            and shared
            and not any(x is a for a in args)
        ):
            return self._refuse("grad-write-into-detached-alias")
        if step.mode == "enable_grad" and any(a.requires_grad for a in shared):
            return self._refuse("enable-grad-write-into-grad-argument")
        if step.mode == "enable_grad" and shared and y is not None and y.requires_grad:
            # thorough seed 1 on 2.13 (8cf0d22): a0.copy_(a1) in enable_grad, a1
            # requiring grad, called under no_grad - a0 gains history in eager,
            # none compiled; checked on fixed forms by test_enable_grad_write_history
            return self._refuse("enable-grad-write-of-grad-operand-into-argument")
        if (
            step.kind == "setitem"
            and y is not None
            and y.dim() == 0
            and y.requires_grad
            and not (x.dtype.is_floating_point or x.dtype.is_complex)
            and _effective_grad(step, self.partial.ambient)
        ):
            # thorough seed 1 on 2.13: eager leaves the int64 tensor requiring
            # grad, every backend raises; checked on fixed forms by
            # test_grad_scalar_written_into_integer_tensor
            return self._refuse("grad-scalar-written-into-integer-tensor")
        return True

    def run(self, step: Step) -> bool:
        """Execute ``step``; False (and the scratch state rebuilt) when eager
        refuses it or it would write through ``.data``."""
        env = self.env
        args = self.args
        versions = [a._version for a in args]
        try:
            with _ambient(self.partial.ambient):
                value = run_step(step, env)
                if value is not None:
                    _autograd_readable(value)
                for t in env.values():
                    _autograd_readable(t)
        except Exception:  # noqa: BLE001 - eager refuses it: not a valid step
            self.rebuild()
            return False
        if step.kind == "requires_grad_":
            x = env[step.args[0]]
            self.grad_enabled.setdefault(_storage(x), []).append(x)
        if step.kind in IN_PLACE:
            x = env[step.args[0]]
            hidden = [
                a for a, v in zip(args, versions, strict=True)
                if _storage(a) == _storage(x) and a._version == v
            ]  # fmt: skip
            if hidden:
                self.rebuild()
                return self._refuse("write-through-data")
            grad = _effective_grad(step, self.partial.ambient)
            self.write_modes.setdefault(_storage(x), set()).add(grad)
            if step.kind == "setitem" and step.params[0] != ("ellipsis",):
                self.setitem_written.add(_storage(x))
        if step.kind in ("detach", "data"):
            self.detached.add(_storage(env[step.args[0]]))
        if step.kind == "copy_" and env[step.args[0]] is env[step.args[1]]:
            x = env[step.args[0]]
            if x.requires_grad and not x.is_contiguous():
                self.self_copied.add(_storage(x))
        self.used_args |= {id(env[n]) for n in step.args}
        if step.binds:
            name = f"t{sum(s.binds for s in self.steps)}"
            env[name] = value
            if (
                step.kind == "view"
                and not _effective_grad(step, self.partial.ambient)
                and env[step.args[0]].requires_grad
            ):
                # thorough seed 1 on 2.13: t1 = a0[:] under no_grad after
                # a0.requires_grad_() (a0 a view of a base without grad), a write
                # into a0, return t1 - aot_eager/inductor fail to compile; checked
                # on fixed forms by test_no_grad_view_of_written_grad_tensor
                self.no_grad_views.add(name)
            grad = _effective_grad(step, self.partial.ambient)
            src = self.modes.get(step.args[0], frozenset()) if step.args else frozenset()
            aliasing = step.kind in ("view", "detach", "data", "contiguous", "to", "reshape")
            self.modes[name] = (
                (src | {grad}) if (aliasing or step.kind in IN_PLACE) else frozenset({grad})
            )
            if step.kind in _COPIES:
                self.copy_of[name] = _storage(env[step.args[0]])
        self.steps.append(step)
        return True

    def unsafe_returns(self) -> set[str]:
        args = self.args
        ambient = self.partial.ambient == "grad"
        groups: dict[int, list[torch.Tensor]] = {}
        for a in args:
            groups.setdefault(_storage(a), [])
            if not any(a is g for g in groups[_storage(a)]):
                groups[_storage(a)].append(a)
        written = {
            _storage(a)
            for a, f in zip(args, self.fresh, strict=True)
            if a._version != f._version or not torch.equal(a.detach(), f.detach())
        }
        risky = {k for k, g in groups.items() if len(g) > 1 and k in written}
        # written aliased storage that two distinct argument objects of it were
        # operands of (a0.copy_(a1), a0.add_(a1), or a read and a write)
        crossed = {k for k in risky if sum(id(g) in self.used_args for g in groups[k]) > 1}
        written_args = [a for a in args if _storage(a) in written]
        mixed_up = len(written) > 1 and any(a.requires_grad for a in written_args)
        out = set()
        for name, t in self.env.items():
            if mixed_up and any(t is a for a in written_args):
                self.refused["written-argument-returned-beside-grad-argument"] += 1
                out.add(name)
            elif _storage(t) in risky:
                self.refused["view-of-aliased-written-argument"] += 1
                out.add(name)
            elif self.copy_of.get(name) in risky:
                self.refused["copy-of-aliased-written-argument"] += 1
                out.add(name)
            elif self.copy_of.get(name) in self.setitem_written:
                # thorough seed 2 on 2.13: a0[0] = 0; return a0.clone() - inductor
                # returns a0 itself; checked on fixed forms by
                # test_copy_after_setitem_is_new_tensor
                self.refused["copy-of-setitem-written-tensor"] += 1
                out.add(name)
            elif risky & self.detached and t._is_view() and _storage(t) in groups:
                # thorough seed 2 on 2.13: a1.sub_(a1) with a0 a view of a1, t0 =
                # a0.detach(), return a2 (a select view of another base) - aot_eager
                # and inductor return a view at offset 0; checked on fixed forms by
                # test_view_output_beside_detached_aliased_write
                self.refused["argument-view-beside-detached-aliased-write"] += 1
                out.add(name)
            elif crossed and t._is_view() and _storage(t) in groups:
                # thorough seed 2 on 2.13 (at 2bba435): t0 = a2.zero_(); a0.copy_(a1)
                # with a0 = b0[:][:], a1 = b0, return t0 (a select view of another
                # base) - aot_eager and inductor return a view at offset 0; checked
                # on fixed forms by test_view_output_beside_detached_aliased_write
                self.refused["argument-view-beside-write-between-aliases"] += 1
                out.add(name)
            elif t._is_view() and _storage(t) not in groups and not t._base.is_contiguous():
                # thorough seed 2 on 2.13 (at edebd72): t0 = a0.clone(); return
                # t0.expand(2, -1, -1, -1) with a0 = b0.unsqueeze(0).transpose(0, 2) -
                # inductor returns a dense copy that a write succeeds on (eager
                # raises: overlapping memory); checked on fixed forms by
                # test_view_of_non_contiguous_intermediate
                self.refused["view-of-non-contiguous-intermediate"] += 1
                out.add(name)
            elif _storage(t) in self.self_copied and t.requires_grad:
                # thorough seed 2 on 2.13 (at edebd72): t0 = a0 + a0; t0.copy_(t0);
                # return t0 with a0 a transposed view of a leaf that requires grad -
                # inductor's backward raises AssertionError (expected size/stride);
                # checked on fixed forms by test_self_copy_of_non_contiguous_grad_output
                self.refused["self-copied-non-contiguous-grad-tensor"] += 1
                out.add(name)
            elif _no_grad_view(t):
                self.refused["reads-no-grad-view"] += 1
                out.add(name)
            elif name in self.no_grad_views:
                self.refused["no-grad-view-of-grad-view"] += 1
                out.add(name)
            elif (_storage(t) in groups or t._is_view()) and self.modes.get(name, frozenset()) - {
                ambient
            }:
                # also a view of an intermediate (dev seed 18 on 2.13: t1 =
                # t0.expand(...) under enable_grad, called under no_grad, comes
                # back from aot_eager/inductor as a leaf without grad_fn; checked on
                # a fixed form by test_output_view_made_in_another_grad_mode)
                self.refused["view-output-made-in-other-mode"] += 1
                out.add(name)
        return out


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


# --------------------------------------------------------------------------- strategy

_SHAPES = [
    (4,), (6,), (3,), (2, 3), (3, 4), (4, 2), (2, 2, 3), (3, 1), (1, 4), (2, 3, 2),
]  # fmt: skip


@st.composite
def _bases(draw, n: int) -> tuple[Base, ...]:
    out = []
    start = 1
    for _ in range(n):
        shape = draw(st.sampled_from(_SHAPES))
        dtype = draw(st.sampled_from((torch.float32, torch.float32, torch.float64, torch.int64)))
        grad = "none"
        if dtype.is_floating_point:
            grad = draw(st.sampled_from(("none", "none", "leaf", "nonleaf", "nonleaf")))
        out.append(Base(shape, dtype, grad, start))
        start += math.prod(shape) + 10
    return tuple(out)


def _draw_view(draw, shape: tuple[int, ...], *, allow_expand: bool = True) -> tuple | None:
    ndim = len(shape)
    kinds = ["slice", "unsqueeze"]
    if ndim >= 1:
        kinds.append("select")
    if ndim >= 2:
        kinds.append("transpose")
    if allow_expand and ndim >= 1:
        kinds.append("expand")
    kind = draw(st.sampled_from(kinds))
    if kind == "slice":
        if ndim == 0:
            return None
        dim = draw(st.integers(0, ndim - 1))
        if shape[dim] == 0:
            return None
        start = draw(st.integers(0, max(0, shape[dim] - 1)))
        step = draw(st.sampled_from((1, 1, 2)))
        return ("slice", dim, start, step)
    if kind == "select":
        dim = draw(st.integers(0, ndim - 1))
        if shape[dim] == 0:
            return None
        return ("select", dim, draw(st.integers(0, shape[dim] - 1)))
    if kind == "transpose":
        d0 = draw(st.integers(0, ndim - 2))
        return ("transpose", d0, draw(st.integers(d0 + 1, ndim - 1)))
    if kind == "unsqueeze":
        return ("unsqueeze", draw(st.integers(0, ndim)))
    return ("expand", 2, ndim)


def _broadcasts_to(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    try:
        return tuple(torch.broadcast_shapes(src, dst)) == tuple(dst)
    except RuntimeError:
        return False


def _writable_with(x: torch.Tensor, y: torch.Tensor) -> bool:
    """A binary in-place op ``x.op_(y)`` is well defined: ``y`` either does
    not share memory with ``x`` or reads exactly the elements ``x`` writes,
    in the same order."""
    if not _same_storage(x, y):
        return True
    if (x.storage_offset(), tuple(x.shape), x.stride()) == (
        y.storage_offset(),
        tuple(y.shape),
        y.stride(),
    ):
        return True
    return not (_footprint(x) & _footprint(y))


@st.composite
def _step(draw, env: dict[str, torch.Tensor], ambient: str) -> Step | None:
    names = list(env)
    kind = draw(
        st.sampled_from(
            (
                "view", "view", "view", "detach", "data", "clone", "contiguous", "to", "reshape",
                "add", "sub", "scale", "neg", "requires_grad_",
                "add_", "add_", "sub_", "mul_", "mul_", "copy_", "copy_", "zero_", "fill_",
                "setitem", "setitem",
            )
        )
    )  # fmt: skip
    modes = ["inherit", "inherit", "no_grad"]
    if ambient == "no_grad":
        modes.append("enable_grad")
    mode = draw(st.sampled_from(modes))
    x_name = draw(st.sampled_from(names))
    x = env[x_name]
    if kind == "view":
        v = _draw_view(draw, tuple(x.shape))
        return None if v is None else Step("view", (x_name,), v, mode)
    if kind == "to":
        return Step("to", (x_name,), (draw(st.sampled_from(DTYPES)),), mode)
    if kind == "scale":
        return Step("scale", (x_name,), (draw(st.sampled_from((2, -1, 0.5))),), mode)
    if kind in ("add", "sub"):
        y_name = draw(st.sampled_from(names))
        return Step(kind, (x_name, y_name), (), mode)
    if kind in ("detach", "data", "clone", "contiguous", "reshape", "neg", "requires_grad_"):
        return Step(kind, (x_name,), (), mode)
    # in-place
    if _overlapping_self(x):
        return None
    if kind in ("add_", "sub_", "copy_"):
        if kind == "add_" and draw(st.booleans()):
            return Step("add_", (x_name,), (draw(st.sampled_from((1, 3, -2))),), mode)
        y_name = draw(st.sampled_from(names))
        y = env[y_name]
        if not _broadcasts_to(tuple(y.shape), tuple(x.shape)) or not _writable_with(x, y):
            return None
        if kind != "copy_" and y.dtype != x.dtype:
            return None
        return Step(kind, (x_name, y_name), (), mode)
    if kind == "mul_":
        return Step("mul_", (x_name,), (draw(st.sampled_from((2, -1))),), mode)
    if kind == "zero_":
        return Step("zero_", (x_name,), (), mode)
    if kind == "fill_":
        return Step("fill_", (x_name,), (draw(st.sampled_from((5, -3))),), mode)
    # setitem
    if x.dim() == 0:
        index: tuple = ("ellipsis",)
    else:
        n = x.shape[0]
        index = draw(
            st.sampled_from(
                [("ellipsis",), ("int", 0), ("int", n - 1), ("slice", 1 if n > 1 else 0, None),
                 ("slice", 0, None)]
            )
        )  # fmt: skip
    if draw(st.booleans()):
        return Step("setitem", (x_name,), (index, draw(st.sampled_from((0, 7)))), mode)
    y_name = draw(st.sampled_from(names))
    y = env[y_name]
    target = x[_index_value(index)]
    if not _broadcasts_to(tuple(y.shape), tuple(target.shape)) or not _writable_with(target, y):
        return None
    return Step("setitem", (x_name, y_name), (index,), mode)


def _ambient(ambient: str):
    return torch.no_grad() if ambient == "no_grad" else contextlib.nullcontext()


@st.composite
def programs(
    draw,
    *,
    max_args: int = 3,
    max_steps: int = 6,
    max_returns: int = 3,
    aliasing: bool = True,
) -> Program:
    """Draw a :class:`Program` (see the module docstring).

    ``max_args``/``max_steps``/``max_returns`` bound its size; ``aliasing``
    allows arguments that alias each other (views of one base, one object
    passed twice). Every program has at least one step and one return.
    """
    n_args = draw(st.integers(1, max_args))
    n_bases = draw(st.integers(1, n_args)) if aliasing else n_args
    bases = draw(_bases(n_bases))
    args: list[Arg] = []
    for i in range(n_args):
        if aliasing and i > 0 and draw(st.integers(0, 9)) == 0:
            args.append(Arg(same_as=draw(st.integers(0, i - 1))))
            continue
        base = draw(st.integers(0, n_bases - 1)) if aliasing else i
        probe = torch.empty(bases[base].shape, device="meta")
        views: list[tuple] = []
        for _ in range(draw(st.integers(0, 2))):
            v = _draw_view(draw, tuple(probe.shape), allow_expand=draw(st.integers(0, 4)) == 0)
            if v is None:
                continue
            if bases[base].dtype == torch.float64 and apply_view(probe, v).dim() == 0:
                continue  # STEERING["zero-dim-float64-argument"]
            views.append(v)
            probe = apply_view(probe, v)
        args.append(Arg(base, tuple(views)))
    # Keep only the bases some argument uses.
    used = sorted({a.base for a in args if a.same_as is None})
    bases = tuple(bases[i] for i in used)
    remap = {old: new for new, old in enumerate(used)}
    args = [a if a.same_as is not None else Arg(remap[a.base], a.views) for a in args]
    ambient = draw(st.sampled_from(("grad", "grad", "grad", "no_grad")))
    scratch = _Scratch(Program(bases, tuple(args), (), ("a0",), ambient))
    n_steps = draw(st.integers(1, max_steps))
    for _ in range(4 * max_steps):
        if len(scratch.steps) >= n_steps:
            break
        try:
            with _ambient(ambient):
                step = draw(_step(scratch.env, ambient))
        except RuntimeError:  # eager refuses to read a tensor while drawing
            step = None
        if step is not None and scratch.admissible(step):
            scratch.run(step)
    if not scratch.steps:
        scratch.run(Step("scale", ("a0",), (2,)))
    env = scratch.env
    unsafe = scratch.unsafe_returns()
    names = [n for n in env if n not in unsafe]
    if not names:  # return fresh arithmetic (a copy could alias, see STEERING)
        scratch.run(Step("scale", (next(iter(env)),), (2,)))
        names = [list(env)[-1]]
    returns: list[str] = []
    chosen: list[torch.Tensor] = []
    for _ in range(draw(st.integers(1, max_returns))):
        flag = draw(st.sampled_from(("", "", "", "", "", "", ".requires_grad", ".is_leaf")))
        pool = names if not flag else list(env)
        name = draw(st.sampled_from(pool[::-1] + pool[-1:] * 2))
        if not flag:
            if any(env[name] is c for c in chosen):
                continue  # STEERING["same-object-returned-twice"]
            chosen.append(env[name])
        returns.append(name + flag)
    if not returns:
        returns.append(names[-1])
    return Program(bases, tuple(args), tuple(scratch.steps), tuple(returns), ambient)


# --------------------------------------------------------------------------- the layout grid

#: Bases and arguments of :data:`LAYOUT_GRID`: one argument per
#: :data:`ARG_LAYOUTS` value, two for ``aliased`` (``a4 = b4``, ``a5 = b4[1:]``).
_GRID_BASES = (Base((2, 3)), Base((3, 4), start=17), Base((6,), start=40),
               Base((3,), start=57), Base((2, 3), start=70))  # fmt: skip
_GRID_ARGS = (
    Arg(0),  # contiguous
    Arg(1, (("transpose", 0, 1),)),  # transposed
    Arg(2, (("slice", 0, 2, 1),)),  # offset
    Arg(3, (("expand", 2, 1),)),  # expanded
    Arg(4),  # aliased (with a5)
    Arg(4, (("slice", 0, 1, 1),)),  # aliased, offset
)

#: Programs that draw every ``arg_layout`` x ``output_kind`` pair
#: (:meth:`Program.layout_features`) by construction: the compile tier's
#: generated-program tests run them as explicit examples on every backend,
#: inductor included (whose share of the profile's examples is small), so the
#: grid does not depend on what the strategy happens to draw.
#:
#: The first returns every argument itself and a view of each (no kernel to
#: compile); the second writes into every writable argument - the aliased
#: pair through one name - and returns a fresh result computed from each and
#: a view of a fresh contiguous intermediate computed from each. Both stay
#: clear of the :data:`STEERING` regions (``test_programs_strategy`` checks).
LAYOUT_GRID: tuple[Program, ...] = (
    Program(
        bases=_GRID_BASES,
        args=_GRID_ARGS,
        steps=(
            Step("view", ("a0",), ("select", 0, 1)),
            Step("view", ("a1",), ("slice", 0, 1, 1)),
            Step("view", ("a2",), ("unsqueeze", 0)),
            Step("view", ("a3",), ("select", 0, 1)),
            Step("view", ("a4",), ("transpose", 0, 1)),
            Step("detach", ("a5",)),
        ),
        returns=("a0", "a1", "a2", "a3", "a4", "a5", "t0", "t1", "t2", "t3", "t4", "t5"),
    ),
    Program(
        bases=_GRID_BASES,
        args=_GRID_ARGS,
        steps=(
            Step("add_", ("a0",), (3,)),
            Step("mul_", ("a1",), (2,)),
            Step("add_", ("a2",), (-2,)),
            Step("add_", ("a5",), (1,)),
            Step("scale", ("a0",), (2,)),
            Step("view", ("t4",), ("select", 0, 1)),
            Step("contiguous", ("a1",)),
            Step("view", ("t6",), ("slice", 0, 1, 1)),
            Step("add", ("a2", "a2")),
            Step("view", ("t8",), ("slice", 0, 1, 2)),
            Step("neg", ("a3",)),
            Step("view", ("t10",), ("select", 0, 0)),
            Step("scale", ("a4",), (-1,)),
            Step("view", ("t12",), ("transpose", 0, 1)),
            Step("sub", ("a5", "a4")),
            Step("view", ("t14",), ("unsqueeze", 0)),
        ),
        returns=("t4", "t5", "t6", "t7", "t8", "t9", "t10", "t11", "t12", "t13", "t14", "t15"),
    ),
)
