"""New words on the keyboard fleet under four trust models at equal (ε, δ) per person over the run —
docs/math.md §9.13, §10.4.

:func:`compare_word_discovery` runs, on the same draws of the fleet's typing (one per seed, the new word
ramping up from the scenario's trend day), one discovery design per trust model, each at the same ε per
person over ``days`` days, one pass a night:

* ``ldp_trie`` — local DP: an LDP prefix trie at ε/days a night, pure ε-LDP (trusts nobody);
* ``secagg_trie`` — the same trie, its reports summed by secure aggregation within cohorts, ε₀ amplified to
  the run's (ε, δ) (trusts the secure-aggregation protocol);
* ``triehh`` — TrieHH's sample-and-threshold rounds on a trusted server, central (ε, δ);
* ``tee_histogram`` — clear uploads to an attested enclave: Gaussian noise and DP partition selection over
  the whole words (:mod:`~ldpsim.evaluation.discovery.tee_histogram`, trusts the enclave).

Per design: the share of seeds that find the new word and the median days until it stays in the published
top 20, the F1 of the last night's top 20 against the true top 20, the new word's frequency error once found, and the list's false
discoveries (invented words, beside the number the design states to expect).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.discovery.scores import first_reaching
from ldpsim.evaluation.discovery.tee_histogram import tee_nightly_scores
from ldpsim.mechanisms._validation import check_delta, check_real
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.runfolder import Layout
from ldpsim.simulator.discovery_rounds import online_holders

#: design → (trust model it stands for, who must be trusted)
DESIGNS = {"ldp_trie": ("ldp", "nobody"), "secagg_trie": ("secagg", "the secure-aggregation protocol"),
           "triehh": ("sample_threshold", "the server (sample and threshold)"),
           "tee_histogram": ("tee", "the attested enclave")}
#: the published list's length in which the new word must stay (the F1 is scored on it too)
LIST = 20
#: ``ldpsim discover --trust``: the designs' table and their nightly scores
LAYOUT = Layout("word-discovery", ("word_discovery.csv", "word_discovery_nights.csv"))


@dataclass(frozen=True, repr=False)
class WordDiscoveryComparison(BriefRepr):
    """What :func:`compare_word_discovery` returns: one row per design (``table``), the nightly scores
    (``nights``: design, seed, day, found, f1, slang_estimate, slang_true, invented, expected_false), and
    the parameters."""

    table: pd.DataFrame
    nights: pd.DataFrame
    params: dict

    def to_folder(self, out, force: bool = False) -> list:
        """Write ``word_discovery.csv`` and ``word_discovery_nights.csv`` into the run folder ``out``; a
        finished result there is replaced only with ``force``. Returns the paths written."""
        from ldpsim.runtime.runfolder import RunFolder

        with RunFolder.open(out, LAYOUT, {"fingerprint": "word-discovery"}, replace=force, keep_finished=True) as folder:
            paths = [folder.write_text("word_discovery.csv", self.table.to_csv(index=False)),
                     folder.write_text("word_discovery_nights.csv", self.nights.to_csv(index=False))]
            folder.finalize()
        return paths


def _designs(epsilon: float, fleet, delta: float, codec) -> dict:
    """design → (protocol, privacy row) for the three prefix tries at ε per person over the run."""
    from ldpsim.evaluation.discovery.equal_privacy import equal_privacy_protocols
    from ldpsim.scenarios.studies.trust.trust_fleet import GAMMA, discovery_design

    out = equal_privacy_protocols(codec, epsilon, delta, fleet.days, 1, GAMMA, ("ldp_trie", "triehh"))
    out["secagg_trie"] = discovery_design("secagg", epsilon, fleet, delta, codec)
    return out


def compare_word_discovery(epsilon: float = 4.0, days: int = 30, delta: float = DELTA_RELEASE, seeds=(0, 1, 2),
                           scenario: str = "keyboard") -> WordDiscoveryComparison:
    """The four designs of the module docstring at ``epsilon`` per person over ``days`` days at ``delta``.

    Parameters
    ----------
    epsilon : float > 0
        ε per person over the run (user level: every word a person types over the run).
    days : int
        Nights of the run (one pass or release a night).
    delta : float in (0, 10⁻³]
    seeds : sequence of int
        One draw of the fleet per seed; every design sees the same draws.
    scenario : str
        The deployment scenario whose words, devices and trend are used (default: the keyboard fleet).

    Returns
    -------
    WordDiscoveryComparison
        ``table`` columns: design, trust_model, trusted, epsilon_device, delta, found_share,
        days_to_discovery_median (days from the new word's first day; NaN: never found), f1_last_day,
        slang_error (mean |estimated − true share| of the new word on the nights it is listed),
        invented_mean, invented_expected (for the TEE: the expected words of a single holder per night;
        it invents none).
    """
    from ldpsim.evaluation.privacy.trust_accounting import calibrate
    from ldpsim.evaluation.privacy.trust_models import DEFAULTS
    from ldpsim.evaluation.workloads.vocabulary import Vocabulary
    from ldpsim.scenarios.studies.discovery.days import discovery_days, growing_slang
    from ldpsim.scenarios.studies.trust.trust_fleet import NEW_WORD, keyboard_fleet

    epsilon = check_real("compare_word_discovery", "epsilon", epsilon, 0.0, 50.0)
    delta = check_delta("compare_word_discovery", delta)
    seeds = list(seeds)                        # checked by discovery_days
    fleet = keyboard_fleet(scenario, days=days)
    slang = growing_slang(Vocabulary(fleet.words, fleet.word_shares, "share"), NEW_WORD, n_days=fleet.days,
                          start_day=fleet.slang_start_day, peak_share=fleet.slang_share, ramp_days=1, top=None)
    tries = _designs(epsilon, fleet, delta, slang.codec)
    local = discovery_days(slang, {k: tries[k] for k in ("ldp_trie", "triehh")}, fleet.word_devices, fleet.p_online,
                           1, LIST, seeds).days
    cohorts = discovery_days(slang, {"ldp_trie": tries["secagg_trie"]}, fleet.word_devices, fleet.p_online, 1, LIST,
                             seeds).days.assign(protocol="secagg_trie")   # the registered trie, amplified in cohorts
    nights = pd.concat([local, cohorts], ignore_index=True).rename(columns={"protocol": "design"})
    online = max(2, round(fleet.word_devices * fleet.p_online))
    tee = calibrate(DEFAULTS["tee"], epsilon, online, fleet.days, delta).tee
    rows = []
    for seed in seeds:                         # the fleet's stream is the first child, as in discovery_days
        fleet_ss, tee_ss = np.random.SeedSequence(int(seed)).spawn(2)
        held = online_holders(slang.shares, fleet.word_devices, fleet.p_online, np.random.default_rng(fleet_ss))
        rows += [{"design": "tee_histogram", "seed": seed, **r}
                 for r in tee_nightly_scores(tee, slang.words, held, LIST, slang.slang, np.random.default_rng(tee_ss))]
    nights = pd.concat([nights, pd.DataFrame(rows)[nights.columns]], ignore_index=True)
    privacy = {name: row for name, (_, row) in tries.items()}
    privacy["tee_histogram"] = {"epsilon": tee.epsilon(fleet.days, delta, replace=True), "delta": delta}
    table = pd.DataFrame([_row(name, nights[nights["design"] == name], privacy[name], slang.start_day, seeds)
                          for name in DESIGNS])
    return WordDiscoveryComparison(table, nights, {"epsilon": epsilon, "days": fleet.days, "delta": delta,
                                                   "seeds": list(seeds), "fleet": fleet.name,
                                                   "word_devices": fleet.word_devices, "tee": tee})


def _row(name: str, g: pd.DataFrame, privacy: dict, start_day: int, seeds) -> dict:
    """One design's summary over its nights (module docstring)."""
    firsts = [first_reaching(s["day"], s["found"].astype(float), level=1.0) for _, s in g.groupby("seed")]
    hit = [f - start_day for f in firsts if f is not None]
    listed = g[g["found"].astype(bool) & g["slang_estimate"].notna()]
    last = g[g["day"] == g["day"].max()]
    return {"design": name, "trust_model": DESIGNS[name][0], "trusted": DESIGNS[name][1],
            "epsilon_device": float(privacy["epsilon"]), "delta": float(privacy["delta"]),
            "found_share": len(hit) / len(seeds), "days_to_discovery_median": float(np.median(hit)) if hit else np.nan,
            "f1_last_day": float(last["f1"].mean()),
            "slang_error": float((listed["slang_estimate"] - listed["slang_true"]).abs().mean()) if len(listed) else np.nan,
            "invented_mean": float(g["invented"].mean()), "invented_expected": float(g["expected_false"].max())}
