"""Shared pytest configuration.

Two tiers: the developer loop is ``pytest -n 2 -m "not slow"`` (about 3 CPU-minutes: under two
minutes on two worker processes); the README's command and CI run everything, also with ``-n 2``. Every
test may run in any order and beside any other (pytest-xdist): it writes only under its ``tmp_path``,
never into the checkout (:func:`_checkout_untouched` fails the session that did). A test that takes more
than about 1.5 s on the 2-core reference machine carries ``@pytest.mark.slow`` where it is defined, or
``pytest.param(..., marks=pytest.mark.slow)`` for one slow case of a parametrized test whose fast cases
stay in the loop.

Test modules never import each other or this file: what several share lives in plain helper modules
(:mod:`tests.fleets`: small fleets and scenarios; :mod:`tests.stats`: statistical assertions;
:mod:`tests.report_files`: a run folder for the report's tests; :mod:`tests.tree`: the checkout's own
files), imported as ``tests.<name>`` (the checkout's root is on ``sys.path`` through ``pythonpath``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _entries(root: Path) -> set[str]:
    """The checkout's files and folders, not entering environments, caches or the built site (the
    ``runs`` folder itself is listed: a library call's default output folder must never appear here)."""
    skip = {".venv", ".git", "__pycache__", ".pytest_cache", "_build", "_gallery", "_gallery_cache", "generated"}
    found = set()
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in skip and not d.endswith(".egg-info")]
        found.update(os.path.relpath(os.path.join(folder, n), root) for n in subfolders + files)
    return found


@pytest.fixture(scope="session", autouse=True)
def _checkout_untouched():
    """Fail the session (each xdist worker's) if its tests created anything in the checkout."""
    before = _entries(ROOT)
    yield
    new = sorted(_entries(ROOT) - before)
    assert not new, f"tests wrote into the checkout (write under tmp_path instead): {new[:20]}"
