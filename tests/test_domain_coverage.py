"""A claim's declared domain (issue 29): the registry checks it against the
vocabulary, each run counts the checked examples per declared value, and a
claim whose tests held without drawing a declared value gets no "held"."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.registry import (
    CLAIMS_DIR,
    RegistryError,
    default_registry,
    load_dimensions,
    load_file,
)
from reports.html import render_report
from reports.results import claim_verdicts, domain_gaps
from strategies import tensor_specs
from strategies.tensors import LAYOUT_KINDS
from tests.conftest import ROOT, subprocess_env

_CLAIM = (
    "area='x'\n[[claim]]\nid='x.y'\nstatement='s'\nkind='folklore'\n{domain}\n"
    "[[claim.sources]]\nseed='000_1e6242bf72cbab49.txt'\n"
)


@pytest.mark.parametrize(
    ("domain", "needle"),
    [
        ("domain = { colour = ['red'] }", "domain dimension 'colour' is not in domains.toml"),
        ("domain = { writeable = ['yes'] }", "outside its vocabulary"),
        ("domain = { writeable = [] }", "must list distinct values"),
        ("domain = { writeable = [true, true] }", "must list distinct values"),
        ("domain = 'writeable'", "domain must be a table"),
    ],
)
def test_a_domain_outside_the_vocabulary_is_refused(tmp_path, domain, needle):
    p = tmp_path / "bad.toml"
    p.write_text(_CLAIM.format(domain=domain))
    with pytest.raises(RegistryError) as e:
        load_file(p)
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_every_declared_domain_uses_the_vocabulary_and_is_recorded():
    vocabulary = load_dimensions()
    declared = {c.id: c for c in default_registry().claims.values() if c.domain}
    assert len(declared) >= 4
    for c in declared.values():
        for dim, values in c.domain:
            assert set(values) <= set(vocabulary[dim]["values"]), (c.id, dim)
        assert c.to_dict()["domain"] == {dim: list(v) for dim, v in c.domain}


def _doc(coverage: dict) -> dict:
    """A results document with one held test of a claim whose domain is
    ``writeable = [true, false]``."""
    return {
        "environment": {"devices": ["cpu"]},
        "claims": {"x.y": {"id": "x.y", "area": "x", "statement": "s", "kind": "folklore",
                           "sources": [], "domain": {"writeable": [True, False]}}},
        "tests": [{"nodeid": "t.py::test_x[cpu]", "name": "test_x[cpu]", "claims": ["x.y"],
                   "device": "cpu", "verdict": "held", "examples": 5,
                   "claim_coverage": {"x.y": coverage} if coverage else {}}],
    }  # fmt: skip


def test_a_held_claim_that_never_drew_a_declared_value_is_an_error():
    cell = claim_verdicts(_doc({"writeable": {"true": 5}}))["x.y"]["cpu"]
    assert cell["verdict"] == "ERROR"
    assert cell["domain_missing"] == ["writeable=false"]
    assert "domain value writeable=false never checked" in cell["reasons"][0]
    full = claim_verdicts(_doc({"writeable": {"true": 3, "false": 2}}))["x.y"]["cpu"]
    assert full["verdict"] == "held" and full["coverage"] == {"writeable": {"true": 3, "false": 2}}
    assert domain_gaps({"domain": {"writeable": [True, False]}}, {}) == [
        "writeable=true",
        "writeable=false",
    ]
    assert domain_gaps({}, {}) == []  # no declared domain: nothing demanded


def test_one_shard_of_a_run_leaves_the_domain_to_the_merged_run():
    """A shard (``run --shard I/N``) holds part of a claim's tests: its own
    document does not judge the declared domain; the merged one does."""
    doc = _doc({"writeable": {"true": 5}})
    doc["environment"]["shard"] = {"index": 1, "total": 2}
    assert claim_verdicts(doc)["x.y"]["cpu"]["verdict"] == "held"
    del doc["environment"]["shard"]
    assert claim_verdicts(doc)["x.y"]["cpu"]["verdict"] == "ERROR"


def test_the_report_shows_the_coverage_table():
    html = render_report(_doc({"writeable": {"true": 5}}))
    assert "Declared domain" in html and "never checked" in html


def test_a_run_that_never_draws_a_declared_value_fails_the_gate(cli, tmp_path, read_results):
    """End to end: declare on ``detach.shares-storage`` a dimension its test
    does not report (``writeable``): the claim held on every example, yet
    the gate fails and names the value no example checked."""
    claims = tmp_path / "claims"
    shutil.copytree(CLAIMS_DIR, claims)
    text = (claims / "detach.toml").read_text(encoding="utf-8")
    text = text.replace(
        'domain = { math_bit = ["none", "conj", "neg"],',
        'domain = { math_bit = ["none", "conj", "neg"], writeable = [true, false],',
        1,
    )
    assert "writeable" in text
    (claims / "detach.toml").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    proc = cli(
        "run", "--no-measure", "-n", "0", "--devices", "cpu", "--profile", "smoke",
        "--claims", "detach.shares-storage", "--out", str(out),
        env=dict(os.environ, TORCH_CONFORMANCE_CLAIMS_DIR=str(claims)),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    cell = claim_verdicts(read_results(out))["detach.shares-storage"]["cpu"]
    assert cell["verdict"] == "ERROR", cell["verdict"]
    assert cell["domain_missing"] == ["writeable=true", "writeable=false"]
    assert set(cell["coverage"]["math_bit"]) == {"none", "conj", "neg"}
    doc = json.loads((out / "results.json").read_text())
    assert doc["claims"]["detach.shares-storage"]["domain"]["writeable"] == [True, False]


def test_a_set_valued_feature_counts_each_member_it_drew():
    """A layout is several families at once (an offset, permuted view): the
    example counts for each declared value it drew."""
    from collections import Counter

    from conformance.evidence import Example, Ledger

    led = Ledger(claims=("x.y",))
    led.domains = {"x.y": (("layout", ("offset", "permuted", "contiguous")),)}
    ex = Example()
    ex.features.update(layout=frozenset({"offset", "permuted"}))
    led.finish_example(ex, passed=True)
    assert led.coverage["x.y"] == Counter({("layout", "offset"): 1, ("layout", "permuted"): 1})


def test_every_declared_domain_value_has_a_mutant_wrong_only_there():
    """Issue 29, item 4: for each (area, dimension=value) pair a claim of the
    area declares, some mutant of the area is wrong only at that value (its
    ``domain``), or ``conformance/mutants/domain_exempt.toml`` says why none
    can be. A mutant's domain value must be declared by each of its claims
    (``domain_pairs`` raises otherwise)."""
    from conformance.mutants import domain_pairs

    pairs = domain_pairs()
    gaps = [
        f"{area}: {dim}={value} ({', '.join(p['claims'])})"
        for (area, dim, value), p in sorted(pairs.items())
        if not p["mutants"] and not p["exempt"]
    ]
    assert not gaps, "declared domain values without a mutant wrong only there:\n" + "\n".join(gaps)


def test_a_compile_claim_is_judged_over_its_domain_per_backend():
    """Compile-tier tests fill ``device/backend`` columns of their own
    (``results.column``), so a claim's declared domain is checked per backend:
    inductor, which runs a fraction of the examples, is ERROR when its tests
    never drew a declared value, even though aot_eager's did (issue 29)."""
    domain = {"output_kind": ["input", "input_view", "fresh", "intermediate_view"]}
    full = {"output_kind": {"input": 3, "input_view": 2, "fresh": 9, "intermediate_view": 1}}
    doc = {
        "environment": {"devices": ["cpu"]},
        "claims": {"compile.x": {"id": "compile.x", "area": "compile", "statement": "s",
                                 "kind": "folklore", "sources": [], "domain": domain}},
        "tests": [
            {"nodeid": f"t.py::test_x[{b}-cpu]", "name": f"test_x[{b}-cpu]",
             "claims": ["compile.x"], "device": "cpu", "backend": b, "verdict": "held",
             "examples": 5, "claim_coverage": {"compile.x": cov}}
            for b, cov in (
                ("aot_eager", full),
                ("inductor", {"output_kind": {"input": 2, "input_view": 1, "fresh": 4}}),
            )
        ],
    }  # fmt: skip
    cells = claim_verdicts(doc)["compile.x"]
    assert set(cells) == {"cpu/aot_eager", "cpu/inductor"}, set(cells)
    assert cells["cpu/aot_eager"]["verdict"] == "held"
    assert cells["cpu/inductor"]["verdict"] == "ERROR"
    assert cells["cpu/inductor"]["domain_missing"] == ["output_kind=intermediate_view"]
    # coverage is never pooled across backends: inductor's own tests must draw it
    assert cells["cpu/inductor"]["coverage"]["output_kind"] == {"input": 2, "input_view": 1,
                                                                "fresh": 4}  # fmt: skip
    doc["tests"][1]["claim_coverage"] = {"compile.x": full}
    assert claim_verdicts(doc)["compile.x"]["cpu/inductor"]["verdict"] == "held"


def test_a_value_only_not_applicable_examples_drew_is_not_a_gap():
    """A declared value whose every example was not applicable on this torch
    (0-byte storage sharing on 2.1: the zero-size layout) leaves the claim
    held and says so; a value no example drew at all is still an ERROR."""
    doc = _doc({"writeable": {"true": 5}})
    doc["tests"][0]["claim_na_coverage"] = {"x.y": {"writeable": {"false": 3}}}
    cell = claim_verdicts(doc)["x.y"]["cpu"]
    assert cell["verdict"] == "held", cell
    assert cell["domain_not_applicable"] == ["writeable=false"]
    assert "not applicable on this torch" in cell["reasons"][0]
    doc["tests"][0]["claim_na_coverage"] = {"x.y": {"writeable": {"true": 3}}}
    assert claim_verdicts(doc)["x.y"]["cpu"]["verdict"] == "ERROR"


def _pending() -> list[str]:
    path = CLAIMS_DIR / "domain_review_pending.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]


def test_every_claim_is_reviewed_for_its_domain_or_listed_as_pending():
    """Issue 29: a claim declares the domain its sentence quantifies over
    (``domain``), excludes dimensions in words (``domain_excludes``) or says
    why it has none (``domain_none``); the claims not yet reviewed are listed
    in ``domain_review_pending.txt``, a list that only shrinks."""
    claims = default_registry().claims
    pending = _pending()
    assert len(pending) == len(set(pending)), "domain_review_pending.txt lists a claim twice"
    unknown = sorted(set(pending) - set(claims))
    assert not unknown, f"domain_review_pending.txt lists unknown claims: {unknown}"
    reviewed = sorted(c for c in pending if claims[c].domain_reviewed)
    assert not reviewed, f"reviewed now, remove from domain_review_pending.txt: {reviewed}"
    unreviewed = sorted(c.id for c in claims.values() if not c.domain_reviewed)
    missing = sorted(set(unreviewed) - set(pending))
    assert not missing, (
        f"claims without domain, domain_excludes or domain_none: {missing} "
        "(declare what the sentence quantifies over, or say why it has no domain)"
    )


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("domain_none = ''", "domain_none must be a non-empty reason"),
        (
            "domain_none = 'one call'\ndomain = { writeable = [true] }",
            "domain_none says the sentence has no domain",
        ),
    ],
)
def test_domain_none_needs_a_reason_and_excludes_a_domain(tmp_path, extra, needle):
    p = tmp_path / "bad.toml"
    p.write_text(_CLAIM.format(domain=extra))
    with pytest.raises(RegistryError) as e:
        load_file(p)
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)
    ok = tmp_path / "ok.toml"
    ok.write_text(_CLAIM.format(domain="domain_none = 'one fixed call'"))
    _, _, [claim] = load_file(ok)
    assert claim.domain_none == "one fixed call" and claim.domain_reviewed
    assert claim.to_dict()["domain_none"] == "one fixed call"


# ---- the mutant catalogue restates the classifiers: it must mean the same ----


def test_the_mutant_catalogues_vocabulary_is_the_strategies():
    """``conformance.mutants._tensor_domain`` restates the domain vocabulary (a
    patch runs before the strategy modules may be imported); one vocabulary."""
    from conformance.mutants import _tensor_domain as restated
    from strategies.domains import MATH_BITS, TENSOR_KINDS
    from strategies.dtypes import DTYPE_FAMILIES

    assert restated.LAYOUTS == LAYOUT_KINDS
    assert restated.DTYPE_FAMILIES == DTYPE_FAMILIES
    assert restated.TENSOR_KINDS == TENSOR_KINDS
    assert set(restated.MATH_BIT_MAKERS) <= set(MATH_BITS)


@settings(max_examples=300, deadline=None, database=None)
@given(
    spec=tensor_specs(),
    kind=st.sampled_from(["plain", "leaf", "non_leaf", "parameter", "inference"]),
    conj=st.booleans(),
)
def test_a_domain_mutants_guard_classifies_as_the_tests_features_do(spec, kind, conj):
    """A domain mutant is wrong exactly where its guard (:func:`in_domain`) says;
    the guard must classify every tensor as the tests' features do, or a mutant
    "wrong only at offset" is wrong elsewhere too (or nowhere the tests look)."""
    from conformance.mutants._tensor_domain import in_domain
    from strategies.domains import layout_kinds, math_bit_of, tensor_kind_of
    from strategies.dtypes import DIFFERENTIABLE, dtype_family

    grad = spec.dtype in DIFFERENTIABLE
    if kind == "inference":
        with torch.inference_mode():
            t = spec.build("cpu")
    elif kind == "parameter":
        t = torch.nn.Parameter(spec.build("cpu"), requires_grad=grad)
    else:
        t = spec.build("cpu", requires_grad=grad and kind != "plain", leaf=kind == "leaf")
    if conj and t.is_complex() and kind != "parameter":
        t = t.conj()
    for value in LAYOUT_KINDS:
        assert in_domain(t, "layout", value) == (value in layout_kinds(t)), (value, spec)
    assert in_domain(t, "dtype_family", dtype_family(t.dtype))
    assert in_domain(t, "tensor_kind", tensor_kind_of(t)), (tensor_kind_of(t), spec)
    assert in_domain(t, "math_bit", math_bit_of(t))


@pytest.mark.parametrize(
    "where",
    [
        None,
        "non_empty",
        "not_expanded",
        "writable_non_empty",
        "two_dims_non_empty",
        "no_zero_size_or_0d",
    ],
)
def test_the_domain_grid_draws_every_dtype_family_whatever_the_filter(where):
    """A claim's explicit examples must reach each dtype family it declares in every
    profile; a filter that drops the layouts a family's turn fell on (dev seed 1:
    ``detach.metadata-change-allowed`` never checked complex) must not drop the family."""
    from strategies import domains
    from strategies.dtypes import ALL_DTYPES, dtype_family

    filters = {
        "two_dims_non_empty": lambda s: len(s.shape) >= 2 and 0 not in s.shape,
        "no_zero_size_or_0d": lambda s: len(s.shape) >= 1 and 0 not in s.shape,
    }
    keep = filters.get(where) or (getattr(domains, where) if where else None)
    specs = domains.domain_grid(ALL_DTYPES, where=keep)
    assert {dtype_family(s.dtype) for s in specs} == {dtype_family(d) for d in ALL_DTYPES}
    assert keep is None or all(keep(s) for s in specs)


#: Tests whose claims' domains are drawn after generated input, not by explicit
#: examples: the copy-sequence machine runs its per-value domain cases after its
#: programs (conformance/test_copy_sequences.py, "Each declared domain value of the
#: machine's claims, once"), in every profile that generates.
_DOMAIN_AFTER_GENERATION = ("conformance/test_copy_sequences.py",)


def test_every_declared_domain_value_is_drawn_by_explicit_examples():
    """Run the conformance tests with their explicit examples only (the ``explicit``
    profile): every value a claim declares must be checked there, so no seed can
    leave one out (dev seeds 1 and 6 once did: complex for a detach claim, an
    expanded 1-d list for an indexing claim)."""
    deselect = [arg for t in _DOMAIN_AFTER_GENERATION for arg in ("--ignore", t)]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance", "-q", "-p", "no:cacheprovider",
         "-n", "2", "--hypothesis-profile=explicit", *deselect],
        capture_output=True, text=True, timeout=900, env=subprocess_env(), cwd=ROOT,
    )  # fmt: skip
    gaps = [line for line in proc.stdout.splitlines() if "never checked" in line]
    assert not gaps, "\n".join(gaps)
    assert " passed" in proc.stdout.splitlines()[-1], proc.stdout[-3000:]
