"""The other ``torch-conformance`` subcommands: ``report``, ``compare``,
``matrix``, ``baseline``, ``claims``, ``findings`` and ``mutate``."""

from __future__ import annotations

import textwrap
from pathlib import Path

from reports.cli_common import (
    EXIT_FAIL,
    EXIT_OK,
    BadInput,
    check_devices,
    check_out,
    claim_tests,
    make_console,
    print_error,
)
from reports.processes import (
    kill_children_on_sigterm,
)


def cmd_report(args) -> int:
    """Re-render an HTML report from a result file."""
    from reports.html import render_report
    from reports.results import ResultsError, load_results, write_text_atomic

    try:
        doc = load_results(args.results)
    except ResultsError as e:
        return print_error(str(e))
    check_out(args.output, "-o", file=True)
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
        return print_error(
            "compare needs two result files or torch versions (BASE NEW, or --from X --to Y)"
        )
    try:
        base, new = resolve(base_spec), resolve(new_spec)
    except ResultsError as e:
        return print_error(str(e))
    if args.output:
        check_out(args.output, "-o", file=True)
    diff = compare_docs(base, new)
    console = make_console()
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
        return print_error(str(e))
    if not docs:
        return print_error("matrix needs result files, torch versions or --releases")
    check_out(args.output, "-o", file=True)
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
        return print_error("baseline save needs a results.json")
    try:
        doc = load_results(args.results)
    except ResultsError as e:
        return print_error(str(e))
    if doc["environment"].get("claims_selected"):
        return print_error(
            f"{args.results}: a run of selected claims only cannot be a release baseline"
        )
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
        return print_error(str(e))
    if args.show is not None:
        if args.show not in registry:
            return print_error(f"--show: unknown claim id {args.show!r}")
        from conformance.expectations import ExpectationsError

        try:
            print(show_claim(args.show))
        except ExpectationsError as e:
            return print_error(str(e))
        return EXIT_OK
    by_area = registry.by_area()
    if args.area is not None and args.area not in by_area:
        return print_error(
            f"--area: unknown area {args.area!r}; known: {', '.join(sorted(by_area))}"
        )
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

        width = max(40, min(100, make_console().width) - 4)
        print(f"{len(chosen)} of {len(registry)} registered claims")
        for area, c in chosen:
            print(f"\n{c.id}\n    {area} | {c.kind}")
            print(textwrap.fill(" ".join(c.statement.split()), width=width,
                                initial_indent="    ", subsequent_indent="    "))  # fmt: skip
    return EXIT_OK


def show_claim(claim_id: str) -> str:
    """Everything the suite holds on one claim, as text: statement, kind,
    sources, tests, mutants, recorded deviations with their ranges, measured
    releases, regions, signatures, probes and upstream records, and the
    claim's verdict in each shipped baseline.

    Raises :class:`conformance.expectations.ExpectationsError` for malformed
    expectations data."""

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
        return print_error(str(e).splitlines()[0])
    if args.list:
        for f in findings:
            print(f"{f.id}\t{f.kind}\t{f.title}")
        return EXIT_OK
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {f.id for f in findings}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            return print_error(
                f"--only: unknown finding(s) {', '.join(unknown)}; see findings --list"
            )
        findings_run = [f for f in findings if f.id in wanted]
    else:
        findings_run = findings
    if args.out:
        check_out(args.out, "--out")
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
            return print_error(
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
            return print_error(f"--area: unknown area(s) {', '.join(unknown) or '(none)'}")
        chosen = [m for m in chosen if m.area in areas]
        if not chosen:
            return print_error(f"--area: no mutant in {', '.join(areas)}")
    if args.share:
        from conformance.mutants.targeted import parse_share, share

        try:
            chosen = share(chosen, *parse_share(args.share))
        except ValueError as e:
            return print_error(f"--share: {e}")
    try:
        devs = check_devices(args.devices)
    except BadInput as e:
        return print_error(str(e))
    check_out(args.out, "--out")
    from conformance.mutants import targeted
    from reports.mutation import embed_mutation
    from reports.results import ResultsError, write_json_atomic

    out = Path(args.out)
    console = make_console()
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

    kill_children_on_sigterm()
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
