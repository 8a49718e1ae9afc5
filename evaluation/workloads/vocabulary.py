"""A vocabulary from a file: a team's emoji or word list with counts or shares, or a text corpus to count.

:func:`load_vocabulary` reads one file into a :class:`Vocabulary`: items (str) with their counts or
shares, most frequent first, so that item id ``i`` (0 .. D−1, what the mechanisms see) is the
``i``-th most frequent item; results keep the item strings. Formats (by extension, or ``format=``):

| format | extensions | content |
|---|---|---|
| ``csv`` / ``tsv`` | ``.csv`` / ``.tsv``, ``.tab`` | a header row naming an item column (``item``, ``word``, ``emoji`` or ``token``) and one weight column (``count`` or ``share``), case-insensitive; other columns are ignored |
| ``parquet`` | ``.parquet``, ``.pq`` | the same columns |
| ``list`` | ``.txt``, ``.list`` | one item a line, with an optional count as the last tab- or whitespace-separated field (every line or none); without counts every item counts 1 |
| ``corpus`` | ``.corpus``, ``.corpus.txt`` | any text; its words and emoji are counted (:mod:`.tokenizer`) |

Text is UTF-8, or UTF-16/UTF-32 with a byte-order mark, with any line ends (:mod:`.text_file`).
Every format writes an item the same way (:func:`~.tokenizer.canonical_item`): NFC, stripped of
surrounding whitespace, each emoji in its fully-qualified presentation (❤ and ❤️ are one item, ❤️).
Items equal after that (and ``lowercase``) are merged: their counts are added and a notice says so,
as it says when an emoji variant was rewritten. Counts are whole numbers >= 0 (``100.0`` is 100),
shares finite numbers >= 0 (normalised), not all 0, each and their total at most 2**53.
Every problem raises :class:`~ldpsim.runtime.errors.InputError` naming the file (and the file it
links to), the line or row, the column and the value.
"""

from __future__ import annotations

import csv
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ldpsim.mechanisms._validation import machine_memory
from ldpsim.runtime.errors import InputError

from ldpsim.evaluation.workloads.text_file import MAX_NUMBER, parse_number, text_lines
from ldpsim.evaluation.workloads.tokenizer import canonical_item, count_tokens
from ldpsim.evaluation.workloads.types import Workload

#: extension → format (a name ending in ``.corpus.txt`` is a corpus too)
EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet",
              ".txt": "list", ".list": "list", ".corpus": "corpus"}
FORMATS = ("csv", "tsv", "parquet", "list", "corpus")
#: the last whitespace-separated field of a list line that is read as its count (``5``, ``100.0``)
_COUNT_FIELD = re.compile(r"[+-]?\d+(?:\.0*)?")
#: accepted headers (case-insensitive) of the item column and of the weight column
ITEM_COLUMNS = ("item", "word", "emoji", "token")
WEIGHT_COLUMNS = ("count", "share")
#: bytes of memory a reader needs per byte of file (Python strings and tables; a corpus is streamed)
MEMORY_PER_BYTE = {"csv": 10, "tsv": 10, "list": 10, "parquet": 40, "corpus": 2}


@dataclass(frozen=True)
class Vocabulary:
    """Items with their counts or shares, most frequent first (item id = position).

    Parameters
    ----------
    items : tuple of str
        Distinct items, descending weight; ties keep the file's order.
    weights : numpy.ndarray of float
        Counts (``unit == "count"``, whole numbers) or shares (``unit == "share"``) of ``items``.
    unit : str
        ``"count"`` or ``"share"``.
    source : dict
        Where it came from: ``file`` (as given), ``resolved`` (the real path), ``format``, ``sha256``,
        ``lowercase`` (and ``top``).
    notices : tuple of str
        What the reader did that the user should know (merged duplicates, a list without counts).

    Examples
    --------
    >>> v = Vocabulary(("a", "b"), np.array([3.0, 1.0]), "count", {})
    >>> v.shares.tolist(), v.ids["b"], v.to_workload().counts.tolist()
    ([0.75, 0.25], 1, [3, 1])
    """

    items: tuple
    weights: np.ndarray
    unit: str
    source: dict = field(default_factory=dict)
    notices: tuple = ()

    def __post_init__(self):
        weights = np.array(self.weights, dtype=np.float64)  # a read-only copy: vocabularies are cached and shared
        if self.unit not in ("count", "share") or weights.shape != (len(self.items),):
            raise InputError(f"Vocabulary: 'unit' must be 'count' or 'share' and 'weights' one number per item; "
                             f"got {self.unit!r} and shape {weights.shape} for {len(self.items)} items.")
        weights.setflags(write=False)
        object.__setattr__(self, "items", tuple(self.items))
        object.__setattr__(self, "weights", weights)

    @property
    def domain_size(self) -> int:
        """Number of distinct items D."""
        return len(self.items)

    @property
    def counts(self) -> np.ndarray | None:
        """The counts as int64 (count files and corpora), or None (share files)."""
        return self.weights.astype(np.int64) if self.unit == "count" else None

    @property
    def shares(self) -> np.ndarray:
        """Weights normalised to sum 1."""
        return self.weights / self.weights.sum()

    @property
    def ids(self) -> dict:
        """Item → id (0 = most frequent), the ids the mechanisms see."""
        return {item: i for i, item in enumerate(self.items)}

    def table(self):
        """A pandas table: ``id``, ``item``, ``count`` (count files only) and ``share``."""
        import pandas as pd

        cols = {"id": np.arange(self.domain_size), "item": list(self.items)}
        if self.unit == "count":
            cols["count"] = self.counts
        return pd.DataFrame({**cols, "share": self.shares})

    def describe(self, first: int = 8) -> str:
        """One line for ``--dry-run``: the file, its size and its ``first`` most frequent items.

        >>> Vocabulary(("a", "b"), np.array([3.0, 1.0]), "count", {"file": "v.csv", "format": "csv"}).describe()
        "vocabulary v.csv (csv): 2 items, 4 counted; most frequent first: 'a' 3, 'b' 1"
        """
        total = f", {self.weights.sum():,.0f} counted" if self.unit == "count" else ""
        head = f"vocabulary {self.source.get('file', '')} ({self.source.get('format', '')}): {self.domain_size:,} items"
        return f"{head}{total}; {describe_items(self.items, self.weights, self.unit, first)}"

    def to_workload(self, n: int | None = None, name: str | None = None) -> Workload:
        """The population: the file's counts as they are (``n=None``, count files), else ``n`` users by
        largest remainder (docs/math.md §5)."""
        name = name or Path(self.source.get("file", "vocabulary")).name
        params = {k: self.source[k] for k in ("file", "sha256") if k in self.source}
        if n is None:
            if self.unit != "count":
                raise InputError(f"vocabulary {name!r} holds shares, not counts: give the number of users 'n'.")
            return Workload(name, np.array(self.items, dtype=object), self.counts, params)
        return Workload.from_frequencies(name, np.array(self.items, dtype=object), self.shares, n, params)


def describe_items(items, weights, unit: str = "count", first: int = 8) -> str:
    """``most frequent first: 'lol' 3, 'brb' 2, … (N more)`` for items already in descending weight order;
    shares are shown as percentages of the total."""
    weights = np.asarray(weights, dtype=np.float64)
    shown = [f"{item!r} {w:,.0f}" if unit == "count" else f"{item!r} {100 * w / weights.sum():.3g}%"
             for item, w in zip(items[:first], weights[:first])]
    more = f", … ({len(items) - first:,} more)" if len(items) > first else ""
    return f"most frequent first: {', '.join(shown)}{more}"


def resolve_file(file, base=None) -> Path:
    """``file`` as a path; a relative one is taken relative to ``base`` (a scenario's folder), else the
    current folder."""
    path = Path(file).expanduser()
    return path if path.is_absolute() or base is None else Path(base) / path


def shown_path(path: Path) -> tuple[Path, str]:
    """The real path of ``path`` (links followed) and how messages name it: ``path (→ real)`` when they differ."""
    real = path.resolve()
    return real, str(path) if real == path.absolute() else f"{path} (→ {real})"


def load_vocabulary(file, format: str | None = None, lowercase: bool | None = None, top: int | None = None,
                    base=None) -> Vocabulary:
    """Read a vocabulary file (formats and rules in the module docstring).

    Parameters
    ----------
    file : str or Path
        The file; a symbolic link is followed (its target is named in messages and ``source``).
    format : str, optional
        One of :data:`FORMATS`; default: from the extension (:data:`EXTENSIONS`).
    lowercase : bool, optional
        Lowercase items; default True for a corpus (keyboard words), False for lists and tables.
    top : int, optional
        Keep only the ``top`` most frequent items.
    base : str or Path, optional
        Folder a relative ``file`` is relative to (default: the current folder).

    Returns
    -------
    Vocabulary

    Raises
    ------
    InputError
        A missing file, a folder, an unknown format, an empty or undecodable file, a missing column,
        a bad count, a file too large for this machine's memory, or a bad ``top``.
    """
    path = resolve_file(file, base)
    if not path.exists():
        raise InputError(f"vocabulary file {path}: no such file.")
    real, shown = shown_path(path)
    if real.is_dir():
        raise InputError(f"vocabulary file {shown}: is a folder, not a file.")
    if not real.is_file():
        raise InputError(f"vocabulary file {shown}: is not a regular file (a device or a pipe).")
    if format is None:
        format = "corpus" if path.name.lower().endswith(".corpus.txt") else EXTENSIONS.get(path.suffix.lower())
        if format is None:
            raise InputError(f"vocabulary file {shown}: unknown extension {path.suffix!r}; allowed: "
                             f"{', '.join(EXTENSIONS)} and .corpus.txt (or give the format: {', '.join(FORMATS)}).")
    elif format not in FORMATS:
        raise InputError(f"vocabulary format must be one of {', '.join(FORMATS)}; got {format!r}.")
    if lowercase is None:
        lowercase = format == "corpus"
    if not isinstance(lowercase, bool):
        raise InputError(f"vocabulary 'lowercase' must be true or false; got {lowercase!r}.")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise InputError(f"vocabulary 'top' must be an int >= 1; got {top!r}.")
    stat = real.stat()
    if stat.st_size == 0:
        raise InputError(f"vocabulary file {shown}: is empty.")
    need, have = stat.st_size * MEMORY_PER_BYTE[format], machine_memory()
    if need > have // 2:
        raise InputError(f"vocabulary file {shown}: {stat.st_size / 2**30:.2f} GiB would need about "
                         f"{need / 2**30:.1f} GiB to read as {format}, more than half of this machine's "
                         f"{have / 2**30:.1f} GiB; keep only the items you need (or count the corpus beforehand).")
    vocab = _read(str(real), file_sha256(real), format, lowercase, shown)
    source = {**vocab.source, "file": str(file)}
    if top is not None:
        return Vocabulary(vocab.items[:top], vocab.weights[:top], vocab.unit, {**source, "top": top}, vocab.notices)
    return Vocabulary(vocab.items, vocab.weights, vocab.unit, source, vocab.notices)


@lru_cache(maxsize=8)
def _read(real: str, sha256: str, format: str, lowercase: bool, shown: str) -> Vocabulary:
    """The parsed file (cached per process by path and content hash: sweeps build a cell's workload
    many times)."""
    notices = ()
    if format == "parquet":
        rows, unit = _parquet_rows(real, shown)
    elif format == "corpus":
        found = count_tokens(text_lines(real, shown), lowercase)
        if not found.counts:
            raise InputError(f"vocabulary file {shown}: the corpus holds no words or emoji.")
        rows, unit = [(item, float(c), "") for item, c in found.counts.items()], "count"
        notices = _corpus_notices(found, shown)
    elif format == "list":
        rows, unit = _list_rows(real, shown)
        if all(count is None for _, count, _ in rows):
            notices = (f"vocabulary file {shown}: no counts given; every item counts 1 (all equally frequent).",)
        rows = [(item, 1.0 if count is None else count, where) for item, count, where in rows]
    else:
        rows, unit = _table_rows(real, shown, "\t" if format == "tsv" else ",")
    items, weights, merged = _merge(rows, lowercase, shown)
    notices += merged
    total = weights.sum()
    if not total > 0:
        raise InputError(f"vocabulary file {shown}: every {unit} is 0; at least one must be positive.")
    if total > MAX_NUMBER:
        raise InputError(f"vocabulary file {shown}: the {unit}s add up to {total:.4g}, more than 2**53 = "
                         f"{MAX_NUMBER:,} (larger totals are not exact in floating point); scale them down.")
    order = np.argsort(-weights, kind="stable")
    source = {"resolved": real, "format": format, "sha256": sha256, "lowercase": lowercase}
    return Vocabulary(tuple(items[i] for i in order), weights[order], unit, source, notices)


def file_sha256(path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _columns(header: list[str], shown: str, where: str) -> tuple[int, int, str]:
    """Positions of the item and weight columns in ``header``, and the weight's unit."""
    names = [h.strip().lower() for h in header]
    items = [i for i, h in enumerate(names) if h in ITEM_COLUMNS]
    weights = [i for i, h in enumerate(names) if h in WEIGHT_COLUMNS]
    if len(items) != 1 or len(weights) != 1:
        what = "item" if len(items) != 1 else "weight"
        allowed = ITEM_COLUMNS if what == "item" else WEIGHT_COLUMNS
        raise InputError(f"vocabulary file {shown}, {where}: needs exactly one {what} column "
                         f"({' or '.join(allowed)}, any case); got columns {header}.")
    return items[0], weights[0], names[weights[0]]


def _table_rows(real: str, shown: str, delimiter: str):
    reader = csv.reader((text for _, text in text_lines(real, shown)), delimiter=delimiter)
    try:
        header = next(reader, None)
        while header is not None and not any(c.strip() for c in header):
            header = next(reader, None)
        if header is None:
            raise InputError(f"vocabulary file {shown}: holds only blank lines.")
        header_line = reader.line_num
        i_item, i_weight, unit = _columns(header, shown, f"line {header_line} (the header)")
        rows = []
        for row in reader:
            if not any(c.strip() for c in row):
                continue
            where = f"vocabulary file {shown}, line {reader.line_num}"
            if len(row) != len(header):
                raise InputError(f"{where}: expected {len(header)} fields like the header {header}; got {len(row)}: "
                                 f"{row}.")
            weight = parse_number(row[i_weight], f"{where}, column {header[i_weight]!r}", unit, unit == "count")
            rows.append((row[i_item], weight, f"line {reader.line_num}"))
    except csv.Error as exc:
        limit = csv.field_size_limit()
        why = (f"a field is longer than {limit:,} characters (the CSV reader's limit; an item is a word, an emoji "
               "or a short phrase)" if "field limit" in str(exc) else f"is not valid CSV ({exc})")
        raise InputError(f"vocabulary file {shown}, line {reader.line_num}: {why}.") from None
    if not rows:
        raise InputError(f"vocabulary file {shown}: has a header (line {header_line}) but no rows; add one row "
                         "per item below it.")
    return rows, unit


def _list_rows(real: str, shown: str):
    """(item, count or None, where) of each line of a list file."""
    rows, with_count, without = [], None, None
    for number, text in text_lines(real, shown):
        line = text.rstrip("\r\n")
        if not line.strip():
            continue
        item, count = line, None
        if "\t" in line:
            item, _, last = line.rpartition("\t")
            count = parse_number(last, f"vocabulary file {shown}, line {number}, after the tab", "count", True)
        else:
            fields = line.split()
            if len(fields) > 1 and _COUNT_FIELD.fullmatch(fields[-1]):
                where = f"vocabulary file {shown}, line {number}, the last field"
                count = parse_number(fields[-1], where, "count", True)
                item = line[:line.rstrip().rfind(fields[-1])]
        if count is None:
            without = without or number
        else:
            with_count = with_count or number
        rows.append((item, count, f"line {number}"))
    if not rows:
        raise InputError(f"vocabulary file {shown}: holds only blank lines.")
    if with_count and without:
        raise InputError(f"vocabulary file {shown}: line {with_count} has a count but line {without} has none; "
                         "give a count on every line or on none.")
    return rows, "count"


def _parquet_rows(real: str, shown: str):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(real)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"vocabulary file {shown}: is not a readable Parquet file ({exc}).") from None
    i_item, i_weight, unit = _columns(table.column_names, shown, "its columns")
    items, weights = table.column(i_item).to_pylist(), table.column(i_weight).to_pylist()
    name = table.column_names[i_weight]
    rows = []
    for r, (item, w) in enumerate(zip(items, weights), start=1):
        where = f"vocabulary file {shown}, row {r}"
        if not isinstance(item, str):
            raise InputError(f"{where}, column {table.column_names[i_item]!r}: must be text; got {item!r}.")
        if isinstance(w, float) and unit == "count" and w.is_integer():
            w = int(w)
        if isinstance(w, bool) or not isinstance(w, (int, float)):
            raise InputError(f"{where}, column {name!r}: {unit} must be a number >= 0; got {w!r}.")
        rows.append((item, parse_number(str(w), f"{where}, column {name!r}", unit, unit == "count"), f"row {r}"))
    if not rows:
        raise InputError(f"vocabulary file {shown}: has no rows.")
    return rows, unit


def _merge(rows, lowercase: bool, shown: str) -> tuple[list[str], np.ndarray, tuple]:
    """Items written as :func:`~.tokenizer.canonical_item` (NFC, emoji in their fully-qualified form; and
    lowercased) with merged weights, in first-seen order, and the notices saying which were merged or
    rewritten. ``rows`` are (item, weight, where in the file)."""
    totals: dict[str, float] = {}
    first: dict[str, tuple[str, str]] = {}
    repeated: list[tuple[str, str, str]] = []
    variants: list[tuple[str, str, str]] = []
    n_joined = 0
    for item, weight, where in rows:
        raw = unicodedata.normalize("NFC", item).strip()
        raw = raw.lower() if lowercase else raw
        key = canonical_item(raw)
        if not key:
            raise InputError(f"vocabulary file {shown}, {where}: the item is empty.")
        if key != raw:
            variants.append((raw, key, where))
        if key in totals:
            totals[key] += weight
            if first[key][0] == raw:
                repeated.append((key, first[key][1], where))
            else:
                n_joined += 1
        else:
            totals[key], first[key] = weight, (raw, where)
    notices = ()
    if repeated:
        key, a, b = repeated[0]
        notices = (f"vocabulary file {shown}: {len(repeated)} repeated item(s) merged, their weights added "
                   f"(the first: {key!r} at {a} and {b}).",)
    if variants:
        typed, key, where = variants[0]
        joined = f", {n_joined} of them merged with another row, their weights added" if n_joined else ""
        notices += (f"vocabulary file {shown}: {len(variants)} item(s) written with another emoji presentation "
                    f"counted as the fully-qualified emoji{joined} (the first: {typed!r} at {where} as {key!r}).",)
    return list(totals), np.fromiter(totals.values(), dtype=np.float64, count=len(totals)), notices


def _corpus_notices(found, shown: str) -> tuple:
    """What counting a corpus did that the user should know: emoji variants merged, runs left whole."""
    notices = ()
    if found.variants:
        typed, (item, line) = next(iter(found.variants.items()))
        notices += (f"vocabulary file {shown}: {len(found.variants)} emoji presentation variant(s) counted as the "
                    f"fully-qualified emoji, their counts added (the first: {typed!r} on line {line} as {item!r}).",)
    for script, (runs, example, line) in found.unsegmented.items():
        shown_run = example if len(example) <= 20 else example[:20] + "…"
        notices += (f"vocabulary file {shown}: {runs} run(s) of {script.replace('_', ' ')} text kept whole: it is "
                    "written without spaces and ldpsim has no word segmenter for it, so each run counts as one item "
                    f"(the first: {shown_run!r} on line {line}); put spaces between its words for a word-level "
                    "vocabulary.",)
    return notices


def vocabulary_workload(n: int, rng=None, vocabulary=None, format: str | None = None, lowercase: bool | None = None,
                        top: int | None = None, sha256: str | None = None) -> Workload:
    """The workload ``vocabulary`` of :mod:`.make`: ``n`` users holding the file's items in its shares.

    ``vocabulary`` is the file (relative to the current folder; scenario files resolve it against
    their own folder first). With ``sha256`` the file must still have those bytes (a sweep records
    it when it reads the scenario, so a cell never runs on a changed file).
    """
    if vocabulary is None:
        raise InputError("workload 'vocabulary' needs the file: vocabulary = \"path/to/items.csv\".")
    vocab = load_vocabulary(vocabulary, format, lowercase, top)
    if sha256 is not None and vocab.source["sha256"] != sha256:
        raise InputError(f"vocabulary file {vocabulary}: changed since the scenario was read (its SHA-256 is "
                         f"{vocab.source['sha256'][:16]}…, expected {sha256[:16]}…); start the run again.")
    return vocab.to_workload(n, name="vocabulary")
