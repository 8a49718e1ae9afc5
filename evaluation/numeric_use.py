"""A numeric use case: one named design run on readings or key taps, and its errors — docs/math.md §9.14.

A design is named as the numeric design table names it (:func:`~ldpsim.evaluation.numeric_designs.reading_estimators`
for one reading on 64 bins, :func:`~ldpsim.evaluation.numeric_designs.map_estimators` for a key's 16 × 16 tap
map), or, for a reading, as the mechanism registry names a numeric mechanism (``pm``, ``sdpm``, ``sw``, …,
read by EM over the same 64 bins). Its parameters are ``epsilon`` (ε of one report, or of one release for
the central and distributed designs), ``delta`` for the designs that trust the secure-aggregation protocol,
and a registered mechanism's own parameters (checked by :func:`ldpsim.mechanisms.registry.make`). One
function, :func:`numeric_design`, validates them for the deployments and the sweeps.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from ldpsim.evaluation.numeric_designs import BINS, SIDE, SWEEP_KEYS, bin_counts, map_estimators, reading_estimators
from ldpsim.evaluation.workloads.key_taps import KEY_NAMES, KeyTaps, key_taps
from ldpsim.evaluation.workloads.make import make_workload
from ldpsim.evaluation.workloads.readings import key_latency, typing_speed
from ldpsim.mechanisms._validation import check_epsilon, check_real
from ldpsim.mechanisms.base import Guarantee
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.mechanisms.numeric.em import EM
from ldpsim.mechanisms.numeric.interface import NumericMechanism
from ldpsim.mechanisms.registry import MECHANISMS, did_you_mean, make, mechanism_class
from ldpsim.runtime.errors import InputError

#: what a numeric design estimates: one reading's distribution, or per-key maps of taps
FAMILIES = ("reading", "heatmap")
#: the readings a 1-D use case may name → their workload builder (values on [−1, 1], unit and public range
#: in the workload's params)
READINGS = {"typing_speed": typing_speed, "key_latency": key_latency}
#: the sweeps' numeric workloads → the family of designs they take (key-taps: :func:`key_taps`, the maps of its
#: ``keys``; the readings: :func:`~ldpsim.evaluation.workloads.make.make_workload`)
NUMERIC_WORKLOADS = {"key-taps": "heatmap", "typing-speed": "reading", "key-latency": "reading"}
#: the keys a key-taps workload maps when it names none
DEFAULT_KEYS = SWEEP_KEYS
#: who a design trusts when its δ is a parameter (a row of the design table)
SECURE_AGGREGATION = "the secure-aggregation protocol"


@functools.lru_cache(maxsize=None)
def _table(family: str) -> dict:
    """The design table's rows at ε = 1 (names, and whom each design trusts, do not depend on ε)."""
    return reading_estimators(1.0, DELTA_RELEASE) if family == "reading" else map_estimators(1.0, DELTA_RELEASE, 1000)


def registered_numeric() -> tuple[str, ...]:
    """The registry's numeric mechanisms on [−1, 1] (a 1-D use case reads them by EM)."""
    return tuple(sorted(n for n, cls in MECHANISMS.items() if issubclass(cls, NumericMechanism)))


def design_names(family: str) -> tuple[str, ...]:
    """Every design a ``family`` use case may name: the design table's, then (readings) the registry's."""
    _family(family)
    return tuple(_table(family)) + (registered_numeric() if family == "reading" else ())


def design_keys(name: str, family: str) -> tuple[str, ...]:
    """The parameters design ``name`` of ``family`` takes: ``epsilon``, ``delta`` for a design trusting
    secure aggregation, a registered mechanism's own parameters."""
    if name in _table(family):
        return ("epsilon", "delta") if _table(family)[name][2] == SECURE_AGGREGATION else ("epsilon",)
    return tuple(f.name for f in dataclasses.fields(mechanism_class(name)) if f.init)


def _family(family: str) -> str:
    if family not in FAMILIES:
        raise InputError(f"The 'family' of a numeric design must be one of {', '.join(FAMILIES)}. Got {family!r} instead.")
    return family


@dataclass(frozen=True)
class NumericDesign:
    """A validated design (build with :func:`numeric_design`): its name, family, ε, δ and, for a registered
    mechanism, its other parameters as sorted (key, value) pairs."""

    name: str
    family: str
    epsilon: float
    delta: float = 0.0
    params: tuple = ()

    @property
    def registered(self) -> bool:
        """Whether the design is a mechanism of the registry (read by EM)."""
        return self.name not in _table(self.family)

    def estimator(self, n_key: int = 1000):
        """``(estimate, guarantee, trusts, needs)``: ``estimate(data, counts, rng)`` → estimated counts (64 bins of
        a reading from its values on [−1, 1]; a 16 × 16 map from a key's points), the guarantee in words, whom
        the design trusts and the devices a release needs (the design table's row; ``n_key``: the key's
        devices, HDG's granularity)."""
        if not self.registered:
            table = reading_estimators if self.family == "reading" else functools.partial(map_estimators,
                                                                                         n_key=max(int(n_key), 1))
            return table(self.epsilon, self.delta or DELTA_RELEASE)[self.name]
        mech = make(self.name, epsilon=self.epsilon, **dict(self.params))
        em = EM(mech, bins=BINS)
        return (lambda v, c, r: v.size * em.estimate(em.aggregate(mech.perturb(v, r))),
                f"{mech.guarantee.label.replace('ε', f'ε = {self.epsilon:g}')} per device (one report; EM over {BINS} bins)",
                "nobody", 0)

    @functools.cached_property
    def guarantee(self) -> Guarantee:
        """What one report (local) or one release (central, distributed) promises (docs/math.md §8.1)."""
        if self.registered:
            return make(self.name, epsilon=self.epsilon, **dict(self.params)).guarantee
        trusts = _table(self.family)[self.name][2]
        return Guarantee("ldp" if trusts == "nobody" else "central", self.epsilon,
                         delta=self.delta if trusts == SECURE_AGGREGATION else 0.0)

    @property
    def trusts(self) -> str:
        """Whom the design trusts (nobody, the secure-aggregation protocol, the server)."""
        return self.estimator()[2]


def numeric_design(name: str, family: str, **params) -> NumericDesign:
    """Validate a numeric design and its parameters by name (docs/math.md §9.14).

    Parameters
    ----------
    name : str
        A name of :func:`design_names` (``family``).
    family : {"reading", "heatmap"}
    **params
        ``epsilon`` (required; ε of one report or release), ``delta`` (designs trusting secure aggregation;
        default 1e-9) and a registered mechanism's own parameters.

    Returns
    -------
    NumericDesign

    Raises
    ------
    InputError
        An unknown name (listing the family's designs), a key the design does not take (listing those it
        takes), a missing ε or a bad value.

    Examples
    --------
    >>> numeric_design("ldp-hdg", "heatmap", epsilon=1.0).guarantee.label
    'ε-LDP'
    >>> numeric_design("ldp-hdg", "heatmap", epsilon=1.0, delta=1e-9)
    Traceback (most recent call last):
    ...
    ldpsim.runtime.errors.InputError: The numeric design 'ldp-hdg' takes no parameter 'delta'; its parameters are epsilon.
    """
    names = design_names(family)
    if name not in names:
        raise InputError(f"Unknown {family} design {name!r}{did_you_mean(str(name), names)}; "
                         f"choose one of {', '.join(names)}.")
    keys = design_keys(name, family)
    for key in params:
        if key not in keys:
            raise InputError(f"The numeric design {name!r} takes no parameter {key!r}{did_you_mean(key, keys)}; "
                             f"its parameters are {', '.join(keys)}.")
    if "epsilon" not in params:
        raise InputError(f"The numeric design {name!r} needs 'epsilon' (ε of one report or release).")
    epsilon = check_epsilon(f"numeric design {name!r}", params.pop("epsilon"))
    if name in _table(family):
        delta = check_real(f"numeric design {name!r}", "delta", params.pop("delta", DELTA_RELEASE), 0.0, 1.0) \
            if "delta" in keys else 0.0
        return NumericDesign(name, family, epsilon, delta)
    try:
        EM(make(name, epsilon=epsilon, **params), bins=BINS)
    except (TypeError, ValueError) as exc:
        raise InputError(f"The numeric design {name!r}: {exc}") from None
    return NumericDesign(name, family, epsilon, 0.0, tuple(sorted(params.items())))


@dataclass(frozen=True)
class NumericUseCase:
    """A deployment's numeric use case: a name, its :class:`NumericDesign`, and what it estimates — the tap
    maps of ``keys`` (key ids, heat-map designs) or the distribution of ``reading`` (a name of
    :data:`READINGS`, reading designs)."""

    name: str
    design: NumericDesign
    keys: tuple = ()
    reading: str = ""

    def as_dict(self) -> dict:
        """JSON-ready description (the run's config)."""
        return {"name": self.name, "design": self.design.name, "family": self.design.family,
                "epsilon": self.design.epsilon, "delta": self.design.delta, "params": dict(self.design.params),
                "keys": [KEY_NAMES[k] for k in self.keys], "reading": self.reading}


def key_ids(keys) -> tuple[int, ...]:
    """Key names (:data:`KEY_NAMES`) → ids; ``InputError`` naming an unknown key and the allowed ones."""
    if isinstance(keys, str) or not keys:
        raise InputError(f"The 'keys' of a heat map must be a non-empty list of key names ({', '.join(KEY_NAMES)}). "
                         f"Got {keys!r} instead.")
    for k in keys:
        if k not in KEY_NAMES:
            raise InputError(f"Unknown key {k!r}{did_you_mean(str(k), KEY_NAMES)}; the keys are {', '.join(KEY_NAMES)}.")
    if len(set(keys)) != len(keys):
        raise InputError(f"The 'keys' of a heat map must be distinct. Got {keys!r} instead.")
    return tuple(KEY_NAMES.index(k) for k in keys)


def estimate_reading(design: NumericDesign, values, rng) -> tuple[np.ndarray, np.ndarray]:
    """(true counts, estimated counts) over the :data:`BINS` bins from readings ``values`` on [−1, 1], one
    report (or one contribution to the release) per device."""
    values = np.asarray(values, np.float64)
    counts = bin_counts(values)
    return counts, np.asarray(design.estimator()[0](values, counts, rng), np.float64)


def estimate_maps(design: NumericDesign, taps: KeyTaps, keys, rng) -> tuple[np.ndarray, np.ndarray]:
    """(true grids, estimated grids), shape (len(keys), 16, 16): each key's map from the devices whose tap
    landed on it (one tap each); a key no device tapped is estimated as zeros (nothing is released). The
    keys' estimates draw from independent child streams of ``rng``."""
    grids = taps.grid_counts(SIDE)[list(keys)]
    est = np.zeros(grids.shape)
    for j, (k, g) in enumerate(zip(keys, np.random.SeedSequence(int(rng.integers(2 ** 63))).spawn(len(keys)))):
        n = int(grids[j].sum())
        if n:
            est[j] = design.estimator(n)[0](taps.xy[taps.keys == k], grids[j], np.random.default_rng(g))
    return grids, est


def draw_numeric(name: str, n: int, rng=None, **params):
    """One population of a numeric workload of :data:`NUMERIC_WORKLOADS`: :class:`KeyTaps` for ``key-taps``
    (its ``keys`` parameter is the caller's, not the tap model's), else the reading's NumericWorkload."""
    if name == "key-taps":
        return key_taps(n, rng=rng, **{k: v for k, v in params.items() if k != "keys"})
    return make_workload(name, n, rng=rng, **params)


def unit_of(reading: str) -> tuple[str, tuple[float, float]]:
    """The unit and public range of a reading of :data:`READINGS`."""
    params = READINGS[reading](1, rng=0).params
    return params["unit"], tuple(params["range"])

