"""The documentation that travels with the code: docs/math.md, its citations, and the public docstrings."""

import inspect
import re
from pathlib import Path

import pytest

from ldpsim.mechanisms import (EM, MECHANISMS, Aggregate, HashFamily, LaplaceHistogram, NoisyQuadtree,
                               make)
from tests.tree import own_files

ROOT = Path(__file__).resolve().parents[1]
MATH = ROOT / "docs" / "math.md"
CITATION = re.compile(r"docs/math\.md §(\d+)(?:\.(\d+))?")
SOURCES = (".py", ".toml", ".md")


def _repository_files():
    for suffix in SOURCES:
        yield from own_files(ROOT, suffix)


def _sections() -> set[str]:
    """'N' for every '## N.' heading and 'N.M' for every '### N.M' heading of docs/math.md."""
    text = MATH.read_text(encoding="utf-8")
    return set(re.findall(r"^##\s+(\d+)\.\s", text, re.M)) | set(re.findall(r"^###\s+(\d+\.\d+)\s", text, re.M))


def test_math_reference_has_the_numbered_sections_code_cites():
    sections = _sections()
    expected = {"1", "2", "3", "4", "5", "6", "7", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "2.1", "2.2",
                "2.3", "2.4", "7.1", "7.2", "7.3", "7.4", "7.5"}
    assert expected <= sections, f"missing sections: {sorted(expected - sections)}"


def test_every_citation_points_at_an_existing_section():
    sections = _sections()
    dangling = []
    for path in _repository_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in CITATION.finditer(text):
            cited = match.group(1) + (f".{match.group(2)}" if match.group(2) else "")
            if cited not in sections:
                line = text.count("\n", 0, match.start()) + 1
                dangling.append(f"{path.relative_to(ROOT)}:{line}: §{cited}")
    assert not dangling, "citations of missing docs/math.md sections:\n" + "\n".join(dangling)


def test_no_citation_of_the_external_spec_remains():
    # the old reference lived outside the repository; code must cite docs/math.md instead
    stale = re.compile(r"\bSPEC(?: §|'s\b| \(kept)")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in _repository_files()
             for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if stale.search(line)]
    assert not found, found


def test_the_source_distribution_ships_docs():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").split()
    assert "graft" in manifest and "docs" in manifest


PUBLIC_CLASSES = sorted({*MECHANISMS.values(), EM, LaplaceHistogram, NoisyQuadtree, HashFamily},
                        key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", PUBLIC_CLASSES, ids=lambda c: c.__name__)
def test_public_classes_document_parameters_math_and_an_example(cls):
    doc = inspect.getdoc(cls) or ""
    assert re.search(r"^Parameters\n-{10}", doc, re.M), f"{cls.__name__}: no numpydoc Parameters section"
    assert "docs/math.md §" in doc, f"{cls.__name__}: no docs/math.md citation"
    assert ">>> " in doc, f"{cls.__name__}: no example"


@pytest.mark.parametrize("cls", sorted(MECHANISMS.values(), key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_mechanism_key_methods_document_parameters_and_returns(cls):
    for name in ("perturb", "aggregate", "estimate", "estimate_mean", "variance", "sample_aggregate", "decode"):
        method = getattr(cls, name, None)
        if method is None:
            continue
        doc = inspect.getdoc(method) or ""
        assert "Returns" in doc or "Parameters" in doc, f"{cls.__name__}.{name}: no Parameters/Returns"


def test_entry_points_document_parameters():
    for obj in (make, Aggregate):
        assert "Parameters\n----------" in (inspect.getdoc(obj) or ""), obj


def test_the_installed_package_carries_the_math_reference():
    """Docstrings cite docs/math.md: it travels with the installed package."""
    from importlib import resources
    text = (resources.files("ldpsim") / "docs" / "math.md").read_text(encoding="utf-8")
    assert text.startswith("# ldpsim mathematical reference")


def test_readme_is_a_landing_page_whose_links_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_readme_names_only_commands_that_exist():
    from ldpsim.scenarios.cli import COMMANDS
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"^\| `ldpsim (\w+)", readme, flags=re.M))
    assert named and named <= set(COMMANDS)


def test_docs_speak_to_users_only():
    """No issue numbers, no notes on how the work was organised, in the manual or the README."""
    pages = [ROOT / "README.md", *own_files(ROOT / "docs", ".md")]
    pattern = re.compile(r"\b(?:issue|ticket) #?\d+|\bhelper (?:sessions?|engineers?|agents?)\b|\bworktrees?\b|"
                         r"\bseed 00X\b|\bother agents\b", re.I)
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()[:80]}" for p in pages
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not found, found
