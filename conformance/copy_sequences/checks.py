"""The invariant of the copy-sequence state machine: after every step, every
live tensor and ndarray agrees with the reference model."""

from __future__ import annotations

import torch
from hypothesis.stateful import (
    invariant,
)

from conformance.checks import element_bytes
from conformance.copy_sequences.harness import (
    ARRAYS,
    TENSORS,
    Harness,
    equal_bits,
    first_line,
    missed_every_change,
    quiet,
    same_bytes,
    same_op,
)
from conformance.model import (
    MSG,
    bf16_bits,  # noqa: F401 - the printed programs use it
    is_contiguous,
)


class ModelChecks(Harness):
    """The invariant and its checks."""

    tensors = TENSORS
    arrays = ARRAYS

    # ---- the invariant ----------------------------------------------------

    @invariant()
    def agrees_with_model(self):
        """Every live tensor and ndarray agrees with the model (module docstring)."""
        try:
            with quiet():
                self._check_versions()
                addresses: dict[int, int] = {}
                self._check_tensors(addresses)
                self._check_grads()
                self._check_arrays(addresses)
                self._check_disjoint(addresses)
                # last: a bump rebuilds views' grad_fn, whose names (and all
                # else) were checked as the step left them
                self._probe_counters()
        except Exception as e:  # noqa: BLE001 - a torch observation that raised
            if isinstance(e, AssertionError) or type(e).__module__.startswith("hypothesis"):
                raise
            self._fail(f"observing the state raised {type(e).__name__}: {first_line(e)!r}")
        self.checked.update(c for c in self.claims if c not in self.violated)
        self._ops_in_step = 0

    def _check_versions(self) -> None:
        """Exact ``_version`` of every tensor (an inference tensor without a
        counter must refuse to tell), then the partition by counter: bump the
        counter of the newest tensor (sharing is fixed when a tensor is made,
        so checking each new tensor's class checks the partition) and,
        round-robin, one more, and observe who moves."""
        m = self.model
        # Every step's version checks also check the version-counter claim.
        self.claims = list(dict.fromkeys([*self.claims, "sequences.version-counter"]))
        live = [(t, self.real[t.id]) for t in m.tensors]
        for t, r in live:
            if t.counter is None:
                try:
                    v = r._version
                except RuntimeError as e:
                    if MSG["inference_version"] not in str(e):
                        self._fail(f"t{t.id}._version raised {e!r}", "sequences.inference-tensors")
                    self.checked.add("sequences.inference-tensors")
                    continue
                self._fail(
                    f"t{t.id}._version is {v}; the model says an inference tensor has no counter",
                    "sequences.inference-tensors",
                )
            if r._version != t.counter.version:
                self._fail(
                    f"t{t.id}._version is {r._version}; the model says {t.counter.version}",
                    self._blame("version"),
                    resume=True,
                )
                t.counter.version = r._version  # (muted: go on from torch's count)

    def _probe_counters(self) -> None:
        """The partition by version counter (see :meth:`_check_versions`)."""
        m = self.model
        # increment_version does not move inference tensors' counters
        live = [(t, self.real[t.id]) for t in m.tensors if not t.inference]
        if not live:
            return
        pinned = m.pinned_counters()
        self._probe_index = (getattr(self, "_probe_index", -1) + 1) % len(live)
        for t, r in {
            live[-1][0].id: live[-1],
            live[self._probe_index][0].id: live[self._probe_index],
        }.values():
            c = t.counter
            if c.id in pinned:
                continue  # a tensor saved for backward at this version: leave it
            torch.autograd.graph.increment_version(r)
            m.bump(c)
            for u, ru in live:
                if ru._version != u.counter.version:
                    shared = u.counter is c
                    self._fail(
                        f"bumping t{t.id}'s version counter {'did not move' if shared else 'moved'} "
                        f"t{u.id}._version; the model says they "
                        f"{'share' if shared else 'do not share'} a version counter"
                    )

    def _check_tensors(self, addresses: dict[int, int]) -> None:
        m = self.model
        ptr_of: dict[tuple, int] = {}
        key_of: dict[int, tuple] = {}
        history = self._blame("history")
        storage = self._blame("storage")
        view = self._blame("view")
        geometry_claim = self._blame("geometry")
        for t in m.tensors:
            r = self.real[t.id]
            n = f"t{t.id}"
            if str(r.dtype) != f"torch.{t.dtype}":
                self._fail(f"{n}.dtype is {r.dtype}; the model says {t.dtype}")
            geometry = (tuple(r.shape), r.stride(), r.storage_offset())
            if geometry != (t.shape, t.strides, t.offset):
                self._fail(
                    f"{n} has shape/strides/offset {geometry}; the model says "
                    f"{(t.shape, t.strides, t.offset)}",
                    geometry_claim,
                )
            if r.is_inference() != t.inference:
                self._fail(
                    f"{n}.is_inference() is {r.is_inference()}; the model says {t.inference}",
                    "sequences.inference-tensors",
                )
            if t.inference:
                self.checked.add("sequences.inference-tensors")
            if t.buffer.values.size:  # empty memory has no address (data_ptr 0)
                ptr = r.untyped_storage().data_ptr()
                key = t.storage.key
                if ptr_of.setdefault(key, ptr) != ptr or key_of.setdefault(ptr, key) != key:
                    self._fail(
                        f"{n}: the partition of tensors by storage differs from the model's",
                        storage,
                    )
                if t.numel:
                    addr = r.data_ptr() - t.start * r.element_size()
                    if addresses.setdefault(t.buffer.id, addr) != addr:
                        self._fail(
                            f"{n} addresses memory other than the model's shared buffer", storage
                        )
            rg = m.requires_grad(t)
            if r.requires_grad != rg:
                self._fail(f"{n}.requires_grad is {r.requires_grad}; the model says {rg}", history)
            names = m.grad_fn_names(t)
            if (r.grad_fn is None) != (not names):
                self._fail(
                    f"{n}.grad_fn is {r.grad_fn}; the model says {'set' if names else 'None'}",
                    history,
                )
            if names:
                actual = type(r.grad_fn).__name__
                if not any(same_op(actual, name) for name in names):
                    self._fail(
                        f"{n}.grad_fn is a {actual}; the model says {' or '.join(names)}",
                        "sequences.grad-fn-type",
                        resume=True,  # the class name alone: the model needs no resync
                    )
                self.checked.add("sequences.grad-fn-type")
            if r.is_leaf != m.is_leaf(t):
                self._fail(f"{n}.is_leaf is {r.is_leaf}; the model says {m.is_leaf(t)}", history)
            if r._is_view() != m.is_view(t):
                self._fail(f"{n}._is_view() is {r._is_view()}; the model says {m.is_view(t)}", view)
            base = self.real[t.base.id] if t.base is not None else None
            if r._base is not base:
                expected = f"t{t.base.id}" if t.base is not None else "None"
                self._fail(f"{n}._base is not {expected} as the model says", view)
            # Bit for bit, read straight from the storage (no torch op involved).
            expected = m.values(t)
            rows = element_bytes(r)
            if not same_bytes(rows, expected):
                actual = self._values(r)
                unwritten = missed_every_change(self._seen.get(t.id), rows, expected)
                self._fail(
                    f"{n} holds {actual.tolist()}; the model's memory says {expected.tolist()}"
                    " (compared bit for bit)"
                    + (" - the write reached none of the elements it changes" if unwritten else ""),
                    self._blame("unwritten") if unwritten else None,
                    resume=True,
                )
                m.adopt_values(t, actual)  # (muted: go on from torch's values)
            self._seen[t.id] = rows

    def _check_grads(self) -> None:
        """``.grad`` and ``retains_grad`` of every live tensor: None where the
        model has none; else the very object the model says (a leaf keeps
        accumulating into one), its dtype, shape, documented layout, and values
        bit for bit (except where the model leaves them to torch)."""
        m = self.model
        for t in m.tensors:
            r = self.real[t.id]
            n = f"t{t.id}"
            if r.retains_grad != (t.retains_grad and not m.is_leaf(t)):
                self._fail(
                    f"{n}.retains_grad is {r.retains_grad}; the model says {t.retains_grad}",
                    "sequences.retain-grad",
                )
            g = r.grad
            known = self.real_grads.get(t.grad.id) if t.grad is not None else None
            if t in m.grad_unspecified or (t.grad is not None and t.grad.unspecified.any()):
                m.resync_grad(
                    t, None if g is None else self._values(g), g is known and g is not None
                )
                if t.grad is not None and t.grad.id not in self.real_grads:
                    self.real_grads[t.grad.id] = g
                known = self.real_grads.get(t.grad.id) if t.grad is not None else None
            claim = "sequences.retain-grad" if t.retains_grad else "sequences.grad-accumulates"
            if t.grad is None:
                if g is not None:
                    self._fail(f"{n}.grad is set; the model says None", claim)
                continue
            if g is None:
                self._fail(f"{n}.grad is None; the model says it holds a gradient", claim)
            if known is None:
                for other in self.real_grads.values():
                    if g is other:
                        self._fail(
                            f"{n}.grad is an earlier gradient object; the model says a new one",
                            claim,
                        )
                self.real_grads[t.grad.id] = g
            elif g is not known:
                self._fail(
                    f"{n}.grad is a new tensor object; the model says the gradient accumulated "
                    "in place into the previous one",
                    claim,
                )
            if str(g.dtype) != f"torch.{t.grad.dtype}" or tuple(g.shape) != t.grad.shape:
                self._fail(
                    f"{n}.grad has dtype/shape {g.dtype}/{tuple(g.shape)}; the model says "
                    f"{t.grad.dtype}/{t.grad.shape}",
                    claim,
                )
            layout = t.grad.layout
            if layout is not None:
                strides = g.stride()
                if layout[0] == "strides":
                    ok = all(
                        st == want if size != 1 else st != 0 or st == want
                        for size, st, want in zip(g.shape, strides, layout[1], strict=True)
                    )
                else:
                    ok = is_contiguous(tuple(g.shape), strides)
                if not ok:
                    self._fail(
                        f"{n}.grad has strides {strides}; the documented layout is {layout}",
                        "sequences.grad-layout",
                    )
                self.checked.add("sequences.grad-layout")
            if not same_bytes(element_bytes(g), t.grad.values):
                self._fail(
                    f"{n}.grad holds {self._values(g).tolist()}; the model says "
                    f"{t.grad.values.tolist()} (compared bit for bit)",
                    claim,
                )
            self.checked.add(claim)

    def _check_disjoint(self, addresses: dict[int, int]) -> None:
        """Memory the model keeps apart is apart: the address ranges of
        distinct buffers (all alive) do not overlap, so a copy that shares
        memory with an ndarray or a tensor is seen at once."""
        m = self.model
        owners = {}
        for h in [*m.tensors, *m.arrays]:
            owners.setdefault(h.buffer.id, (h, h.buffer))
        spans = []
        for bid, addr in addresses.items():
            h, buf = owners[bid]
            if buf.values.size:
                spans.append((addr, addr + buf.values.size * buf.values.itemsize, h))
        spans.sort(key=lambda x: x[0])
        end, h0 = -1, None
        for b0, b1, h1 in spans:
            if b0 < end:
                self._fail(
                    f"{self._n(h0)} and {self._n(h1)} share memory; the model says "
                    "they are in separate memory",
                    self._blame("storage"),
                )
            if b1 > end:
                end, h0 = b1, h1

    def _check_arrays(self, addresses: dict[int, int]) -> None:
        m = self.model
        for a in m.arrays:
            arr = self.real_arrays[a.id]
            n = f"a{a.id}"
            strides = tuple(s // arr.itemsize for s in arr.strides)
            if (arr.shape, strides) != (a.shape, a.strides):
                self._fail(
                    f"{n} has shape/strides {(arr.shape, strides)}; the model says {(a.shape, a.strides)}"
                )
            if arr.size:
                addr = arr.__array_interface__["data"][0] - a.start * arr.itemsize
                if addresses.setdefault(a.buffer.id, addr) != addr:
                    self._fail(
                        f"{n} addresses memory other than the model's shared buffer",
                        self._blame("storage"),
                    )
            expected = m.values(a)
            if not equal_bits(arr, expected):
                self._fail(f"{n} holds {arr.tolist()}; the model's memory says {expected.tolist()}")
