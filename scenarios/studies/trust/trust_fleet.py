"""The fleet a trust-model comparison measures, and the typed words its discovery designs read —
docs/math.md §9.6.

* :func:`keyboard_fleet` — one day of a deployment scenario's event use case (default: the emoji of
  ``scenarios/keyboard.toml``): its items and shares (or the user's ``vocabulary`` file), the devices that
  upload on a day (devices × opt-in × online share) with the use case's reports per device per day, and
  the scenario's words and slang share for days-to-discovery. :func:`zipf_fleet` is the synthetic
  alternative (Zipf histogram, no words).
* :data:`TYPED` words an online device types a night, of which it keeps :data:`BOUND`; the discovery design
  each trust model enables (``TrustModel.discovery``) reads them at the same ε per person over the run
  (:mod:`~ldpsim.scenarios.studies.trust.bounded_discovery`).

>>> f = zipf_fleet(1000, domain_size=20)
>>> int(f.counts.sum()), f.counts.size, f.words is None
(1000, 20, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ldpsim.mechanisms._validation import check_int
from ldpsim.mechanisms.bounding import ContributionBound

#: the new word planted in the fleet's words (absent from the shipped vocabularies)
NEW_WORD = "rizz"
#: TrieHH / TrieHH++ sampling rate γ of the discovery designs
GAMMA = 0.05
#: word occurrences an online device types a night (the word-discovery designs' fleet)
TYPED = 8
#: each device's bound a night (on the device; the TEE's in its enclave): 2 distinct words, uniformly, each once
BOUND = ContributionBound(l0=2, linf=1, sampler="uniform")


@dataclass(frozen=True)
class Fleet:
    """One day of a fleet's use case at the count level, and what discovery needs.

    Attributes
    ----------
    name : str
    items : tuple
    counts : numpy.ndarray of int64
        Reports of each item on one day (they sum to ``devices × reports_per_day``).
    devices : int
        Devices uploading on a day (the shuffle's batch, the cohorts' pool).
    reports_per_day : int
        Reports one device sends a day (the use case's daily limit).
    days : int
        Days the ε per device is spent over.
    words, word_shares : tuple, numpy.ndarray or None
        The fleet's typed words (None: no discovery).
    word_devices, p_online, slang_start_day, slang_share :
        Devices typing words, the share online on a day, the day the new word appears and its share.
    """

    name: str
    items: tuple
    counts: np.ndarray
    devices: int
    reports_per_day: int
    days: int
    words: tuple | None = None
    word_shares: np.ndarray | None = None
    word_devices: int = 0
    p_online: float = 1.0
    slang_start_day: int = 0
    slang_share: float = 0.0

    @property
    def word_cohort(self) -> int:
        """Devices typing words online in a round (at least 2): the pool a discovery design's shuffle or
        secure-aggregation cohorts amplify within."""
        return max(2, round(self.word_devices * self.p_online))


def keyboard_fleet(scenario="keyboard", vocabulary=None, days: int = 30, devices: int | None = None) -> Fleet:
    """The first event use case of a deployment scenario (module docstring).

    Parameters
    ----------
    scenario : str or path
        A shipped scenario's name (``scenarios/<name>.toml``) or a deployment TOML file.
    vocabulary : path, optional
        The items and their weights (``evaluation.workloads.load_vocabulary``) instead of the scenario's.
    days : int
        Days of the run the ε is spent over.
    devices : int, optional
        The fleet's devices instead of the scenario's.
    """
    from ldpsim.scenarios.studies.scenario.deployment_file import load_deployment
    from ldpsim.evaluation.workloads.types import largest_remainder

    days = check_int("keyboard_fleet", "days", days, low=1)
    path = Path(str(scenario))
    if path.suffix != ".toml" and not path.exists():     # a shipped scenario's name
        path = Path(str(resources.files("ldpsim.scenarios") / f"{scenario}.toml"))
    cfg, _ = load_deployment(path, devices, None, None)
    uc = next((u for u in cfg.use_cases if u.kind == "event"), None)
    if uc is None:
        from ldpsim.runtime.errors import InputError
        raise InputError(f"keyboard_fleet: the scenario {scenario!r} has no event use case (items to count).")
    items, weights = cfg.items, np.asarray(cfg.item_weights, dtype=float)
    if vocabulary is not None:
        from ldpsim.evaluation.workloads import load_vocabulary
        vocab = load_vocabulary(vocabulary)
        items, weights = vocab.items, vocab.shares
    uploading = max(1, round(cfg.n_devices * cfg.opt_in * cfg.p_online))
    counts = largest_remainder(weights, uploading * uc.daily_limit).astype(np.int64)
    words = cfg.words if cfg.words and NEW_WORD not in cfg.words else None
    return Fleet(path.stem, tuple(items), counts, uploading, uc.daily_limit, days, words,
                 None if words is None else np.asarray(cfg.word_weights, dtype=float),
                 max(1, round(cfg.n_devices * cfg.opt_in)), cfg.p_online, cfg.slang_start_day, cfg.slang_share)


def zipf_fleet(n: int = 1_000_000, domain_size: int = 2000, s: float = 1.1, days: int = 30) -> Fleet:
    """A synthetic day: n devices, one report each, items Zipf(s) over ``domain_size`` (no words)."""
    from ldpsim.evaluation.workloads.synthetic import zipf

    n = check_int("zipf_fleet", "n", n, low=2)
    counts = zipf(n, domain_size=check_int("zipf_fleet", "domain_size", domain_size, low=2), s=s).counts
    return Fleet(f"zipf({s:g})", tuple(range(domain_size)), counts.astype(np.int64), n, 1,
                 check_int("zipf_fleet", "days", days, low=1))
