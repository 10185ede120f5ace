"""torch.set_grad_enabled(False) used as a decorator: is the caller's grad
mode restored after the decorated call? (torch 2.1: no - the constructor
disables grad at once, so the decorator's saved "previous" mode is already
False and the call leaves grad disabled; 2.2 and later restore it.)"""

import threading

import torch


def body():
    return torch.is_grad_enabled()


for where in ("main", "worker"):
    seen = {}

    def run(seen=seen):
        torch.set_grad_enabled(True)
        seen["inside"] = torch.set_grad_enabled(False)(body)()
        seen["after"] = torch.is_grad_enabled()

    if where == "main":
        run()
        torch.set_grad_enabled(True)
    else:
        t = threading.Thread(target=run)
        t.start()
        t.join()
    print(torch.__version__, f"{where:6}", "inside:", seen["inside"], "after:", seen["after"])
