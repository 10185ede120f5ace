"""Hypothesis strategies for the torch semantics conformance suite.

Importable as a library::

    from strategies import tensor_specs, tensors, dtypes, shapes, layout_kinds

- :mod:`strategies.dtypes`: every dtype torch has, grouped in families.
- :mod:`strategies.graphs`: small autograd programs (leaves, ops, in-place
  mutations, no_grad/inference_mode regions) whose repr is runnable Python.
- :mod:`strategies.tensors`: strided tensors (views with offsets, steps,
  permutes, expands, unsqueeze/select, channels_last, 0-d and zero-size) as
  reproducible :class:`TensorSpec` recipes.
"""

from strategies.domains import GRID_LAYOUTS, grid_examples, is_dense, layout_grid, layout_kinds
from strategies.dtypes import (
    ALL_DTYPES,
    ARITHMETIC,
    COMPLEX,
    DIFFERENTIABLE,
    FLOATING,
    INTEGRAL,
    dtype_name,
    dtypes,
    is_differentiable,
)
from strategies.graphs import (
    Graph,
    Leaf,
    Mutation,
    Op,
    graphs,
    scalar_loss,
    silent_graphs,
)
from strategies.tensors import (
    LAYOUT_KINDS,
    NON_OVERLAPPING_VIEWS,
    VIEW_KINDS,
    TensorSpec,
    numpy_dtype,
    shapes,
    small_int_specs,
    tensor_specs,
    tensors,
)

__all__ = [
    "Graph",
    "Leaf",
    "Mutation",
    "Op",
    "graphs",
    "scalar_loss",
    "silent_graphs",
    "ALL_DTYPES",
    "ARITHMETIC",
    "COMPLEX",
    "DIFFERENTIABLE",
    "FLOATING",
    "INTEGRAL",
    "LAYOUT_KINDS",
    "NON_OVERLAPPING_VIEWS",
    "VIEW_KINDS",
    "GRID_LAYOUTS",
    "TensorSpec",
    "dtype_name",
    "dtypes",
    "grid_examples",
    "is_dense",
    "is_differentiable",
    "layout_grid",
    "layout_kinds",
    "numpy_dtype",
    "shapes",
    "small_int_specs",
    "tensor_specs",
    "tensors",
]
