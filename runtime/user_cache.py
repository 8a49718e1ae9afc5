"""Where ldpsim keeps what it can rebuild: one folder per use under the user's cache directory."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir(name: str) -> Path:
    """``$XDG_CACHE_HOME/ldpsim/<name>`` (``~/.cache/ldpsim/<name>`` by default); not created here."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "ldpsim" / name
