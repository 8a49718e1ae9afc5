"""The documentation gallery draws each figure once per version of the code: a rebuild with the same code
copies the cached figures instead of running the studies again (docs/_ext/gallery.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.report_files import small_figure

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def gallery(monkeypatch):
    spec = importlib.util.spec_from_file_location("ldpsim_docs_gallery", ROOT / "docs" / "_ext" / "gallery.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.delenv("LDPSIM_GALLERY_CACHE", raising=False)
    return module


def _example(calls):
    def draw(tmp):
        calls.append(tmp)
        return [("one.png", "a caption", small_figure("one"))]
    return draw


def test_a_rebuild_with_the_same_code_copies_the_figures_instead_of_drawing_them(gallery, tmp_path, monkeypatch):
    calls = []
    draw = _example(calls)
    (tmp_path / "a").mkdir()
    first = gallery._draw(0, draw, tmp_path / "a", tmp_path)
    assert len(calls) == 1 and first[0][2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    gallery._DRAWN.clear()  # a new build
    (tmp_path / "b").mkdir()
    again = gallery._draw(0, draw, tmp_path / "b", tmp_path)
    assert len(calls) == 1, "the cached figure was drawn again"
    assert [(n, c) for n, c, _ in again] == [(n, c) for n, c, _ in first]
    assert again[0][2].parent == tmp_path / "b" and again[0][2].read_bytes() == first[0][2].read_bytes()
    gallery._DRAWN.clear()
    monkeypatch.setattr(gallery, "_code_hash", lambda: "another version of the code")
    gallery._draw(0, draw, tmp_path / "b", tmp_path)
    assert len(calls) == 2, "a change of the code must draw anew"
    assert len(list((tmp_path / "_gallery_cache").iterdir())) == 1  # one entry per example: the latest
    gallery._DRAWN.clear()
    monkeypatch.setenv("LDPSIM_GALLERY_CACHE", "0")
    gallery._draw(0, draw, tmp_path / "b", tmp_path)
    assert len(calls) == 3


def test_the_key_covers_the_package_sources_and_the_example_code(gallery, tmp_path):
    first = gallery._cache_folder(tmp_path, 0, _example([]))
    assert first == gallery._cache_folder(tmp_path, 0, _example([]))

    def other(tmp):  # another example's code
        return []
    assert gallery._cache_folder(tmp_path, 0, other) != first
    assert len(gallery._code_hash()) == 64
