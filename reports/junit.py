"""Export a result file in formats CI tools already consume.

- :func:`junit_xml`: JUnit XML with one ``<testcase>`` per claim (per claim and
  device when the run covered several devices). A failing claim carries a
  ``<failure>`` (an ``<error>`` for a suite error) whose text is the failure
  signature, the falsifying example and the reproduction hint; a known
  deviation is reported the way pytest reports an xfail (``<skipped
  type="pytest.xfail">``); skipped / not run claims are ``<skipped>``.
- :func:`xfails_text`: the array-api-tests ``--xfails-file`` convention: one
  pytest test id per line, ``#`` comments; it lists the tests that deviate
  from their claims as recorded in the expectations.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from reports.results import claim_verdicts, overall_verdict

_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text) -> str:
    """``text`` as a string that is legal in XML 1.0."""
    return _BAD_XML.sub("?", "" if text is None else str(text))


def _failure_text(tests: list[dict]) -> str:
    parts = []
    for t in tests:
        f = t.get("failure") or {}
        lines = [f"{t.get('nodeid', t.get('name', '?'))}: {t.get('verdict')}"]
        if t.get("verdict") == "unexpected-pass":
            exp = t.get("expectation") or {}
            lines.append(
                f"expected to deviate ({exp.get('key', '?')}: {exp.get('reason', '')}) but held"
            )
        for key in ("signature", "falsifying_example", "reproduce", "message"):
            if f.get(key):
                lines.append(str(f[key]))
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def junit_xml(doc: dict) -> str:
    """The JUnit XML document of a result file (see the module docstring)."""
    env = doc.get("environment", {})
    cv = claim_verdicts(doc)
    suite = ET.Element("testsuite", name="torch-conformance")
    props = ET.SubElement(suite, "properties")
    for key in ("torch", "hypothesis", "python", "profile"):
        ET.SubElement(props, "property", name=key, value=_x(env.get(key)))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for cid in sorted(cv):
        claim = doc["claims"].get(cid, {})
        for dev, cell in cv[cid].items():
            name = cid if len(cv[cid]) == 1 else f"{cid}[{dev}]"
            t_s = sum(t.get("duration_s") or 0 for t in cell["tests"])
            total_time += t_s
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"torch-conformance.{claim.get('area', '?')}",
                name=name,
                time=f"{t_s:.3f}",
            )
            counts["tests"] += 1
            verdict = cell["verdict"]
            if overall_verdict(doc, cid, {dev: cell}) == "measured":
                verdict = "measured"
            failing = [
                t
                for t in cell["tests"]
                if t.get("verdict") in ("regression", "unexpected-pass", "suite-error")
            ]
            if verdict == "ERROR":
                counts["errors"] += 1
                first = (failing[0].get("failure") or {}) if failing else {}
                el = ET.SubElement(case, "error", message=_x(first.get("signature", "suite error")))
                el.text = _x(_failure_text(failing))
            elif verdict in ("FAILED", "unexpected pass"):
                counts["failures"] += 1
                first = failing[0] if failing else {}
                msg = (first.get("failure") or {}).get("signature") or verdict
                el = ET.SubElement(
                    case, "failure", message=_x(msg), type=_x(first.get("verdict", verdict))
                )
                el.text = _x(_failure_text(failing))
            elif verdict == "expected deviation":
                counts["skipped"] += 1
                exps = {
                    (t.get("expectation") or {}).get("key", "?"): (t.get("expectation") or {})
                    for t in cell["tests"]
                    if t.get("verdict") == "expected-deviation"
                }
                msg = "; ".join(
                    f"expected deviation {k}: {e.get('reason', '')}" for k, e in exps.items()
                )
                ET.SubElement(case, "skipped", type="pytest.xfail", message=_x(msg))
            elif verdict in ("skipped", "not run", "not applicable"):
                counts["skipped"] += 1
                reasons = "; ".join(r for r in cell.get("reasons", []) if r) or verdict
                ET.SubElement(case, "skipped", message=_x(reasons))
            else:
                out = ET.SubElement(case, "system-out")
                out.text = _x(f"{verdict}; {cell.get('examples', 0)} examples")
    for k, v in counts.items():
        suite.set(k, str(v))
    suite.set("time", f"{total_time:.3f}")
    root = ET.Element("testsuites", name="torch-conformance")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def xfails_text(doc: dict) -> str:
    """The tests that deviated as recorded, one pytest id per line with a
    ``#`` comment naming the claim and the expectation (array-api-tests
    ``--xfails-file`` convention)."""
    env = doc.get("environment", {})
    lines = [
        "# torch-conformance: tests that deviate from their claims as recorded",
        f"# torch {env.get('torch')}, devices {','.join(env.get('devices') or [])}",
        "# one pytest test id per line; lines starting with # are comments",
    ]
    for t in sorted(doc.get("tests", []), key=lambda t: t.get("nodeid", "")):
        if t.get("verdict") != "expected-deviation":
            continue
        exp = t.get("expectation") or {}
        claims = ",".join(t.get("claims", []))
        reason = " ".join(str(exp.get("reason", "")).split())
        lines.append(f"# {claims}: {exp.get('key', '?')}: {reason}".rstrip())
        lines.append(t["nodeid"])
    return "\n".join(lines) + "\n"
