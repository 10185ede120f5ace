"""``torch-conformance``: run the gate, render reports, list claims.

Exit codes: 0 every claim held or deviated exactly as expected; 1 the gate
failed (a regression or an unexpected pass); 2 bad input (malformed registry
or expectations, unknown claim id, unreadable/corrupt result file, a device
that is unknown or not available here) - always with a one-line ``error:`` message, never a
traceback, and never a half-written report; 130 / 143 / 129 interrupted by
SIGINT / SIGTERM / SIGHUP (the files already in ``--out`` left as they were).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2
#: Exit status after SIGINT / SIGTERM (128 + signal number, as shells report it).
EXIT_SIGINT, EXIT_SIGTERM = 128 + signal.SIGINT, 128 + signal.SIGTERM
#: Seconds an interrupted pytest gets to write its partial results before it is killed.
INTERRUPT_GRACE_S = 10.0
ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE_DIR = ROOT / "conformance"


class BadInput(Exception):
    """Raised for any user error; becomes ``error: <message>`` and exit 2."""


def _err(msg: str, code: int = EXIT_BAD_INPUT) -> int:
    """Print one ``error:`` line on stderr; returns ``code`` (exit 2: bad input)."""
    print(f"torch-conformance: error: {msg}", file=sys.stderr)
    return code


class _Parser(argparse.ArgumentParser):
    """``argparse`` whose usage errors are one ``error:`` line and exit 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        """Print a one-line usage error and exit 2."""
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _workers(value: str) -> str:
    """``-n`` of ``run``: ``auto``, ``logical`` or a number of workers >= 0."""
    if value in ("auto", "logical"):
        return value
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected auto, logical or a number of workers >= 0, got {value!r}"
        ) from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number of workers >= 0, got {n}")
    return str(n)


def _positive_int(value: str) -> int:
    """An integer >= 1 (``mutate -n``)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {n}")
    return n


def _positive_float(value: str) -> float:
    """A number of seconds > 0 (``mutate --timeout``)."""
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not x > 0 or x == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {value}")
    return x


def _nonempty(value: str) -> str:
    """A non-empty, non-blank string."""
    if not value.strip():
        raise argparse.ArgumentTypeError("expected a value, got an empty string")
    return value


def _id_list(value: str) -> str:
    """A comma-separated list with at least one non-blank item (``--claims``)."""
    if not [v for v in value.split(",") if v.strip()]:
        raise argparse.ArgumentTypeError(f"expected comma-separated ids, got {value!r}")
    return value


def _check_out(path, what: str, *, file: bool = False) -> None:
    """Raise :class:`BadInput` unless ``path`` can be written (nothing is left on disk)."""
    from reports.outdir import OutputError, check_writable_dir, check_writable_file

    try:
        if file:
            check_writable_file(path, what)
        else:
            check_writable_dir(path, what)
    except OutputError as e:
        raise BadInput(str(e)) from None


def _console():
    """The terminal console; when stdout is not a terminal (CI logs, pipes)
    tables get a fixed 160 columns instead of rich's 80, so area names and
    verdict headers are never cut."""
    from rich.console import Console

    console = Console(stderr=False, highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(stderr=False, highlight=False, width=160)
    return console


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
        _check_devices(args.devices)
    if args.backends:
        from reports.plugin import backend_unavailable, parse_backends

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
    from reports.plugin import SHRINK_BUDGET_ENV

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
    _check_out(args.out, "--out")
    for opt, path in (("--junitxml", args.junitxml), ("--xfails-file", args.xfails_file)):
        if path:
            _check_out(path, opt, file=True)
    from reports.outdir import OutputError, check_previous_results

    try:
        check_previous_results(args.out, force=args.force)
    except OutputError as e:
        raise BadInput(str(e)) from None


def _check_devices(raw: str) -> list[str]:
    """The device types of ``--devices`` ``raw``, each known to this torch and
    available here (:mod:`conformance.capabilities`); raises :class:`BadInput`
    with one line naming the first that is not. Imports torch only when a
    device other than the CPU is named."""
    devs = list(dict.fromkeys(d.strip() for d in raw.split(",") if d.strip()))
    if not devs:
        raise BadInput(f"--devices: no device in {raw!r}")
    if devs == ["cpu"]:
        return devs
    from conformance import capabilities as cap

    try:
        devs = cap.parse_devices(raw)
    except ValueError as e:
        raise BadInput(str(e)) from None
    for d in devs:
        why = cap.device_unavailable(d)
        if why:
            raise BadInput(f"--devices {d}: {why}")
    return devs


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


#: Signals that stop a run cleanly (SIGHUP: its terminal went away).
_STOP_SIGNALS = tuple(
    getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)
)


class _Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (raised from the signal handler)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_raise():
    """Turn SIGINT, SIGTERM and SIGHUP into :class:`_Interrupted` for the block; the
    first one only: later ones are remembered and ignored while cleaning up."""
    state: dict = {"signum": None, "late": None}

    def handler(signum, frame):
        if state["signum"] is None:
            state["signum"] = signum
            raise _Interrupted(signum)

    old = {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}
    try:
        yield state
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


@contextlib.contextmanager
def _signals_deferred(state: dict):
    """Hold SIGINT/SIGTERM back while a pair of result files is written, so
    ``results.json`` and ``report.html`` are both from the same run; a
    signal that arrived meanwhile is recorded as ``state["late"]``."""

    def handler(signum, frame):
        if state["signum"] is None:
            state["signum"] = state["late"] = signum

    old = {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def _stop_group(proc: subprocess.Popen) -> None:
    """Stop the pytest process group (controller and xdist workers): send it
    SIGINT (whichever signal stopped us), so pytest ends its session and writes its
    partial results, wait a grace period, then kill whatever is left."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=INTERRUPT_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # workers outliving their controller, too
    proc.wait()


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
        return _err(str(e))
    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="torch-conformance-") as tmp:
        tmp_json = Path(tmp) / "results.json"
        try:
            with _signals_raise() as state:
                return _run_and_write(args, out, Path(tmp), state)
        except _Interrupted as e:
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
    """The body of :func:`cmd_run` (signals raise :class:`_Interrupted` in it)."""
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
            _stop_group(proc)
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
        return _err(f"the conformance run could not start: {msg or f'pytest exit {returncode}'}")
    try:
        doc = load_results(tmp_json)
    except ResultsError as e:
        why = f" (pytest: {msg[:300]})" if msg else ""
        return _err(f"the conformance run wrote no usable results: {e}{why}")
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
            return _err(str(e))
        from reports.compare import compare_docs

        doc["baseline"] = compare_docs(base, doc)
    try:
        page = render_report(
            doc, snippet_dir="snippets"
        )  # render first: a failure leaves no half-written output
    except Exception as e:  # a defect of the suite: keep what pytest found
        write_json_atomic(out / "results.partial.json", doc)
        return _err(
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
    with _signals_deferred(state):
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
    print_summary(doc, _console())
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
        _check_out(args.out, "--out")
        check_previous_results(args.out, force=args.force)
    except (ResultsError, OutputError, BadInput) as e:
        return _err(str(e))
    out = Path(args.out)
    page = render_report(doc, snippet_dir="snippets")
    snippets = _snippet_files(doc)
    write_json_atomic(out / "results.json", doc)
    write_text_atomic(out / "report.html", page)
    _write_snippets(out, snippets)
    print_summary(doc, _console())
    print(
        f"merged {len(paths)} shards\nresults: {out / 'results.json'}\nreport:  {out / 'report.html'}"
    )
    return EXIT_OK if summarize(doc)["gate_passed"] else EXIT_FAIL


def cmd_report(args) -> int:
    """Re-render an HTML report from a result file."""
    from reports.html import render_report
    from reports.results import ResultsError, load_results, write_text_atomic

    try:
        doc = load_results(args.results)
    except ResultsError as e:
        return _err(str(e))
    _check_out(args.output, "-o", file=True)
    write_text_atomic(args.output, render_report(doc))
    print(f"report: {args.output}")
    return EXIT_OK


def cmd_compare(args) -> int:
    """Compare two result files; exit 1 on any regression."""
    from reports.baselines import resolve
    from reports.compare import compare_docs
    from reports.html import render_compare
    from reports.results import ResultsError, write_text_atomic

    base_spec = args.from_ or args.base
    new_spec = args.to or args.new
    if not base_spec or not new_spec:
        return _err(
            "compare needs two result files or torch versions (BASE NEW, or --from X --to Y)"
        )
    try:
        base, new = resolve(base_spec), resolve(new_spec)
    except ResultsError as e:
        return _err(str(e))
    if args.output:
        _check_out(args.output, "-o", file=True)
    diff = compare_docs(base, new)
    console = _console()
    from rich.table import Table

    from reports.causes import BAD  # noqa: F401  (cause groups are in diff["causes"])

    table = Table(title=f"torch {diff['base_torch']} -> {diff['new_torch']}")
    for col in ("claim", "device", "baseline", "new", "changed in", "new failure"):
        table.add_column(col, overflow="fold")
    for r in diff["regressions"] + diff["changes"]:
        mark = "[bold red]REGRESSION[/] " if r["regression"] else ""
        table.add_row(mark + r["claim"], r["device"], r["base"], r["new"],
                      r.get("changed_in") or "", r["new_signature"] or "")  # fmt: skip
    console.print(table)
    for g in diff["causes"]["groups"]:
        console.print(
            f"likely cause: {g['primitive']} (its own claims {', '.join(g['own_failed']) or '-'} "
            f"regressed; {len(g['explained'])} other regression(s) rely on it)",
            markup=False,
        )
    for d, why in diff.get("not_compared", {}).items():
        console.print(f"note: device {d} not compared ({why})", markup=False)
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
    from reports.baselines import available, load_baseline, resolve
    from reports.html import render_matrix
    from reports.matrix import build_matrix
    from reports.results import ResultsError, write_text_atomic

    try:
        docs = [resolve(p) for p in args.results]
        if args.releases:
            docs = [load_baseline(v) for v in available()] + docs
    except ResultsError as e:
        return _err(str(e))
    if not docs:
        return _err("matrix needs result files, torch versions or --releases")
    _check_out(args.output, "-o", file=True)
    m = build_matrix(docs)
    write_text_atomic(args.output, render_matrix(m))
    regs = sum(r["any_regression"] for r in m["rows"])
    print(
        f"matrix: {args.output} ({len(m['rows'])} claims x {len(m['columns'])} runs, {regs} with regressions)"
    )
    return EXIT_FAIL if regs else EXIT_OK


def cmd_baseline(args) -> int:
    """``baseline list``: the shipped release baselines; ``baseline save
    RESULTS``: store a run's results.json as the baseline of its torch
    release (``nox -s releases`` does this for every release)."""
    from reports.baselines import BASELINES_DIR, available, save_baseline
    from reports.results import ResultsError, load_results

    if args.action == "list":
        files = available()
        if not files:
            print(f"no shipped baselines in {BASELINES_DIR}")
        for version, path in files.items():
            print(f"{version}\t{path.name}\t{path.stat().st_size} bytes")
        return EXIT_OK
    if not args.results:
        return _err("baseline save needs a results.json")
    try:
        doc = load_results(args.results)
    except ResultsError as e:
        return _err(str(e))
    if doc["environment"].get("claims_selected"):
        return _err(f"{args.results}: a run of selected claims only cannot be a release baseline")
    path = save_baseline(doc, Path(args.dir) if args.dir else BASELINES_DIR)
    print(f"baseline: {path} ({path.stat().st_size} bytes)")
    return EXIT_OK


def cmd_claims(args) -> int:
    """List the registered claims (id, area, kind, statement), ids always whole.

    ``--format table`` (default): one block per claim, the id on a line of its
    own; ``tsv``: ``id<TAB>area<TAB>kind<TAB>statement`` with a header;
    ``json``: a list of claim objects. ``--area`` must name a known area.
    """
    import json

    from conformance.registry import RegistryError, default_registry

    try:
        registry = default_registry()
    except RegistryError as e:
        return _err(str(e))
    if args.show is not None:
        if args.show not in registry:
            return _err(f"--show: unknown claim id {args.show!r}")
        from conformance.expectations import ExpectationsError

        try:
            print(show_claim(args.show))
        except ExpectationsError as e:
            return _err(str(e))
        return EXIT_OK
    by_area = registry.by_area()
    if args.area is not None and args.area not in by_area:
        return _err(f"--area: unknown area {args.area!r}; known: {', '.join(sorted(by_area))}")
    chosen = [
        (area, c)
        for area, claims in sorted(by_area.items())
        if args.area is None or area == args.area
        for c in claims
    ]
    if args.format == "json":
        print(json.dumps([{"id": c.id, "area": area, "kind": c.kind, "statement": c.statement}
                          for area, c in chosen], indent=1))  # fmt: skip
    elif args.format == "tsv":
        print("id\tarea\tkind\tstatement")
        for area, c in chosen:
            print("\t".join([c.id, area, c.kind, " ".join(c.statement.split())]))
    else:
        import textwrap

        width = max(40, min(100, _console().width) - 4)
        print(f"{len(chosen)} of {len(registry)} registered claims")
        for area, c in chosen:
            print(f"\n{c.id}\n    {area} | {c.kind}")
            print(textwrap.fill(" ".join(c.statement.split()), width=width,
                                initial_indent="    ", subsequent_indent="    "))  # fmt: skip
    return EXIT_OK


def claim_tests(claim_id: str) -> list[str]:
    """``module::test`` of every conformance test marked with ``claim_id``
    (read from the source with :mod:`ast`; nothing is imported)."""
    return list(_claim_test_index().get(claim_id, ()))


@functools.cache
def _claim_test_index() -> dict[str, tuple[str, ...]]:
    """Claim id -> ``module::test`` of the conformance tests whose
    ``@pytest.mark.claim(...)`` quotes it, from one parse of each module
    (``run --claims`` with many claims once parsed every module per claim)."""
    import ast

    out: dict[str, list[str]] = {}
    for path in sorted((Path(__file__).resolve().parent.parent / "conformance").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "attr", None) == "claim":
                    for a in dec.args:
                        if isinstance(a, ast.Constant) and isinstance(a.value, str):
                            tests = out.setdefault(a.value, [])
                            if f"{path.name}::{node.name}" not in tests:
                                tests.append(f"{path.name}::{node.name}")
    return {c: tuple(t) for c, t in out.items()}


def show_claim(claim_id: str) -> str:
    """Everything the suite holds on one claim, as text: statement, kind,
    sources, tests, mutants, recorded deviations with their ranges, measured
    releases, regions, signatures, probes and upstream records, and the
    claim's verdict in each shipped baseline.

    Raises :class:`conformance.expectations.ExpectationsError` for malformed
    expectations data."""
    import textwrap

    from conformance.expectations import load_expectations
    from conformance.mutants import by_claim
    from conformance.registry import default_registry
    from reports.baselines import available, load_baseline
    from reports.results import claim_verdicts, overall_verdict

    registry = default_registry()
    c = registry[claim_id]
    lines = [claim_id, f"  area {c.area} | kind {c.kind}", ""]
    lines += textwrap.wrap(" ".join(c.statement.split()), 96, initial_indent="  ",
                           subsequent_indent="  ")  # fmt: skip
    lines.append("\nsources:")
    for src in c.sources:
        lines.append(f"  - {src.label}" + (f": {src.quote!r}" if src.quote else ""))
    tests = claim_tests(claim_id)
    lines.append(f"\ntests ({len(tests)}):")
    lines += [f"  - {t}" for t in tests] or ["  (none)"]
    mutants = by_claim().get(claim_id, [])
    lines.append(f"\nmutants ({len(mutants)}):")
    lines += [f"  - {m.name}: {m.description}" for m in mutants] or [
        f"  (none{': unfalsifiable - ' + c.unfalsifiable if c.unfalsifiable else ''})"
    ]
    devs = [d for d in load_expectations(registry=registry) if d.claim == claim_id]
    lines.append(f"\nrecorded deviations ({len(devs)}):")
    for d in devs:
        lines.append(f"  - {d.key}  [{d.file}]")
        lines.append(f"      torch {d.torch_text}; measured on {', '.join(d.measured) or 'none'}")
        lines.append(f"      where: {d.region_text}")
        lines.append(f"      signature: {d.exception}: {d.match!r}")
        lines.append(
            f"      upstream: {d.upstream}" + (f"; probe: {', '.join(d.probe)}" if d.probe else "")
        )
        lines += textwrap.wrap(d.reason, 92, initial_indent="      ", subsequent_indent="      ")
    lines.append("\nverdict per shipped baseline:")
    for version in available():
        doc = load_baseline(version)
        if claim_id not in doc["claims"]:
            lines.append(f"  {version:>8}  (not in that run)")
            continue
        per_dev = claim_verdicts(doc).get(claim_id, {})
        lines.append(f"  {version:>8}  {overall_verdict(doc, claim_id, per_dev)}")
    return "\n".join(lines)


def _descendants(pid: int) -> list[int]:
    """Process ids descending from ``pid`` (Linux ``/proc``; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _kill_children_on_sigterm() -> None:
    """For ``mutate``: on SIGINT/SIGTERM, stop every process this one started
    (the mutant runs and their workers), say so, and exit 130 / 143 at once
    (queued mutant runs are not started). Files in ``--out`` are only written
    after the sweep, atomically, so the earlier ones stay as they were."""

    def handler(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        import time

        pids = _descendants(os.getpid())
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.1)
        for pid in [*pids, *_descendants(os.getpid())]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        name = signal.Signals(signum).name
        print(f"torch-conformance: interrupted by {name}: the mutation sweep was stopped; "
              "files in --out left as they were (no partial results)", file=sys.stderr, flush=True)  # fmt: skip
        sys.stdout.flush()
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def cmd_findings(args) -> int:
    """Run every reproducer of ``conformance/findings.toml`` against the
    installed torch, each in a fresh interpreter; print per finding
    reproduces / fixed / not applicable, the ones that changed since the
    registry's measurements first.

    ``--out DIR`` writes ``DIR/findings.json`` and, when ``DIR/results.json``
    is there, adds a findings section to it and re-renders ``report.html``.
    ``--record`` writes the results into the registry's ``measured`` for
    the installed release. Exit 1 when a reproducer could not give a result
    (a defect of the reproducer, not a verdict on torch), 2 on bad input."""
    from conformance.findings import (
        FINDINGS_FILE,
        FindingsError,
        dump_findings,
        load_findings,
        record,
        run_all,
    )
    from conformance.registry import default_registry
    from reports.findings import for_report, installed_release, summary_lines

    try:
        findings = load_findings(FINDINGS_FILE, registry=default_registry())
    except FindingsError as e:
        return _err(str(e).splitlines()[0])
    if args.list:
        for f in findings:
            print(f"{f.id}\t{f.kind}\t{f.title}")
        return EXIT_OK
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {f.id for f in findings}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            return _err(f"--only: unknown finding(s) {', '.join(unknown)}; see findings --list")
        findings_run = [f for f in findings if f.id in wanted]
    else:
        findings_run = findings
    if args.out:
        _check_out(args.out, "--out")
    release = installed_release()
    print(f"running {len(findings_run)} reproducer(s) against torch {release} ...", flush=True)
    results = run_all(findings_run, workers=args.n, timeout=args.timeout)
    section = for_report(findings_run, results, release)
    for line in summary_lines(section):
        print(line)
    if args.out:
        from reports.html import embed_section
        from reports.results import write_json_atomic

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / "findings.json", section)
        page = embed_section(out, "findings", section)
        print(f"findings: {out / 'findings.json'}" + (f"\nreport:   {page}" if page else ""))
    if args.record:
        from reports.results import write_text_atomic

        write_text_atomic(FINDINGS_FILE, dump_findings(record(findings, results, release)))
        print(f"recorded torch {release} in {FINDINGS_FILE}")
    return EXIT_FAIL if section["counts"]["error"] else EXIT_OK


def cmd_mutate(args) -> int:
    """Run the targeted sweep: each semantic mutant of torch against the tests
    of the claims it declares; print which claims each falsified.

    Writes ``OUT/mutants.json``; embeds the result into ``OUT/results.json``
    and re-renders ``OUT/report.html`` when a result file is there. Exit 1
    when a declared claim survived (its tests missed the mutant) or a run
    broke; ``--whole-suite`` also runs the whole suite once per mutant (the
    kill matrix) and fails on a survivor.
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
    if args.area:
        from conformance.registry import default_registry

        areas = [a.strip() for a in args.area.split(",") if a.strip()]
        unknown = [a for a in areas if a not in default_registry().areas]
        if unknown or not areas:
            return _err(f"--area: unknown area(s) {', '.join(unknown) or '(none)'}")
        chosen = [m for m in chosen if m.area in areas]
        if not chosen:
            return _err(f"--area: no mutant in {', '.join(areas)}")
    if args.share:
        from conformance.mutants.targeted import parse_share, share

        try:
            chosen = share(chosen, *parse_share(args.share))
        except ValueError as e:
            return _err(f"--share: {e}")
    try:
        devs = _check_devices(args.devices)
    except BadInput as e:
        return _err(str(e))
    _check_out(args.out, "--out")
    from conformance.mutants import targeted
    from reports.mutation import embed_mutation
    from reports.results import ResultsError, write_json_atomic

    out = Path(args.out)
    console = _console()
    if not console.is_terminal:  # logs: room for the tables
        from rich.console import Console

        console = Console(highlight=False, width=160)
    total = len(chosen)
    done = {"n": 0}

    def progress(rec: dict) -> None:
        done["n"] += 1
        colour = {"killed": "green", "survived": "red", "error": "yellow",
                  "not judged here": "dim"}[rec["status"]]  # fmt: skip
        claims = ", ".join(
            c + ("" if v["state"] == "falsified" else f" ({v['state']}: {v['verdict']})")
            for c, v in rec["claims"].items()
        )
        console.print(
            f"[{done['n']}/{total}] {rec['name']}: [{colour}]{rec['status']}[/] "
            f"in {rec['time_s']:.1f} s - {claims}"
        )

    _kill_children_on_sigterm()
    doc = targeted.sweep(
        chosen,
        out,
        workers=max(1, args.n),
        profile=args.profile,
        devices=",".join(devs),
        timeout=args.timeout,
        progress=progress,
    )
    ok = targeted.gate_ok(doc)
    if args.whole_suite:
        from conformance.mutants import runner

        console.print("whole-suite sweep (every test under each mutant, until the first kill):")
        whole = runner.sweep(
            chosen, out, workers=max(1, args.n), profile=args.profile, devices=",".join(devs),
            stop_first=True, control=True, timeout=args.timeout,
            hints=runner.previous_kills(out / "mutants.json"),
        )  # fmt: skip
        doc["whole_suite"] = runner.for_report(whole)
        console.print(runner.kill_matrix_table(whole))
        for line in runner.summary_lines(whole):
            print(line)
        ok = ok and runner.gate_ok(whole)
    full_catalogue = not (args.mutants or args.area or args.share)
    cov = targeted.coverage(doc) if full_catalogue else None
    if cov is not None:
        doc["coverage"] = cov
    write_json_atomic(out / "mutants.json", doc)
    console.print(targeted.by_claim_table(doc) if args.by_claim else targeted.sweep_table(doc))
    for line in targeted.summary_lines(doc):
        print(line)
    if cov is not None:
        print(
            f"registry: {len(cov['falsifiable'])} claims proven falsifiable, "
            f"{len(cov['unfalsifiable'])} unfalsifiable (with a reason), "
            f"{len(cov['not_judged_here'])} falsifiable only on a device this machine lacks, "
            f"{len(cov['uncovered'])} without a falsifying mutant"
            + (f": {', '.join(cov['uncovered'])}" if cov["uncovered"] else "")
        )
    print(f"mutants: {out / 'mutants.json'}")
    try:
        report = embed_mutation(out, doc)
    except ResultsError as e:
        print(f"not embedded in the report: {e}")
        report = None
    if report is not None:
        print(f"report:  {report} (detection power section)")
    return EXIT_OK if ok else EXIT_FAIL


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="torch-conformance",
        description="Property-based conformance gate for PyTorch copy, aliasing and autograd semantics.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the suite and write results.json + report.html")
    r.add_argument("--devices", default=None, type=_id_list,
                   help="device types: cpu and any available accelerator (cuda, xpu, mps, a "
                        "PrivateUse1 type such as openreg); default: cpu, plus cuda and the "
                        "torch.accelerator when available")  # fmt: skip
    r.add_argument("--backends", default=None, type=_id_list,
                   help="torch.compile backends of the compile tier: any registered name "
                        "(torch.compiler.list_backends(exclude_tags=())) or module:callable "
                        "(default: eager,aot_eager,inductor, those that work here)")  # fmt: skip
    r.add_argument(
        "--profile",
        default="ci",
        choices=["ci", "smoke", "dev", "thorough"],
        help="Hypothesis profile",
    )
    r.add_argument("-n", default="auto" if (os.cpu_count() or 1) > 1 else "0", type=_workers,
                   help="pytest-xdist workers (0 = in one process; default auto)")  # fmt: skip
    r.add_argument("--out", default="conformance-out", type=_nonempty,
                   help="output directory (default conformance-out)")  # fmt: skip
    r.add_argument("--claims", default=None, type=_id_list,
                   help="only these claim ids (comma-separated)")  # fmt: skip
    r.add_argument(
        "--expectations",
        default=None,
        help="known deviations: a directory of <area>.toml files or one TOML file "
        "(default: conformance/expectations/)",
    )
    r.add_argument("--shard", default=None, metavar="I/N",
                   help="run part I of N of the test cases (balanced by recorded durations), "
                        "for a CI matrix; join the parts with torch-conformance merge")  # fmt: skip
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
    r.add_argument("--no-progress", action="store_true", help="no progress display while running")
    r.add_argument("--force", action="store_true",
                   help="write into --out even if its results.json is of another schema or suite version")  # fmt: skip
    r.add_argument("--junitxml", default=None, type=_nonempty, metavar="FILE",
                   help="also write JUnit XML: one test case per claim")  # fmt: skip
    r.add_argument("--xfails-file", default=None, type=_nonempty, metavar="FILE",
                   help="also write the tests that deviate as recorded, one test id per line")  # fmt: skip
    r.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    r.set_defaults(func=cmd_run)
    mg = sub.add_parser(
        "merge", help="join the results.json of the N shards of one run (run --shard I/N)"
    )
    mg.add_argument("results", nargs="+", help="the shards' output directories or results.json")
    mg.add_argument("-o", "--out", required=True, type=_nonempty,
                    help="output directory for the merged results.json, report.html, snippets")  # fmt: skip
    mg.add_argument("--force", action="store_true",
                    help="replace results already in --out")  # fmt: skip
    mg.set_defaults(func=cmd_merge)

    rep = sub.add_parser("report", help="render report.html from a results.json")
    rep.add_argument("results")
    rep.add_argument("-o", "--output", default="report.html", type=_nonempty)
    rep.set_defaults(func=cmd_report)
    cmp = sub.add_parser(
        "compare",
        help="compare two results.json files or shipped release baselines (exit 1 on regression)",
    )
    cmp.add_argument("base", nargs="?", default=None,
                     help="baseline: a results.json, or a torch version with a shipped baseline")  # fmt: skip
    cmp.add_argument("new", nargs="?", default=None,
                     help="new run: a results.json, or a torch version with a shipped baseline")  # fmt: skip
    cmp.add_argument("--from", dest="from_", default=None, metavar="VERSION",
                     help="the release you are on (a shipped baseline, or a results.json)")  # fmt: skip
    cmp.add_argument("--to", default=None, metavar="VERSION",
                     help="the release you upgrade to (a shipped baseline, or a results.json)")  # fmt: skip
    cmp.add_argument("-o", "--output", default=None, type=_nonempty, help="write an HTML diff page")
    cmp.set_defaults(func=cmd_compare)
    mx = sub.add_parser(
        "matrix", help="render claims x (torch, device) for several results.json files"
    )
    mx.add_argument("results", nargs="*",
                    help="results.json files or torch versions with a shipped baseline")  # fmt: skip
    mx.add_argument("--releases", action="store_true",
                    help="every shipped release baseline, oldest first (then RESULTS)")  # fmt: skip
    mx.add_argument("-o", "--output", default="matrix.html", type=_nonempty)
    mx.set_defaults(func=cmd_matrix)
    bl = sub.add_parser("baseline", help="list or save the shipped per-release baselines")
    bl.add_argument("action", choices=["list", "save"])
    bl.add_argument("results", nargs="?", default=None, help="results.json to save (save)")
    bl.add_argument("--dir", default=None, help="baseline directory (default: the shipped one)")
    bl.set_defaults(func=cmd_baseline)
    c = sub.add_parser("claims", help="list the registered claims")
    c.add_argument("--area", default=None, help="only the claims of this area")
    c.add_argument("--format", default="table", choices=["table", "tsv", "json"],
                   help="table (one block per claim, ids whole), tsv or json")  # fmt: skip
    c.add_argument("--show", default=None, metavar="ID",
                   help="everything on one claim: statement, sources, tests, mutants, "
                   "deviations per release with their evidence, baseline verdicts")  # fmt: skip
    c.set_defaults(func=cmd_claims)
    mu = sub.add_parser(
        "mutate",
        help="run each semantic mutant of torch against the tests of the claims it breaks",
    )
    mu.add_argument("--list", action="store_true", help="print the mutant names, one per line")
    mu.add_argument("--mutants", default=None, help="only these mutants (comma-separated names)")
    mu.add_argument(
        "--area", default=None, help="only the mutants of these areas (comma-separated)"
    )
    mu.add_argument("--share", default=None, metavar="I/N",
                    help="only share I of N of the chosen mutants (deterministic, balanced by cost)")  # fmt: skip
    mu.add_argument("--by-claim", action="store_true",
                    help="print claims x mutants (which mutants falsify each claim) instead of one row per mutant")  # fmt: skip
    mu.add_argument("-n", default=os.cpu_count() or 1, type=_positive_int,
                    help="mutants run in parallel (default: CPU count)")  # fmt: skip
    mu.add_argument("--out", default="conformance-out", type=_nonempty,
                    help="output directory (default conformance-out)")  # fmt: skip
    mu.add_argument(
        "--profile",
        default="ci",
        choices=["ci", "smoke", "dev", "thorough"],
        help="Hypothesis profile",
    )
    mu.add_argument("--devices", default="cpu", help="devices to run on (default cpu)")
    mu.add_argument("--whole-suite", action="store_true",
                    help="also run the whole suite once per mutant, until its first failure (kill matrix; slow)")  # fmt: skip
    mu.add_argument(
        "--timeout", type=_positive_float, default=600, help="seconds per mutant (default 600)"
    )
    mu.set_defaults(func=cmd_mutate)
    fi = sub.add_parser(
        "findings",
        help="run the torch-only reproducer of every finding against the installed torch",
    )
    fi.add_argument("--list", action="store_true", help="print the findings, one per line")
    fi.add_argument(
        "--only", default=None, type=_id_list, help="only these findings (comma-separated ids)"
    )
    fi.add_argument("-n", default=1, type=_positive_int,
                    help="reproducers run in parallel (default 1: compile reproducers are CPU-bound)")  # fmt: skip
    fi.add_argument("--timeout", type=_positive_float, default=120,
                    help="seconds per reproducer (default 120)")  # fmt: skip
    fi.add_argument(
        "--out", default=None, help="write OUT/findings.json (and add to OUT/report.html)"
    )
    fi.add_argument("--record", action="store_true",
                    help="write the results into conformance/findings.toml for the installed release")  # fmt: skip
    fi.set_defaults(func=cmd_findings)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("torch-conformance: interrupted", file=sys.stderr)
        return EXIT_SIGINT
    except BadInput as e:
        return _err(str(e))
    except BrokenPipeError:  # stdout closed early (``| head``): stop quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except OSError as e:  # e.g. the output disappeared or filled up mid-run
        where = f"{e.filename}: " if e.filename else ""
        return _err(f"{where}{e.strerror or e}")


if __name__ == "__main__":
    sys.exit(main())
