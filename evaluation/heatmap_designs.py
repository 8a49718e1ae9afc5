"""How many devices a per-key heat map needs, by design, at equal ε per person — docs/math.md §9.10.

For a map with cell shares p on side × side cells and a target τ on √E‖p̂ − p‖₂² (shares over the key's
devices), each design's expected squared error has a closed form in n, solved here for the smallest n:

* ``ldp-quadtree``: the LDP quadtree of docs/math.md §2.7 (ε-LDP per device, one report);
* ``ldp-flat``: one OUE report over all cells (ε-LDP per device; the tree of §2.6 with one level);
* ``secagg-skellam``: one-hot cell vectors summed by cohort secure aggregation with distributed Skellam
  noise calibrated to (ε, δ) central per device (docs/math.md §9.2; trusts the protocol);
* ``central-quadtree``: seed 004's quadtree with Cormode et al.'s geometric budget split on a trusted
  server (ε-DP central; a cell is read from its noisy leaf, Lap(1/ε₀));
* ``central-flat``: the whole ε on the leaves of a trusted server's histogram (Lap(1/ε) per cell).

The central and distributed designs protect a device's presence (add/remove neighbours); the local ones
any change of its tap (every pair of inputs).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ldpsim.evaluation.privacy.trust_accounting import calibrate
from ldpsim.evaluation.privacy.trust_exact import SecAgg
from ldpsim.mechanisms._validation import check_real
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.central.quadtree import geometric_allocation
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.mechanisms.numeric.quadtree_heatmap import QuadtreeHeatmap
from ldpsim.mechanisms.numeric.tree_histogram import TreeHistogram


class HeatmapDesign(NamedTuple):
    """One design's answer: devices per key for the target, and what its ε means."""

    design: str
    devices: int
    guarantee: str
    trusts: str


def _ldp_flat_variance(epsilon: float, shares: np.ndarray) -> float:
    """v̄ of one OUE report over the D cells (docs/math.md §2.7 with the one-level tree of §2.6)."""
    flat = TreeHistogram(epsilon, shares.size, 1, "oue")
    return float(shares.ravel() @ flat.device_variance(flat.consistency_matrix.T).sum(axis=1))


def _secagg_devices(epsilon: float, delta: float, cells: int, target: float, min_cohort: int) -> tuple[int, float]:
    """Smallest n (a whole number of cohorts' worth, ≥ min_cohort) with cells·Var(noise of n)/n² ≤ τ²."""
    model = calibrate(SecAgg(noise=IntegerNoise("skellam", 10.0), min_cohort=min_cohort),
                      epsilon, n=min_cohort, days=1, delta=delta, neighbour="add-remove")
    protocol = model.secure_sum()

    def err(n):
        return cells * protocol.noise_variance(n) / n ** 2

    lo, hi = min_cohort, min_cohort
    while err(hi) > target ** 2:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if err(mid) > target ** 2 else (lo, mid)
    return hi, model.noise.variance()


def heatmap_designs(shares, epsilon: float = 1.0, target_l2: float = 0.05, delta: float = DELTA_RELEASE,
                    min_cohort: int = 1000) -> list[HeatmapDesign]:
    """Devices per key each design needs for √E‖p̂ − p‖₂² ≤ ``target_l2`` at ε per person (docs/math.md §9.10).

    Parameters
    ----------
    shares : array_like, shape (side, side)
        The key's true cell shares (non-negative, summing to one), side a power of two.
    epsilon : float, default 1
        ε per person over the run: the one report's ε (local designs), the release's ε (central ones).
    target_l2 : float, default 0.05
        τ, the root of the expected summed squared error of the cell shares.
    delta : float, default 1e-9
        δ of the distributed design's (ε, δ).
    min_cohort : int, default 1000
        Secure-aggregation cohort size.

    Returns
    -------
    list of HeatmapDesign
        Sorted by devices, fewest first.
    """
    p = np.asarray(shares, np.float64)
    side = p.shape[0]
    tree = QuadtreeHeatmap(epsilon, side)
    tau = check_real("heatmap_designs", "target_l2", target_l2, 0.0, math.inf)
    n_tree = tree.devices_needed(p, tau)
    n_flat = int(math.ceil(_ldp_flat_variance(epsilon, p) / tau ** 2))
    n_secagg, _ = _secagg_devices(epsilon, delta, p.size, tau, min_cohort)
    h = int(math.log2(side))
    leaf_eps = float(geometric_allocation(epsilon, h, 2 ** (1 / 3))[0])
    n_central_tree = int(math.ceil(math.sqrt(p.size * 2 / leaf_eps ** 2) / tau))
    n_central_flat = int(math.ceil(math.sqrt(p.size * 2 / epsilon ** 2) / tau))
    local = f"ε = {epsilon:g}-LDP per device (one report)"
    rows = [HeatmapDesign("ldp-quadtree", n_tree, local, "nobody"),
            HeatmapDesign("ldp-flat", n_flat, local, "nobody"),
            HeatmapDesign("secagg-skellam", n_secagg, f"(ε = {epsilon:g}, δ = {delta:g}) central per device",
                          "the secure-aggregation protocol"),
            HeatmapDesign("central-quadtree", n_central_tree, f"ε = {epsilon:g}-DP central per device "
                          f"(geometric split, leaves ε₀ = {leaf_eps:.3g})", "the server"),
            HeatmapDesign("central-flat", n_central_flat, f"ε = {epsilon:g}-DP central per device", "the server")]
    return sorted(rows, key=lambda r: r.devices)
