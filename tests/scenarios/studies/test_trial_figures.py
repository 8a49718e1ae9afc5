"""A short trial of the shipped keyboard scenario (the README's ``--days 4``, on a smaller fleet) writes every
figure a reader looks at first when asked (``figures="all"``) — with its title, axis units and theory bands —
each placed once, with every text on its canvas; by default (``figures="auto"``) the trial draws none, says how
to draw them, and ``ldpsim plot`` then draws exactly the same files from the stored tables."""

from __future__ import annotations

import html
import json
import os
import re
import shlex

import pytest

import ldpsim
from ldpsim.runtime.phases import describe_phases
from ldpsim.runtime.runfolder import read_manifest, verify_folder
from ldpsim.scenarios.cli import main
from ldpsim.scenarios.studies.deployment.run_figures import AUTO_FIGURES_DEVICE_DAYS
from tests.figures import texts_off_canvas

#: the figures of a four-day keyboard run, in reading order (the trend starts on day 7: no trend figure)
TRIAL_FIGURES = ["emoji_top20_pooled.png", "emoji_daily_top5.png", "budget_by_day.png", "typing_speed_daily.png",
                 "session_length_daily.png", "typing_speed_distribution.png", "words_new_word.png",
                 "central_epsilon.png"]


@pytest.fixture(scope="module")
def trial(tmp_path_factory):
    return ldpsim.run("keyboard", devices=400, days=4, out=tmp_path_factory.mktemp("trial") / "run", figures="all")


@pytest.mark.slow  # a 400-device keyboard run: ~8 CPU-s
def test_the_trial_writes_all_its_figures(trial):
    plots = trial.out / "plots"
    assert [p.name for p in trial.figure_files] == TRIAL_FIGURES
    assert list(json.loads((plots / "captions.json").read_text(encoding="utf-8"))) == TRIAL_FIGURES
    for name in TRIAL_FIGURES:
        assert (plots / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    report = (trial.out / "report.md").read_text(encoding="utf-8")
    assert all(f"(plots/{name})" in report for name in TRIAL_FIGURES)


@pytest.mark.slow  # the trial above
def test_the_trials_figures_keep_their_titles_units_and_bands_on_the_canvas(trial):
    figures = trial.figures()
    assert list(figures) == TRIAL_FIGURES
    for name, fig in figures.items():
        assert fig.get_layout_engine() is None, name  # placed once: nothing measured again at the save
        assert texts_off_canvas(fig) == [], name
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert any(ax.get_title() for ax in axes) or fig._suptitle is not None, name
        assert all(ax.get_ylabel() for ax in axes), name
        assert any(ax.get_xlabel() for ax in axes), name
    bands = [c for ax in figures["emoji_daily_top5.png"].axes for c in ax.patches]
    assert len(bands) == 5  # each panel's pooled 95% interval
    assert all(ax.containers for ax in figures["emoji_top20_pooled.png"].axes)  # the bars' 95% intervals


@pytest.fixture(scope="module")
def auto(tmp_path_factory):
    """The same trial with the default ``figures="auto"``: 1 600 device-days, too few to draw the figures."""
    return ldpsim.run("keyboard", devices=400, days=4, out=tmp_path_factory.mktemp("auto") / "run")


def _captions(page: str) -> list[str]:
    return re.findall(r"<figcaption>(.*?)</figcaption>", page)


@pytest.mark.slow  # the trial above, with the default figures
def test_a_trial_draws_no_figures_and_says_how_to_draw_them(auto, monkeypatch, capsys):
    reason = f"1,600 device-days < {AUTO_FIGURES_DEVICE_DAYS:,}"
    assert auto.figure_files == [] and not (auto.out / "plots").exists()
    assert auto.figures_note == (f"figures not drawn ({reason}): `ldpsim plot {shlex.quote(str(auto.out))}` draws "
                                 "them from the stored tables")
    assert auto.figures_note in (auto.out / "report.md").read_text(encoding="utf-8")
    page = (auto.out / "report.html").read_text(encoding="utf-8")
    assert "<figure>" not in page and f"<h2>Figures</h2><p>{html.escape(auto.figures_note)}</p>" in page
    figures = next(t for t in auto.timings if t.name == "figures")
    assert figures.note == f"not drawn: {reason}"
    from ldpsim.scenarios.studies.deployment import study as library
    monkeypatch.setattr(library, "run_deployment", lambda *a, **k: auto)
    assert main(["run", "--out", str(auto.out)]) == 0
    printed = capsys.readouterr().out
    assert f"\n{auto.figures_note}\n" in printed and describe_phases(auto.timings) in printed
    assert f"(CPU {figures.cpu_s:.1f} s)  not drawn: {reason}" in printed


@pytest.mark.slow  # the two trials above
def test_plot_draws_what_a_run_with_all_figures_draws(auto, trial, capsys):
    plots, drawn = auto.out / "plots", trial.out / "plots"
    assert main(["plot", str(auto.out)]) == 0
    assert capsys.readouterr().out.splitlines() == [str(plots / n) for n in TRIAL_FIGURES] + [
        str(auto.out / "report.html")]
    assert sorted(os.listdir(plots)) == sorted(os.listdir(drawn))
    for name in os.listdir(plots):  # matplotlib's PNGs are deterministic: the same bytes
        assert (plots / name).read_bytes() == (drawn / name).read_bytes(), name
    report = (auto.out / "report.md").read_text(encoding="utf-8")
    assert all(f"(plots/{name})" in report for name in TRIAL_FIGURES) and "not drawn" not in report
    page = (auto.out / "report.html").read_text(encoding="utf-8")
    assert _captions(page) == _captions((trial.out / "report.html").read_text(encoding="utf-8"))
    assert len(_captions(page)) == len(TRIAL_FIGURES) and "not drawn" not in page
    assert verify_folder(auto.out) == []  # the figures and the rewritten pages are in the manifest
    listed = read_manifest(auto.out)["files"]
    assert {f"plots/{name}" for name in [*TRIAL_FIGURES, "captions.json"]} <= set(listed)
    # drawn figures are kept unless asked to replace them
    inodes = {name: (plots / name).stat().st_ino for name in TRIAL_FIGURES}
    assert main(["plot", str(auto.out)]) == 0
    assert "kept 8 figure(s) that existed already" in capsys.readouterr().out
    assert {name: (plots / name).stat().st_ino for name in TRIAL_FIGURES} == inodes
    assert main(["plot", str(auto.out), "--replace"]) == 0
    capsys.readouterr()
    assert all((plots / name).stat().st_ino != inodes[name] for name in TRIAL_FIGURES)
    assert all((plots / name).read_bytes() == (drawn / name).read_bytes() for name in TRIAL_FIGURES)
    assert verify_folder(auto.out) == []
