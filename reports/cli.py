"""``torch-conformance``: run the gate, render reports, list claims.

Exit codes: 0 every claim held or deviated exactly as expected; 1 the gate
failed (a regression or an unexpected pass); 2 bad input (malformed registry
or expectations, unknown claim id, unreadable/corrupt result file, a device
that is unknown or not available here) - always with a one-line ``error:`` message, never a
traceback, and never a half-written report; 130 / 143 / 129 interrupted by
SIGINT / SIGTERM / SIGHUP (the files already in ``--out`` left as they were).

The parser and the dispatch; the subcommands live in :mod:`reports.run_command`
and :mod:`reports.commands`, what they share in :mod:`reports.cli_common`,
signal handling in :mod:`reports.processes`."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys

from reports.cli_common import (
    EXIT_SIGINT,
    BadInput,
    Parser,
    print_error,
)
from reports.commands import (
    cmd_baseline,
    cmd_claims,
    cmd_compare,
    cmd_findings,
    cmd_matrix,
    cmd_mutate,
    cmd_report,
)
from reports.run_command import (
    cmd_merge,
    cmd_run,
)


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


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
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
        return print_error(str(e))
    except BrokenPipeError:  # stdout closed early (``| head``): stop quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except OSError as e:  # e.g. the output disappeared or filled up mid-run
        where = f"{e.filename}: " if e.filename else ""
        return print_error(f"{where}{e.strerror or e}")


if __name__ == "__main__":
    sys.exit(main())
