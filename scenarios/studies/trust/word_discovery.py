"""New words on the keyboard fleet under four trust models at equal (ε, δ) per person over the run, every
device bounded — docs/math.md §8.7, §8.8, §9.13, §10.4.

:func:`compare_word_discovery` draws, per seed, the fleet's typing night by night: each online device types
``typed`` words (:data:`.trust_fleet.TYPED`), the new word ramping up from the scenario's trend day
(:func:`~ldpsim.simulator.typed_nights.typed_entries`). Every design first bounds each device with one
:class:`~ldpsim.mechanisms.bounding.ContributionBound` (``bound`` a night, default
:data:`.trust_fleet.BOUND`; optionally ``per_run``) and is then set to the same ε per person over ``days``
nights, its accountant charging the cells the bounds allow
(:func:`~ldpsim.evaluation.privacy.levels.bounded_cells`: C (night, word) cells a
person, docs/math.md §8.8):

* ``ldp_trie`` — local DP: an LDP prefix trie, one report per kept word a night at ε/C, pure ε-LDP
  (splitting; trusts nobody);
* ``secagg_trie`` — the same trie, its reports summed by secure aggregation within cohorts, a device's L0
  reports a round amplified to the run's (ε, δ) (trusts the secure-aggregation protocol);
* ``triehh`` — TrieHH's sample-and-threshold rounds on a trusted server, central (ε, δ); a device votes
  once a round, so it keeps one of its bounded words a night, uniformly (its bound is L0 = 1);
* ``tee_histogram`` — clear uploads to an attested enclave: Gaussian noise and DP partition selection over
  the whole words, calibrated for C cells of L∞ each (:mod:`~ldpsim.evaluation.discovery.tee_histogram`,
  trusts the enclave).

Per design: ε per person and per word of one person over the run, the share of seeds that find the new word
and the median days until it stays in the published top 20, the F1 of the last night's top 20 against the
words typed, the new word's frequency error once found, the list's false discoveries (invented words,
beside the number the design states to expect), and what the bound costs: the typed entries and
occurrences it drops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldpsim.evaluation.privacy.trust_tables import DISCOVERY_COLUMNS
from ldpsim.mechanisms._validation import check_delta, check_int, check_real
from ldpsim.mechanisms.bounding import ContributionBound
from ldpsim.mechanisms.deltas import DELTA_RELEASE
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.errors import InputError
from ldpsim.runtime.runfolder import Layout
from ldpsim.scenarios.studies.trust.bounded_discovery import (bounded_design, bounded_scores, found_days, slang_error,
                                                               typed_and_bounded)
from ldpsim.scenarios.studies.trust.trust_fleet import BOUND, TYPED

#: design → (trust model it stands for, who must be trusted)
DESIGNS = {"ldp_trie": ("ldp", "nobody"), "secagg_trie": ("secagg", "the secure-aggregation protocol"),
           "triehh": ("sample_threshold", "the server (sample and threshold)"),
           "tee_histogram": ("tee", "the attested enclave")}
#: the printed columns (when and whether the word is found at what privacy, then the rest) and their meaning
COLUMNS = {
    "design": "the discovery design",
    "days_to_discovery_median": "days from the new word's first day until it stays in the top 20 (nan: never)",
    **{c: DISCOVERY_COLUMNS[c] for c in ("found_share", "epsilon_person", "epsilon_item")},
    "f1_last_day": "F1 of the last night's top 20 against the true top 20 of the words typed",
    **{c: DISCOVERY_COLUMNS[c] for c in ("slang_error", "delta", "entries_lost", "occurrences_lost")},
    "invented_mean": "listed words nobody typed, measured",
    "invented_expected": "listed words nobody typed, as the design states (tee_histogram: the expected "
                         "single-holder words a night; it invents none)",
    "trust_model": "the trust model the design stands for",
    "trusted": "who must be trusted for the stated ε",
}
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

    def lines(self, *, width: int | None = None, full: str | None = "word_discovery.csv") -> list[str]:
        """The table as ``ldpsim discover --trust`` prints it: the answers, then the privacy per person and
        per word, then what the bound costs; each column's meaning."""
        from ldpsim.evaluation.console_table import console_lines, fitted_columns

        p = self.params
        b, run = p["bound"], p["per_run"]
        title = (f"New words on the {p['fleet']} fleet ({p['word_devices']:,} devices typing words, {p['typed']} a "
                 f"night), ε = {p['epsilon']:g} per person over {p['days']} nights (δ ≤ {p['delta']:g}), "
                 f"{len(p['seeds'])} seeds; each device keeps ≤ {b.l0} words a night ({b.sampler}), ≤ {b.linf} "
                 f"each" + ("" if run is None else f", ≤ {run.l0} words over the run"
                            + ("" if run.linf is None else f" on ≤ {run.linf} nights each")))
        notes = [f"  {c}: {COLUMNS[c]}" for c in fitted_columns(self.table, list(COLUMNS), width=width)]
        if np.isinf(self.table[["epsilon_person", "epsilon_item"]].to_numpy()).any():
            notes.append("  inf in epsilon_person / epsilon_item: no finite guarantee at this δ")
        return console_lines(self.table, list(COLUMNS), title=title, width=width, full=full,
                             notes=["columns:", *notes])

    def to_folder(self, out, force: bool = False) -> list:
        """Write ``word_discovery.csv`` and ``word_discovery_nights.csv`` into the run folder ``out``; a
        finished result there is replaced only with ``force``. Returns the paths written."""
        from ldpsim.runtime.runfolder import RunFolder

        with RunFolder.open(out, LAYOUT, {"fingerprint": "word-discovery"}, replace=force, keep_finished=True) as folder:
            paths = [folder.write_text("word_discovery.csv", self.table.to_csv(index=False)),
                     folder.write_text("word_discovery_nights.csv", self.nights.to_csv(index=False))]
            folder.finalize()
        return paths


def compare_word_discovery(epsilon: float = 4.0, days: int = 30, delta: float = DELTA_RELEASE, seeds=(0, 1, 2),
                           scenario: str = "keyboard", typed: int = TYPED, bound: ContributionBound = BOUND,
                           per_run: ContributionBound | None = None) -> WordDiscoveryComparison:
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
    typed : int ≥ 1
        Word occurrences an online device types a night (default :data:`.trust_fleet.TYPED`).
    bound : ContributionBound
        Each device's bound a night, on the device (the TEE: in the enclave); default
        :data:`.trust_fleet.BOUND`: L0 = 2 distinct words, uniformly, L∞ = 1. Its ``linf`` must be set (the
        enclave's count sensitivity).
    per_run : ContributionBound, optional
        A bound over the run too (L0_run words a device ever contributes, each on at most L∞_run nights).

    Returns
    -------
    WordDiscoveryComparison
        ``table`` columns: design, trust_model, trusted, epsilon_person (ε per person over the run under
        the bounds, by the design's accountant), epsilon_item (one word of one person over the run),
        delta, found_share, days_to_discovery_median (days from the new word's first day; NaN: never
        found), f1_last_day (against the words typed), slang_error (mean |estimated − true share| of the
        new word on the nights it is listed), invented_mean, invented_expected (for the TEE: the expected
        words of a single holder per night; it invents none), entries_lost and occurrences_lost (what the
        bound drops of the typed (night, device, word) entries and occurrences; TrieHH: one vote a
        night).
    """
    from ldpsim.evaluation.workloads.vocabulary import Vocabulary
    from ldpsim.scenarios.studies.discovery.days import growing_slang
    from ldpsim.scenarios.studies.trust.trust_fleet import NEW_WORD, keyboard_fleet

    epsilon = check_real("compare_word_discovery", "epsilon", epsilon, 0.0, 50.0)
    delta = check_delta("compare_word_discovery", delta)
    typed = check_int("compare_word_discovery", "typed", typed, low=1)
    for name, b in (("bound", bound), ("per_run", per_run)):
        if b is not None and not isinstance(b, ContributionBound):
            raise InputError(f"compare_word_discovery: {name!r} must be a ContributionBound; got {b!r}.")
    if bound is None or bound.linf is None:
        raise InputError(f"compare_word_discovery: 'bound' needs an L∞ ('linf', the enclave's most per word and "
                         f"night); got {bound!r}.")
    seeds = [check_int("compare_word_discovery", "seeds", s, low=0) for s in seeds]
    if not seeds:
        raise InputError("compare_word_discovery: 'seeds' must hold at least one seed; got none.")
    fleet = keyboard_fleet(scenario, days=days)
    slang = growing_slang(Vocabulary(fleet.words, fleet.word_shares, "share"), NEW_WORD, n_days=fleet.days,
                          start_day=fleet.slang_start_day, peak_share=fleet.slang_share, ramp_days=1, top=None)
    designs = {name: bounded_design(name, DESIGNS[name][0], epsilon, fleet, delta, slang.codec, bound, per_run)
               for name in DESIGNS}
    rows, lost = [], []
    for seed in seeds:
        b, design_ss = typed_and_bounded(slang, fleet, typed, bound, per_run, seed, len(DESIGNS))
        for (name, (design, _, read)), ss in zip(designs.items(), design_ss):
            lost.append({"design": name, **b.lost(read)})
            rows += [{"design": name, "seed": seed, **r}
                     for r in bounded_scores(name, design, slang, b, read, np.random.default_rng(ss))]
    nights = pd.DataFrame(rows)[["design", "seed", "day", "found", "f1", "slang_estimate", "slang_true", "invented",
                                 "expected_false"]]
    lost = pd.DataFrame(lost).groupby("design").mean()
    table = pd.DataFrame([_row(name, nights[nights["design"] == name], designs[name][1], slang.start_day, seeds)
                          | lost.loc[name].to_dict() for name in DESIGNS])
    return WordDiscoveryComparison(table, nights, {"epsilon": epsilon, "days": fleet.days, "delta": delta,
                                                   "seeds": list(seeds), "fleet": fleet.name, "typed": typed,
                                                   "bound": bound, "per_run": per_run,
                                                   "word_devices": fleet.word_devices,
                                                   "tee": designs["tee_histogram"][0]})


def _row(name: str, g: pd.DataFrame, privacy: dict, start_day: int, seeds) -> dict:
    """One design's summary over its nights (module docstring)."""
    found, median = found_days(g, start_day, len(seeds))
    last = g[g["day"] == g["day"].max()]
    return {"design": name, "trust_model": DESIGNS[name][0], "trusted": DESIGNS[name][1],
            "epsilon_person": float(privacy["epsilon_person"]), "epsilon_item": float(privacy["epsilon_item"]),
            "delta": float(privacy["delta"]),
            "found_share": found, "days_to_discovery_median": median,
            "f1_last_day": float(last["f1"].mean()),
            "slang_error": slang_error(g),
            "invented_mean": float(g["invented"].mean()), "invented_expected": float(g["expected_false"].max())}
