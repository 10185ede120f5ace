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
import math

import torch
from hypothesis import strategies as st

# the records, re-exported (the tests import them from here)
from strategies.program_records import (
    ARG_LAYOUTS,
    DTYPES,
    IN_PLACE,
    OUTPUT_KINDS,
    PROGRAM_VIEW_KINDS,
    STEP_KINDS,
    STEP_MODES,
    Arg,
    Base,
    Program,
    Step,
    _ambient,
    _autograd_readable,
    _distinct,
    _effective_grad,
    _footprint,
    _index_value,
    _inputs,
    _no_grad_view,
    _overlapping_self,
    _same_storage,
    _storage,
    apply_view,
    arg_layouts,
    output_kind,
    run_step,
)

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
