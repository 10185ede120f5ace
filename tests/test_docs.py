"""The docs stay true (issue 30): the README is a manual, ``docs/releases.md`` is
generated from the shipped baselines, every relative link resolves, and the module
map of ``docs/architecture.md`` names every module in the tree."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from reports.baselines import BASELINES_DIR, load_baseline, save_baseline
from reports.release_table import DOC_PATH, release_rows, render_doc, whole_test_only

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
ARCHITECTURE = DOCS / "architecture.md"

#: The packages whose every module the module map names (probe scripts are
#: data, named by their folder).
PACKAGES = ("conformance", "strategies", "reports", "tests")

_FENCE = re.compile(r"^(`{3,}|~{3,})")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
#: A hex run of 7-40 characters with at least one digit and one letter: a
#: commit hash (version numbers, dtypes and words never match).
_HASH = re.compile(r"(?<![\w./-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")


def _prose(path: Path) -> list[str]:
    """The lines of a Markdown file outside fenced code blocks."""
    out, fence = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _FENCE.match(line.strip())
        if m and (fence is None or m.group(1).startswith(fence)):
            fence = None if fence else m.group(1)
            continue
        if fence is None:
            out.append(line)
    return out


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_slug(line.lstrip("#")) for line in _prose(path) if line.startswith("#")}


# ------------------------------------------------------------ the release table


def test_the_release_table_is_generated_from_the_shipped_baselines():
    assert DOC_PATH.read_text(encoding="utf-8") == render_doc(release_rows()), (
        "docs/releases.md is stale: run python -m reports.release_table --write"
    )


def test_the_release_table_judges_each_baseline_it_reads(tmp_path):
    """A baseline whose gate fails reads FAILED with its counts: the table is
    computed from the file, not copied from a run's summary."""
    doc = copy.deepcopy(load_baseline("2.13.0"))
    held = next(t for t in doc["tests"] if t["verdict"] == "held" and len(t.get("claims", [])) == 1)
    held["verdict"] = "regression"
    save_baseline(doc, tmp_path)
    (row,) = release_rows(tmp_path)
    assert row["version"] == "2.13.0" and not row["summary"]["gate_passed"]
    assert row["summary"]["claims"]["FAILED"] == 1
    assert f"| 2.13.0 | FAILED (1 FAILED) | {row['claims']} |" in render_doc([row])


def _entries_of(doc: dict, claim: str) -> list[dict]:
    """Every expectation entry a test of ``doc`` applied to ``claim``."""
    out = []
    for t in doc["tests"]:
        entries = [t.get("expectation")] + list((t.get("claim_expectations") or {}).values())
        entries += [r.get("expectation") for r in t.get("regions") or []]
        out += [e for e in entries if e and e.get("claim") == claim]
    return out


@pytest.mark.parametrize("version", ["2.1.2", "2.13.0"])
def test_whole_test_only_counts_a_claim_exactly_when_its_entries_are_whole_test(version):
    doc = copy.deepcopy(load_baseline(version, BASELINES_DIR))
    claim = next(
        e["claim"] for t in doc["tests"] for e in [t.get("expectation") or {}]
        if t["verdict"] == "expected-deviation" and e.get("claim") in t.get("claims", [])
    )  # fmt: skip
    entries = _entries_of(doc, claim)
    for e in entries:
        e["whole_test"] = True
    counted = whole_test_only(doc)
    for e in entries:
        e["whole_test"] = False
    assert counted - whole_test_only(doc) == 1, claim


# ------------------------------------------------------------ README and links


def test_the_readme_is_a_manual():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, (
        f"README.md has {len(lines)} lines (at most 250: move the rest to docs/)"
    )
    hashes = [(n, m.group()) for n, line in enumerate(lines, 1) for m in _HASH.finditer(line)]
    assert not hashes, f"commit hashes in README.md (history belongs in docs/): {hashes}"
    for heading in ("## On a fresh machine", "## Using it", "## Reading a verdict",
                    "### Gating a torch upgrade in GitHub Actions", "## Layout",
                    "## Adding a claim"):  # fmt: skip
        assert heading in lines, f"README.md lost its section {heading!r}"


def test_the_readme_links_the_docs():
    targets = {t.split("#")[0] for line in _prose(README) for t in _LINK.findall(line)}
    for doc in ("docs/findings.md", "docs/architecture.md", "docs/releases.md",
                "docs/release-log.md", "docs/performance.md", "docs/flake-sweeps.md",
                "CHANGELOG.md"):  # fmt: skip
        assert doc in targets, f"README.md does not link {doc}"


@pytest.mark.parametrize(
    "page",
    [README, ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_relative_link_resolves(page):
    broken = []
    for line in _prose(page):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{target} (no such heading)")
    assert not broken, f"{page.name}: broken links: {broken}"


# ------------------------------------------------------------ the module map


def _modules() -> list[str]:
    found = ["conftest.py", "noxfile.py"]
    for package in PACKAGES:
        for p in sorted((ROOT / package).rglob("*.py")):
            rel = p.relative_to(ROOT).as_posix()
            if "__pycache__" in rel or rel.startswith("conformance/probes/"):
                continue
            found.append(rel)
    return found


def test_the_module_map_names_every_module():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    missing = [m for m in _modules() if f"`{m}`" not in text]
    assert not missing, f"docs/architecture.md (Module map) lacks a line for: {missing}"


def test_the_module_map_names_no_module_that_is_gone():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("## Module map") :]
    named = set(re.findall(r"`([\w./]+\.py)`", section))
    gone = sorted(m for m in named if not (ROOT / m).exists())
    assert not gone, f"docs/architecture.md (Module map) names modules that do not exist: {gone}"
