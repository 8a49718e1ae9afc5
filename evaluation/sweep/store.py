"""The results of one sweep run on disk: a folder of Parquet files, one per finished cell.

Layout of ``RUN_DIR``::

    config.json              resolved scenario, root entropy, fingerprint, the list of cells
    scenario.toml            the scenario file as given
    summary/<cell_id>.parquet    one row per (cell, metric[, item]): mean, se
    estimates/<cell_id>.parquet  one row per (cell, repeat, item) for the stored top items

Every file is written atomically (temporary file, then ``os.replace``); a cell counts as finished when
its summary file exists, which is written after its estimates, so an interrupted run never leaves a
half-written cell that a resume would skip.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

TABLES = ("summary", "estimates")


class RunExistsError(RuntimeError):
    """The run folder holds results of a different scenario."""


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class RunStore:
    """Read and write the Parquet results of one run folder (layout in the module docstring).

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

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     store = RunStore(d)
    ...     store.open({"fingerprint": "abc"}, "# scenario")
    ...     sorted(store.finished()), store.read().empty
    ([], True)
    """

    def __init__(self, run_dir):
        self.root = Path(run_dir)

    @property
    def config_path(self) -> Path:
        return self.root / "config.json"

    def open(self, config: dict, scenario_text: str, force: bool = False) -> None:
        """Prepare the folder for ``config``; refuse a folder holding another scenario unless ``force``.

        With ``force`` the old results are deleted first. The same scenario is left untouched, so
        its finished cells are skipped (resume).

        Parameters
        ----------
        config : dict
            The resolved scenario; must hold ``"fingerprint"`` (what identifies "the same scenario").
        scenario_text : str
            The scenario file as given, stored as ``scenario.toml``.
        force : bool, default False
            Delete the results of a different scenario instead of refusing.

        Raises
        ------
        RunExistsError
            If the folder holds a different scenario's results and ``force`` is False.
        """
        if self.config_path.exists():
            old = self.read_config()
            if old.get("fingerprint") == config["fingerprint"]:
                return
            if not force:
                raise RunExistsError(
                    f"{self.root} holds results of a different scenario (fingerprint {old.get('fingerprint')}, "
                    f"now {config['fingerprint']}); use another output folder, or --force to delete them")
            for table in TABLES:
                shutil.rmtree(self.root / table, ignore_errors=True)
        self.root.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.root / "scenario.toml", lambda tmp: Path(tmp).write_text(scenario_text, encoding="utf-8"))
        _atomic_write(self.config_path,
                      lambda tmp: Path(tmp).write_text(json.dumps(config, indent=1, default=str), encoding="utf-8"))

    def read_config(self) -> dict:
        """The stored ``config.json`` as a dict."""
        return json.loads(self.config_path.read_text(encoding="utf-8"))

    def finished(self) -> set[str]:
        """Ids of the cells whose results are complete on disk."""
        folder = self.root / "summary"
        return {p.stem for p in folder.glob("*.parquet")} if folder.exists() else set()

    def write_cell(self, cell_id: str, estimates: pd.DataFrame, summary: pd.DataFrame) -> None:
        """Store one finished cell: estimates first, then the summary (the completion marker).

        Parameters
        ----------
        cell_id : str
            The cell's id (file stem).
        estimates, summary : pandas.DataFrame
            The cell's rows of the two tables; each file is written atomically.
        """
        for table, frame in (("estimates", estimates), ("summary", summary)):
            _atomic_write(self.root / table / f"{cell_id}.parquet", lambda tmp, f=frame: f.to_parquet(tmp, index=False))

    def read(self, table: str = "summary") -> pd.DataFrame:
        """All finished cells' rows of one table.

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
        files = sorted((self.root / table).glob("*.parquet"))
        if not files:
            return pd.DataFrame()
        frames = [pd.read_parquet(f) for f in files]
        return pd.concat(frames, ignore_index=True).sort_values(["cell_index"], kind="stable", ignore_index=True)


def read_results(run_dir, table: str = "summary") -> pd.DataFrame:
    """Shortcut: ``RunStore(run_dir).read(table)``."""
    return RunStore(run_dir).read(table)
