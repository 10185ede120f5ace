"""``torch-conformance run`` and ``merge``: validate the input, run pytest with
the gate plugin, write ``results.json``, ``report.html``, JUnit and the
torch-only snippets under ``--out`` (nothing else), and print the summary."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from reports.cli_common import (
    CONFORMANCE_DIR,
    EXIT_FAIL,
    EXIT_OK,
    ROOT,
    BadInput,
    check_devices,
    check_out,
    claim_tests,
    make_console,
    print_error,
)
from reports.processes import (
    Interrupted,
    signals_deferred,
    signals_raise,
    stop_group,
)


def _validate_inputs(args) -> None:
    """Check registry, expectations, claim ids and devices before running.

    Torch is not imported here (3 s): a torch that cannot use the installed
    NumPy (``conformance.capabilities.numpy_problem``) is refused by the
    plugin in the pytest process, which this command reports as one
    ``error:`` line, exit 2, with nothing written to ``--out``."""
    from conformance.expectations import ExpectationsError, load_expectations
    from conformance.registry import RegistryError, default_registry

    try:
        registry = default_registry()
        if args.expectations and not Path(args.expectations).exists():
            raise BadInput(f"{args.expectations}: no such expectations file or directory")
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
        check_devices(args.devices)
    if args.backends:
        from reports.backends import backend_unavailable, parse_backends

        if ":" in args.backends and os.getcwd() not in sys.path:
            # a module:callable resolves as in the run (its PYTHONPATH has the cwd)
            sys.path.append(os.getcwd())
        try:
            bks = parse_backends(args.backends)
        except ValueError as e:
            raise BadInput(str(e)) from None
        for b in bks:
            why = backend_unavailable(b)
            if why:
                raise BadInput(f"--backends {b}: {why}")
    if args.shard:
        from reports.shards import parse_shard

        try:
            parse_shard(args.shard)
        except ValueError as e:
            raise BadInput(str(e)) from None
    from reports.examples import SHRINK_BUDGET_ENV

    budget = os.environ.get(SHRINK_BUDGET_ENV)
    if budget is not None:
        try:
            ok = float(budget) >= 0
        except ValueError:
            ok = False
        if not ok:
            raise BadInput(f"{SHRINK_BUDGET_ENV}={budget!r}: expected a number of seconds >= 0")
    if args.baseline:
        from reports.results import ResultsError

        try:
            from reports.baselines import resolve

            resolve(args.baseline)
        except ResultsError as e:
            raise BadInput(f"--baseline: {e}") from None
    check_out(args.out, "--out")
    for opt, path in (("--junitxml", args.junitxml), ("--xfails-file", args.xfails_file)):
        if path:
            check_out(path, opt, file=True)
    from reports.outdir import OutputError, check_previous_results

    try:
        check_previous_results(args.out, force=args.force)
    except OutputError as e:
        raise BadInput(str(e)) from None


def _selection(claims: str) -> tuple[list[str], int]:
    """For ``run --claims``: the test modules holding those claims' tests
    (nothing else is collected) and how many test functions check them (no
    more workers are started: each one imports torch)."""
    from conformance.mutants.targeted import claim_modules

    wanted = [c.strip() for c in claims.split(",") if c.strip()]
    tests = {t for c in wanted for t in claim_tests(c)}
    return [str(p) for p in claim_modules(wanted)], len(tests)


def _pytest_cmd(args, results_json: Path) -> list[str]:
    where, tests = [str(CONFORMANCE_DIR)], None
    if args.claims:
        where, tests = _selection(args.claims)
    workers = args.n
    if tests is not None and workers and workers != "0":
        # a claim's few tests gain nothing from workers that each need
        # seconds to start; state machines count as one test
        cap = (os.cpu_count() or 1) if workers in ("auto", "logical") else int(workers)
        workers = str(min(cap, tests)) if tests > 1 else "0"
    cmd = [
        sys.executable, "-m", "pytest", *where,
        "-p", "reports.plugin", "-p", "no:cacheprovider",
        "--rootdir", str(ROOT),
        "--results-json", str(results_json),
        "--hypothesis-profile", args.profile,
        "-q",
    ]  # fmt: skip
    if args.devices:
        cmd += ["--devices", args.devices]
    if args.backends:
        cmd += ["--backends", args.backends]
    if args.claims:
        cmd += ["--claims", args.claims]
    if args.shard:
        cmd += ["--shard", args.shard]
    if args.expectations:
        cmd += ["--expectations", str(Path(args.expectations).resolve())]
    if workers and workers != "0":
        cmd += ["-n", str(workers)]
    if args.pytest_args:
        cmd += args.pytest_args
    return cmd


def _save_partial(tmp_json: Path, out: Path) -> tuple[Path, int] | None:
    """Keep the results of an interrupted run as ``OUT/results.partial.json``
    (never over ``results.json``); ``None`` when there are none."""
    from reports.results import ResultsError, load_results, write_json_atomic

    try:
        doc = load_results(tmp_json)
        doc.setdefault("environment", {})["interrupted"] = True
        write_json_atomic(out / "results.partial.json", doc)
    except (ResultsError, OSError):
        return None
    return out / "results.partial.json", len(doc["tests"])


def _claims_total(args) -> int:
    """How many claims the run covers (for the progress display)."""
    if args.claims:
        return len({c.strip() for c in args.claims.split(",") if c.strip()})
    from conformance.registry import default_registry

    return len(default_registry())


def cmd_run(args) -> int:
    """Run the suite, write ``OUT/results.json`` and ``OUT/report.html``.

    Nothing in ``--out`` changes until the run is complete: on SIGINT or
    SIGTERM the pytest process group is stopped, the earlier files are left
    as they were, partial results (if pytest wrote any) go to
    ``OUT/results.partial.json``, and the exit status is 130 / 143 (129 for
    SIGHUP).
    """
    try:
        _validate_inputs(args)
    except BadInput as e:
        return print_error(str(e))
    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="torch-conformance-") as tmp:
        tmp_json = Path(tmp) / "results.json"
        try:
            with signals_raise() as state:
                return _run_and_write(args, out, Path(tmp), state)
        except Interrupted as e:
            name = signal.Signals(e.signum).name
            partial = _save_partial(tmp_json, out)
            where = (
                f"partial results ({partial[1]} tests finished) in {partial[0]}"
                if partial
                else "no partial results were written"
            )
            with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
                print(
                    f"torch-conformance: interrupted by {name}: results.json and report.html "
                    f"in {out} left as they were; {where}",
                    file=sys.stderr,
                )
            return 128 + e.signum


def _run_and_write(args, out: Path, tmp: Path, state: dict) -> int:
    """The body of :func:`cmd_run` (signals raise :class:`Interrupted` in it)."""
    from reports.html import render_report
    from reports.progress import PROGRESS_ENV, ProgressDisplay
    from reports.results import (
        ResultsError,
        load_results,
        summarize,
        write_json_atomic,
        write_text_atomic,
    )
    from reports.terminal import print_summary

    tmp_json = tmp / "results.json"
    events = tmp / "progress.jsonl"
    log_path = tmp / "pytest.log"
    cmd = _pytest_cmd(args, tmp_json) + ["-p", "reports.progress"]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if args.backends and ":" in args.backends:
        # a --backends module:callable imports from where the user ran the command
        env["PYTHONPATH"] += os.pathsep + os.getcwd()
    env[PROGRESS_ENV] = str(events)
    # Hypothesis' own storage (its constants cache; the ci profile keeps no
    # example database) goes to this run's temporary directory, not into the
    # user's working directory, unless the user chose a place for it.
    env.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp / "hypothesis"))
    display = None
    with open(log_path, "w", encoding="utf-8") as log:
        # Its own process group, so an interruption can stop it and its workers.
        proc = subprocess.Popen(cmd, env=env, cwd=str(ROOT), stdout=None if args.verbose else log,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        try:
            print(f"running the suite (pytest pid {proc.pid}) ...", flush=True)
            if not args.verbose and not args.no_progress:
                display = ProgressDisplay(events, _claims_total(args))
            while proc.poll() is None:
                if display is not None:
                    display.update()
                try:
                    proc.wait(timeout=0.25)
                except subprocess.TimeoutExpired:
                    pass
            if display is not None:
                display.close()
                display = None
        except BaseException:
            if display is not None:
                with contextlib.suppress(Exception):
                    display.close()
            stop_group(proc)
            raise
        finally:
            # Workers left behind by a controller that exited go too.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
    returncode = proc.returncode
    tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    errline = next((ln for ln in reversed(tail) if ln.startswith("ERROR:")), None)
    msg = errline.removeprefix("ERROR:").strip() if errline else (tail[-1] if tail else "")
    if returncode not in (0, 1):
        return print_error(
            f"the conformance run could not start: {msg or f'pytest exit {returncode}'}"
        )
    try:
        doc = load_results(tmp_json)
    except ResultsError as e:
        why = f" (pytest: {msg[:300]})" if msg else ""
        return print_error(f"the conformance run wrote no usable results: {e}{why}")
    if not args.no_measure:
        from reports.measure import measure_all

        doc["measurements"] = measure_all(
            devices=doc["environment"]["devices"], quick=args.profile == "ci"
        )
    if args.baseline:
        try:
            from reports.baselines import resolve

            base = resolve(args.baseline)
        except ResultsError as e:
            return print_error(str(e))
        from reports.compare import compare_docs

        doc["baseline"] = compare_docs(base, doc)
    try:
        page = render_report(
            doc, snippet_dir="snippets"
        )  # render first: a failure leaves no half-written output
    except Exception as e:  # a defect of the suite: keep what pytest found
        write_json_atomic(out / "results.partial.json", doc)
        return print_error(
            f"the report could not be rendered (a defect of the suite: {type(e).__name__}: {e}); "
            f"the run's results are in {out / 'results.partial.json'}",
            code=EXIT_FAIL,
        )
    extra: list[tuple[str, Path, str]] = []
    if args.junitxml or args.xfails_file:
        from reports.junit import junit_xml, xfails_text

        if args.junitxml:
            extra.append(("junit:  ", Path(args.junitxml), junit_xml(doc)))
        if args.xfails_file:
            extra.append(("xfails: ", Path(args.xfails_file), xfails_text(doc)))
    snippets = _snippet_files(doc)
    with signals_deferred(state):
        write_json_atomic(out / "results.json", doc)
        write_text_atomic(out / "report.html", page)
        for _, path, text in extra:
            write_text_atomic(path, text)
        _write_snippets(out, snippets)
        with contextlib.suppress(OSError):
            (out / "results.partial.json").unlink()  # stale, from an interrupted run
    if state.get("late"):
        name = signal.Signals(state["late"]).name
        print(f"torch-conformance: interrupted by {name} after writing {out / 'results.json'}",
              file=sys.stderr)  # fmt: skip
        return 128 + state["late"]
    summary = summarize(doc)
    print_summary(doc, make_console())
    _print_snippets(doc, out, snippets)
    print(f"results: {out / 'results.json'}\nreport:  {out / 'report.html'}")
    for label, path, _ in extra:
        print(f"{label}{path}")
    if not summary["gate_passed"] or (returncode == 1 and summary["tests"]["regression"] == 0
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


def _write_snippets(out: Path, snippets: dict[str, str]) -> None:
    """Replace ``OUT/snippets/*.py`` by ``snippets`` (an earlier run's
    reproducers of tests that pass now must not linger)."""
    from reports.results import write_text_atomic

    old = out / "snippets"
    if old.is_dir():
        for f in old.glob("*.py"):
            f.unlink()
    for name, text in snippets.items():
        write_text_atomic(out / "snippets" / name, text)


def _snippet_files(doc: dict) -> dict[str, str]:
    """``{file name: torch-only snippet}`` for every failing test that has one."""
    from reports.html import snippet_name

    out = {}
    for t in doc["tests"]:
        snippet = (t.get("failure") or {}).get("snippet")
        if snippet and t["verdict"] in ("regression", "unexpected-pass"):
            out[snippet_name(t)] = snippet
    return out


def _print_snippets(doc: dict, out: Path, snippets: dict[str, str]) -> None:
    """Name each failing test's torch-only reproducer (printed whole when
    there are at most three), or why it has none."""
    from reports.html import snippet_name

    failing = [t for t in doc["tests"] if t["verdict"] in ("regression", "unexpected-pass")
               and t.get("failure")]  # fmt: skip
    for t in failing:
        name = snippet_name(t)
        if name in snippets:
            print(f"torch-only reproducer of {t['nodeid']}: {out / 'snippets' / name} "
                  "(needs only torch; paste it into a bug report)")  # fmt: skip
            if len(snippets) <= 3:
                print(textwrap.indent(snippets[name].rstrip(), "    "))
        else:
            why = t["failure"].get("snippet_unavailable") or "none recorded"
            print(f"no torch-only reproducer of {t['nodeid']}: {why}")


def cmd_merge(args) -> int:
    """Join the shards' ``results.json`` into ``OUT/results.json``,
    ``OUT/report.html`` and ``OUT/snippets/``; exit 0 when the merged run
    passes the gate, 1 when it fails, 2 on bad input (a missing, repeated
    or foreign shard, an unreadable file)."""
    from reports.html import render_report
    from reports.outdir import OutputError, check_previous_results
    from reports.results import (
        ResultsError,
        load_results,
        summarize,
        write_json_atomic,
        write_text_atomic,
    )
    from reports.shards import merge_docs
    from reports.terminal import print_summary

    try:
        paths = [Path(p) / "results.json" if Path(p).is_dir() else Path(p) for p in args.results]
        doc = merge_docs([load_results(p) for p in paths])
        check_out(args.out, "--out")
        check_previous_results(args.out, force=args.force)
    except (ResultsError, OutputError, BadInput) as e:
        return print_error(str(e))
    out = Path(args.out)
    page = render_report(doc, snippet_dir="snippets")
    snippets = _snippet_files(doc)
    write_json_atomic(out / "results.json", doc)
    write_text_atomic(out / "report.html", page)
    _write_snippets(out, snippets)
    print_summary(doc, make_console())
    print(
        f"merged {len(paths)} shards\nresults: {out / 'results.json'}\nreport:  {out / 'report.html'}"
    )
    return EXIT_OK if summarize(doc)["gate_passed"] else EXIT_FAIL
