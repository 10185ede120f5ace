"""Sending a torch.from_numpy(a) tensor through torch.multiprocessing (a Queue to a
child, or ForkingPickler itself) moves the tensor's storage into shared memory and
silently ends its aliasing with the ndarray in the sender: afterwards a[0] = 5 is not
seen by the tensor, and a write to the tensor is not seen by a. The receiver shares the
sender's (new, shared) memory, not the array's. Under every sharing strategy; also for
torch.as_tensor(a) and torch.asarray(a), and for a view of such a tensor (its base moves
with it). No warning is issued. (shared_memory.sending-severs-numpy-alias)"""

import io
import time
import warnings
from multiprocessing.reduction import ForkingPickler

import numpy as np
import torch
import torch.multiprocessing as tmp  # registers the tensor reducers on ForkingPickler


def child(inbox, outbox):
    u = inbox.get(timeout=60)
    outbox.put(("child received", u.is_shared(), u.tolist()))
    u[1] = 42.0  # seen by the sender's tensor?


def send(t, how):
    if how == "ForkingPickler.dumps":
        return ForkingPickler.loads(ForkingPickler.dumps(t))
    if how == "ForkingPickler(buf).dump":
        buf = io.BytesIO()
        ForkingPickler(buf).dump(t)
        return ForkingPickler.loads(buf.getvalue())
    if how == "SimpleQueue.put":
        q = tmp.get_context().SimpleQueue()
        q.put(t)
        u = q.get()
        q.close()
        return u
    raise ValueError(how)


default = tmp.get_sharing_strategy()
print(torch.__version__, "strategies:", sorted(tmp.get_all_sharing_strategies()))
try:
    for strategy in sorted(tmp.get_all_sharing_strategies()):
        tmp.set_sharing_strategy(strategy)
        for form in ("from_numpy", "as_tensor", "asarray"):
            for how in ("ForkingPickler.dumps", "ForkingPickler(buf).dump", "SimpleQueue.put"):
                for view in (False, True):
                    a = np.arange(6.0)
                    base = getattr(torch, form)(a)
                    t = base[2:] if view else base
                    before = (base.data_ptr() == a.ctypes.data, t.is_shared())
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        u = send(t, how)
                    a[2] = 5.0  # t[0] if t is the view, t[2] otherwise
                    t_sees_a = (t[0] if view else t[2]).item() == 5.0
                    t[-1] = 7.0
                    a_sees_t = a[-1] == 7.0
                    print(
                        f"{strategy:15} {form:10} {how:24} view={view!s:5}",
                        "before: aliases a / shared:",
                        before,
                        "| after: aliases a:",
                        base.data_ptr() == a.ctypes.data,
                        "shared:",
                        t.is_shared(),
                        "t sees a[..]=5:",
                        t_sees_a,
                        "a sees t[-1]=7:",
                        a_sees_t,
                        "received shares t:",
                        u.data_ptr() == t.data_ptr(),
                        "warnings:",
                        len(caught),
                    )
        # a real child through a torch.multiprocessing Queue (fork start method)
        ctx = tmp.get_context("fork")
        inbox, outbox = ctx.Queue(), ctx.Queue()
        proc = ctx.Process(target=child, args=(inbox, outbox), daemon=True)
        proc.start()
        a = np.arange(4.0)
        t = torch.from_numpy(a)
        inbox.put(t)
        print(f"{strategy:15} Queue.put to a child:", outbox.get(timeout=60))
        proc.join(60)
        time.sleep(0.05)
        a[0] = 5.0
        print(
            f"{strategy:15} Queue.put to a child: sender aliases a:",
            t.data_ptr() == a.ctypes.data,
            "shared:",
            t.is_shared(),
            "t[0] after a[0] = 5:",
            t[0].item(),
            "t[1] after the child wrote 42:",
            t[1].item(),
            "a[1]:",
            a[1],
            "child exit code:",
            proc.exitcode,
        )
        inbox.close()
        outbox.close()
finally:
    tmp.set_sharing_strategy(default)

# what IS documented: before sending, from_numpy shares memory with the array
a = np.arange(3.0)
t = torch.from_numpy(a)
a[0] = 5.0
print("before sending: t[0] after a[0] = 5:", t[0].item(), "shared:", t.is_shared())
