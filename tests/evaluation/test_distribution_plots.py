"""The heat-map and distribution figures: two panels on one colour scale with units, the title given."""

from __future__ import annotations

import numpy as np

from ldpsim.evaluation.report.distribution_plots import distribution_figure, heatmap_figure


def test_heatmap_figure_shares_one_scale_and_says_its_units():
    true = np.arange(16.0).reshape(4, 4)
    est = true + np.linspace(-3, 3, 16).reshape(4, 4)
    fig = heatmap_figure(true, est, "LDP quadtree, ε = 1 per device")
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 2 and images[0].get_clim() == images[1].get_clim()
    assert images[1].get_clim()[0] < 0 <= images[0].get_array().min()  # the estimate's negatives are shown
    np.testing.assert_allclose(images[0].get_array().sum(), 1.0)       # shares of the true total
    assert fig._suptitle.get_text() == "LDP quadtree, ε = 1 per device"
    assert "key half-widths" in fig.axes[0].get_xlabel()


def test_distribution_figure():
    fig = distribution_figure(np.linspace(0, 100, 5), [1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4], "SW + EMS, ε = 1", "wpm")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "wpm" and ax.get_title() == "SW + EMS, ε = 1" and len(ax.patches) == 2
