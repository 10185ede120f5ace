"""Combinators that build the patches of the mutant catalogue.

A mutant's :attr:`~conformance.mutants.Mutant.patch` is a function of no
arguments that patches torch. Most follow a handful of shapes - keep the
real function, install a wrapper that calls it and corrupts the call on one
part of the input space - and the combinators here build those, so a typical
mutant names what it replaces and how in a few lines::

    patch=wrap_result("torch.Tensor.detach", _clone, when=_is_0d, also=("torch.detach",))

Targets are dotted paths (``"torch.Tensor.detach"``, ``"torch.nn.Module._apply"``)
resolved when the patch is *applied*, never when the catalogue is imported:
importing a mutant module imports no torch and patches nothing. A patch
built here is a callable object with a :meth:`Patch.describe` (what it
replaces, for reports), and records the names it binds (:attr:`Patch.targets`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
from collections.abc import Callable, Sequence

__all__ = [
    "torch",
    "np",
    "resolve",
    "owner_and_name",
    "in_grad_mode",
    "refused",
    "accepted",
    "Patch",
    "wrap",
    "wrap_each",
    "patches",
    "function_mode",
    "INPLACE_OPS",
]


class LazyModule:
    """A module imported on first use: reading an attribute imports the
    module and reads it there, assigning one assigns it there.

    The catalogue's patches and witnesses refer to :data:`torch` (and
    :data:`np`) through these, so that importing a mutant module imports
    neither: every attribute is looked up on the real module at the moment
    it is used (a patch that rebinds ``torch.detach`` is seen by the next
    read), and ``torch.detach = f`` rebinds the real one.
    """

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def _module(self):
        return importlib.import_module(object.__getattribute__(self, "_name"))

    def __getattr__(self, attr: str):
        return getattr(self._module(), attr)

    def __setattr__(self, attr: str, value: object) -> None:
        setattr(self._module(), attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(self._module(), attr)

    def __repr__(self) -> str:
        return f"<lazy module {object.__getattribute__(self, '_name')!r}>"


#: ``torch``, imported on first use (see :class:`LazyModule`).
torch = LazyModule("torch")
#: ``numpy``, imported on first use (see :class:`LazyModule`).
np = LazyModule("numpy")


def resolve(path: str):
    """The object at dotted ``path`` (``"torch.Tensor.detach"``): the longest
    importable module prefix, then attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot resolve {path!r}")


def owner_and_name(path: str) -> tuple[object, str]:
    """``(owner, attribute)`` of dotted ``path``: ``(torch.Tensor, "detach")``."""
    head, _, name = path.rpartition(".")
    return resolve(head), name


def in_grad_mode(mode: str) -> bool:
    """Whether autograd is in grad mode ``mode`` now: ``enabled`` (grad
    enabled), ``no_grad`` (disabled, outside inference mode) or
    ``inference_mode`` (the ``grad_mode`` values of ``conformance/domains.toml``)."""
    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
    return {"enabled": grad, "no_grad": not grad and not inference, "inference_mode": inference}[
        mode
    ]


class Patch:
    """A patch built by a combinator: calling it patches torch.

    ``targets`` are the dotted names it rebinds; ``describe()`` is what a
    report shows of it (the combinator call and the source of the functions
    it was given).
    """

    targets: tuple[str, ...] = ()

    def __call__(self) -> None:  # pragma: no cover - every combinator overrides it
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - every combinator overrides it
        raise NotImplementedError

    def given(self, *args: object) -> Patch:
        """This patch with ``fn``'s leading arguments bound to ``args``: how
        a factory makes one mutant per value from a template whose ``fn``
        takes the value's guard first (``fn(hit, real, *args, **kwargs)``)."""
        bound = copy.copy(self)
        bound.fn = functools.partial(self.fn, *args)
        return bound


def _label(fn: Callable) -> str:
    """``fn`` in a one-line account: its name, with the arguments a
    :func:`functools.partial` binds."""
    if isinstance(fn, functools.partial):
        bound = [_label(a) if callable(a) else repr(a) for a in fn.args]
        bound += [f"{k}={v!r}" for k, v in fn.keywords.items()]
        return f"partial({', '.join([_label(fn.func), *bound])})"
    return getattr(fn, "__name__", repr(fn))


def _source_of(fn: Callable) -> str:
    from conformance.mutants.base import describe

    return describe(fn)


def _bind(paths: Sequence[str], value: object) -> None:
    for path in paths:
        owner, name = owner_and_name(path)
        setattr(owner, name, value)


class wrap(Patch):
    """Rebind ``target`` (and every name of ``also``) to a wrapper of the
    real ``target`` (or of ``original``, when the wrapper replaces another
    name): calling the wrapper calls ``fn(real, *args, **kwargs)``.

    ``fn`` takes the real function first, then the arguments of the call::

        def _copies_0d(detach, self):
            out = detach(self)
            return out.clone() if self.dim() == 0 else out

        wrap("torch.Tensor.detach", _copies_0d, also=("torch.detach",))

    ``fn`` runs one frame below the wrapper: code that looks at its caller
    (``sys._getframe``, ``warnings.warn(stacklevel=...)``) counts one frame
    more than in a function installed directly.
    """

    def __init__(
        self,
        target: str,
        fn: Callable,
        *,
        also: Sequence[str] = (),
        original: str | None = None,
        name: str | None = None,
    ) -> None:
        self.target, self.fn, self.also, self.original = target, fn, tuple(also), original
        self.name = name or target.rpartition(".")[2]
        self.targets = (target, *self.also)

    def __call__(self) -> None:
        _bind(self.targets, _wrapper(resolve(self.original or self.target), self.fn, self.name))

    def describe(self) -> str:
        also = f", also={self.also!r}" if self.also else ""
        original = f", original={self.original!r}" if self.original else ""
        fn = _label(self.fn)
        head = f"wrap({self.target!r}, {fn}{also}{original})"
        real = self.original or self.target
        return f"# {head}: calls {fn}(real {real}, *args, **kwargs)\n" + _source_of(self.fn)


# ------------------------------------------------------------------ witnesses


@contextlib.contextmanager
def refused(
    exc: type[BaseException] | tuple[type[BaseException], ...],
    message: str,
    match: str | None = None,
):
    """A witness's block that real torch refuses: it must raise ``exc``
    (swallowed), whose text contains ``match`` when given; finishing without
    it raises ``AssertionError(message)``::

        with refused(RuntimeError, "backward() twice did not raise", match="second time"):
            y.backward()
    """
    try:
        yield
    except exc as e:
        assert match is None or match in str(e), str(e)
        return
    raise AssertionError(message)


@contextlib.contextmanager
def accepted(exc: type[BaseException] | tuple[type[BaseException], ...], what: str):
    """A witness's block that real torch accepts: ``exc`` raised in it
    becomes ``AssertionError(f"{what}: {error}")``::

        with accepted(RuntimeError, "copy_ refused a broadcastable src"):
            y = torch.zeros(2, 3).copy_(torch.arange(3.0))
    """
    try:
        yield
    except exc as e:
        raise AssertionError(f"{what}: {e}") from e


def _wrapper(real: Callable, fn: Callable, name: str) -> Callable:
    def wrapper(*args, **kwargs):
        return fn(real, *args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    return wrapper


class wrap_each(Patch):
    """Rebind every name of ``targets`` to a wrapper of its own real
    function: calling it calls ``fn(real, *args, **kwargs)``. One rule for a
    family of ops (every in-place op, every binary operator)::

        wrap_each(INPLACE_OPS, _no_bump_when_zero_size)
    """

    def __init__(self, targets: Sequence[str], fn: Callable) -> None:
        self.targets, self.fn = tuple(targets), fn

    def __call__(self) -> None:
        for path in self.targets:
            _bind((path,), _wrapper(resolve(path), self.fn, path.rpartition(".")[2]))

    def describe(self) -> str:
        fn = _label(self.fn)
        return (
            f"# wrap_each({self.targets!r}, {fn}): each calls {fn}(its real function, *args, **kwargs)\n"
            + _source_of(self.fn)
        )


#: The in-place ops of ``Tensor`` a mutant of in-place semantics wraps, and
#: torch's function forms of them.
INPLACE_OPS = (
    "torch.Tensor.add_",
    "torch.Tensor.mul_",
    "torch.Tensor.zero_",
    "torch.Tensor.fill_",
    "torch.Tensor.copy_",
    "torch.Tensor.__setitem__",
    "torch.zero_",
    "torch.fill_",
)


class patches(Patch):
    """Several patches applied in order, as one."""

    def __init__(self, *parts: Callable[[], object]) -> None:
        self.parts = parts
        self.targets = tuple(t for p in parts for t in getattr(p, "targets", ()))

    def __call__(self) -> None:
        for part in self.parts:
            part()

    def describe(self) -> str:
        return "".join(_source_of(p) for p in self.parts)


class function_mode(Patch):
    """Enter, for good, a ``TorchFunctionMode`` whose ``__torch_function__``
    returns ``fn(func, args, kwargs)`` (``kwargs`` a dict): the way to break a
    Python-level operator such as ``Tensor.__getitem__`` without defining it
    in Python (which would give tensors the sequence protocol and change how
    ``torch.tensor()`` reads lists of 0-d tensors). The mode is entered for
    the thread applying the patch (the main thread); other threads see real
    torch."""

    targets = ("torch.overrides.TorchFunctionMode",)

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __call__(self) -> None:
        from torch.overrides import TorchFunctionMode

        fn = self.fn

        class _Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return fn(func, args, kwargs or {})

        _Mode().__enter__()

    def describe(self) -> str:
        fn = _label(self.fn)
        return (
            f"# function_mode({fn}): every torch function call runs {fn}(func, args, kwargs)\n"
            + _source_of(self.fn)
        )
