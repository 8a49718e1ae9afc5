"""The project's own files, found by walking a folder without entering what is not the project's.

A checkout also holds virtual environments, build outputs, the built site and run folders: a scan of
the checkout that entered them read every installed library (minutes, and findings that are not ours).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

#: folder names never entered: environments, build and site outputs, run folders, caches
NOT_OURS = frozenset({"venv", "env", "build", "dist", "runs", "_build", "_gallery", "generated",
                      "node_modules", "__pycache__", "site-packages"})


def _ours(name: str) -> bool:
    return not (name in NOT_OURS or name.startswith(".") or name.endswith(".egg-info"))


def own_files(root: Path, suffix: str, *, skip: tuple[str, ...] = ()) -> Iterator[Path]:
    """Every file under ``root`` whose name ends with ``suffix``, sorted, never entering a folder of
    :data:`NOT_OURS`, a hidden folder (``.venv``, ``.git``), an ``*.egg-info`` folder, or a folder named in
    ``skip``."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if _ours(d) and d not in skip)
        for name in sorted(files):
            if name.endswith(suffix):
                yield Path(folder) / name
