"""The two guarantees of a prefix-tree run (:class:`~ldpsim.mechanisms.discovery.prefix_tree.PrefixTree`):
local ε-LDP of every report, and the central (ε, δ) of what the server sees after secure aggregation —
docs/math.md §10.7.

* **local** — one round's report is ε_r-LDP (OUE at ε_r); a device answers every round, so R rounds are
  R·ε_r-LDP, pure (δ = 0), whatever the server or the aggregation does.
* **aggregate** — the server learns only the column sums of a round's n reports, a function of the
  shuffled reports, so amplification by shuffling (Feldman, McMillan, Talwar 2021, numerical bound,
  :func:`~ldpsim.evaluation.privacy.amplification.numerical_epsilon`) makes the round (ε_c, δ/R)-DP
  central, for neighbouring fleets that differ in one device's word (replacement), *provided the
  aggregation is trusted to reveal only the sum and the round has at least n devices*; R rounds compose
  to (R·ε_c, δ) (basic composition). :func:`local_epsilon_for` inverts it: the ε per round whose run
  is (ε, δ)-DP central, the axis of TrieHH's guarantee.

>>> from ldpsim.mechanisms.discovery.prefix_tree import PrefixTree
>>> p = aggregate_privacy(PrefixTree(epsilon=0.5, length=4, alphabet="ab", rounds=2), 100_000, 1e-9)
>>> p["epsilon_local"], p["epsilon_aggregate"] < 0.1
(1.0, True)
"""

from __future__ import annotations

from ldpsim.evaluation.privacy.amplification import numerical_epsilon
from ldpsim.mechanisms._validation import EPSILON_MAX, EPSILON_MIN, check_int, check_real


def aggregate_privacy(protocol, devices: int, delta: float, rounds: int | None = None) -> dict:
    """Local and aggregate guarantees, per round and per device over ``rounds`` rounds (default: one pass).

    Parameters
    ----------
    protocol : PrefixTree
    devices : int ≥ 2
        The fewest devices answering a round (the shuffled reports the amplification counts on).
    delta : float in (0, 1)
        δ of the aggregate guarantee over the run (δ/R per round).
    rounds : int ≥ 1, optional

    Returns
    -------
    dict
        ``epsilon_round_local``, ``epsilon_local`` (δ = 0), ``epsilon_round_aggregate``,
        ``delta_round_aggregate``, ``epsilon_aggregate``, ``delta_aggregate``, ``rounds``, ``devices``.
    """
    devices = check_int("aggregate_privacy", "devices", devices, low=2)
    delta = check_real("aggregate_privacy", "delta", delta, 0.0, 1.0)
    local = protocol.privacy(rounds=rounds)
    r = local["rounds"]
    eps_c = numerical_epsilon(local["epsilon_round"], devices, delta / r)
    return {"epsilon_round_local": local["epsilon_round"], "epsilon_local": local["epsilon"],
            "epsilon_round_aggregate": eps_c, "delta_round_aggregate": delta / r,
            "epsilon_aggregate": r * eps_c, "delta_aggregate": delta, "rounds": r, "devices": devices}


def prefix_tree_row(protocol, delta: float, rounds: int, devices: int) -> dict:
    """The privacy row of the days-to-discovery comparison (:mod:`.days`): the local guarantee is the
    row's ε (pure, δ = 0, comparable with the other ε-LDP protocols); the aggregate one sits beside it."""
    p = aggregate_privacy(protocol, devices, delta, rounds)
    return {"kind": "pure ε-LDP", "guarantee": "pure ε-LDP, composed over the rounds (central after secure "
            "aggregation: epsilon_aggregate)", "epsilon": p["epsilon_local"],
            "delta": 0.0,
            "per_step": f"ε={p['epsilon_round_local']:.3g}/round, ≤{protocol.max_candidates} candidates",
            "epsilon_aggregate": p["epsilon_aggregate"], "delta_aggregate": p["delta_aggregate"]}


def local_epsilon_for(protocol, devices: int, epsilon_total: float, delta: float, rounds: int,
                      tol: float = 1e-4) -> float:
    """The largest ε per round (within ``tol``, from below) whose aggregate guarantee over ``rounds``
    rounds is at most (``epsilon_total``, ``delta``): bisection on :func:`aggregate_privacy`, which grows
    with ε. Puts the prefix tree on the central axis of TrieHH (the local ε it then spends is reported)."""
    from dataclasses import replace

    epsilon_total = check_real("local_epsilon_for", "epsilon_total", epsilon_total, 0.0, float("inf"))
    low, high = EPSILON_MIN, min(EPSILON_MAX, epsilon_total * rounds + 1.0)  # aggregate ε ≤ local R·ε

    def aggregate(eps: float) -> float:
        return aggregate_privacy(replace(protocol, epsilon=eps), devices, delta, rounds)["epsilon_aggregate"]

    if aggregate(high) <= epsilon_total:
        return high
    while high - low > tol:
        mid = (low + high) / 2
        low, high = (mid, high) if aggregate(mid) <= epsilon_total else (low, mid)
    return low
