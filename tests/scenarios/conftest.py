"""Shared by the reproduction test modules: each runs its own ``NAMES`` once in --quick mode."""

from __future__ import annotations

import pytest

from ldpsim.scenarios.reproductions import reproduce


@pytest.fixture(scope="module")
def quick_runs(request, tmp_path_factory):
    """Every reproduction in the test module's ``NAMES`` once in --quick mode (shared by its tests)."""
    out = tmp_path_factory.mktemp("quick")
    return out, {name: reproduce(name, out, quick=True) for name in request.module.NAMES}
