"""An interactive discovery protocol set for a run of days: ε per device over the run, split over its
rounds — docs/math.md §10.8.

A run of D days with ``rounds_per_day`` rounds a day has R = D·rounds_per_day rounds, and a device
that answers on a day answers every round of that day. ``epsilon`` is ε per device over the run;
each round runs at ε/R, so one day of answers costs ε/D and the R rounds compose (basic composition)
to ε. What the protocol's class says about its rounds decides the kind:

* a protocol whose rounds are locally randomized (a per-round ``epsilon`` parameter: LDPTrie) runs at
  ε/R per round — **pure ε-LDP** per device over the run, δ = 0 (``delta`` and ``theta`` do not apply);
* a sample-and-threshold protocol (``threshold_for``: TrieHH, TrieHH++) counts its rounds at ε/R with
  the exact per-round δ of its threshold (docs/math.md §10.2): θ is the smallest threshold whose R
  rounds compose to δ ≤ ``delta``, or the given ``theta`` and its δ — **central (ε, δ)** after the
  threshold, per device over the run, which holds only if the server samples and thresholds honestly
  behind secure aggregation.

A protocol class added to :data:`~ldpsim.mechanisms.registry.INTERACTIVE` works here when it has
TrieHH's rounds (``rounds``, ``codec``, ``root``, ``sample_votes``, ``advance``, ``estimates``) and
either a per-round ``epsilon`` with ``privacy(rounds=R)``, or ``threshold_for`` with
``privacy(epsilon, R)`` (both returning ``epsilon``, ``delta``, ``epsilon_round``, ``delta_round``); a
class attribute ``privacy_kind`` (``"ldp"`` or ``"central"``) overrides the kind read from its shape.

>>> plan = run_rounds("ldp_trie", epsilon=8.0, n_days=2, rounds_per_day=4, length=4, alphabet="ab")
>>> plan.rounds, plan.epsilon_round, plan.epsilon_day, plan.guarantee.label
(8, 1.0, 4.0, 'ε-LDP')
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.base import Guarantee
from ldpsim.mechanisms.deltas import DELTA_RELEASE

#: what ε means for each kind, as reports and tables state it
MEANING = {"ldp": "pure ε-LDP per device over the run (the rounds composed)",
           "central": "central (ε, δ)-DP per device over the run, about what the server publishes (trusts the "
                      "server to run the rounds honestly behind secure aggregation: sampling, thresholds)"}


@dataclass(frozen=True)
class RunRounds:
    """An interactive protocol at ε per device over a run (module docstring); built by :func:`run_rounds`.

    Attributes
    ----------
    name : str
        The protocol's registry name (:data:`~ldpsim.mechanisms.registry.INTERACTIVE`).
    protocol
        The protocol object (its rounds: ``root``, ``sample_votes``, ``advance``, ``estimates``).
    n_days, rounds_per_day : int
        Days of the run and rounds a day (R = their product).
    epsilon, delta : float
        Per device over the run (δ = 0 for pure ε-LDP).
    epsilon_round, delta_round : float
        One round's guarantee.
    kind : {"ldp", "central"}
        The guarantee's kind (:data:`~ldpsim.mechanisms.base.GUARANTEE_KINDS`).
    """

    name: str
    protocol: object
    n_days: int
    rounds_per_day: int
    epsilon: float
    delta: float
    epsilon_round: float
    delta_round: float
    kind: str

    @property
    def rounds(self) -> int:
        """R: rounds in the run."""
        return self.n_days * self.rounds_per_day

    @property
    def codec(self):
        """The protocol's word codec (alphabet and length)."""
        return self.protocol.codec

    @property
    def epsilon_day(self) -> float:
        """ε of one day's answers (``rounds_per_day`` rounds): what the ledger charges a device that answers."""
        return self.rounds_per_day * self.epsilon_round

    @property
    def guarantee(self) -> Guarantee:
        """One day's answers as one donation: ε and δ of ``rounds_per_day`` rounds, of the run's kind."""
        return Guarantee(self.kind, self.epsilon_day, delta=min(1.0, self.rounds_per_day * self.delta_round))

    @property
    def meaning(self) -> str:
        """What ``epsilon`` promises, in words (:data:`MEANING`)."""
        return MEANING[self.kind]

    @property
    def steps(self) -> list[tuple[float, float]]:
        """The R rounds' (ε, δ), for an accountant composing them."""
        return [(self.epsilon_round, self.delta_round)] * self.rounds

    @property
    def per_round(self) -> str:
        """One round's setting: its ε (and θ, γ of a threshold protocol)."""
        per = f"ε={self.epsilon_round:.3g}/round"
        return per + (f", θ={self.protocol.theta}, γ={self.protocol.gamma:g}" if self.kind == "central" else "")

    def describe(self) -> str:
        """One line: the protocol, its per-round setting and the run's guarantee."""
        return (f"{self.name}: {self.per_round}, {self.rounds_per_day} rounds/day × {self.n_days} days → ε = {self.epsilon:g}"
                f"{f', δ = {self.delta:.2g}' if self.kind == 'central' else ''} ({MEANING[self.kind]})")


def _fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.init}


def is_local(name: str) -> bool:
    """Whether the interactive protocol ``name``'s rounds are locally randomized (a per-round ``epsilon``
    parameter: pure ε-LDP) rather than sampled and thresholded (central (ε, δ))."""
    from ldpsim.mechanisms.registry import INTERACTIVE

    return "epsilon" in _fields(INTERACTIVE[name])


def run_keys(name: str) -> set[str]:
    """The keyword arguments :func:`run_rounds` takes for protocol ``name`` (besides ``n_days``): ``epsilon``,
    ``rounds_per_day``, ``delta`` and ``theta`` for a threshold protocol, and the protocol's own."""
    from ldpsim.mechanisms.registry import INTERACTIVE

    own = _fields(INTERACTIVE[name]) - {"epsilon", "theta"}
    return own | {"epsilon", "rounds_per_day"} | (set() if is_local(name) else {"delta", "theta"})


def run_rounds(name: str, epsilon: float, n_days: int, rounds_per_day: int | None = None,
               delta: float | None = None, theta: int | None = None, **params) -> RunRounds:
    """The interactive protocol ``name`` at ε per device over a run of ``n_days`` days (module docstring).

    Parameters
    ----------
    name : str
        A key of :data:`~ldpsim.mechanisms.registry.INTERACTIVE`.
    epsilon : float in (0, inf)
        ε per device over the run.
    n_days : int ≥ 1
    rounds_per_day : int ≥ 1, optional
        Default: the protocol's rounds of one pass (L, one pass a day).
    delta : float in (0, 1), optional
        Threshold protocols: the largest δ per device over the run (default :data:`~ldpsim.mechanisms.deltas.DELTA_RELEASE`);
        θ is then the smallest threshold that meets it.
    theta : int ≥ 1, optional
        Threshold protocols: the threshold instead of ``delta`` (δ follows from it).
    **params
        The protocol's own parameters (``gamma``, ``length``, ``alphabet``, ``survivors``, …).

    Raises
    ------
    ValueError
        Naming the parameter, what is allowed and the value.
    """
    from ldpsim.mechanisms.registry import INTERACTIVE

    owner = "run_rounds"
    if name not in INTERACTIVE:
        raise ValueError(f"The 'mechanism' parameter of {owner} must be one of {sorted(INTERACTIVE)}. "
                         f"Got {name!r} instead.")
    cls = INTERACTIVE[name]
    epsilon = check_real(owner, "epsilon", epsilon, 0.0, math.inf)
    n_days = check_int(owner, "n_days", n_days, low=1)
    allowed = run_keys(name)
    for key in params:
        if key not in allowed:
            raise ValueError(f"{name} takes no parameter {key!r}; allowed: {', '.join(sorted(allowed))}.")
    required = {f.name for f in dataclasses.fields(cls) if f.init and f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING} - {"epsilon", "theta"}
    missing = sorted(required - set(params))
    if missing:
        raise ValueError(f"{name} needs the parameter {missing[0]!r} (allowed: {', '.join(sorted(allowed))}); "
                         f"it was not given.")
    local = is_local(name)
    if local:
        for key, value in (("delta", delta), ("theta", theta)):
            if value is not None:
                raise ValueError(f"The {key!r} parameter of {name} does not apply: its rounds are pure ε-LDP "
                                 f"(δ = 0, no vote threshold). Got {value!r} instead.")
        probe = cls(epsilon=1.0, **params)
    else:
        if delta is not None and theta is not None:
            raise ValueError(f"{name}: give 'delta' (θ follows) or 'theta' (δ follows), not both. "
                             f"Got delta = {delta!r}, theta = {theta!r}.")
        probe = cls(theta=1 if theta is None else theta, **params)
    per_day = probe.rounds if rounds_per_day is None else check_int(owner, "rounds_per_day", rounds_per_day, low=1)
    rounds = n_days * per_day
    if local:
        protocol = cls(epsilon=epsilon / rounds, **params)
        p = protocol.privacy(rounds=rounds)
        kind = getattr(cls, "privacy_kind", "ldp")
    else:
        if theta is None:
            delta = check_real(owner, "delta", DELTA_RELEASE if delta is None else delta, 0.0, 1.0)
            theta = probe.threshold_for(epsilon, delta, rounds)
        protocol = cls(theta=theta, **params)
        p = protocol.privacy(epsilon, rounds)
        kind = getattr(cls, "privacy_kind", "central")
    return RunRounds(name, protocol, n_days, per_day, float(p["epsilon"]), float(p["delta"]),
                     float(p["epsilon_round"]), float(p["delta_round"]), kind)
