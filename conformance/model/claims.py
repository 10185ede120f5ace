"""Claim ids, torch's stable message substrings and the predicted-exception type.

Every rule of the model cites the claim it encodes (an id of :data:`CLAIM_IDS`,
registered in ``conformance/claims/sequences.toml``); a rule that predicts an
exception raises :class:`Raises` with the exception type name and the stable
substring(s) of torch's message (:data:`MSG`).
"""

from __future__ import annotations

__all__ = ["CLAIM_IDS", "MSG", "Raises"]

#: Stable substrings of torch's messages, by situation.
MSG = {
    "leaf_inplace": "a leaf Variable that requires grad is being used in an in-place operation",
    "view_leaf_inplace": "a view of a leaf Variable that requires grad is being used in an in-place operation",
    "internal_overlap": "more than one element of the written-to tensor refers to a single memory location",
    "partial_overlap": "some elements of the input tensor and the written-to tensor refer to a single memory location",
    "broadcast_mismatch": "must match the size of tensor",
    "broadcast_grow": "doesn't match the broadcast shape",
    "cast": "can't be cast to the desired output type",
    "view_stride": "view size is not compatible with input tensor's size and stride",
    "expand": "The expanded size of the tensor",
    "numel_overflow": "integer multiplication overflow",
    "zero_dim": "cannot be applied to a 0-dim tensor",
    "too_many_indices": "too many indices for tensor of dimension 0",
    "index_range": "out of range",
    "channels_last_rank": "required rank 4 tensor to use channels_last format",
    "detach_view": "Can't detach views in-place",
    "rg_dtype": "can require gradients",
    "rg_nonleaf": "you can only change requires_grad flags of leaf variables",
    "alias_dtype": "can't alias tensor with dtype",
    "numpy_rg": "Can't call numpy() on Tensor that requires grad",
    "negative_strides": "At least one stride in the given numpy array is negative",
    "np_index": "too many indices for array",
    "no_grad_fn": "does not require grad and does not have a grad_fn",
    "stale": "has been modified by an inplace operation",
    "freed": "Trying to backward through the graph a second time",
    "moved": "leaf variable has been moved into the graph interior",
    "retain_rg": "can't retain_grad on Tensor that has requires_grad=False",
    "inference_rg": "Setting requires_grad=True on inference tensor outside InferenceMode",
    "inference_inplace": "Inplace update to inference tensor outside InferenceMode",
    "inference_version": "Inference tensors do not track version counter",
    "numpy_bf16": "Got unsupported ScalarType BFloat16",
    "no_kernel": "not implemented for",
    "overflow": "without overflow",
}

#: Every claim id a model rule cites (all registered in claims/sequences.toml).
CLAIM_IDS: tuple[str, ...] = (
    "sequences.clone-copies",
    "sequences.clone-memory-format",
    "sequences.clone-non-dense-keeps-stride-order",
    "sequences.clone-non-dense-contiguous",
    "sequences.detach-shares",
    "sequences.detach-untracked-alias",
    "sequences.detach-is-view",
    "sequences.detach-inplace",
    "sequences.data-untracked-alias",
    "sequences.copy-in-place",
    "sequences.copy-broadcast-raises",
    "sequences.write-overlap-raises",
    "sequences.inplace-records-history",
    "sequences.tensor-copies",
    "sequences.new-tensor-copies",
    "sequences.as-tensor",
    "sequences.asarray",
    "sequences.asarray-ndarray-shares",
    "sequences.asarray-0d-ndarray-copies",
    "sequences.from-numpy-shares",
    "sequences.numpy-negative-strides-raise",
    "sequences.numpy-shares",
    "sequences.to-self-or-copy",
    "sequences.contiguous-self-or-copy",
    "sequences.views-alias-base",
    "sequences.view-compatibility",
    "sequences.reshape-view-or-copy",
    "sequences.expand-geometry",
    "sequences.view-index-errors",
    "sequences.writes-visible",
    "sequences.index-assignment-in-place",
    "sequences.inplace-arithmetic",
    "sequences.version-counter",
    "sequences.leaf-inplace-raises",
    "sequences.no-grad-untracked",
    "sequences.requires-grad-flag",
    "sequences.leaf-and-grad-fn",
    "sequences.view-autograd-follows-base",
    "sequences.backward-needs-grad",
    "sequences.saved-tensor-check",
    "sequences.backward-frees-saved",
    "sequences.grad-accumulates",
    "sequences.grad-layout",
    "sequences.retain-grad",
    "sequences.grad-fn-type",
    "sequences.inference-tensors",
    "sequences.inference-inplace-raises",
    "sequences.inference-aliases",
    "sequences.dtype-support",
)
_CLAIMS = frozenset(CLAIM_IDS)


class Raises(Exception):
    """A predicted exception: torch raises ``exc`` (type name) with a message
    containing one of ``match``; ``claim`` is the claim id the rule encodes."""

    def __init__(self, exc: str, *match: str, claim: str):
        super().__init__(f"{exc}: {' | '.join(match)} [{claim}]")
        self.exc = exc
        self.match = match
        self.claim = claim

    def matches(self, error: BaseException) -> bool:
        """True when ``error`` has this type name and one of the substrings."""
        return type(error).__name__ == self.exc and any(m in str(error) for m in self.match)


#: The refusals a prediction can be made without (:meth:`Model.waiving`):
#: the operation has a defined effect when torch performs it anyway - an
#: overlapping write writes (the memory several elements address is left
#: to torch).
WAIVABLE: frozenset[str] = frozenset({"sequences.write-overlap-raises"})
