"""The results of one sweep run on disk: a locked run folder of Parquet files, one per finished cell.

Layout of ``RUN_DIR`` (a run folder of kind ``"sweep"``, see :mod:`ldpsim.runtime.runfolder`)::

    manifest.json            kind, scenario fingerprint, seed, status (running/complete), version
    parts.jsonl              one line per finished file: path, size, SHA-256, fingerprint
    config.json              resolved scenario, root entropy, fingerprint, the list of cells
    scenario.toml            the scenario file as given
    summary/<cell_id>.parquet    one row per (cell, metric[, item]): mean, se
    estimates/<cell_id>.parquet  one row per (cell, repeat, item) for the stored top items

Every file is written durably (temporary file, fsync, rename, fsync the folder). A cell counts as
finished when both its parts are in the journal with a matching size and checksum; a resume
deletes and recomputes a damaged or unlisted part. Reading uses only the journaled parts of the
folder's own fingerprint and verifies each one, so results of another scenario or seed, truncated
or bit-flipped files and missing parts are never read as results.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd

from ldpsim.runtime.runfolder import Layout, RunFolder, RunFolderError, read_journal, read_manifest
from ldpsim.runtime import durable

#: the sweep's run folder: its config, scenario and report, one Parquet part per cell, and the figures
LAYOUT = Layout("sweep", ("config.json", "scenario.toml", "report.html"),
                {"summary": ("*.parquet",), "estimates": ("*.parquet",), "plots": ("*.png", "*.svg", "captions.json")})

TABLES = ("summary", "estimates")

#: kept for callers of earlier versions: the folder holds another scenario's results (or is not ours)
RunExistsError = RunFolderError


class RunStore:
    """Read and write the Parquet results of one sweep run folder (layout in the module docstring).

    Parameters
    ----------
    run_dir : str or pathlib.Path
        The run folder; created by :meth:`open` if missing.

    Attributes
    ----------
    root : pathlib.Path
        The run folder.
    config_path : pathlib.Path
        ``root / "config.json"``.
    folder : RunFolder or None
        The locked run folder while open.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     store = RunStore(d)
    ...     _ = store.open({"fingerprint": "abc"}, "# scenario")
    ...     done, empty = sorted(store.finished()), store.read().empty
    ...     store.close()
    >>> done, empty
    ([], True)
    """

    def __init__(self, run_dir):
        self.root = Path(run_dir)
        self.folder: RunFolder | None = None

    @property
    def config_path(self) -> Path:
        return self.root / "config.json"

    def open(self, config: dict, scenario_text: str, force: bool = False, log=None) -> RunFolder:
        """Lock and prepare the folder for ``config``; refuse another scenario's folder unless ``force``.

        With ``force`` the old results (only files ldpsim wrote) are deleted first. The same scenario
        and seed resume: verified finished cells are kept. Call :meth:`close` (or use the returned
        :class:`~ldpsim.runtime.runfolder.RunFolder` as a context manager) to release the lock.

        Parameters
        ----------
        config : dict
            The resolved scenario; must hold ``"fingerprint"`` (with ``"root_entropy"``: what identifies
            "the same scenario and seed").
        scenario_text : str
            The scenario file as given, stored as ``scenario.toml``.
        force : bool, default False
            Delete the results of a different scenario instead of refusing.
        log : callable, optional
            Where notes go (a stale lock removed, damaged parts recomputed); default: stderr.

        Returns
        -------
        RunFolder
            The locked folder.

        Raises
        ------
        RunExistsError
            If the folder holds a different scenario's results and ``force`` is False, is not an ldpsim
            sweep folder, or is locked by another run.
        """
        self.close()
        identity = {"fingerprint": config["fingerprint"], "seed": config.get("root_entropy")}
        self.folder = RunFolder.open(self.root, LAYOUT, identity, resume=True, replace=force, log=log)
        self.folder.write_text("scenario.toml", scenario_text)
        self.folder.write_text("config.json", json.dumps(config, indent=1, default=str))
        return self.folder

    def close(self, complete: bool = False) -> None:
        """Release the lock; with ``complete`` first mark the folder complete in its manifest."""
        if self.folder is not None:
            if complete:
                self.folder.finalize()
            self.folder.release()
            self.folder = None

    def read_config(self) -> dict:
        """The stored ``config.json`` as a dict."""
        return json.loads(self.config_path.read_text(encoding="utf-8"))

    def finished(self) -> set[str]:
        """Ids of the cells whose summary and estimates are both complete and verified on disk."""
        parts = self.folder.finished() if self.folder is not None else set(_listed(self.root))
        ids = {table: {Path(p).stem for p in parts if p.startswith(f"{table}/")} for table in TABLES}
        return ids["summary"] & ids["estimates"]

    def write_cell(self, cell_id: str, estimates: pd.DataFrame, summary: pd.DataFrame) -> None:
        """Store one finished cell durably and journal both parts (the journal line marks it finished).

        Parameters
        ----------
        cell_id : str
            The cell's id (file stem).
        estimates, summary : pandas.DataFrame
            The cell's rows of the two tables; each file is written durably (temp, fsync, rename).
        """
        if self.folder is None:
            raise RuntimeError("RunStore.write_cell: open() the store first")
        for table, frame in (("estimates", estimates), ("summary", summary)):
            rel = f"{table}/{cell_id}.parquet"
            durable.write_file(self.folder.path(rel), lambda tmp, f=frame: f.to_parquet(tmp, index=False))
        for table in TABLES:
            self.folder.record(f"{table}/{cell_id}.parquet")

    def read(self, table: str = "summary") -> pd.DataFrame:
        """All finished cells' rows of ``table`` ("summary" or "estimates") in one DataFrame.

        Only parts journaled for the folder's own scenario are read, each verified against its size
        and SHA-256; a missing or damaged part raises ``ValueError`` naming it.

        Parameters
        ----------
        table : {"summary", "estimates"}, default "summary"

        Returns
        -------
        pandas.DataFrame
            Rows of every finished cell in cell order; empty when none is finished.
        """
        if table not in TABLES:
            raise ValueError(f"The 'table' parameter must be one of {TABLES}. Got {table!r} instead.")
        listed = _listed(self.root)
        cells = {Path(p).stem for p in listed if p.startswith("summary/")}
        frames = []
        for cell in sorted(cells):
            rel = f"{table}/{cell}.parquet"
            entry = listed.get(rel)
            if entry is None:
                raise ValueError(f"{self.root}: cell {cell} has a summary but no {table} part; "
                                 "rerun `ldpsim sweep` on this folder to recompute it")
            frames.append(pd.read_parquet(io.BytesIO(_verified_bytes(self.root, rel, entry))))
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True).sort_values(["cell_index"], kind="stable", ignore_index=True)


def _listed(root: Path) -> dict[str, dict]:
    """The folder's parts (``table/<cell>.parquet`` → size, sha256) of its own fingerprint."""
    manifest = read_manifest(root)
    if manifest is None:
        if (root / "config.json").exists() or (root / "summary").is_dir():
            raise ValueError(f"{root} has no manifest.json: not written by this ldpsim version (or damaged); "
                             "rerun the sweep into a new folder")
        raise FileNotFoundError(f"{root}: no such sweep run folder")
    if manifest.get("status") == "complete":
        return {p: e for p, e in manifest.get("files", {}).items() if p.split("/")[0] in TABLES}
    return {p: e for p, e in read_journal(root).items()
            if p.split("/")[0] in TABLES and e.get("fingerprint") == manifest.get("fingerprint")}


def _verified_bytes(root: Path, rel: str, entry: dict) -> bytes:
    import hashlib
    path = root / rel
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{path} is missing; rerun `ldpsim sweep` on this folder to recompute it") from None
    if len(data) != entry.get("size") or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        raise ValueError(f"{path} is damaged (its size or SHA-256 differs from the journal); rerun `ldpsim sweep` "
                         "on this folder to recompute it")
    return data


def read_results(run_dir, table: str = "summary") -> pd.DataFrame:
    """Shortcut: ``RunStore(run_dir).read(table)``."""
    return RunStore(run_dir).read(table)
