"""The server's durable report store: Parquet files partitioned by use case and collection day.

Layout: ``root/use_case=<name>/day=<d>/part-<writer>-<seq>.parquet`` with one column ``report``
(fixed-size binary: the mechanism's wire form of one report, in shuffled order) and no metadata that
identifies a device. The upload ids (random nonces) of the bundles in a part are kept in the file's
key-value metadata, so the dedupe set survives a crash. Each part is written to a temporary name and
renamed into place (atomic on POSIX): a part is either complete or absent; with ``fsync`` (the
default) its bytes are on disk before the rename and the rename is on disk (folder fsynced) before
the server acknowledges (:mod:`ldpsim.runtime.durable`). Writers of different
shards use different ``writer`` names, so shard stores merge by sitting in the same tree.

A store reads back only the parts it wrote itself (:attr:`ReportStore.written`, checked with
:func:`ldpsim.runtime.durable.wrote`): a file somebody else put into the tree under a part's name is
never read as reports, nor overwritten (the next free sequence number is taken).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ldpsim.runtime import durable

_IDS_KEY = b"upload_ids"


class ReportStore:
    """Append-only, partitioned, atomically written report store."""

    def __init__(self, root, writer: str = "0", fsync: bool = True):
        self.root = Path(root)
        self.writer = writer
        self.fsync = fsync
        durable.make_dirs(self.root)
        self._seq = 0
        #: absolute path → SHA-256 of every part this store wrote (the run folder adopts exactly these)
        self.written: dict[str, str] = {}

    def _dir(self, use_case: str, day: int) -> Path:
        return self.root / f"use_case={use_case}" / f"day={day}"

    def append(self, use_case: str, day: int, rows: np.ndarray, upload_ids: np.ndarray) -> Path:
        """Write one part (``rows``: n × report_bytes uint8) durably; returns its path."""
        width = rows.shape[1]
        col = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(rows),
                                                   [None, pa.py_buffer(np.ascontiguousarray(rows).tobytes())])
        ids = np.ascontiguousarray(upload_ids, dtype="<u8").tobytes()
        table = pa.table({"report": col}).replace_schema_metadata({_IDS_KEY: ids})
        folder = self._dir(use_case, day)
        durable.make_dirs(folder)
        final = folder / f"part-{self.writer}-{self._seq:06d}.parquet"
        while os.path.lexists(final):  # never overwrite a file that is there already (ours or not)
            self._seq += 1
            final = folder / f"part-{self.writer}-{self._seq:06d}.parquet"
        # durable before the acknowledgment: temp file, fsync, rename, fsync the folder
        durable.write_file(final, lambda tmp: pq.write_table(table, tmp, compression="zstd"), sync=self.fsync)
        self._seq += 1
        self.written[os.path.abspath(final)] = durable.sha256_file(final)
        return final

    def parts(self, use_case: str | None = None, day: int | None = None, mine: bool = False) -> list[Path]:
        """Complete parts (temporary files are ignored), sorted; ``mine``: only those this store wrote and
        nobody changed since (a file merely named like one of its parts is left out)."""
        uc = "*" if use_case is None else use_case
        d = "*" if day is None else str(day)
        who = self.writer if mine else "*"
        found = sorted(self.root.glob(f"use_case={uc}/day={d}/part-{who}-*.parquet"))
        if mine:
            found = [p for p in found if os.path.abspath(p) in self.written and durable.wrote(p)]
        return found

    def upload_ids(self, use_case: str, day: int | None = None, mine: bool = False) -> np.ndarray:
        """Every upload id whose ``use_case`` reports (of ``day``) are stored (from the parts' metadata)."""
        chunks = [np.frombuffer(pq.read_schema(p).metadata[_IDS_KEY], dtype="<u8")
                  for p in self.parts(use_case, day, mine=mine)]
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype="<u8")

    def partitions(self, mine: bool = False) -> list[tuple[str, int]]:
        """The (use case, day) partitions present."""
        keys = {(p.parent.parent.name.split("=", 1)[1], int(p.parent.name.split("=", 1)[1]))
                for p in self.parts(mine=mine)}
        return sorted(keys)

    def read(self, use_case: str, day: int, mine: bool = False) -> np.ndarray:
        """All stored reports of a partition as an n × report_bytes uint8 matrix."""
        parts = self.parts(use_case, day, mine)
        if not parts:
            return np.zeros((0, 0), dtype=np.uint8)
        cols = [pq.read_table(p, columns=["report"]).column("report") for p in parts]
        width = cols[0].type.byte_width
        raw = b"".join(chunk.buffers()[1].to_pybytes()[chunk.offset * width:(chunk.offset + len(chunk)) * width]
                       for col in cols for chunk in col.chunks)
        return np.frombuffer(raw, dtype=np.uint8).reshape(-1, width)
