"""A short trial of the shipped keyboard scenario (the README's ``--days 4``, on a smaller fleet) writes every
figure a reader looks at first — with its title, axis units and theory bands — each placed once, with every
text on its canvas."""

from __future__ import annotations

import json

import pytest

import ldpsim
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
