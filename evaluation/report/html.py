"""A self-contained HTML report: one file that opens anywhere, offline, with nothing to fetch.

No external resource of any kind: inline CSS, figures embedded as base64 data URIs (PNG, or SVG
when a figure has no PNG), tables from pandas (escaped), the resolved config pretty-printed, the
seed / root entropy and the versions that produced the numbers. A Content-Security-Policy meta
tag (``default-src 'none'; img-src data:; style-src 'unsafe-inline'``) makes the browser refuse
anything else, so a page that renders completely is provably self-contained.

:func:`write_report_html` builds a page from sections; :func:`report_from_run_dir` builds one from
whatever a run folder holds (``ldpsim run``, ``ldpsim sweep``, ``ldpsim reproduce``).
"""

from __future__ import annotations

import base64
import html
import io
import json
import platform
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pandas as pd

from ldpsim.evaluation.privacy import level_columns

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
               ".gif": "image/gif"}
PACKAGES = ("ldpsim", "numpy", "scipy", "pandas", "matplotlib", "simpy", "pyarrow")
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1100px;
padding:1.5em;color:#1d2327;line-height:1.45}
h1{font-size:1.6em;border-bottom:2px solid #2c5f8a;padding-bottom:.3em}
h2{font-size:1.25em;margin-top:2em;color:#2c5f8a}
nav ul{columns:2;font-size:.9em}
pre{background:#f5f6f7;border:1px solid #dcdfe2;padding:.8em;overflow-x:auto;font-size:.82em;white-space:pre}
.scroll{overflow-x:auto;margin:.5em 0 1em}
table{border-collapse:collapse;font-size:.82em;font-variant-numeric:tabular-nums}
th,td{border:1px solid #dcdfe2;padding:.25em .6em;text-align:right;white-space:nowrap}
th{background:#e8eef3;position:sticky;top:0}
tr:nth-child(even) td{background:#fafbfc}
table.kv th{text-align:left;vertical-align:top;background:none;position:static}
table.kv td{text-align:left;white-space:normal}
figure{margin:1em 0}
figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption,.note{font-size:.85em;color:#5f6b75}
"""


@dataclass(frozen=True)
class Preformatted:
    """Text shown as is, in a monospaced block (escaped)."""

    text: str


@dataclass(frozen=True)
class Captioned:
    """An image file shown with a caption (instead of its file name)."""

    path: Path
    caption: str


@dataclass(frozen=True)
class KeyValues:
    """Lines of (key, value) text shown as a two-column table; a key "" continues the row above."""

    lines: tuple


@dataclass(frozen=True)
class Table:
    """A DataFrame and the file holding all of it (named when the page shows only the first rows)."""

    frame: pd.DataFrame
    source: str = ""


def versions() -> dict:
    """Python, platform and the versions of ldpsim and its main dependencies ("unknown" if absent)."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "unknown"
    return out


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _figure(uri: str, caption: str) -> str:
    cap = html.escape(caption)
    return f'<figure><img src="{uri}" alt="{cap}"><figcaption>{cap}</figcaption></figure>'


#: column names of the stored tables → headers a reader understands (others: underscores become spaces)
HEADERS = {
    "true_donated": "true share (donated)", "true_event": "true share (all typed)",
    "true_device": "share of devices typing it", "ci_low": "95% interval low", "ci_high": "95% interval high",
    "sd": "sd (theory)", "est_rank": "estimated rank", "true_rank": "true rank", "delta_e": "ΔE",
    "mse_ratio": "daily MSE ÷ theory", "half_width": "± 95%", "running_estimate": "estimate pooled so far",
    "use_case": "use case", "sd_method": "sd from", "epsilon_report": "ε of one report",
    "epsilon_item": "ε of one item of one person (run)", "epsilon_person": "ε of one person (run)",
    "epsilon_day": "ε per device per day", "epsilon_central": "central ε",
    "epsilon_central_worst": "central ε (worst window)", "epsilon_central_median": "central ε (median report)",
    "t_s": "time (s since start)", "n": "devices in the window", "slang_estimate": "new word: estimated share",
    "slang_true": "new word: true share", "slang_found": "new word found", "ncr": "NCR",
    "f1": "F1", "relative_error": "relative error", "daily_full": "daily budget full",
    "expected_false": "invented words to expect (at most)", "invented": "invented words",
    "dropped": "live prefixes dropped by a cap",
}


def header(name) -> str:
    """A table's column name as a human header: :data:`HEADERS`, else underscores as spaces."""
    return HEADERS.get(str(name), str(name).replace("_", " "))


def number(x) -> str:
    """A float for reading: whole numbers with thousands separators, ≥ 100 with one decimal, else 4
    significant digits; NaN as an empty cell."""
    if x != x:
        return ""
    if abs(x) == float("inf"):
        return "∞" if x > 0 else "−∞"
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:,.1f}" if abs(x) >= 100 else f"{x:.4g}"


def _table(frame: pd.DataFrame, max_rows: int, source: str = "") -> str:
    shown = frame.head(max_rows).rename(columns=header)
    body = shown.to_html(index=False, escape=True, border=0, na_rep="", float_format=number)
    note = ""
    if len(frame) > len(shown):
        note = (f'<p class="note">first {len(shown)} of {len(frame)} rows'
                f'{"; all in " + html.escape(source) if source else ""}</p>')
    return f'<div class="scroll">{body}</div>{note}'


def _key_values(lines) -> str:
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in lines)
    return f'<div class="scroll"><table class="kv">{rows}</table></div>'


def _render(item, max_rows: int) -> str:
    if isinstance(item, KeyValues):
        return _key_values(item.lines)
    if isinstance(item, Preformatted):
        return f"<pre>{html.escape(item.text)}</pre>"
    if isinstance(item, str):
        return f"<p>{html.escape(item)}</p>"
    if isinstance(item, pd.DataFrame):
        return _table(item, max_rows)
    if isinstance(item, Table):
        return _table(item.frame, max_rows, item.source)
    if isinstance(item, (dict, list)):
        return f"<pre>{html.escape(json.dumps(item, indent=2, default=str, ensure_ascii=False))}</pre>"
    if isinstance(item, (Path, Captioned)):
        path, caption = (item, item.name) if isinstance(item, Path) else (Path(item.path), item.caption)
        mime = IMAGE_TYPES.get(path.suffix.lower())
        if mime is None:
            raise ValueError(f"cannot embed {path}: an image must be one of {', '.join(IMAGE_TYPES)}")
        return _figure(_data_uri(path.read_bytes(), mime), caption)
    if hasattr(item, "savefig"):  # a matplotlib Figure
        buf = io.BytesIO()
        item.savefig(buf, format="png", dpi=110)
        title = item.axes[0].get_title() if item.axes else ""
        return _figure(_data_uri(buf.getvalue(), "image/png"), title or "figure")
    raise TypeError(f"cannot render a {type(item).__name__} in a report: give str, Preformatted, DataFrame, Table, "
                    "dict/list, an image Path or a matplotlib Figure")


def render_html(title: str, sections, *, config=None, seed=None, max_rows: int = 200) -> str:
    """The page as a string; see :func:`write_report_html`."""
    sections = [(heading, body if isinstance(body, (list, tuple)) else [body]) for heading, body in sections]
    repro = [("seed / root entropy", "-" if seed is None else json.dumps(seed, default=str)),
             *versions().items()]
    sections.append(("Reproducibility", [pd.DataFrame(repro, columns=["what", "value"]),
                                         *(["resolved configuration:", config] if config is not None else [])]))
    ids = [f"s{i}" for i in range(len(sections))]
    toc = "".join(f'<li><a href="#{i}">{html.escape(h)}</a></li>' for i, (h, _) in zip(ids, sections))
    body = "".join(f'<section id="{i}"><h2>{html.escape(h)}</h2>{"".join(_render(x, max_rows) for x in items)}'
                   "</section>" for i, (h, items) in zip(ids, sections))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n"
            f"<body><h1>{html.escape(title)}</h1><nav><ul>{toc}</ul></nav>\n{body}\n</body></html>\n")


def write_report_html(path, title: str, sections, *, config=None, seed=None, max_rows: int = 200) -> Path:
    """Write a self-contained HTML page and return its path.

    ``sections`` is a sequence of ``(heading, content)`` where content is one item or a list of
    items: ``str`` (a paragraph), :class:`Preformatted`, :class:`KeyValues`, ``pandas.DataFrame`` or :class:`Table`
    (first ``max_rows`` rows), ``dict``/``list`` (pretty JSON), a ``Path`` to a PNG/SVG/JPEG/GIF image
    (captioned with its file name) or a :class:`Captioned` image, or a matplotlib
    ``Figure`` (embedded as PNG). A final "Reproducibility" section holds ``seed``, the versions
    (:func:`versions`) and the resolved ``config``. Everything is escaped.
    """
    from ldpsim.runtime.durable import make_dirs, write_text
    path = Path(path)
    make_dirs(path.parent)
    return write_text(path, render_html(title, sections, config=config, seed=seed, max_rows=max_rows))


def _seed_of(config: dict):
    """Root entropy of a sweep's config.json, or the ``seed`` of a deployment's or reproduction's config."""
    for key in ("root_entropy", "seed"):
        if key in config:
            return config[key]
    return config.get("scenario", {}).get("seed") if isinstance(config.get("scenario"), dict) else None


def _figures(run_dir: Path, own: set[Path]) -> list:
    """Figures of the folder and its plots/ (PNG; SVG only where no PNG twin exists) among ``own``. Where a
    folder has ``captions.json`` (file name → caption, in reading order), its figures come in that order with
    those captions; the others follow by name."""
    found = []
    for folder in (run_dir, run_dir / "plots"):
        files = sorted(p for p in own if p.parent == folder)
        pngs = {p.stem for p in files if p.suffix == ".png"}
        images = [p for p in files if p.suffix == ".png" or (p.suffix == ".svg" and p.stem not in pngs)]
        captions_file = folder / "captions.json"
        captions = json.loads(captions_file.read_text(encoding="utf-8")) if captions_file in own else {}
        found += [Captioned(folder / name, caption) for name, caption in captions.items() if folder / name in files]
        found += [p for p in images if p.name not in captions]
    return found


#: tables of a deployment run folder, in reading order, with what they hold
TABLE_NOTES = {
    "top.csv": "The pooled top-10: true share, estimate, the theory's 95% half-width, ranks, ΔE, daily MSE ÷ theory.",
    "pooled_estimates.csv": "Every item, estimated from the aggregate summed over all days, with the theory's sd, "
                            "bias and 95% interval (ci_low, ci_high) and the true shares of the run.",
    "daily_reports.csv": "Per day: reports received per use case; share of donating devices whose total budget "
                         "cannot pay one more report of a use case (exhausted_*) or whose daily budget was full.",
    "readings_pooled.csv": "Mean readings from all days' reports (raw units), with the largest possible sd.",
    "readings.csv": "Mean readings per day (raw units).",
    "daily_estimates.csv": "Per day and item: estimate, the theory's sd, bias and 95% interval, true shares.",
    "words.csv": "Per night, the discovery job over all word reports so far: whether the new word is in the "
                 "returned list, its estimated and true share, and the list's F1 and NCR against the true top.",
    "central_days.csv": "Per day: the local ε one device spent at most that day (all use cases) and the central "
                        "ε it amounts to after the shuffle (worst window and median report), at the run's δ.",
    "central_windows.csv": "Per shuffled batch window and partition (use case, day): reports, devices n, the "
                           "local ε of one device's reports in it and the central ε after shuffling among n.",
}


def _tables(run_dir: Path, own: set[Path]) -> list[Path]:
    """CSV tables (and Parquet without a CSV twin) among ``own``: the known ones of TABLE_NOTES first, in its
    order."""
    top = sorted(p for p in own if p.parent == run_dir)
    csvs = [p for p in top if p.suffix == ".csv"]
    found = csvs + [p for p in top if p.suffix == ".parquet" and p.with_suffix(".csv") not in csvs]
    rank = {name: i for i, name in enumerate(TABLE_NOTES)}
    return sorted(found, key=lambda p: (rank.get(p.name, len(rank)), p.name))


def _summary_text(run_dir: Path, own: set[Path]) -> str | None:
    """The run's printed summary: ``summary.txt``, else ``report.md`` without Markdown headings, fences
    and image links (among ``own``)."""
    if run_dir / "summary.txt" in own:
        return (run_dir / "summary.txt").read_text(encoding="utf-8").rstrip("\n")
    if run_dir / "report.md" in own:
        text = (run_dir / "report.md").read_text(encoding="utf-8").splitlines()
        return "\n".join(ln for ln in text if not ln.startswith(("![", "```", "# ", "## "))).strip("\n")
    return None


def report_from_run_dir(run_dir, title: str | None = None, max_rows: int = 50, summary=None,
                        results: pd.DataFrame | None = None, figures_note: str = "") -> Path:
    """Write ``RUN_DIR/report.html`` from what the run folder holds, and return its path.

    Collected: the summary (``summary.txt``, else ``report.md`` less its Markdown), ``results`` (a table
    the study gives: a sweep's one row per cell, :mod:`ldpsim.scenarios.studies.sweep.sweep_report`), figures (``*.png`` in the folder and ``plots/``, ordered and
    captioned by ``captions.json`` where present), tables (``*.csv``; ``*.parquet`` without a CSV
    twin; a deployment's known tables first, each with a note), other ``*.json`` files,
    ``scenario.toml``; ``config.json`` is the resolved config and gives the seed / root entropy.
    Works for the folders of ``ldpsim run``, ``sweep`` and ``reproduce``. ``summary``: the summary as
    sections ``(heading, items)`` (a deployment's tables, :func:`ldpsim.evaluation.report.run_summary.html_sections`)
    instead of the summary's text. ``figures_note``: the line shown under "Figures" when the folder holds none
    (a run that did not draw them says how to draw them).

    Only files the run wrote are read (:func:`ldpsim.runtime.runfolder.own_files`: listed in the manifest or
    journal with their size and SHA-256, or written by this process), never through a symbolic link: a file
    somebody else put into the folder, or a link to one elsewhere, stays out of the page meant to be shared.
    """
    from ldpsim.runtime.runfolder import own_files
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder")
    own = {run_dir / rel for rel in own_files(run_dir)}
    config_path = run_dir / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8")) if config_path in own else None
    others = {p.stem: json.loads(p.read_text(encoding="utf-8"))
              for p in sorted(own) if p.parent == run_dir and p.suffix == ".json" and p != config_path}
    seed = _seed_of(config) if isinstance(config, dict) else (
        {k: _seed_of(v) for k, v in others.items() if isinstance(v, dict) and _seed_of(v) is not None} or None)
    sections = []
    if summary is not None:
        sections += [(f"Summary: {heading}", items) for heading, items in summary]
    elif (text := _summary_text(run_dir, own)) is not None:
        sections.append(("Summary", Preformatted(text)))
    if results is not None and not results.empty:
        scope = [level_columns.note("epsilon_report", "each user")] if "epsilon_person" in results else []
        sections.append(("Results (aggregate metrics per cell, mean ± se over repeats)",
                         [*scope, Table(results, "summary/")]))
    if figures := _figures(run_dir, own):
        sections.append(("Figures", figures))
    elif figures_note:
        sections.append(("Figures", figures_note))
    for path in _tables(run_dir, own):
        if path.suffix == ".csv" and path.stat().st_size <= 1:  # an empty table (a run without readings)
            continue
        frame = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
        note = [TABLE_NOTES[path.name]] if path.name in TABLE_NOTES else []
        sections.append((f"Table {path.name}", [*note, Table(frame, path.name)]))
    for stem, data in others.items():
        sections.append((f"{stem}.json", data))
    if run_dir / "scenario.toml" in own:
        sections.append(("Scenario file", Preformatted((run_dir / "scenario.toml").read_text(encoding="utf-8"))))
    title = title or f"ldpsim report: {run_dir.resolve().name}"
    return write_report_html(run_dir / "report.html", title, sections, config=config, seed=seed, max_rows=max_rows)
