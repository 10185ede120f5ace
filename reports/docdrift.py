"""Doc drift: do the quoted sentences still appear in the installed torch's docs?

Every claim source with ``doc`` (a dotted path to a Python object, e.g.
``torch.Tensor.detach``) and ``quote`` is checked against that object's
docstring in the installed torch. Both sides are normalised: reST roles
(``:attr:`x```  -> ``x``), ``~`` cross-reference markers, backquotes and
whitespace. A quote that vanished is the first warning that a promise was
withdrawn (the ``resize_``-on-detach note of torch <= 2.2 is one).

Statuses: ``present``; ``missing`` (the object exists, the sentence does not);
``unresolvable`` (no such object in this torch); sources with only a ``url``
are not checkable offline and are not listed.
"""

from __future__ import annotations

import importlib
import re

_ROLE = re.compile(r":[a-zA-Z_]+:`~?([^`]*)`")
_MARKS = re.compile(r"[`*]")


def normalize(text: str) -> str:
    """Strip reST roles/markup and collapse whitespace (case kept)."""
    text = _ROLE.sub(r"\1", text)
    text = _MARKS.sub("", text).replace("~", "")
    return " ".join(text.split())


def resolve(path: str):
    """Import the object named by a dotted ``path`` (``torch.Tensor.detach``).

    Returns ``None`` when no prefix imports or an attribute is missing.
    """
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def check_docs(claims: dict[str, dict]) -> list[dict]:
    """Check every ``doc`` + ``quote`` source of ``claims`` (id -> claim dict).

    Returns rows ``{claim, doc, quote, status}`` sorted with drift first.
    """
    rows = []
    for cid, claim in sorted(claims.items()):
        for src in claim.get("sources", []):
            doc, quote = src.get("doc"), src.get("quote")
            if not doc or not quote:
                continue
            obj = resolve(doc)
            if obj is None:
                status = "unresolvable"
            else:
                text = normalize(getattr(obj, "__doc__", None) or "")
                parts = [normalize(p) for p in quote.split("...") if normalize(p)]
                status = "present" if parts and all(p in text for p in parts) else "missing"
            rows.append({"claim": cid, "doc": doc, "quote": quote, "status": status})
    rows.sort(key=lambda r: (r["status"] == "present", r["claim"]))
    return rows


def drifted(rows: list[dict]) -> list[dict]:
    """The rows whose quote is missing or whose object is gone."""
    return [r for r in rows if r["status"] != "present"]
