"""``ldpsim-gallery``: the figures ldpsim draws, drawn by its own code while the site is built.

Each example below runs a small study through the public API and returns ``(title, caption, figure)``
triples; the directive saves each figure under ``_gallery/`` in the source folder (ignored by git) and
shows it with the code that drew it. A figure on this page is therefore always what the current code
draws. With an argument (an example's title) the directive shows that example alone, so another page can
show a figure the same build draws; each example runs once per build.

Drawn figures are kept in ``_gallery_cache/`` (ignored by git), keyed by a SHA-256 of the installed
package's source and data files, the example's own code and the versions of Python, NumPy, SciPy and
matplotlib: a rebuild with the same code copies them instead of running the studies again, and any change
to the code draws them anew. ``LDPSIM_GALLERY_CACHE=0`` turns the cache off.
"""

import hashlib
import inspect
import io
import json
import os
import platform
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

#: (section title, the code shown, the function that runs it)
EXAMPLES = []


def example(title: str, code: str):
    def register(fn):
        EXAMPLES.append((title, code, fn))
        return fn
    return register


@example("A deployment's report figures", 'study = ldpsim.run("keyboard", devices=4000, days=8, out=folder)\n'
                                          "figures = study.figures()")
def _deployment(tmp: Path):
    import ldpsim
    from ldpsim.evaluation.report.deployment_plots import draw_figures
    study = ldpsim.run("keyboard", devices=4000, days=8, seed=1, out=tmp / "run")
    return [(name, caption, fig) for name, fig, caption in draw_figures(study.tables, study.config)]


@example("A sweep's figures", 'result = ldpsim.sweep("smoke", out=folder)\n'
                              "plot_run(result.out)   # what `ldpsim plot` draws")
def _sweep(tmp: Path):
    import matplotlib.image as mpimg
    from matplotlib.figure import Figure

    import ldpsim
    from ldpsim.evaluation.report.plots import caption
    from ldpsim.scenarios.studies.sweep.sweep_report import plot_run
    result = ldpsim.sweep("smoke", out=tmp / "sweep", workers=1)
    out = []
    for path in plot_run(result.out):
        if path.suffix == ".png":
            fig = Figure(figsize=(6, 4))
            ax = fig.add_axes((0, 0, 1, 1))
            ax.imshow(mpimg.imread(path))
            ax.axis("off")
            out.append((path.name, caption(path.stem), fig))
    return out


@example("Designs side by side at one budget",
         'comparison = ldpsim.compare("keyboard", devices=2000, days=7, epsilon_device=8)\n'
         "comparison.figure()")
def _compare(tmp: Path):
    import ldpsim
    comparison = ldpsim.compare("keyboard", devices=2000, days=7, epsilon_device=8)
    return [("compare.png", "Each design's error at the same ε per device over the run, with its ε of one "
             "report and its theory's 95% interval.", comparison.figure())]


@example("Days until a new word is found",
         "result = ldpsim.discover(scenario)   # a small [discovery_days] scenario\nresult.figure()")
def _discover(tmp: Path):
    import ldpsim
    scenario = tmp / "days.toml"
    scenario.write_text("[discovery_days]\nn_devices = 200000\nn_days = 8\nstart_day = 1\nseeds = [0, 1]\n",
                        encoding="utf-8")
    result = ldpsim.discover(scenario)
    return [("discovery_days.png", "Share of runs whose discovered list holds the new word, and the list's F1, "
             "day by day; every protocol at the same ε per device over the run.", result.figure())]


@example("Trust models at equal ε per device",
         'result = compare_trust_models("keyboard", epsilons=(0.5, 1, 2, 4, 8), repeats=5, discovery=False, rng=2026)\n'
         "result.figure()")
def _trust(tmp: Path):
    from ldpsim.scenarios.studies.trust.trust_compare import compare_trust_models
    result = compare_trust_models("keyboard", epsilons=(0.5, 1, 2, 4, 8), repeats=5, discovery=False, rng=2026)
    return [("trust_models.png", "Each trust model's error on the keyboard fleet's emoji against ε per device over "
             "30 days at δ ≤ 1e-9 against the released output: exact theory (line), measured (dots) and the "
             "theory's 95% interval (band, where the errors are near normal).", result.figure())]


@example("A key's tap heat map and a reading's distribution",
         "hm = QuadtreeHeatmap(1.0, 16); n = hm.devices_needed(shares, 0.05)\n"
         "heatmap_figure(grid, hm.estimate(hm.sample_aggregate(grid, rng=1)), title)\n"
         "em = EM(SW(1.0), bins=64, smoothing=True); distribution_figure(wpm_edges, true, em.estimate(agg), title, unit)")
def _heatmap(tmp: Path):
    import numpy as np

    from ldpsim.evaluation.report.distribution_plots import distribution_figure, heatmap_figure
    from ldpsim.evaluation.workloads.key_taps import key_taps
    from ldpsim.evaluation.workloads.readings import typing_speed
    from ldpsim.evaluation.workloads.types import largest_remainder
    from ldpsim.mechanisms import EM, SW, QuadtreeHeatmap
    hm = QuadtreeHeatmap(1.0, 16)
    shape = key_taps(200_000, rng=7, keys=1).grid_counts(16)[0]
    n = hm.devices_needed(shape / shape.sum(), 0.05)
    grid = largest_remainder((shape / shape.sum()).ravel(), n).reshape(16, 16)
    heat = heatmap_figure(grid, hm.estimate(hm.sample_aggregate(grid, rng=1)),
                          f"LDP quadtree, ε = 1 per device (one report of one tap): {n:,} devices on this key")
    speed = typing_speed(100_000, rng=3)
    em = EM(SW(1.0), bins=64, smoothing=True)
    edges = np.linspace(-1, 1, 65)
    dist = distribution_figure((edges + 1) * 50, np.histogram(speed.values, edges)[0],
                               em.estimate(em.aggregate(em.mechanism.perturb(speed.values, rng=4))),
                               "Typing speed by SW + EMS, ε = 1 per device (one report): 100,000 devices",
                               "words per minute")
    return [("key_heatmap.png", "One key's taps on 16 × 16 cells: the synthetic tap model (left) and the LDP "
             "quadtree's consistent estimate (right) with the devices the closed form asks for √E‖p̂ − p‖² ≤ 0.05.",
             heat),
            ("typing_speed.png", "Typing speed of 100,000 devices and its SW + EMS estimate over 64 bins.", dist)]


@example("A deployment's key-tap heat map beside the truth",
         'study = ldpsim.run("keyboard-taps", out=folder)   # 30,000 devices × 7 days\n'
         "numeric_figures(study.tables)   # each numeric use case's estimate beside its truth")
def _numeric_run(tmp: Path):
    import ldpsim
    from ldpsim.evaluation.report.numeric_use_plots import numeric_figures
    study = ldpsim.run("keyboard-taps", out=tmp / "run")
    person = study.summary["person"]
    return [(name, f"{caption} The run's accountant charges the taps ε = {person['taps']['epsilon_person']:g} per "
             f"person over the {study.config.n_days} nights, and the person {person['total ε-LDP']['epsilon_person']:g} over all the "
             "run's ε-LDP use cases.", fig)
            for name, fig, caption in numeric_figures(study.tables) if name == "numeric_taps_space.png"]


@example("The numeric designs against ε per person",
         "table = design_sweep(epsilons=(0.5, 1, 2, 4), devices=100_000, repeats=10, rng=2026)\n"
         "design_sweep_figure(table)")
def _design_sweep(tmp: Path):
    from ldpsim.evaluation.numeric_designs import design_sweep
    from ldpsim.evaluation.report.design_sweep_plots import design_sweep_figure
    table = design_sweep(epsilons=(0.5, 1, 2, 4), devices=100_000, repeats=10, rng=2026)
    table.to_csv(tmp / "design_sweep.csv", index=False)
    return [("design_sweep.png", "Range-query MSE across range sizes, Wasserstein-1 and quantile error of typing "
             "speed, and per-key tap-map error, for every numeric design against ε per person (100,000 devices, "
             "10 runs per point; the heat maps use the ~3,300 devices that tapped each key).",
             design_sweep_figure(table))]


#: example index → the PNG files (name, caption) it drew in this build (each example runs once)
_DRAWN: dict = {}


#: the files of the package whose content decides what the examples draw
_SOURCE_SUFFIXES = (".py", ".toml", ".csv", ".txt", ".json")


@lru_cache(maxsize=1)
def _code_hash() -> str:
    """SHA-256 of the installed package's own files (never a folder of environments, builds or runs), of
    this extension, and of the versions of the libraries that draw."""
    import matplotlib
    import numpy
    import scipy

    import ldpsim
    root = Path(ldpsim.__file__).resolve().parent
    digest = hashlib.sha256()
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith((".", "_")) and d not in (
            "tests", "docs", "build", "dist", "runs", "venv") and not d.endswith(".egg-info"))
        for name in sorted(files):
            if name.endswith(_SOURCE_SUFFIXES):
                path = Path(folder) / name
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(Path(__file__).read_bytes())
    digest.update(" ".join((platform.python_version(), numpy.__version__, scipy.__version__,
                            matplotlib.__version__)).encode())
    return digest.hexdigest()


def _cache_folder(srcdir: Path, i: int, fn) -> Path | None:
    """The cache folder of example ``i`` at the current code, or None with ``LDPSIM_GALLERY_CACHE=0``."""
    if os.environ.get("LDPSIM_GALLERY_CACHE", "1") == "0":
        return None
    key = hashlib.sha256((_code_hash() + inspect.getsource(fn)).encode()).hexdigest()[:20]
    return srcdir / "_gallery_cache" / f"{i}-{key}"


def _draw(i: int, fn, folder: Path, srcdir: Path) -> list:
    if i in _DRAWN:
        return _DRAWN[i]
    cache = _cache_folder(srcdir, i, fn)
    index = None if cache is None else cache / "figures.json"
    if index is not None and index.is_file():
        drawn = [(name, caption, folder / png) for name, caption, png in json.loads(index.read_text("utf-8"))]
        for _, _, png in drawn:
            shutil.copyfile(cache / png.name, png)
        _DRAWN[i] = drawn
        return drawn
    with tempfile.TemporaryDirectory(prefix="ldpsim-gallery-") as tmp:
        figures = fn(Path(tmp))
    drawn = []
    for j, (name, caption, fig) in enumerate(figures):
        png = folder / f"{i}-{j}-{Path(name).stem}.png"
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=90)
        png.write_bytes(buf.getvalue())
        drawn.append((name, caption, png))
    if cache is not None:
        for stale in sorted(cache.parent.glob(f"{i}-*")):
            shutil.rmtree(stale, ignore_errors=True)  # one entry per example: the code's latest
        cache.mkdir(parents=True, exist_ok=True)
        for _, _, png in drawn:
            shutil.copyfile(png, cache / png.name)
        index.write_text(json.dumps([(name, caption, png.name) for name, caption, png in drawn]), "utf-8")
    _DRAWN[i] = drawn
    return drawn


class Gallery(Directive):
    """Runs every example (or the one its argument names) and shows its figures, each under its code."""

    optional_arguments = 1
    final_argument_whitespace = True

    def run(self):
        env = self.state.document.settings.env
        folder = Path(env.srcdir) / "_gallery"
        folder.mkdir(exist_ok=True)
        wanted = self.arguments[0].strip() if self.arguments else None
        if wanted is not None and wanted not in [title for title, _, _ in EXAMPLES]:
            raise self.error(f"ldpsim-gallery: no example titled {wanted!r}")
        out = []
        for i, (title, code, fn) in enumerate(EXAMPLES):
            if wanted is not None and title != wanted:
                continue
            section = nodes.section(ids=[f"gallery-{i}"]) if wanted is None else nodes.container()
            if wanted is None:
                section += nodes.title(text=title)
            block = nodes.literal_block(code, code)
            block["language"] = "python"
            section += block
            for name, caption, png in _draw(i, fn, folder, Path(env.srcdir)):
                figure = nodes.figure()
                figure += nodes.image(uri=f"/_gallery/{png.name}", alt=caption)
                figure += nodes.caption(text=f"{name}: {caption}")
                section += figure
            out.append(section)
        return out


def setup(app):
    app.add_directive("ldpsim-gallery", Gallery)
    return {"parallel_read_safe": True}
