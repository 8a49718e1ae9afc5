"""The frozen configuration of one deployment simulation (fleet, devices, channel, server).

Every field carries its unit in its name (``*_s`` seconds, ``*_h`` hours, ``*_days``). Values are
validated once, here, with messages naming the parameter, the allowed range and the value; the
scenario layer (:mod:`ldpsim.scenarios.studies.scenario.deployment_file`) turns a TOML file into this object.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ldpsim.mechanisms import MECHANISMS, FrequencyOracle, make
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.base import Guarantee
from ldpsim.mechanisms.numeric.em import EM
from ldpsim.mechanisms.numeric.interface import NumericMechanism
from ldpsim.mechanisms.numeric.onebitmean import OneBitMean
from ldpsim.mechanisms.discovery.run_budget import run_rounds
from ldpsim.mechanisms.discovery.words import DiscoveryProtocol
from ldpsim.mechanisms.registry import INTERACTIVE

#: kind of use case → the base class(es) its mechanism must have: categorical events (emoji) take a
#: frequency oracle, numeric readings (typing speed) a numeric mechanism on [−1, 1] or Microsoft's
#: 1BitMean on [0, m], typed words (no dictionary: new slang must be found) a discovery protocol
KINDS = {"event": FrequencyOracle, "reading": (NumericMechanism, OneBitMean), "word": DiscoveryProtocol}

#: the numeric readings a typing session produces (names of reading use cases)
READINGS = ("typing_speed", "session_length")

@dataclass(frozen=True)
class UseCase:
    """One telemetry use case: what is collected, with which mechanism, how often.

    A reading's mean is the mechanism's unbiased report average (PM, docs/math.md §2.1; 1BitMean,
    §7.3), or with ``em_bins`` the mean of an EM estimate over that many bins (docs/math.md §2.3) —
    required for SDPM, whose report average is biased (docs/math.md §2.2).

    Parameters
    ----------
    name : str
        An identifier; for readings one of ``READINGS`` ("typing_speed", "session_length").
    kind : {"event", "reading"}
        "event": categorical events (emoji) through a frequency oracle; "reading": a numeric value per
        session through a numeric mechanism (PM, SDPM) or 1BitMean.
    mechanism : str
        Registry name of the mechanism (:data:`ldpsim.mechanisms.MECHANISMS`) fitting ``kind``; a word
        use case may also name an interactive protocol (:data:`ldpsim.mechanisms.registry.INTERACTIVE`):
        the devices then answer the server's rounds instead of sending reports (docs/math.md §10.8).
    params : tuple of (str, value) pairs, or a mapping
        The mechanism's keyword arguments (stored sorted, hashable); must contain ``epsilon``, the
        mechanism's parameter as each mechanism documents it (ε_∞ for RAPPOR, dBitFlip, 1BitMean);
        what one donation costs is :attr:`ledger_cost` (docs/math.md §8.1). For an interactive
        protocol, ``epsilon`` is ε per device over the run and the other keys are those of
        :func:`~ldpsim.mechanisms.discovery.run_budget.run_rounds` (``delta`` or ``theta``,
        ``rounds_per_day``, the protocol's own).
    daily_limit : int, default 1
        Donations per device and day (≥ 1).
    value_range : (float, float), optional
        Readings only (required): the raw-unit interval [low, high] mapped linearly onto the
        mechanism's input domain [−1, 1]; values outside are clipped.
    em_bins : int, optional
        Readings only: estimate the mean by EM over this many bins (≥ 2); required when the report
        average is biased (SDPM).
    memoize : bool, default False
        A device re-sends the same report for a value it has reported before, charged once
        (``simulator/memoization.py``): events, and readings through 1BitMean, whose memo class is
        the device's α-point-rounded level (docs/math.md §7.3).
    aggregation : str, default "ldp"
        Who sees the reports: the name of a trust model (the scenario layer checks it against the trust
        models' registry, ``evaluation/privacy/trust_models.py``). The server's LDP path (``ldp``, or
        ``shuffle``: the same path, its central ε from the shuffle) unless ``trust`` is set.
    trust : tuple of (str, value) pairs
        The calibrated trust model's parameters, set by the scenario layer for a model whose collectors
        take the reports (stored sorted, hashable): the use case is then *collected* (events only, one
        donation a day, not memoized) — the devices' donations bypass the server's LDP path and are
        collected night by night by that model's collectors (``simulator/nightly_collection.py``); the
        mechanism is then only a local randomizer the model may use.
    n_days : int, optional
        Interactive protocols: the run's days (set by :class:`DeploymentConfig`; ε per device over the
        run is split over their rounds).
    mech_epsilon, cost : float, optional
        Set by the multi-attribute policy (``simulator/attributes.py``): the ε the mechanism runs at
        and the ledger cost of one donation (default: from the mechanism's guarantee, :attr:`ledger_cost`).

    Examples
    --------
    >>> u = UseCase("emoji", "event", "cms", (("epsilon", 4.0), ("k", 64), ("m", 256)))
    >>> u.ledger_cost, u.guarantee.label, type(u.make_mechanism()).__name__
    (4.0, 'ε-LDP', 'CMS')
    """

    name: str
    kind: str
    mechanism: str
    params: tuple = ()
    daily_limit: int = 1
    value_range: tuple[float, float] | None = None
    em_bins: int | None = None
    top_k: int = 20  # word use cases: length of the list the server's daily discovery job returns
    memoize: bool = False
    mech_epsilon: float | None = None  # set by the policy (simulator/attributes.py): ε the mechanism runs at
    cost: float | None = None          # set by the policy: ledger cost of one donation
    aggregation: str = "ldp"           # who sees the reports: a trust model's name
    trust: tuple = ()                  # the calibrated trust model's parameters (collected aggregations)
    n_days: int | None = None          # interactive word protocols: the run's days (set by DeploymentConfig)

    def __post_init__(self):
        owner = f"UseCase {self.name!r}"
        if not isinstance(self.aggregation, str) or not self.aggregation.isidentifier():
            raise ValueError(f"The 'aggregation' parameter of {owner} must be a trust model's name. "
                             f"Got {self.aggregation!r} instead.")
        object.__setattr__(self, "trust", tuple(sorted(dict(self.trust).items())))
        if self.collected and (self.kind != "event" or self.daily_limit != 1 or self.memoize):
            raise ValueError(f"The 'aggregation' parameter of {owner} may be {self.aggregation!r} only for an event "
                             f"use case with daily_limit = 1 and memoize = false (one exact report a device-day). "
                             f"Got kind {self.kind!r}, daily_limit {self.daily_limit!r}, memoize {self.memoize!r}.")
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"The 'name' parameter of UseCase must be an identifier. Got {self.name!r} instead.")
        if self.kind not in KINDS:
            raise ValueError(f"The 'kind' parameter of {owner} must be one of {tuple(KINDS)}. "
                             f"Got {self.kind!r} instead.")
        allowed = sorted(n for n, cls in MECHANISMS.items() if issubclass(cls, KINDS[self.kind]))
        allowed += sorted(INTERACTIVE) if self.kind == "word" else []
        if self.mechanism not in allowed:
            raise ValueError(f"The 'mechanism' parameter of {owner} ({self.kind}) must be one of {allowed}. "
                             f"Got {self.mechanism!r} instead.")
        object.__setattr__(self, "params", tuple(sorted(dict(self.params).items())))
        if "epsilon" not in dict(self.params):
            raise ValueError(f"The 'params' parameter of {owner} must contain 'epsilon'.")
        check_int(owner, "daily_limit", self.daily_limit, low=1)
        if not isinstance(self.memoize, bool):
            raise TypeError(f"The 'memoize' parameter of {owner} must be a bool. Got {self.memoize!r} instead.")
        if self.memoize and not (self.kind == "event" or (self.kind == "reading" and self.mechanism == "onebitmean")):
            raise ValueError(f"The 'memoize' parameter of {owner} may be true only for an event use case or a "
                             f"reading through onebitmean (a finite set of memo classes). Got {self.memoize!r} instead.")
        if self.em_bins is not None:
            check_int(owner, "em_bins", self.em_bins, low=2)
            if self.mechanism == "onebitmean":
                raise ValueError(f"The 'em_bins' parameter of {owner} must be None for onebitmean (its bit "
                                 f"average is unbiased). Got {self.em_bins!r} instead.")
        check_int(owner, "top_k", self.top_k, low=1)
        if self.interactive:
            if self.daily_limit != 1:
                raise ValueError(f"The 'daily_limit' parameter of {owner} must be 1 with the interactive protocol "
                                 f"{self.mechanism!r} (a device answers each round about one word). "
                                 f"Got {self.daily_limit!r} instead.")
            if self.n_days is not None:
                check_int(owner, "n_days", self.n_days, low=1)
            self.make_mechanism()  # validates the protocol's parameters
        if self.kind == "reading" and self.name not in READINGS:
            raise ValueError(f"The 'name' parameter of a reading UseCase must be one of {READINGS}. "
                             f"Got {self.name!r} instead.")
        if self.kind == "reading":
            if self.value_range is None or len(self.value_range) != 2:
                raise ValueError(f"The 'value_range' parameter of {owner} must be a pair (low, high). "
                                 f"Got {self.value_range!r} instead.")
            lo = check_real(owner, "value_range[0]", self.value_range[0])
            hi = check_real(owner, "value_range[1]", self.value_range[1], low=lo)
            object.__setattr__(self, "value_range", (lo, hi))
            if self.em_bins is None:
                mech = self.make_mechanism()
                try:
                    mech.estimate_mean(mech.aggregate(np.zeros(0)))
                except NotImplementedError:
                    raise ValueError(f"The 'em_bins' parameter of {owner} must be set: the report average of "
                                     f"{self.mechanism} is biased, its mean needs EM. Got None instead.") from None

    @property
    def collected(self) -> bool:
        """Whether a trust model's collectors, not the server's LDP path, take this use case's reports."""
        return bool(self.trust)

    @property
    def interactive(self) -> bool:
        """Whether the devices answer an interactive protocol's rounds (no reports, no uploads)."""
        return self.mechanism in INTERACTIVE

    @functools.cached_property
    def guarantee(self) -> Guarantee:
        """What one donation's report promises (docs/math.md §8.1–§8.2): the mechanism's guarantee at
        the ε it runs at, with ε_∞ of the memoized response when ``memoize`` (the mechanism's own
        permanent ε — RAPPOR, dBitFlip, 1BitMean — or ε itself for a re-sent report). An interactive
        protocol's donation is one day's answers (:attr:`RunRounds.guarantee
        <ldpsim.mechanisms.discovery.run_budget.RunRounds.guarantee>`, docs/math.md §10.8)."""
        mech = self.make_mechanism()
        if self.interactive:
            return mech.guarantee
        return mech.guarantee.memoized(mech.epsilon) if self.memoize else mech.guarantee

    @property
    def ledger_cost(self) -> float:
        """ε the ledger charges for one donation (docs/math.md §8.2): the trust model's ε per device-day
        (``trust["epsilon_day"]``) when collected; the policy's ``cost`` under SMP or RS+FD (the device-day's
        ε); ε_∞ once per memo class when memoized; else ε of one report."""
        if self.collected:  # the trust model's ε per device-day (the scenario layer's accountant)
            return float(dict(self.trust)["epsilon_day"])
        if self.cost is not None:
            return float(self.cost)
        g = self.guarantee
        return g.epsilon_permanent if self.memoize else g.epsilon_report

    def make_mechanism(self):
        """The mechanism object (the client side and the wire form), at the policy's ε if one is set; for
        an interactive protocol its :class:`~ldpsim.mechanisms.discovery.run_budget.RunRounds` over
        ``n_days`` days (1 until the deployment sets them).

        Built once per use case and shared by every caller (device, server, measurement, plots): a
        mechanism is immutable, so its derived constants (p, q, the hash family) exist once.
        """
        mech = self.__dict__.get("_mechanism")
        if mech is None and self.interactive:
            mech = run_rounds(self.mechanism, n_days=self.n_days or 1, **dict(self.params))
            object.__setattr__(self, "_mechanism", mech)
        elif mech is None:
            params = dict(self.params)
            if self.mech_epsilon is not None:
                params["epsilon"] = self.mech_epsilon
            mech = make(self.mechanism, **params)
            object.__setattr__(self, "_mechanism", mech)
        return mech

    def make_aggregator(self, mechanism=None):
        """The server's aggregator of decoded reports: the mechanism itself, or EM (``em_bins``)."""
        mechanism = self.make_mechanism() if mechanism is None else mechanism
        return EM(mechanism, bins=self.em_bins) if self.em_bins is not None else mechanism

    def input_range(self, mechanism=None) -> tuple[float, float]:
        """The reading mechanism's input interval: [0, m] for 1BitMean, [−1, 1] otherwise."""
        mechanism = self.make_mechanism() if mechanism is None else mechanism
        return (0.0, mechanism.m) if isinstance(mechanism, OneBitMean) else (-1.0, 1.0)

    def to_input(self, values, mechanism=None) -> np.ndarray:
        """Raw readings mapped linearly from ``value_range`` onto :meth:`input_range` (clipped)."""
        a, b = self.input_range(mechanism)
        lo, hi = self.value_range
        return a + np.clip((np.asarray(values, float) - lo) / (hi - lo), 0.0, 1.0) * (b - a)

    def estimate_mean(self, aggregator, agg) -> float:
        """Mean of a reading in raw units from an aggregate of ``aggregator`` (see ``make_aggregator``)."""
        unit = aggregator.mean(agg) if isinstance(aggregator, EM) else aggregator.estimate_mean(agg)
        a, b = self.input_range(aggregator.mechanism if isinstance(aggregator, EM) else aggregator)
        lo, hi = self.value_range
        return lo + (unit - a) / (b - a) * (hi - lo)


def _evening_rhythm() -> tuple:
    """Default daily rhythm: hourly session weights, low at night, peaks at lunch and evening."""
    h = np.arange(24)
    w = 0.2 + np.exp(-0.5 * ((h - 12.5) / 1.5) ** 2) + 1.5 * np.exp(-0.5 * ((h - 20.5) / 2.0) ** 2)
    return tuple(float(x) for x in w / w.sum())


@dataclass(frozen=True)
class DeploymentConfig:
    """A deployment: fleet, behaviour, budgets, network and server (see module docstring for units).

    Every field below is also a parameter; each is validated here (``ValueError`` naming it, its range
    and the value). Draws are made per block of ``block_size`` devices from ``seed``, so results do not
    depend on how a run is sharded.

    Parameters
    ----------
    items : sequence of tokens
        The event domain (e.g. emoji), at least 2, most frequent first.
    item_weights : sequence of float
        Workload frequencies of ``items`` (non-negative, positive sum; normalized here).
    use_cases : sequence of UseCase
        Non-empty, distinct names, at most one of kind "event" (it drives the emoji model).
    n_devices, n_days : int
        Fleet size and collection days (≥ 1; defaults 20 000 and 14).
    seed : int
        Root seed (≥ 0, default 0).
    block_size : int
        Devices per seed block (≥ 1, default 2048).
    concentration, n_atoms : float, int
        Dirichlet concentration (> 0) of personal preferences around the workload and the
        stick-breaking truncation (≥ 1) of a device's preference (defaults 5.0, 48).
    activity_sigma : float
        Lognormal sigma (≥ 0) of a device's activity level (mean 1).
    activity_levels, activity_weights : sequence of float
        An empirical activity distribution instead of the lognormal (default empty): each device's
        level is one of ``activity_levels`` (≥ 0, normalised here to weighted mean 1), drawn with
        probabilities ∝ ``activity_weights`` (> 0; e.g. how many devices of a measured fleet had
        that many events a day).
    sessions_per_day, events_per_session : float
        Poisson means (> 0) of typing sessions per device-day and emoji per session.
    rhythm : sequence of 24 float
        Hourly weights of session starts (non-negative; normalized); default: evening-heavy.
    speed_mean_wpm, speed_device_sd_wpm, speed_session_sd_wpm : float
        Typing speed: population mean (> 0), between-device and within-device sd (≥ 0), words/min.
    session_median_s, session_device_sigma, session_sigma : float
        Session length: population median in seconds (> 0) and lognormal sigmas (≥ 0).
    opt_in, p_online : float
        Probability in [0, 1] that a device donates at all / is available on a given day.
    window_start_mean_h, window_start_sd_h, window_length_h : float
        The nightly upload window (charging, on Wi-Fi): mean start hour in [0, 24), its sd (≥ 0)
        and length in hours (> 0).
    retention_days : float
        A donation not uploaded within this many days is deleted (> 0).
    budget_daily, budget_total : float
        Per-device ε caps per day and over the run, in (0, inf] (default inf); sequential composition.
    trend_item : int, optional
        Index into ``items`` of an item whose share ramps up from ``trend_start_day`` (≥ 0) over
        ``trend_ramp_days`` (> 0) days to ``trend_peak_share`` (in [0, 1]) of all events.
    latency_median_s, latency_sigma : float
        Lognormal upload latency: median seconds (> 0) and sigma (≥ 0).
    loss, ack_loss : float
        Probability in [0, 1] that an upload / its acknowledgment is lost.
    max_attempts, backoff_s, ack_timeout_s : int, float, float
        Retries: uploads of one bundle (≥ 1), first retry delay in seconds (doubling), and the time
        after which a device retries without ack (must exceed ``batch_window_s``).
    slot_s : float
        Granularity of upload scheduling in seconds (> 0).
    server_capacity, service_s_per_report : int, float
        Parallel ingestion workers (≥ 1) and seconds of work per report (≥ 0).
    batch_window_s : float
        Shuffle window in seconds (> 0): reports are shuffled and written once per window.
    fsync : bool
        Force each store part to disk before acknowledging (default True).
    crash_at_h, restart_s : float
        Optional simulated server crash time in hours (≥ 0; None: no crash) and restart delay in
        seconds.
    drain_days : int
        Simulated days after the last donation day for uploads to finish (≥ 0, default 2).
    adversary_devices : int
        Devices (lowest ids) whose linked view the observer tap keeps (≥ 0, default 500).
    collectors : tuple of (str, value) pairs
        Settings of the trust models' collectors (:class:`~ldpsim.simulator.collectors.CollectorSetup`:
        round_s, round_length_s, job_s, retry_s, invalid_share, crash) for the use cases whose
        aggregation is collected; their windows and channel are the fleet's.
    """

    items: tuple                      # event domain (tokens, e.g. emoji), most frequent first
    item_weights: tuple               # workload frequencies of ``items`` (normalized here)
    use_cases: tuple                  # UseCase objects; exactly one of kind "event" drives the emoji model
    n_devices: int = 20_000
    n_days: int = 14
    seed: int = 0
    block_size: int = 2048            # devices per seed block (draws are per block, so sharding is free)
    # fleet behaviour
    concentration: float = 5.0        # Dirichlet concentration of personal preferences around the workload
    n_atoms: int = 48                 # stick-breaking truncation of a device's preference
    activity_sigma: float = 0.8       # lognormal sigma of the activity level (mean 1)
    activity_levels: tuple = ()       # empirical activity levels instead of the lognormal (normalized to mean 1) ...
    activity_weights: tuple = ()      # ... and how many devices have each
    sessions_per_day: float = 6.0     # mean typing sessions per device-day (Poisson)
    events_per_session: float = 0.8   # mean emoji per session (Poisson)
    rhythm: tuple = field(default_factory=_evening_rhythm)  # 24 hourly weights of session starts
    speed_mean_wpm: float = 38.0      # population mean typing speed
    speed_device_sd_wpm: float = 10.0 # between-device sd
    speed_session_sd_wpm: float = 5.0 # within-device, per-session sd
    session_median_s: float = 45.0    # population median session length
    session_device_sigma: float = 0.5 # lognormal sigma of the devices' median session lengths
    session_sigma: float = 0.8        # lognormal sigma of one device's session lengths
    opt_in: float = 0.6               # probability a device donates at all
    p_online: float = 0.9             # probability a device is available on a given day
    window_start_mean_h: float = 22.0 # upload window (charging, on Wi-Fi) start, hour of day
    window_start_sd_h: float = 2.0
    window_length_h: float = 6.0
    retention_days: float = 3.0       # a donation not uploaded within this time is deleted (lost)
    budget_daily: float = math.inf    # per-device ε cap per day
    budget_total: float = math.inf    # per-device ε cap over the whole run
    # trend
    trend_item: int | None = None     # index into ``items`` of an item whose share ramps up
    trend_start_day: int = 7
    trend_ramp_days: float = 3.0
    trend_peak_share: float = 0.05    # share of all events taken by the trend item after the ramp
    # typed words (a "word" use case): the domain, its weights, and one new slang word
    words: tuple = ()                 # word domain, the slang word last (weight 0: it only comes by the slang rule)
    word_weights: tuple = ()          # frequencies of ``words`` (normalized here)
    words_per_session: float = 2.0    # mean words donated-from per typing session (Poisson)
    slang_start_day: int = 3          # from this day each typed word is the slang word (words[-1]) ...
    slang_share: float = 0.05         # ... with this probability
    # channel
    latency_median_s: float = 2.0
    latency_sigma: float = 1.0
    loss: float = 0.05                # probability an upload is lost
    ack_loss: float = 0.01            # probability the acknowledgment is lost (device retries; server dedupes)
    max_attempts: int = 8             # uploads of one bundle before it is given up
    backoff_s: float = 300.0          # first retry delay; doubles each attempt
    ack_timeout_s: float = 15000.0    # the device retries when no ack came within this time
    slot_s: float = 900.0             # granularity of upload scheduling (devices grouped per slot)
    # server
    server_capacity: int = 4          # parallel ingestion workers
    service_s_per_report: float = 2e-4
    batch_window_s: float = 14400.0   # shuffle window: reports are shuffled and written once per window
    fsync: bool = True                # force each store part to disk before acknowledging
    crash_at_h: float | None = None   # simulated crash time (hours since start); None: no crash
    restart_s: float = 600.0
    drain_days: int = 2               # simulated days after the last donation day, for uploads to finish
    adversary_devices: int = 500      # devices (lowest ids) whose linked view the observer tap keeps
    policy: str = "spl"               # several attributes per device: spl | smp | rsfd (simulator/attributes.py)
    collectors: tuple = ()            # (key, value) pairs of the trust collectors' CollectorSetup (rounds, jobs, crash)
    numeric: tuple = ()               # the [numeric.<name>] use cases (NumericUseCase): run after the simulation, charged by the accountant

    def __post_init__(self):
        o = "DeploymentConfig"
        items = tuple(self.items)
        if len(items) < 2:
            raise ValueError(f"The 'items' parameter of {o} must hold at least 2 items. Got {len(items)} instead.")
        w = np.asarray(self.item_weights, dtype=float)
        if w.shape != (len(items),) or not np.all(np.isfinite(w)) or w.min() < 0 or w.sum() <= 0:
            raise ValueError(f"The 'item_weights' parameter of {o} must be {len(items)} non-negative "
                             f"finite weights with a positive sum. Got {self.item_weights!r} instead.")
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "item_weights", tuple(float(x) for x in w / w.sum()))
        ucs = tuple(self.use_cases)
        if not ucs or not all(isinstance(u, UseCase) for u in ucs):
            raise ValueError(f"The 'use_cases' parameter of {o} must be a non-empty tuple of UseCase. "
                             f"Got {self.use_cases!r} instead.")
        if len({u.name for u in ucs}) != len(ucs):
            raise ValueError(f"The 'use_cases' parameter of {o} has duplicate names.")
        for kind in ("event", "word"):
            if sum(u.kind == kind for u in ucs) > 1:
                raise ValueError(f"The 'use_cases' parameter of {o} may hold at most one {kind} use case.")
        ww = np.asarray(self.word_weights, dtype=float)
        if any(u.kind == "word" for u in ucs) and (len(self.words) < 2 or ww.shape != (len(self.words),)
                                                   or ww.min() < 0 or ww.sum() <= 0):
            raise ValueError(f"The 'words' parameter of {o} must hold at least 2 words (the slang word last) "
                             f"with as many non-negative 'word_weights' for a word use case. "
                             f"Got {len(self.words)} words and {ww.size} weights instead.")
        object.__setattr__(self, "words", tuple(self.words))
        object.__setattr__(self, "word_weights", tuple(float(x) for x in ww / ww.sum()) if ww.size else ())
        from ldpsim.simulator.attributes import apply_policy
        check_int(o, "n_days", self.n_days, low=1)
        ucs = tuple(dataclasses.replace(u, n_days=self.n_days) if u.interactive and u.n_days != self.n_days else u
                    for u in ucs)
        object.__setattr__(self, "use_cases", apply_policy(ucs, self.policy))
        if self.policy != "spl" and any(u.memoize for u in ucs):
            raise ValueError(f"The 'policy' parameter of {o} must be 'spl' when a use case is memoized. "
                             f"Got {self.policy!r} instead.")
        if self.policy != "spl" and any(u.collected for u in ucs):
            raise ValueError(f"The 'policy' parameter of {o} must be 'spl' when a use case has a collected "
                             f"aggregation (a trust model's collectors). Got {self.policy!r} instead.")
        object.__setattr__(self, "collectors", tuple(sorted(dict(self.collectors).items())))
        if self.policy != "spl" and any(u.kind not in ("event", "reading") for u in ucs):
            raise ValueError(f"The 'policy' parameter of {o} must be 'spl' with a word use case (SMP and RS+FD "
                             f"cover emoji and readings). Got {self.policy!r} instead.")
        for name in ("n_devices", "n_days", "block_size", "n_atoms", "max_attempts", "server_capacity"):
            check_int(o, name, getattr(self, name), low=1)
        for name in ("seed", "drain_days", "adversary_devices", "trend_start_day", "slang_start_day"):
            check_int(o, name, getattr(self, name), low=0)
        for name in ("concentration", "sessions_per_day", "events_per_session", "speed_mean_wpm", "session_median_s",
                     "window_length_h", "retention_days", "latency_median_s", "backoff_s",
                     "ack_timeout_s", "slot_s", "batch_window_s", "restart_s", "trend_ramp_days",
                     "words_per_session"):
            check_real(o, name, getattr(self, name), 0.0)
        for name in ("activity_sigma", "speed_device_sd_wpm", "speed_session_sd_wpm", "latency_sigma",
                     "session_device_sigma", "session_sigma",
                     "window_start_sd_h", "service_s_per_report"):
            check_real(o, name, getattr(self, name), 0.0, low_open=False)
        for name in ("opt_in", "p_online", "loss", "ack_loss", "trend_peak_share", "slang_share"):
            check_real(o, name, getattr(self, name), 0.0, 1.0, low_open=False, high_open=False)
        check_real(o, "window_start_mean_h", self.window_start_mean_h, 0.0, 24.0, low_open=False)
        for name in ("budget_daily", "budget_total"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0):
                raise ValueError(f"The {name!r} parameter of {o} must be a float in the range (0, inf]. "
                                 f"Got {v!r} instead.")
        for name, low, why in (("batch_window_s", 60.0, "the server shuffles and writes once per window; shorter "
                                "windows make the simulation step for hours and defeat the shuffle"),
                               ("slot_s", 1.0, "devices are scheduled per slot")):
            if getattr(self, name) < low:
                raise ValueError(f"The {name!r} parameter of {o} must be a float in the range [{low:g}, inf) ({why}). "
                                 f"Got {getattr(self, name)!r} instead.")
        for uc in self.use_cases:
            eps = uc.ledger_cost
            for name in ("budget_daily", "budget_total"):
                if eps > getattr(self, name) * (1 + 1e-12):
                    raise ValueError(f"The cost of one donation of use case {uc.name!r} (ε {eps:g}) exceeds {name} "
                                     f"({getattr(self, name):g}): every donation would be refused. Lower the use "
                                     f"case's epsilon or raise [privacy] {name}.")
        if self.ack_timeout_s <= self.batch_window_s:
            raise ValueError(f"The 'ack_timeout_s' parameter of {o} must exceed batch_window_s "
                             f"({self.batch_window_s:g}): the server acknowledges once per batch window. "
                             f"Got {self.ack_timeout_s!r} instead.")
        if not isinstance(self.fsync, bool):
            raise TypeError(f"The 'fsync' parameter of {o} must be a bool. Got {self.fsync!r} instead.")
        levels = np.asarray(self.activity_levels, dtype=float)
        lw = np.asarray(self.activity_weights, dtype=float)
        if levels.size and (levels.shape != lw.shape or levels.ndim != 1 or not np.all(np.isfinite(levels))
                            or levels.min() < 0 or not np.all(np.isfinite(lw)) or lw.min() <= 0
                            or np.dot(levels, lw) <= 0):
            raise ValueError(f"The 'activity_levels' and 'activity_weights' parameters of {o} must be equally "
                             f"long: levels >= 0 with a positive mean, weights > 0. Got {levels.size} levels and "
                             f"{lw.size} weights instead.")
        if levels.size:
            object.__setattr__(self, "activity_levels", tuple((levels * lw.sum() / np.dot(levels, lw)).tolist()))
            object.__setattr__(self, "activity_weights", tuple((lw / lw.sum()).tolist()))
        r = np.asarray(self.rhythm, dtype=float)
        if r.shape != (24,) or r.min() < 0 or r.sum() <= 0:
            raise ValueError(f"The 'rhythm' parameter of {o} must be 24 non-negative hourly weights. "
                             f"Got {self.rhythm!r} instead.")
        object.__setattr__(self, "rhythm", tuple(float(x) for x in r / r.sum()))
        if self.trend_item is not None:
            check_int(o, "trend_item", self.trend_item, low=0, high=len(items) - 1)
        if self.crash_at_h is not None:
            check_real(o, "crash_at_h", self.crash_at_h, 0.0)

    # derived ------------------------------------------------------------------------------------
    @property
    def n_blocks(self) -> int:
        return -(-self.n_devices // self.block_size)

    def readings(self) -> tuple:
        """The reading use cases."""
        return tuple(u for u in self.use_cases if u.kind == "reading")

    def use_case(self, kind: str) -> UseCase | None:
        """The first use case of ``kind`` ("event" or "reading"), or None."""
        return next((u for u in self.use_cases if u.kind == kind), None)
