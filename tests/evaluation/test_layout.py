"""Figures placed once in inches (``ldpsim.evaluation.layout``): the margins asked for are the margins drawn,
rotated labels get the depth their font gives them, and every text of a placed figure is on its canvas."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from ldpsim.evaluation.layout import PAD, label_depth, place, save_png, title_height
from tests.figures import texts_off_canvas


def test_margins_in_inches_are_the_axes_edges():
    fig = Figure(figsize=(8, 5))
    fig.subplots(2, 1)
    place(fig, left=1.0, right=0.5, bottom=0.75, top=0.25, gap=0.5)
    top, bottom = (ax.get_position() for ax in fig.axes)
    assert top.x0 * 8 == pytest.approx(1.0 + PAD) and (1 - top.x1) * 8 == pytest.approx(0.5 + PAD)
    assert bottom.y0 * 5 == pytest.approx(0.75 + PAD) and (1 - top.y1) * 5 == pytest.approx(0.25 + PAD)
    assert (top.y0 - bottom.y1) * 5 == pytest.approx(0.5)  # the gap between the rows
    assert fig.get_layout_engine() is None  # nothing is measured again when it is saved


def test_rotated_labels_take_the_depth_of_the_longest():
    short, long = label_depth(["a"], 7, 55), label_depth(["a", "smiling face with open mouth and cold sweat"], 7, 55)
    assert 0 < short < 0.2 < long < 2.5
    assert label_depth(["abc"], 14, 90) == pytest.approx(2 * label_depth(["abc"], 7, 90))  # scales with the size
    assert label_depth([], 7, 55) == pytest.approx(label_depth([""], 7, 55))
    assert title_height("one\ntwo", 9) > title_height("one", 9) > title_height("", 9) == 0


def test_a_placed_figure_keeps_its_texts_on_the_canvas(tmp_path):
    labels = ["smiling face with open mouth and cold sweat", "red heart", "U+6211 U+4EEC"] * 4
    fig = Figure(figsize=(10, 4.8))
    ax = fig.subplots()
    ax.bar(np.arange(12), np.linspace(0.2, 0.01, 12))
    ax.set_xticks(np.arange(12), labels, rotation=55, ha="right", fontsize=7)
    ax.set(ylabel="share of donated emoji", xlabel="emoji", title="a title\nof two lines")
    place(fig, top=title_height(ax.get_title()), bottom=label_depth(labels, 7, 55) + 0.4)
    assert texts_off_canvas(fig) == []
    save_png(fig, tmp_path / "f.png", 110)
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    place(fig, top=title_height(ax.get_title()), bottom=0.4)  # no room for the rotated names: they are cut
    assert any("a title" in t for t in texts_off_canvas(fig))  # the axes and their labels reach below the canvas
