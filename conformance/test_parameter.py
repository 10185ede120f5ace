"""Properties of ``torch.nn.Parameter`` (claims in ``claims/parameter.toml``).

What each property kills (the broken torch it would catch) is in its docstring.
"""

from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

from conformance import evidence
from conformance.checks import (
    assert_same_bits,
    raises_with,
    shares_storage,
    shares_version_counter,
)
from strategies import (
    ALL_DTYPES,
    DIFFERENTIABLE,
    FLOATING,
    NON_OVERLAPPING_VIEWS,
    grid_examples,
    shapes,
    tensor_specs,
)
from strategies.domains import (
    DOMAIN_SPEC,
    domain_examples,
    non_empty,
    not_expanded,
    value_examples,
    writable_non_empty,
)

Parameter = torch.nn.Parameter
#: Real floating dtypes: the gradient of sum(p*p) is 2*p there, exactly.
NON_DIFFERENTIABLE = tuple(d for d in ALL_DTYPES if d not in DIFFERENTIABLE)


def _geometry(t: torch.Tensor) -> tuple:
    return tuple(t.shape), t.stride(), t.storage_offset()


@pytest.mark.claim("parameter.aliases-input")
@grid_examples(grid_values="all", requires_grad=True)
@given(spec=tensor_specs(values="all"), requires_grad=st.booleans())
def test_parameter_aliases_its_input(device, spec, requires_grad):
    """Values are compared bit for bit with an independent build of the spec,
    over every value class.

    Kills: a Parameter constructor that copies (for some layout or dtype),
    alters values, gets its own version counter, or flips the source's
    requires_grad."""
    requires_grad = requires_grad and spec.dtype in DIFFERENTIABLE
    t = spec.build(device)
    p = Parameter(t, requires_grad=requires_grad)
    assert type(p) is Parameter, f"Parameter(t) is a {type(p).__name__}"
    assert shares_storage(p, t), "Parameter(t) does not share t's storage"
    assert _geometry(p) == _geometry(t), "Parameter(t) changed shape, strides or offset"
    assert_same_bits(p, spec.build(device), "Parameter(t) changed the values")
    assert shares_version_counter(p, t), "Parameter(t) has its own version counter"
    assert not t.requires_grad, "Parameter(t) made t require grad"


@pytest.mark.claim("parameter.requires-grad-under-no-grad")
# Issue 29: both grad modes the sentence names, with each requires_grad.
@value_examples("explicit", (None, True, False), spec=DOMAIN_SPEC, mode="grad")
@value_examples("explicit", (None, True, False), spec=DOMAIN_SPEC, mode="no_grad")
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE),
    mode=st.sampled_from(["grad", "no_grad"]),
    explicit=st.sampled_from([None, True, False]),
)
def test_parameter_requires_grad_default(device, spec, mode, explicit):
    """Kills: a Parameter whose default requires_grad follows grad mode (False
    under no_grad), or that ignores an explicit requires_grad (in either mode)."""
    evidence.features(grad_mode="enabled" if mode == "grad" else "no_grad")
    t = spec.build(device)
    kwargs = {} if explicit is None else {"requires_grad": explicit}
    if mode == "no_grad":
        with torch.no_grad():
            p = Parameter(t, **kwargs)
    else:
        p = Parameter(t, **kwargs)
    want = True if explicit is None else explicit
    assert p.requires_grad is want, (
        f"Parameter created in {mode} mode has requires_grad={p.requires_grad}"
    )
    assert p.is_leaf, "Parameter is not a leaf"


@pytest.mark.claim("parameter.is-leaf")
@pytest.mark.observes("backward")
@domain_examples(dtypes=DIFFERENTIABLE, where=non_empty)  # issue 29
@given(spec=tensor_specs(dtype=DIFFERENTIABLE, shape=shapes(min_side=1)))
def test_parameter_of_non_leaf_is_leaf(device, spec):
    """Kills: a Parameter that keeps the source's history (grad_fn), so
    gradients flow past it into the tensor it was computed from."""
    x = spec.build(device, requires_grad=True, leaf=True)
    p = Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None, f"Parameter(x * 2) has grad_fn {p.grad_fn}"
    assert p.requires_grad, "Parameter(x * 2) does not require grad"
    loss = (p * 1).sum()
    (loss.real if loss.is_complex() else loss).backward()
    assert p.grad is not None, "backward did not fill the Parameter's grad"
    assert x.grad is None, "backward through Parameter(x * 2) reached x"


@pytest.mark.claim("parameter.derived-are-plain-tensors")
@pytest.mark.observes("clone", "detach")
@grid_examples(dtypes=DIFFERENTIABLE)
@given(spec=tensor_specs(dtype=DIFFERENTIABLE))
def test_parameter_derived_tensors_are_plain(device, spec):
    """Kills: detach/.data/clone that return Parameters, or detach/.data that
    copy, or a clone that aliases or drops the graph."""
    p = Parameter(spec.build(device))
    for name, d in (("detach()", p.detach()), (".data", p.data)):
        assert type(d) is torch.Tensor, f"p{name} is a {type(d).__name__}, not a plain Tensor"
        assert shares_storage(d, p), f"p{name} does not share the Parameter's storage"
        assert not d.requires_grad, f"p{name} requires grad"
    c = p.clone()
    assert type(c) is torch.Tensor, f"p.clone() is a {type(c).__name__}, not a plain Tensor"
    assert not shares_storage(c, p), "p.clone() shares the Parameter's storage"
    assert c.requires_grad and c.grad_fn is not None, "p.clone() is not in the graph"


@pytest.mark.claim("parameter.inplace-leaf-error")
@pytest.mark.observes("copy_")
@domain_examples(dtypes=DIFFERENTIABLE, where=not_expanded, op="add_")  # issue 29
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, views=NON_OVERLAPPING_VIEWS),
    op=st.sampled_from(["add_", "mul_", "zero_", "copy_"]),
)
def test_parameter_inplace_needs_no_grad(device, spec, op):
    """Kills: in-place ops on a Parameter that silently run in grad mode
    (corrupting the leaf), or that are refused under no_grad."""
    # Expanded inputs excluded: in-place arithmetic there is refused for overlap.
    evidence.features(grad_mode=frozenset({"enabled", "no_grad"}))  # both, in every example
    p = Parameter(spec.build(device))
    calls = {
        "add_": lambda: p.add_(1),
        "mul_": lambda: p.mul_(2),
        "zero_": p.zero_,
        "copy_": lambda: p.copy_(torch.ones_like(p)),
    }
    with raises_with(
        RuntimeError, "a leaf Variable that requires grad is being used in an in-place"
    ):
        calls[op]()
    version = p._version
    with torch.no_grad():
        calls[op]()
    assert p._version > version, f"{op} under no_grad did not bump the version"


@pytest.mark.claim("parameter.data-mutation-silent-wrong-grad")
@pytest.mark.observes("backward", "clone", "detach")
@domain_examples(dtypes=FLOATING, where=writable_non_empty, k=2.0)  # issue 29
@given(
    spec=tensor_specs(dtype=FLOATING, views=NON_OVERLAPPING_VIEWS, shape=shapes(min_side=1)),
    k=st.sampled_from([0.0, 2.0, 3.0, -1.0]),
)
def test_parameter_data_mutation_silent_wrong_grad(device, spec, k):
    """Kills: a Parameter whose .data mutation is detected (backward raises)
    or undone (the gradient uses the saved original value)."""
    p = Parameter(spec.build(device))
    loss = (p * p).sum()
    before, values_before = p.detach().clone(), p.tolist()
    p.data.mul_(k)
    after = p.detach().clone()
    # judged by tolist(), independent of the detach/clone instruments (see
    # test_data_mutation_gives_silent_wrong_gradient)
    assume(values_before != p.tolist())
    loss.backward()
    assert torch.equal(p.grad, 2 * after), "p.grad is not 2 * (p as mutated through .data)"
    assert not torch.equal(p.grad, 2 * before), "p.grad is the true gradient 2 * p"


@pytest.mark.claim("parameter.detach-mutation-raises")
@pytest.mark.observes("backward", "copy_", "detach")
@domain_examples(dtypes=DIFFERENTIABLE, where=writable_non_empty, op="mul_")  # issue 29
@given(
    spec=tensor_specs(dtype=DIFFERENTIABLE, views=NON_OVERLAPPING_VIEWS, shape=shapes(min_side=1)),
    op=st.sampled_from(["mul_", "zero_", "copy_"]),
)
def test_parameter_detach_mutation_raises(device, spec, op):
    """Kills: a Parameter.detach() that does not share the version counter,
    so the mutation would give a silently wrong gradient."""
    p = Parameter(spec.build(device))
    loss = (p * p).sum()
    if loss.is_complex():
        loss = loss.real
    d = p.detach()
    {"mul_": lambda: d.mul_(3), "zero_": d.zero_, "copy_": lambda: d.copy_(d + 1)}[op]()
    with raises_with(RuntimeError, "modified by an inplace operation"):
        loss.backward()


@pytest.mark.claim("parameter.deepcopy")
@grid_examples(grid_values="all", requires_grad=True)
@given(spec=tensor_specs(values="all"), requires_grad=st.booleans())
def test_parameter_deepcopy(device, spec, requires_grad):
    """Values are compared bit for bit with an independent build of the spec,
    over every value class.

    Kills: a deepcopy that aliases the Parameter (storage or version
    counter), loses the subclass, or changes values (-0.0, NaN payloads,
    subnormals ...) or requires_grad."""
    requires_grad = requires_grad and spec.dtype in DIFFERENTIABLE
    p = Parameter(spec.build(device), requires_grad=requires_grad)
    q = copy.deepcopy(p)
    assert type(q) is Parameter, f"deepcopy of a Parameter is a {type(q).__name__}"
    assert q is not p, "deepcopy returned the same object"
    assert not shares_storage(q, p), "deepcopy shares the Parameter's storage"
    assert not shares_version_counter(q, p), "deepcopy shares the version counter"
    assert (q.dtype, tuple(q.shape)) == (p.dtype, tuple(p.shape)), "deepcopy changed dtype or shape"
    assert_same_bits(q, spec.build(device), "deepcopy changed the values")
    assert q.requires_grad is requires_grad, "deepcopy changed requires_grad"


@pytest.mark.claim("parameter.non-float-cannot-require-grad")
# Issue 29: every layout and the bool, signed and unsigned families, by construction.
@domain_examples(dtypes=NON_DIFFERENTIABLE)
@given(spec=tensor_specs(dtype=NON_DIFFERENTIABLE))
def test_parameter_rejects_non_float(device, spec):
    """Kills: a Parameter that accepts integer/bool data requiring grad, or
    refuses it with requires_grad=False."""
    t = spec.build(device)
    with raises_with(RuntimeError, "Only Tensors of floating point and complex dtype can require"):
        Parameter(t)
    p = Parameter(t, requires_grad=False)
    assert not p.requires_grad and shares_storage(p, t), "Parameter(t, requires_grad=False) failed"
