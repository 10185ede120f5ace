"""Semantic mutants for the sequences area (issue 4): each breaks one promise
only in some situations, so that the state machine of
``conformance/test_copy_sequences.py`` - not a single-operation property -
has to find the chain that exposes it.

Same format as :data:`tests.mutants.MUTANTS` (name -> (description, source
patched into torch at interpreter start-up)); ``tests/test_sequences_mutants.py``
merges them into ``MUTANTS`` before calling ``mutant_env``. Names carry a
``seq-`` prefix so they never shadow a catalogue mutant of the same idea.
"""

from __future__ import annotations

SEQUENCE_MUTANTS: dict[str, tuple[str, str]] = {
    "seq-contiguous-always-copies": (
        "Tensor.contiguous() returns a copy even when the tensor is already contiguous",
        """
        import torch
        _clone = torch.Tensor.clone
        def _contiguous(self, memory_format=torch.contiguous_format):
            return _clone(self, memory_format=memory_format)
        torch.Tensor.contiguous = _contiguous
        """,
    ),
    "seq-to-copies-when-unchanged": (
        "Tensor.to() copies even when dtype and device already match (as if copy=True)",
        """
        import torch
        _to = torch.Tensor.to
        def _to_copy(self, *args, **kwargs):
            kwargs["copy"] = True
            return _to(self, *args, **kwargs)
        torch.Tensor.to = _to_copy
        """,
    ),
    "seq-transpose-copies-3d": (
        "transpose() returns a copy (dense, same strides, new memory) for 3-D inputs only",
        """
        import torch
        _transpose = torch.Tensor.transpose
        def _transpose_3d(self, dim0, dim1):
            out = _transpose(self, dim0, dim1)
            return out.clone() if self.dim() == 3 else out
        torch.Tensor.transpose = _transpose_3d
        torch.transpose = _transpose_3d
        """,
    ),
    "seq-expand-materialises": (
        "expand() returns a materialised copy instead of a stride-0 view",
        """
        import torch
        _expand = torch.Tensor.expand
        def _expand_copy(self, *sizes):
            return _expand(self, *sizes).clone(memory_format=torch.contiguous_format)
        torch.Tensor.expand = _expand_copy
        """,
    ),
    "seq-copy-into-view-loses-graph": (
        "copy_ runs without autograd (no graph, no leaf check) when the destination is a view",
        """
        import torch
        _copy = torch.Tensor.copy_
        def _copy_(self, src, non_blocking=False):
            if self._is_view():
                with torch.no_grad():
                    return _copy(self, src, non_blocking)
            return _copy(self, src, non_blocking)
        torch.Tensor.copy_ = _copy_
        """,
    ),
}
