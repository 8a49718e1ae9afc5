"""``ldpsim-gallery``: the figures ldpsim draws, drawn by its own code while the site is built.

Each example below runs a small study through the public API and returns ``(title, caption, figure)``
triples; the directive saves each figure under ``_gallery/`` in the source folder (ignored by git) and
shows it with the code that drew it. A figure on this page is therefore always what the current code
draws.
"""

import io
import tempfile
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
    from ldpsim.evaluation.report.plots import caption, plot_run
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


class Gallery(Directive):
    """Runs every example and shows its figures, each under its code."""

    def run(self):
        env = self.state.document.settings.env
        folder = Path(env.srcdir) / "_gallery"
        folder.mkdir(exist_ok=True)
        out = []
        for i, (title, code, fn) in enumerate(EXAMPLES):
            section = nodes.section(ids=[f"gallery-{i}"])
            section += nodes.title(text=title)
            block = nodes.literal_block(code, code)
            block["language"] = "python"
            section += block
            with tempfile.TemporaryDirectory(prefix="ldpsim-gallery-") as tmp:
                figures = fn(Path(tmp))
            for j, (name, caption, fig) in enumerate(figures):
                png = folder / f"{i}-{j}-{Path(name).stem}.png"
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=90)
                png.write_bytes(buf.getvalue())
                figure = nodes.figure()
                figure += nodes.image(uri=f"_gallery/{png.name}", alt=caption)
                figure += nodes.caption(text=f"{name}: {caption}")
                section += figure
            out.append(section)
        return out


def setup(app):
    app.add_directive("ldpsim-gallery", Gallery)
    return {"parallel_read_safe": True}
