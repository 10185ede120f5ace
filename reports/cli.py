"""``torch-conformance``: run the gate, render reports, list claims.

Exit codes: 0 every claim held or deviated exactly as expected; 1 the gate
failed (a regression or an unexpected pass); 2 bad input (malformed registry
or expectations, unknown claim id, unreadable/corrupt result file, CUDA asked
for but missing) - always with a one-line ``error:`` message, never a
traceback, and never a half-written report.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2
ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE_DIR = ROOT / "conformance"


class BadInput(Exception):
    """Raised for any user error; becomes ``error: <message>`` and exit 2."""


def _err(msg: str) -> int:
    print(f"torch-conformance: error: {msg}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _console():
    from rich.console import Console

    return Console(stderr=False, highlight=False)


def _validate_inputs(args) -> None:
    """Check registry, expectations, claim ids and devices before running."""
    from conformance.expectations import ExpectationsError, load_expectations
    from conformance.registry import RegistryError, default_registry

    try:
        registry = default_registry()
        if args.expectations and not Path(args.expectations).exists():
            raise BadInput(f"{args.expectations}: no such expectations file")
        if args.expectations:
            load_expectations(args.expectations, registry)
        else:
            load_expectations(registry=registry)
    except (RegistryError, ExpectationsError) as e:
        raise BadInput(str(e)) from None
    if args.claims:
        unknown = [c for c in args.claims.split(",") if c.strip() and c.strip() not in registry]
        if unknown:
            raise BadInput(f"unknown claim id(s): {', '.join(unknown)}")
    if args.devices:
        devs = [d.strip() for d in args.devices.split(",") if d.strip()]
        bad = [d for d in devs if d not in ("cpu", "cuda")]
        if bad or not devs:
            raise BadInput(
                f"--devices: unknown device(s) {', '.join(bad) or '(none)'}; use cpu and/or cuda"
            )
        if "cuda" in devs:
            import torch

            if not torch.cuda.is_available():
                raise BadInput(
                    "--devices cuda: CUDA is not available (torch.cuda.is_available() is False)"
                )


def _pytest_cmd(args, results_json: Path) -> list[str]:
    cmd = [
        sys.executable, "-m", "pytest", str(CONFORMANCE_DIR),
        "-p", "reports.plugin", "-p", "no:cacheprovider",
        "--rootdir", str(ROOT),
        "--results-json", str(results_json),
        "--hypothesis-profile", args.profile,
        "-q",
    ]  # fmt: skip
    if args.devices:
        cmd += ["--devices", args.devices]
    if args.claims:
        cmd += ["--claims", args.claims]
    if args.expectations:
        cmd += ["--expectations", str(Path(args.expectations).resolve())]
    if args.n and args.n != "0":
        cmd += ["-n", str(args.n)]
    if args.pytest_args:
        cmd += args.pytest_args
    return cmd


def cmd_run(args) -> int:
    """Run the suite, write ``OUT/results.json`` and ``OUT/report.html``."""
    from reports.html import render_report
    from reports.results import (
        ResultsError,
        load_results,
        summarize,
        write_json_atomic,
        write_text_atomic,
    )
    from reports.terminal import print_summary

    try:
        _validate_inputs(args)
    except BadInput as e:
        return _err(str(e))
    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="torch-conformance-") as tmp:
        tmp_json = Path(tmp) / "results.json"
        cmd = _pytest_cmd(args, tmp_json)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        proc = subprocess.run(cmd, env=env, cwd=str(ROOT), stdout=None if args.verbose else subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)  # fmt: skip
        if proc.returncode not in (0, 1):
            tail = (proc.stdout or "").strip().splitlines()
            errline = next((ln for ln in reversed(tail) if ln.startswith("ERROR:")), None)
            msg = errline.removeprefix("ERROR:").strip() if errline else (tail[-1] if tail else "")
            return _err(
                f"the conformance run could not start: {msg or f'pytest exit {proc.returncode}'}"
            )
        try:
            doc = load_results(tmp_json)
        except ResultsError as e:
            return _err(f"the conformance run wrote no usable results: {e}")
    if not args.no_measure:
        from reports.measure import measure_all

        doc["measurements"] = measure_all(
            devices=doc["environment"]["devices"], quick=args.profile == "ci"
        )
    if args.baseline:
        try:
            base = load_results(args.baseline)
        except ResultsError as e:
            return _err(str(e))
        from reports.compare import compare_docs

        doc["baseline"] = compare_docs(base, doc)
    page = render_report(doc)  # render first: a failure leaves no half-written output
    write_json_atomic(out / "results.json", doc)
    write_text_atomic(out / "report.html", page)
    summary = summarize(doc)
    print_summary(doc, _console())
    print(f"results: {out / 'results.json'}\nreport:  {out / 'report.html'}")
    if not summary["gate_passed"] or (proc.returncode == 1 and summary["tests"]["regression"] == 0
                                      and summary["tests"]["unexpected-pass"] == 0):  # fmt: skip
        return EXIT_FAIL
    if args.update_expectations:
        from reports.proposals import propose

        write_text_atomic(out / "expectations.proposed.toml", propose(doc))
        print(f"proposed expectations: {out / 'expectations.proposed.toml'}")
    drift = [r for r in doc.get("doc_drift", []) if r["status"] != "present"]
    if drift:
        print(f"doc drift: {len(drift)} quoted sentence(s) no longer in the installed docs")
        for r in drift:
            print(f"  {r['status']}: {r['claim']} ({r['doc']}): {r['quote'][:80]!r}")
    if args.baseline and doc["baseline"]["regressions"]:
        return EXIT_FAIL
    if args.strict_docs and drift:
        return EXIT_FAIL
    return EXIT_OK


def cmd_report(args) -> int:
    """Re-render an HTML report from a result file."""
    from reports.html import render_report
    from reports.results import ResultsError, load_results, write_text_atomic

    try:
        doc = load_results(args.results)
    except ResultsError as e:
        return _err(str(e))
    write_text_atomic(args.output, render_report(doc))
    print(f"report: {args.output}")
    return EXIT_OK


def cmd_compare(args) -> int:
    """Compare two result files; exit 1 on any regression."""
    from reports.compare import compare_docs
    from reports.html import render_compare
    from reports.results import ResultsError, load_results, write_text_atomic

    try:
        base, new = load_results(args.base), load_results(args.new)
    except ResultsError as e:
        return _err(str(e))
    diff = compare_docs(base, new)
    console = _console()
    from rich.table import Table

    table = Table(title=f"torch {diff['base_torch']} -> {diff['new_torch']}")
    for col in ("claim", "device", "baseline", "new", "new failure"):
        table.add_column(col, overflow="fold")
    for r in diff["regressions"] + diff["changes"]:
        mark = "[bold red]REGRESSION[/] " if r["regression"] else ""
        table.add_row(mark + r["claim"], r["device"], r["base"], r["new"], r["new_signature"] or "")
    console.print(table)
    if not diff["same_commit"]:
        console.print("[yellow]note:[/] the result files come from different suite commits")
    console.print(
        f"{len(diff['regressions'])} regression(s), {len(diff['changes'])} other change(s)"
    )
    if args.output:
        write_text_atomic(args.output, render_compare(diff))
        print(f"diff page: {args.output}")
    return EXIT_FAIL if diff["regressions"] else EXIT_OK


def cmd_matrix(args) -> int:
    """Render the claims x (torch version, device) matrix of several result files."""
    from reports.html import render_matrix
    from reports.matrix import build_matrix
    from reports.results import ResultsError, load_results, write_text_atomic

    try:
        docs = [load_results(p) for p in args.results]
    except ResultsError as e:
        return _err(str(e))
    m = build_matrix(docs)
    write_text_atomic(args.output, render_matrix(m))
    regs = sum(r["any_regression"] for r in m["rows"])
    print(
        f"matrix: {args.output} ({len(m['rows'])} claims x {len(m['columns'])} runs, {regs} with regressions)"
    )
    return EXIT_FAIL if regs else EXIT_OK


def cmd_claims(args) -> int:
    """List the registered claims (id, kind, area, statement)."""
    from conformance.registry import RegistryError, default_registry

    try:
        registry = default_registry()
    except RegistryError as e:
        return _err(str(e))
    from rich.table import Table

    table = Table(title=f"{len(registry)} registered claims")
    for col in ("id", "kind", "statement"):
        table.add_column(col, overflow="fold")
    for area, claims in sorted(registry.by_area().items()):
        if args.area and area != args.area:
            continue
        for c in claims:
            table.add_row(c.id, c.kind, c.statement)
    _console().print(table)
    return EXIT_OK


def cmd_mutate(args) -> int:
    """Run the suite once per semantic mutant of torch; print the kill matrix.

    Writes ``OUT/mutants.json``; embeds the result into ``OUT/results.json``
    and re-renders ``OUT/report.html`` when a result file is there. Exit 1
    when a mutant survived (or broke the run) or the control run failed.
    """
    from conformance.mutants import all_mutants

    catalogue = all_mutants()
    if args.list:
        for m in catalogue:
            print(m.name)
        return EXIT_OK
    by_name = {m.name: m for m in catalogue}
    if args.mutants:
        names = [n.strip() for n in args.mutants.split(",") if n.strip()]
        unknown = [n for n in names if n not in by_name]
        if unknown or not names:
            return _err(
                f"--mutants: unknown mutant(s) {', '.join(unknown) or '(none)'}; "
                "see torch-conformance mutate --list"
            )
        chosen = [by_name[n] for n in dict.fromkeys(names)]
    else:
        chosen = catalogue
    devs = [d.strip() for d in args.devices.split(",") if d.strip()]
    if not devs or any(d not in ("cpu", "cuda") for d in devs):
        return _err(f"--devices: unknown device(s) in {args.devices!r}; use cpu and/or cuda")
    try:
        workers = int(args.n)
    except ValueError:
        return _err(f"-n: expected a number of parallel runs, got {args.n!r}")
    from conformance.mutants import runner
    from reports.mutation import embed_mutation
    from reports.results import ResultsError, write_json_atomic

    out = Path(args.out)
    console = _console()
    if not console.is_terminal:  # logs: room for the kill matrix
        from rich.console import Console

        console = Console(highlight=False, width=160)
    total = len(chosen) + (0 if args.no_control else 1)
    done = {"n": 0}

    def progress(rec: dict) -> None:
        done["n"] += 1
        what = ", ".join(rec["claims"][:3]) or rec["reason"] or ""
        colour = {"killed": "green", "survived": "red", "error": "yellow"}[rec["status"]]
        if rec["name"] == "control":
            colour = "green" if rec["status"] == "survived" else "red"
        console.print(
            f"[{done['n']}/{total}] {rec['name']}: [{colour}]{rec['status']}[/] "
            f"in {rec['time_s']:.1f} s {what}"
        )

    doc = runner.sweep(
        chosen,
        out,
        workers=max(1, workers),
        profile=args.profile,
        devices=",".join(devs),
        stop_first=not args.keep_going,
        control=not args.no_control,
        timeout=args.timeout,
        progress=progress,
        hints=None if args.cold else runner.previous_kills(out / "mutants.json"),
        shrink=args.shrink,
    )
    write_json_atomic(out / "mutants.json", doc)
    console.print(runner.kill_matrix_table(doc))
    for line in runner.summary_lines(doc):
        print(line)
    print(f"mutants: {out / 'mutants.json'}")
    try:
        report = embed_mutation(out, doc)
    except ResultsError as e:
        print(f"not embedded in the report: {e}")
        report = None
    if report is not None:
        print(f"report:  {report} (detection power section)")
    return EXIT_OK if runner.gate_ok(doc) else EXIT_FAIL


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torch-conformance",
        description="Property-based conformance gate for PyTorch copy, aliasing and autograd semantics.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the suite and write results.json + report.html")
    r.add_argument(
        "--devices", default=None, help="cpu,cuda (default: cpu, plus cuda when available)"
    )
    r.add_argument(
        "--profile", default="ci", choices=["ci", "dev", "thorough"], help="Hypothesis profile"
    )
    r.add_argument("-n", default="auto" if (os.cpu_count() or 1) > 1 else "0",
                   help="pytest-xdist workers (0 = in one process; default auto)")  # fmt: skip
    r.add_argument(
        "--out", default="conformance-out", help="output directory (default conformance-out)"
    )
    r.add_argument("--claims", default=None, help="only these claim ids (comma-separated)")
    r.add_argument(
        "--expectations", default=None, help="known-deviations TOML (default: the shipped one)"
    )
    r.add_argument("--baseline", default=None, help="compare with a baseline results.json")
    r.add_argument("--no-measure", action="store_true", help="skip the timing measurements")
    r.add_argument(
        "--strict-docs",
        action="store_true",
        help="fail the gate when a quoted doc sentence vanished",
    )
    r.add_argument("--update-expectations", action="store_true",
                   help="write OUT/expectations.proposed.toml with entries for the current failures")  # fmt: skip
    r.add_argument("-v", "--verbose", action="store_true", help="show pytest's output")
    r.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    r.set_defaults(func=cmd_run)
    rep = sub.add_parser("report", help="render report.html from a results.json")
    rep.add_argument("results")
    rep.add_argument("-o", "--output", default="report.html")
    rep.set_defaults(func=cmd_report)
    cmp = sub.add_parser("compare", help="compare two results.json files (exit 1 on regression)")
    cmp.add_argument("base")
    cmp.add_argument("new")
    cmp.add_argument("-o", "--output", default=None, help="write an HTML diff page")
    cmp.set_defaults(func=cmd_compare)
    mx = sub.add_parser(
        "matrix", help="render claims x (torch, device) for several results.json files"
    )
    mx.add_argument("results", nargs="+")
    mx.add_argument("-o", "--output", default="matrix.html")
    mx.set_defaults(func=cmd_matrix)
    c = sub.add_parser("claims", help="list the registered claims")
    c.add_argument("--area", default=None)
    c.set_defaults(func=cmd_claims)
    mu = sub.add_parser(
        "mutate", help="run the suite once per semantic mutant of torch (kill matrix)"
    )
    mu.add_argument("--list", action="store_true", help="print the mutant names, one per line")
    mu.add_argument("--mutants", default=None, help="only these mutants (comma-separated names)")
    mu.add_argument("-n", default=str(os.cpu_count() or 1),
                    help="mutants run in parallel (default: CPU count)")  # fmt: skip
    mu.add_argument(
        "--out", default="conformance-out", help="output directory (default conformance-out)"
    )
    mu.add_argument(
        "--profile", default="ci", choices=["ci", "dev", "thorough"], help="Hypothesis profile"
    )
    mu.add_argument("--devices", default="cpu", help="devices to run on (default cpu)")
    mu.add_argument("--no-control", action="store_true",
                    help="skip the control run without a mutant")  # fmt: skip
    mu.add_argument("--keep-going", action="store_true",
                    help="run every test instead of stopping at the first failure (full matrix, slower)")  # fmt: skip
    mu.add_argument("--timeout", type=float, default=1200, help="seconds per mutant (default 1200)")
    mu.add_argument("--shrink", action="store_true",
                    help="let Hypothesis shrink each killing example (readable, slower kills)")  # fmt: skip
    mu.add_argument("--cold", action="store_true",
                    help="ignore OUT/mutants.json from an earlier sweep (whose killing tests otherwise run first)")  # fmt: skip
    mu.set_defaults(func=cmd_mutate)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return _err("interrupted")
    except BadInput as e:
        return _err(str(e))


if __name__ == "__main__":
    sys.exit(main())
