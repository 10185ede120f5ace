"""The claim registry is consistent with the tests and the seeds."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import conformance
from conformance.registry import RegistryError, default_registry, load_file, load_registry
from tests.conftest import SEEDS_DIR

SEED_FILES = [
    "000_1e6242bf72cbab49.txt",
    "001_7607ef73017ad62c.txt",
    "002_2219db4543bc5a3b.txt",
    "003_9469f22153163e1c.txt",
    "004_a7d3c10075143ae8.txt",
]


def _tests_by_claim() -> dict[str, list[str]]:
    """Claim id -> test functions carrying ``@pytest.mark.claim`` for it."""
    out: dict[str, list[str]] = {}
    for mod in pkgutil.iter_modules(conformance.__path__):
        if not mod.name.startswith("test_"):
            continue
        module = importlib.import_module(f"conformance.{mod.name}")
        for name, fn in vars(module).items():
            if not name.startswith("test_"):
                continue
            for mark in getattr(fn, "pytestmark", []):
                if mark.name == "claim":
                    for cid in mark.args:
                        out.setdefault(cid, []).append(f"{mod.name}::{name}")
    return out


def test_registry_loads_and_is_large_enough():
    reg = default_registry()
    assert len(reg) >= 40
    assert set(reg.areas) >= {"detach", "performance"}


def test_every_claim_has_a_test_and_every_test_a_known_claim():
    reg = default_registry()
    by_claim = _tests_by_claim()
    unknown = sorted(set(by_claim) - set(reg.claims))
    assert not unknown, f"tests name unregistered claims: {unknown}"
    untested = sorted(
        cid for cid, c in reg.claims.items() if c.check == "property" and cid not in by_claim
    )
    assert not untested, f"claims without a test: {untested}"


def test_every_claim_has_a_source_and_the_right_kind_of_source():
    for c in default_registry().claims.values():
        assert c.sources, c.id
        if c.kind == "documented":
            assert any(s.quote and (s.doc or s.url) for s in c.sources), c.id
        if c.kind == "folklore":
            assert any(s.seed for s in c.sources), c.id
        if c.kind == "characterization":
            assert c.note, c.id


def test_every_seed_is_cited_and_exists():
    cited = {s.seed for c in default_registry().claims.values() for s in c.sources if s.seed}
    assert set(SEED_FILES) <= cited, f"uncited seeds: {sorted(set(SEED_FILES) - cited)}"
    assert cited <= set(SEED_FILES), f"unknown seeds cited: {sorted(cited - set(SEED_FILES))}"
    if SEEDS_DIR.is_dir():
        assert {p.name for p in SEEDS_DIR.iterdir()} >= cited


def test_seed_quotes_are_verbatim():
    """A quote attributed to a seed must appear in it (whitespace and markdown
    marks normalised; '...' separates quoted fragments)."""
    if not SEEDS_DIR.is_dir():
        pytest.skip("../shared/seeds is not beside this checkout")

    def norm(text: str) -> str:  # markdown emphasis/code marks are not part of the words
        return " ".join(text.replace("`", "").replace("*", "").split())

    texts = {p.name: norm(p.read_text(encoding="utf-8")) for p in SEEDS_DIR.iterdir()}
    for c in default_registry().claims.values():
        for s in c.sources:
            if s.seed and s.quote:
                for part in s.quote.split("..."):
                    frag = norm(part).strip()
                    assert frag in texts[s.seed], f"{c.id}: {frag!r} not in {s.seed}"


def test_ids_are_prefixed_by_their_area():
    for c in default_registry().claims.values():
        assert c.id.split(".")[0] == c.area, c.id


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("area = 'x'\n[[claim]\n", "malformed TOML"),
        ("title = 'no area'\n[[claim]]\nid='x.y'\n", "missing top-level 'area'"),
        ("area = 'x'\n", "no [[claim]] tables"),
        ("area='x'\n[[claim]]\nid='Bad Id'\n", "bad or missing id"),
        ("area='x'\n[[claim]]\nid='x.y'\nstatement='s'\nkind='documented'\n", "has no source"),
        (
            "area='x'\n[[claim]]\nid='x.y'\nstatement='s'\nkind='documented'\n[[claim.sources]]\nseed='000_1e6242bf72cbab49.txt'\n",
            "needs a doc source with a quote",
        ),
        (
            "area='x'\n[[claim]]\nid='x.y'\nstatement='s'\nkind='characterization'\n[[claim.sources]]\nurl='u'\n",
            "needs a 'note'",
        ),
        (
            "area='x'\n[[claim]]\nid='x.y'\nstatement='s'\nkind='folklore'\n[[claim.sources]]\nseed='nope.txt'\n",
            "is not a seed file name",
        ),
        ("area='x'\n[[claim]]\nid='x.y'\nstatement='s'\nkind='folklore'\nextra=1\n", "unknown key"),
    ],
)
def test_malformed_claim_files_give_one_line_errors(tmp_path, text, needle):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(RegistryError) as e:
        load_file(p)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg and msg.startswith("bad.toml")


def test_duplicate_ids_are_rejected(tmp_path):
    body = "area='x'\n[[claim]]\nid='x.y'\nstatement='s'\nkind='folklore'\n[[claim.sources]]\nseed='000_1e6242bf72cbab49.txt'\n"
    (tmp_path / "a.toml").write_text(body)
    (tmp_path / "b.toml").write_text(body)
    with pytest.raises(RegistryError, match="duplicate claim id"):
        load_registry(tmp_path)


def test_unknown_claim_lookup_raises():
    with pytest.raises(RegistryError, match="unknown claim id"):
        default_registry()["no.such-claim"]


CATALOGUE = SEEDS_DIR.parent / "reference" / "torch-copy-claims-catalogue.md"


def test_every_catalogue_row_is_a_claim_or_out_of_scope():
    """Each row of the reference catalogue's summary table is referenced by a
    claim's ``catalogue`` list or listed in ``out_of_scope.toml`` with a reason."""
    import re

    from conformance.registry import load_out_of_scope

    if not CATALOGUE.is_file():
        pytest.skip("../shared/reference is not beside this checkout")
    rows = set(re.findall(r"^\| ([A-Z_]+-\d{2}) ", CATALOGUE.read_text(encoding="utf-8"), re.M))
    assert len(rows) >= 90
    referenced = {r for c in default_registry().claims.values() for r in c.catalogue}
    out = {o["id"] for o in load_out_of_scope()}
    assert not (referenced & out), f"rows both claimed and out of scope: {sorted(referenced & out)}"
    assert not (referenced | out) - rows, f"unknown rows: {sorted((referenced | out) - rows)}"
    missing = sorted(rows - referenced - out)
    assert not missing, f"catalogue rows neither registered nor out of scope: {missing}"
