"""Torch-only reproducers: a bug report in one paste.

For the falsifying example of a failing test, :func:`make_snippet` writes a
standalone Python program that needs only ``torch`` (and the standard
library; NumPy only where the test itself compares through NumPy) - no
import of this suite, of pytest or of Hypothesis:

- each generated :class:`~strategies.TensorSpec` becomes a small class whose
  ``build()`` makes the same tensor with plain torch calls (exact bytes via
  ``ctypes.memmove``, the same view chain and autograd state:
  :meth:`~strategies.TensorSpec.to_code`);
- the test function is copied with its decorators removed, and called with
  the falsifying arguments; values drawn with ``data.draw(...)`` are replayed
  in order;
- the suite helpers it calls (``shares_storage``, ``assert_same_bits``, its
  module's private helpers, ...) are copied along, recursively; the few that
  wrap pytest or Hypothesis (``raises_with``, ``assume``, ``evidence.check``)
  get torch-only stand-ins.

Run on a torch that breaks the claim, the program raises the test's
assertion; on a torch that keeps it, it exits 0. A test whose inputs or
helpers cannot be written that way (generated autograd graphs, the copy
state machine - whose failure message already prints its program as torch
calls) gets no snippet, and :func:`make_snippet` says why instead.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import sys
import textwrap
import types

import torch

__all__ = ["make_snippet", "SnippetUnavailable", "value_code"]

#: Modules a snippet may import.
_ALLOWED_MODULES = {
    "torch", "numpy", "math", "cmath", "warnings", "contextlib", "itertools", "functools",
    "operator", "struct", "sys", "ctypes", "copy", "pickle", "io", "re", "gc", "weakref",
    "dataclasses", "typing", "collections",
}  # fmt: skip

#: Torch-only stand-ins for suite helpers that wrap pytest or Hypothesis.
_STANDINS = {
    "raises_with": '''
import contextlib as _contextlib


@_contextlib.contextmanager
def raises_with(exc_type, substring):
    """Assert that the body raises exc_type with substring in its message."""
    try:
        yield
    except exc_type as e:
        assert substring in str(e), f"{exc_type.__name__} raised, but without {substring!r}: {e}"
    else:
        raise AssertionError(f"DID NOT RAISE {exc_type.__name__} ({substring!r})")
''',
    "assume": '''
def assume(condition):
    """(Hypothesis' assume: the replayed example satisfied it.)"""
    return True
''',
    "note": """
def note(value):
    print(value)
""",
    "evidence": '''
class evidence:
    """Stand-in for the suite's evidence calls: check() asserts, the rest are no-ops."""

    @staticmethod
    def check(claim, ok, message):
        assert ok, f"[{claim}] {message}"

    @staticmethod
    def features(**kw):
        pass

    @staticmethod
    def tally(name, n=1):
        pass

    @staticmethod
    def checked(*claims):
        pass

    @staticmethod
    def muted(claim):
        return False

    @staticmethod
    def not_applicable(reason):
        raise SystemExit(f"not applicable: {reason}")
''',
}
_STANDINS["check"] = _STANDINS["evidence"] + "\n\ncheck = evidence.check\n"
#: Stand-in for Hypothesis strategy modules and composite strategies: the
#: replayed draws ignore their strategy, so building one only has to succeed.
_STRATEGY_STANDIN = '''
class _AnyStrategy:
    """(Hypothesis strategies are not needed: the recorded draws are replayed.)"""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self
'''
_REPLAY = '''
class _Replay:
    """Replays the values the falsifying example drew, in order. The example
    failed before drawing more: running past its last draw means the check
    that failed held on this torch."""

    def __init__(self, values):
        self._values = iter(values)

    def draw(self, strategy=None, label=None):
        try:
            return next(self._values)
        except StopIteration:
            print("the failure was not reproduced: the check that failed held here")
            raise SystemExit(0) from None
'''
_STANDINS["features"] = "def features(**kw):\n    pass\n"
_STANDINS["not_applicable"] = (
    "def not_applicable(reason):\n    raise SystemExit(f'not applicable: {reason}')\n"
)
_STANDINS["tally"] = "def tally(name, n=1):\n    pass\n"


class SnippetUnavailable(Exception):
    """The test cannot be written as a torch-only program (the reason)."""


def value_code(v, name: str, helpers: list[str], classes: set | None = None) -> str:
    """Python source for generated value ``v`` (appending any class it needs
    to ``helpers``; a dataclass of the suite is written as a constructor call
    and its class added to ``classes`` for the caller to copy). Raises
    :class:`SnippetUnavailable` for values that have no torch-only form."""
    import dataclasses

    from strategies.tensors import TensorSpec

    if isinstance(v, TensorSpec):
        cls = f"_Spec_{name}"
        helpers.append(_spec_class(v, cls))
        return f"{cls}()"
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, torch.memory_format):
        return str(v)
    if isinstance(v, torch.device):
        return f"torch.device({str(v)!r})"
    if v is None or v is Ellipsis or isinstance(v, bool | int | str):
        return repr(v)
    if isinstance(v, slice):
        parts = [value_code(x, f"{name}_{k}", helpers, classes) for k, x in
                 (("start", v.start), ("stop", v.stop), ("step", v.step))]  # fmt: skip
        return f"slice({', '.join(parts)})"
    if isinstance(v, float | complex):
        from strategies.tensors import scalar_repr

        return scalar_repr(v)
    if (
        classes is not None
        and dataclasses.is_dataclass(v)
        and not isinstance(v, type)
        and (type(v).__module__ or "").split(".")[0] in _SUITE_PACKAGES
    ):
        classes.add(type(v))
        args = ", ".join(
            f"{f.name}={value_code(getattr(v, f.name), f'{name}_{f.name}', helpers, classes)}"
            for f in dataclasses.fields(v)
            if f.init
        )
        return f"{type(v).__name__}({args})"
    if isinstance(v, tuple | list):
        inner = [value_code(x, f"{name}_{i}", helpers, classes) for i, x in enumerate(v)]
        if isinstance(v, tuple):
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        return "[" + ", ".join(inner) + "]"
    if isinstance(v, dict):
        items = [
            f"{value_code(k, f'{name}_k{i}', helpers, classes)}: "
            f"{value_code(x, f'{name}_v{i}', helpers, classes)}"
            for i, (k, x) in enumerate(v.items())
        ]
        return "{" + ", ".join(items) + "}"
    try:
        import numpy as np

        if isinstance(v, np.dtype):
            return f"numpy.dtype({v.str!r})"
        if isinstance(v, type) and issubclass(v, np.generic):
            return f"numpy.{v.__name__}"
    except ImportError:  # pragma: no cover
        pass
    raise SnippetUnavailable(
        f"the generated value {name} ({type(v).__name__}) has no torch-only form"
    )


def _spec_class(spec, cls: str) -> str:
    body = spec.to_code("x", requires_grad=False, leaf=False).splitlines()
    # Turn the straight-line construction into build(device, requires_grad, leaf).
    out = [
        f"class {cls}:",
        f'    """The generated input: {spec!r}"""',
        "",
        f"    dtype = {spec.dtype}",
        f"    base_shape = {spec.base_shape!r}",
        f"    shape = {tuple(spec.shape)!r}",
        f"    views = {spec.views!r}",
        f"    channels_last = {spec.channels_last!r}",
        f"    is_view = {spec.is_view!r}",
        "",
        "    def build_base(self, device='cpu'):",
    ]
    views_start = next((i for i, ln in enumerate(body) if ln.startswith("x = x[") or
                        ln.startswith("x = x.permute") or ln.startswith("x = x.expand") or
                        ln.startswith("x = x.unsqueeze") or ln.startswith("x = x.select")),
                       len(body))  # fmt: skip
    base_lines, view_lines = body[:views_start], body[views_start:]
    out += [f"        {ln}" for ln in base_lines] + ["        return x", ""]
    out += [
        "    def apply_views(self, x):",
        *[f"        {ln}" for ln in view_lines],
        "        return x",
        "",
        "    def build(self, device='cpu', *, requires_grad=False, leaf=False):",
        "        x = self.build_base(device)",
        "        if requires_grad and not leaf:",
        "            x.requires_grad_(True)",
        *[f"        {ln}" for ln in view_lines],
        "        if requires_grad and leaf:",
        "            x.requires_grad_(True)",
        "        return x",
    ]
    return "\n".join(out)


_SUITE_PACKAGES = ("conformance", "strategies", "reports")


class _LocalImports(ast.NodeTransformer):
    """Removes function-local imports from the suite's packages, recording
    ``(name, module, attribute)`` so the collector copies those names."""

    def __init__(self):
        self.found: list[tuple[str, str, str]] = []

    def visit_ImportFrom(self, node: ast.ImportFrom):
        if node.module and node.module.split(".")[0] in _SUITE_PACKAGES:
            for a in node.names:
                self.found.append((a.asname or a.name, node.module, a.name))
            return ast.Pass()
        return node

    def visit_Import(self, node: ast.Import):
        if any(a.name.split(".")[0] in _SUITE_PACKAGES for a in node.names):
            raise SnippetUnavailable(f"imports the suite module {node.names[0].name}")
        return node


def _function_source(fn) -> ast.FunctionDef:
    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise SnippetUnavailable(f"{fn.__qualname__} is not a plain function")
    node.decorator_list = []
    node.returns = None
    for a in node.args.args + node.args.kwonlyargs:
        a.annotation = None
    return node


def _free_names(node: ast.AST) -> set[str]:
    assigned: set[str] = set()
    loaded: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loaded if isinstance(n.ctx, ast.Load) else assigned).add(n.id)
        elif isinstance(n, ast.FunctionDef | ast.Lambda):
            args = n.args
            for a in args.args + args.kwonlyargs + args.posonlyargs:
                assigned.add(a.arg)
            if args.vararg:
                assigned.add(args.vararg.arg)
            if args.kwarg:
                assigned.add(args.kwarg.arg)
            if isinstance(n, ast.FunctionDef):
                assigned.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            assigned.add(n.name)
        elif isinstance(n, ast.comprehension):
            for t in ast.walk(n.target):
                if isinstance(t, ast.Name):
                    assigned.add(t.id)
        elif isinstance(n, ast.alias):
            assigned.add((n.asname or n.name).split(".")[0])
    return loaded - assigned - set(dir(builtins))


def _is_hypothesis(v) -> bool:
    """A Hypothesis module, strategy, or composite-strategy function (those
    live in Hypothesis' generated ``hypothesis_temporary_module_*`` modules)."""
    if isinstance(v, types.ModuleType):
        mod = v.__name__
    elif callable(v) and not isinstance(v, type):
        mod = getattr(v, "__module__", "") or ""
    else:
        mod = type(v).__module__ or ""
    return mod.split(".")[0] == "hypothesis" or mod.startswith("hypothesis_temporary_module")


def _returns_strategy(fn) -> bool:
    """A strategy constructor (annotated to return a ``SearchStrategy``): the
    snippet replays what was drawn from it, so it is never copied."""
    try:
        ann = inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return False
    return "SearchStrategy" in (ann if isinstance(ann, str) else repr(ann))


def _module_assignment(globals_: dict, name: str) -> ast.stmt | None:
    """The module-level statement of the module owning ``globals_`` that
    assigns ``name`` (the last one), or ``None``."""
    modname = globals_.get("__name__", "")
    if modname.split(".")[0] not in _SUITE_PACKAGES or modname not in sys.modules:
        return None
    try:
        tree = ast.parse(inspect.getsource(sys.modules[modname]))
    except (OSError, TypeError, SyntaxError):
        return None
    found = None
    for stmt in tree.body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign)
            else [stmt.target] if isinstance(stmt, ast.AnnAssign) and stmt.value is not None
            else []
        )  # fmt: skip
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            found = stmt
    return found


class _Collector:
    """Resolves the free names of copied functions into imports, constants
    and further copied functions."""

    def __init__(self):
        self.imports: dict[str, str] = {}
        self.defs: dict[str, str] = {}
        self.order: list[str] = []

    def resolve(self, names: set[str], globals_: dict, where: str) -> None:
        for name in sorted(names):
            if name in self.imports or name in self.defs:
                continue
            if name in _STANDINS:
                self._add(name, _STANDINS[name].strip())
                continue
            if name not in globals_:
                raise SnippetUnavailable(f"{where} uses {name!r}, which is not a module global")
            v = globals_[name]
            if callable(v) and hasattr(v, "__wrapped__"):  # functools.cache, wraps
                v = inspect.unwrap(v)
            if _is_hypothesis(v):
                self._add("_AnyStrategy", _STRATEGY_STANDIN.strip())
                self._add(name, f"{name} = _AnyStrategy()")
                continue
            if isinstance(v, types.ModuleType):
                root = v.__name__.split(".")[0]
                if root not in _ALLOWED_MODULES:
                    raise SnippetUnavailable(f"{where} uses module {v.__name__}")
                self.imports[name] = (
                    f"import {v.__name__}"
                    if v.__name__ == name
                    else f"import {v.__name__} as {name}"
                )
                continue
            if inspect.isfunction(v) and _returns_strategy(v):
                self._add("_AnyStrategy", _STRATEGY_STANDIN.strip())
                self._add(name, f"{name} = _AnyStrategy()")
                continue
            if inspect.isfunction(v):
                mod = v.__module__ or ""
                if not (mod.startswith("conformance") or mod.startswith("reports")
                        or mod.startswith("strategies")):  # fmt: skip
                    if mod.split(".")[0] in _ALLOWED_MODULES:
                        self.imports[name] = f"from {mod} import {v.__name__} as {name}"
                        continue
                    raise SnippetUnavailable(f"{where} uses {mod}.{v.__name__}")
                node = _function_source(v)
                node.name = name
                self._add(name, "")  # placeholder against recursion
                local = _LocalImports()
                node = local.visit(node)
                ast.fix_missing_locations(node)
                for alias, module, attr in local.found:
                    import importlib

                    ns = vars(importlib.import_module(module))
                    if attr not in ns and attr not in _STANDINS:
                        raise SnippetUnavailable(f"{mod}.{v.__name__} imports {module}.{attr}")
                    self.resolve({alias}, {alias: ns.get(attr)} if attr in ns else {}, module)
                self.resolve(_free_names(node) - {a for a, _, _ in local.found}, v.__globals__,
                             f"{mod}.{v.__name__}")  # fmt: skip
                self.defs[name] = ast.unparse(node)
                continue
            if inspect.isclass(v) and issubclass(v, BaseException) and v.__module__ == "builtins":
                continue
            if inspect.isclass(v) and (v.__module__ or "").split(".")[0] in _SUITE_PACKAGES:
                node = ast.parse(textwrap.dedent(inspect.getsource(v))).body[0]
                # Keep @dataclass(...) (the class means nothing without it).
                node.decorator_list = [
                    d for d in node.decorator_list if "dataclass" in ast.unparse(d)
                ]
                self._add(name, "")
                self.resolve(_free_names(node) - {name}, vars(sys.modules[v.__module__]),
                             f"{v.__module__}.{v.__name__}")  # fmt: skip
                self.defs[name] = ast.unparse(node)
                continue
            if isinstance(v, torch.dtype):
                self._add(name, f"{name} = {v}")
                self.imports.setdefault("torch", "import torch")
                continue
            helpers: list[str] = []
            try:
                code = value_code(v, name, helpers)
            except SnippetUnavailable:
                stmt = _module_assignment(globals_, name)
                if stmt is None:
                    raise SnippetUnavailable(
                        f"{where} uses {name!r} ({type(v).__name__}), which has no torch-only form"
                    ) from None
                # A table of lambdas, a set, ...: copy its definition from the module.
                self._add(name, "")
                self.resolve(_free_names(stmt) - {name}, globals_, f"{where}: {name}")
                self.defs[name] = ast.unparse(stmt)
                continue
            self._add(name, "\n\n".join([*helpers, f"{name} = {code}"]))

    def _add(self, name: str, text: str) -> None:
        if name not in self.order:
            self.order.append(name)
        self.defs[name] = text


def make_snippet(
    fn,
    kwargs: dict,
    draws: list,
    *,
    nodeid: str = "",
    claims=(),
    error: BaseException | None = None,
) -> str:
    """The torch-only program reproducing one falsifying example of test
    function ``fn`` called with ``kwargs`` (and replaying ``draws``).

    Raises :class:`SnippetUnavailable` (with the reason) when the test cannot
    be written without the suite.
    """
    node = _function_source(fn)
    data_names = {k for k, v in kwargs.items() if type(v).__name__ in ("DataObject", "_Draws")}
    coll = _Collector()
    free = _free_names(node)
    coll.resolve(free, fn.__globals__, fn.__qualname__)
    helpers: list[str] = []
    classes: set = set()
    args = []
    for k, v in kwargs.items():
        if k in data_names:
            args.append(f"{k}=_Replay(_DRAWS)")
            continue
        args.append(f"{k}={value_code(v, k, helpers, classes)}")
    draw_codes = [value_code(v, f"draw{i}", helpers, classes) for i, v in enumerate(draws)]
    for cls in sorted(classes, key=lambda c: c.__name__):
        coll.resolve({cls.__name__}, {cls.__name__: cls}, fn.__qualname__)
    imports = {"import ctypes", "import torch", *coll.imports.values()}
    body_text = "\n".join([*coll.defs.values(), *helpers])
    if "numpy." in body_text and "import numpy" not in imports:
        imports.add("import numpy")
    header = [
        f"# torch-only reproducer of {nodeid or fn.__qualname__}",
        f"# claim(s): {', '.join(claims)}" if claims else "",
        f"# written on torch {torch.__version__}; exits 0 where torch keeps the claim,",
        "# raises where it breaks it" + (f" (here: {type(error).__name__})" if error else ""),
    ]
    parts = [
        "\n".join(h for h in header if h) + "\n" + "\n".join(sorted(imports)),
    ]
    for name in coll.order:
        if coll.defs.get(name):
            parts.append(coll.defs[name])
    parts.extend(helpers)
    if data_names:
        parts.append(_REPLAY.strip())
        parts.append("_DRAWS = [" + ", ".join(draw_codes) + "]")
    parts.append(ast.unparse(node))
    parts.append(f"{node.name}({', '.join(args)})")
    source = "\n\n\n".join(p for p in parts if p) + "\n"
    compile(source, "<snippet>", "exec")  # a syntax error here is a bug of this module
    return source
