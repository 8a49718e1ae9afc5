"""Gboard 2024's stated central (0.315, 10⁻¹⁰), from named assumptions — docs/math.md §10.6.

Gboard's out-of-vocabulary discovery (arXiv 2404.11607) states a central (ε, δ) = (0.315, 10⁻¹⁰) for
en-US; the parameters behind it are not in the parts of the paper we could read. Here they are
**assumptions**, named and with defaults that are ours, not the paper's (:class:`GboardAssumptions`),
and the central ε they imply comes from the accountant the project already uses for Gboard's trie
(:func:`ldpsim.evaluation.privacy.secagg_rounds.central_run_epsilon`: the numerical shuffle amplification
bound per secure-aggregation round, composed over the rounds by the privacy-loss distribution), at
three scopes:

* ``epsilon_report``: one round's report of one device, after secure aggregation;
* ``epsilon_item``: one word of one device — the ``layers`` rounds of one pass, *assuming* a device
  reports about one word per pass;
* ``epsilon_person``: one person over everything the assumptions cover — ``layers`` × ``passes`` ×
  ``collections`` rounds.

:func:`reaching_grid` shows which combinations reach 0.315 at δ = 10⁻¹⁰.

>>> a = GboardAssumptions(eps0=2.0, devices_per_round=10**6, layers=8, passes=2)
>>> g = implied(a)
>>> round(g.epsilon_item, 3) <= round(g.epsilon_person, 3)
True
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, fields
from functools import lru_cache

import pandas as pd

from ldpsim.evaluation.privacy.secagg_rounds import central_run_epsilon
from ldpsim.mechanisms._validation import check_epsilon, check_int, check_real
from ldpsim.runtime.errors import InputError

#: Gboard 2024's stated central guarantee for en-US (arXiv 2404.11607, abstract): (ε, δ)
GBOARD_2024 = (0.315, 1e-10)


@dataclass(frozen=True)
class GboardAssumptions:
    """What the central ε of Gboard's discovery rests on — **assumed**, not published (module docstring).

    Parameters
    ----------
    eps0 : float in (0, 50]
        Local ε of one round's report (default 2.0, an assumption).
    devices_per_round : int ≥ 2
        Reports summed by secure aggregation in one round (default 10⁶, an assumption).
    layers : int ≥ 1
        Rounds of one pass: the trie's depth in symbols (default 10, an assumption).
    passes : int ≥ 1
        Passes of the layers in one collection (default 1, an assumption).
    collections : int ≥ 1
        Collections one person takes part in over the period the person-level guarantee covers
        (default 1: one collection).
    """

    eps0: float = 2.0
    devices_per_round: int = 10**6
    layers: int = 10
    passes: int = 1
    collections: int = 1

    def __post_init__(self):
        owner = "GboardAssumptions"
        object.__setattr__(self, "eps0", check_epsilon(owner, self.eps0, "eps0"))
        object.__setattr__(self, "devices_per_round", check_int(owner, "devices_per_round", self.devices_per_round,
                                                                low=2))
        for name in ("layers", "passes", "collections"):
            object.__setattr__(self, name, check_int(owner, name, getattr(self, name), low=1))

    @property
    def rounds_item(self) -> int:
        """Rounds that can carry one word of one device: one pass (assumed one word per pass)."""
        return self.layers

    @property
    def rounds_person(self) -> int:
        """Rounds one person answers: layers × passes × collections."""
        return self.layers * self.passes * self.collections


def parse_assumptions(pairs) -> GboardAssumptions:
    """:class:`GboardAssumptions` from ``"K=V"`` strings (the command line's ``--assume``); the others keep
    their defaults. An unknown key, a repeated key or a value that is not a number is an ``InputError``."""
    names = [f.name for f in fields(GboardAssumptions)]
    given = {}
    for pair in pairs:
        key, sep, value = str(pair).partition("=")
        if not sep or key not in names or key in given:
            why = "is given twice" if key in given else f"must be K=V with K one of {names}"
            raise InputError(f"GboardAssumptions: each assumption {why}; got {pair!r}.")
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"GboardAssumptions: {key!r} must be a number; got {value!r}.") from None
        given[key] = number if key == "eps0" or not number.is_integer() else int(number)
    return GboardAssumptions(**given)


@dataclass(frozen=True)
class GboardImplied:
    """The central ε per report, per word (item) and per person that a :class:`GboardAssumptions` implies at δ."""

    assumptions: GboardAssumptions
    delta: float
    epsilon_report: float
    epsilon_item: float
    epsilon_person: float

    def row(self) -> dict:
        """One flat row: the assumptions, the three ε and whether each reaches the stated 0.315."""
        return {**asdict(self.assumptions), "epsilon_report": self.epsilon_report, "epsilon_item": self.epsilon_item,
                "epsilon_person": self.epsilon_person, "delta": self.delta,
                "item_reaches_0.315": self.epsilon_item <= GBOARD_2024[0],
                "person_reaches_0.315": self.epsilon_person <= GBOARD_2024[0]}

    def lines(self) -> list[str]:
        a = self.assumptions
        return [f"Gboard 2024 under assumed eps0 = {a.eps0:g} per round, {a.devices_per_round:,} devices per round, "
                f"{a.layers} layers, {a.passes} pass(es), {a.collections} collection(s) (assumptions, not the "
                f"paper's published parameters):",
                f"  epsilon_report = {self.epsilon_report:.4g}  one round's report after secure aggregation",
                f"  epsilon_item   = {self.epsilon_item:.4g}  one word of one device ({a.rounds_item} rounds)",
                f"  epsilon_person = {self.epsilon_person:.4g}  one person ({a.rounds_person} rounds)",
                f"  all central, at delta = {self.delta:g}; Gboard states {GBOARD_2024[0]} at {GBOARD_2024[1]:g}"]


@lru_cache(maxsize=1024)
def _central(eps0: float, n: int, rounds: int, delta: float) -> float:
    return central_run_epsilon(eps0, n, rounds, delta)


def implied(assumptions: GboardAssumptions, delta: float = GBOARD_2024[1]) -> GboardImplied:
    """The central ε per report, item and person implied by ``assumptions`` at ``delta`` (module docstring)."""
    delta = check_real("gboard implied", "delta", delta, 0.0, 1.0)
    a = assumptions
    return GboardImplied(a, delta, *(_central(a.eps0, a.devices_per_round, r, delta)
                                     for r in (1, a.rounds_item, a.rounds_person)))


#: the grid of docs/math.md §10.6's table
GRID = {"eps0": (0.5, 1.0, 2.0, 4.0), "devices_per_round": (10**5, 10**6, 10**7), "layers": (5, 10),
        "passes": (1, 2)}


def reaching_grid(grid: dict | None = None, delta: float = GBOARD_2024[1]) -> pd.DataFrame:
    """Every combination of ``grid`` (name → values of :class:`GboardAssumptions` fields; default
    :data:`GRID`) with the ε it implies and whether item and person level reach 0.315 at ``delta``."""
    grid = dict(GRID if grid is None else grid)
    names = list(grid)
    return pd.DataFrame([implied(GboardAssumptions(**dict(zip(names, values))), delta).row()
                         for values in itertools.product(*(grid[k] for k in names))])
