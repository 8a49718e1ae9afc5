"""Days until a new slang word is found: interactive (TrieHH, TrieHH++, LDPTrie, Gboard, PrefixTree) against
one-shot (SFP, PEM, TreeHist) discovery on the same fleet, at equal ε per device over the run — docs/math.md §10.4.

* :func:`growing_slang`: the words of a vocabulary (English or Chinese chat corpus shipped with
  ldpsim, or the user's file, :func:`~ldpsim.evaluation.workloads.vocabulary.load_vocabulary`) plus a
  slang word whose share ramps up from ``start_day`` to ``peak_share`` over ``ramp_days`` (the
  fleet's trend shape); the other words share the rest in their vocabulary proportions.
* :func:`~ldpsim.evaluation.discovery.equal_privacy.equal_privacy_protocols` sets the protocols to the
  same ε per device over the run.
* :func:`discovery_days`: runs them on the same draws of the fleet (one per seed) and scores every
  day: ``found`` (the slang word is in the list published by that day), F1 of the list against the
  true top-k, the slang word's estimated and true share. Interactive lists are scored against the
  online devices of the day their pass ended, one-shot lists against all reports so far; and each
  list's ``invented`` words (in no device's vocabulary) beside the ``expected_false`` it states
  (docs/math.md §10.10) and the ``dropped`` prefixes of its pass or run (live, but cut by a cap). The
  summary gives, per protocol, the first day from which the slang word stays found (median over
  seeds, and the share of seeds where it is), the last day's F1 and the privacy.

>>> days = growing_slang("en", n_days=6, start_day=1, peak_share=0.2, ramp_days=2)
>>> days.slang, days.shares.shape[0]
('rizz', 6)
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ldpsim.evaluation.discovery.equal_privacy import (ONE_SHOT, equal_privacy_protocols, interactive_scores,
                                                      round_cohort, score_day)
from ldpsim.evaluation.discovery.scores import first_reaching
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.discovery.words import WordCodec
from ldpsim.mechanisms.registry import INTERACTIVE
from ldpsim.simulator.discovery_rounds import nightly_one_shot, online_holders
from ldpsim.runtime.brief_repr import BriefRepr
from ldpsim.runtime.runfolder import Layout
from ldpsim.mechanisms.deltas import DELTA_RELEASE

#: ``ldpsim discover``: days until a new word is found, protocol by protocol
LAYOUT = Layout("discover", ("discovery_days.csv", "discovery_days_summary.csv", "discovery_days.png"))

#: shipped corpora by language, and a slang word each holds nowhere
CORPORA = {"en": ("chat_en.corpus.txt", "rizz"), "zh": ("chat_zh.corpus.txt", "绝绝子")}


@dataclass(frozen=True)
class SlangDays:
    """Words over days: ``shares`` (days × words) with the slang word last (typed from ``start_day``),
    and the codec of the words."""

    words: tuple
    shares: np.ndarray
    slang: str
    start_day: int
    codec: WordCodec


def growing_slang(vocabulary="en", slang: str | None = None, n_days: int = 14, start_day: int = 2,
                  peak_share: float = 0.05, ramp_days: int = 7, top: int | None = 60) -> SlangDays:
    """The growing slang workload (module docstring); ``vocabulary`` is ``"en"``, ``"zh"``, a file or a
    :class:`~ldpsim.evaluation.workloads.vocabulary.Vocabulary`."""
    from ldpsim.evaluation.workloads.vocabulary import Vocabulary, load_vocabulary

    n_days = check_int("growing_slang", "n_days", n_days, low=1)
    start_day = check_int("growing_slang", "start_day", start_day, low=0)
    ramp_days = check_int("growing_slang", "ramp_days", ramp_days, low=1)
    peak_share = check_real("growing_slang", "peak_share", peak_share, 0.0, 1.0)
    if isinstance(vocabulary, str) and vocabulary in CORPORA:
        name, default = CORPORA[vocabulary]
        vocabulary, slang = resources.files("ldpsim.scenarios") / "data" / name, slang or default
    vocab = vocabulary if isinstance(vocabulary, Vocabulary) else load_vocabulary(str(vocabulary), top=top)
    if slang is None:
        raise ValueError("growing_slang: name the 'slang' word when the vocabulary is a file.")
    if slang in vocab.items:
        raise ValueError(f"growing_slang: the slang word {slang!r} is already in the vocabulary.")
    words = tuple(vocab.items) + (slang,)
    base = vocab.shares
    ramp = peak_share * np.clip((np.arange(n_days) - start_day + 1) / ramp_days, 0.0, 1.0)
    shares = np.column_stack([np.outer(1 - ramp, base), ramp])
    return SlangDays(words, shares, slang, start_day, WordCodec.for_words(words))


@dataclass(frozen=True, repr=False)
class DaysResult(BriefRepr):
    """Per-day scores (``days``: protocol, seed, day, found, f1, slang_estimate, slang_true) and the
    per-protocol ``summary``."""

    days: pd.DataFrame
    summary: pd.DataFrame

    def figure(self):
        """Two panels over days: share of seeds whose list holds the slang word, and mean F1."""
        from matplotlib.figure import Figure

        n = self.days["protocol"].nunique()
        fig = Figure(figsize=(10, 3.8 + 0.12 * n))
        a, b = fig.subplots(1, 2, sharex=True)
        for name, g in self.days.groupby("protocol", sort=False):
            s = self.summary.set_index("protocol").loc[name]
            label = f"{name}: {s['kind']}, ε={s['epsilon']:.3g}, δ={s['delta']:.1g}"
            by_day = g.groupby("day")
            a.plot(by_day["found"].mean(), marker="o", label=label)
            b.plot(by_day["f1"].mean(), marker="o")
        a.set(xlabel="day", ylabel="share of runs with the slang word found", ylim=(-0.02, 1.02),
              title="New word found, ε per device over the run")
        b.set(xlabel="day", ylabel="F1 of the top-k", ylim=(-0.02, 1.02), title="Precision of the list (F1)")
        fig.legend(*a.get_legend_handles_labels(), fontsize=7, loc="lower center", ncol=2, frameon=False)
        fig.tight_layout(rect=(0, 0.04 * ((n + 1) // 2), 1, 1))
        return fig

    def to_folder(self, out, force: bool = False) -> list:
        """Write ``discovery_days.csv``, ``discovery_days_summary.csv`` and ``discovery_days.png`` into
        the run folder ``out`` (a locked folder of figures and tables, :mod:`ldpsim.runtime.runfolder`);
        a finished result there is replaced only with ``force``. Returns the paths written."""
        import io

        from ldpsim.runtime import durable
        from ldpsim.runtime.runfolder import RunFolder

        tables = {"discovery_days.csv": self.days, "discovery_days_summary.csv": self.summary}
        with RunFolder.open(out, LAYOUT, {"fingerprint": "discovery-days"}, replace=force,
                            keep_finished=True) as folder:
            paths = [folder.write_text(name, table.to_csv(index=False)) for name, table in tables.items()]
            buf = io.BytesIO()
            self.figure().savefig(buf, format="png", dpi=110)
            durable.write_bytes(folder.path("discovery_days.png"), buf.getvalue())
            paths.append(folder.record("discovery_days.png"))
            folder.finalize()
        return paths


def _seeds(seeds) -> list:
    """``seeds`` as a list: distinct integers in 0 … 2⁶³ − 1 (a seed is stored as int64), at least one."""
    from ldpsim.scenarios.studies.scenario.schema import MAX_SEED

    seeds = list(seeds)
    if not seeds or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x <= MAX_SEED
                            for x in seeds) or len(set(seeds)) < len(seeds):
        raise ValueError(f"discovery_days: 'seeds' must be a non-empty list of distinct integers in [0, 2**63 - 1] "
                         f"(stored as int64); got {seeds!r}.")
    return seeds


def discovery_days(slang_days: SlangDays, protocols: dict, n_devices: int, p_online: float = 0.5,
                   rounds_per_day: int = 8, top_k: int = 10, seeds=(0,)) -> DaysResult:
    """Run ``protocols`` (from :func:`equal_privacy_protocols`) on the same fleet per seed (module
    docstring); one ``numpy.random.SeedSequence`` per seed, spawned into the fleet and one stream per
    protocol, so every protocol sees the same devices."""
    seeds = _seeds(seeds)
    rows = []
    for seed in seeds:
        fleet_ss, *proto_ss = np.random.SeedSequence(int(seed)).spawn(1 + len(protocols))
        online = online_holders(slang_days.shares, n_devices, p_online, np.random.default_rng(fleet_ss))
        cumulative = online.cumsum(axis=0)
        for (name, (proto, _)), ss in zip(protocols.items(), proto_ss):
            rng = np.random.default_rng(ss)
            if name in INTERACTIVE:
                rows += [{"protocol": name, "seed": seed, **r} for r in interactive_scores(
                    proto, slang_days.words, online, rounds_per_day, top_k, slang_days.slang, rng)]
            else:
                for night in nightly_one_shot(proto, slang_days.words, online, top_k, rng):
                    rows.append({"protocol": name, "seed": seed, **score_day(
                        night["day"], slang_days.words, cumulative[night["day"]], night["words"],
                        night["counts"], night["reports"], top_k, slang_days.slang, night["expected_false"]),
                        "dropped": night["dropped"]})
    days = pd.DataFrame(rows, columns=["protocol", "seed", "day", "found", "f1", "slang_estimate", "slang_true",
                                       "invented", "expected_false", "dropped"])
    summary = []
    for name, (_, privacy) in protocols.items():
        g = days[days["protocol"] == name] if len(days) else days
        firsts = [first_reaching(s["day"], s["found"].astype(float), level=1.0) for _, s in g.groupby("seed")]
        hit = [f for f in firsts if f is not None]
        last_day = g[g["day"] == g["day"].max()] if len(g) else g
        summary.append({"protocol": name, **privacy, **one_word_a_day(privacy["epsilon"]), "seeds": len(seeds), "found_share": len(hit) / len(seeds),
                        "first_day_found_median": float(np.median(hit)) if hit else np.nan,
                        "days_to_discovery_median": float(np.median(hit)) - slang_days.start_day if hit else np.nan,
                        "f1_last_day": float(last_day["f1"].mean()) if len(last_day) else np.nan,
                        "invented_mean": float(g["invented"].mean()) if len(g) else np.nan,
                        "invented_expected": float(g["expected_false"].max()) if len(g) else np.nan,
                        "dropped_mean": float(g["dropped"].mean()) if len(g) else np.nan})
    return DaysResult(days, pd.DataFrame(summary))


#: the keys of a ``[discovery_days]`` table, with defaults (``scenarios/discovery_days.toml``)
FILE_KEYS = {"vocabulary": "en", "slang": "", "n_days": 14, "start_day": 2, "peak_share": 0.05, "ramp_days": 7,
             "n_devices": 1_000_000, "p_online": 0.5, "rounds_per_day": 0, "top_k": 10, "epsilon": 4.0,
             "delta": DELTA_RELEASE, "gamma": 0.05, "seeds": [0], "protocols": [*INTERACTIVE, *ONE_SHOT]}


def one_word_a_day(epsilon: float) -> dict:
    """``epsilon_item`` and ``epsilon_person`` of a device holding one word a day (docs/math.md §8.7): every
    report of the run may carry that one word (D·min(r, L∞) = D·r reports,
    :func:`~ldpsim.evaluation.privacy.levels.report_counts`), so one word and the whole person move the
    same reports as the device's ε over the run."""
    return {"epsilon_item": float(epsilon), "epsilon_person": float(epsilon)}


def discovery_days_from_file(path, seeds=None) -> DaysResult:
    """Run the ``[discovery_days]`` table of a scenario file (keys: :data:`FILE_KEYS`;
    ``rounds_per_day = 0`` means one pass a day, ``slang = ""`` the corpus's default word);
    ``seeds`` overrides the file's."""
    from ldpsim.mechanisms._validation import DELTA_MAX
    from ldpsim.scenarios.studies.scenario.schema import MAX_SEED, Field, ScenarioError, load_toml, parse_table

    raw = load_toml(path)
    if set(raw) != {"discovery_days"}:
        raise ScenarioError(path, "file", "must hold exactly one [discovery_days] table")
    spec = {k: Field(type(v) if not isinstance(v, float) else (float, int), v) for k, v in FILE_KEYS.items()}
    spec["seeds"] = Field(list, FILE_KEYS["seeds"], lambda v: None if v and all(
        isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_SEED for x in v) and len(set(v)) == len(v) else
        "must be a non-empty list of distinct integers in [0, 2**63 - 1]")
    spec["delta"] = Field((float, int), FILE_KEYS["delta"], lambda v: None if 0 < v <= DELTA_MAX else
                          f"must be a δ in (0, {DELTA_MAX:g}] (mechanisms/_validation.py)")
    spec["protocols"] = Field(list, FILE_KEYS["protocols"], lambda v: None if v and set(v) <= {*INTERACTIVE, *ONE_SHOT}
                              else f"must be a non-empty list of {sorted((*INTERACTIVE, *ONE_SHOT))}")
    c = parse_table(raw["discovery_days"], spec, "discovery_days", path)
    from ldpsim.evaluation.cost import discovery_plan  # refused before the corpus is read when it cannot fit
    seeds = c["seeds"] if seeds is None else _seeds(seeds)
    discovery_plan(len(c["protocols"]), c["n_days"], len(seeds), path)
    vocabulary = c["vocabulary"]
    if vocabulary not in CORPORA:
        from ldpsim.evaluation.workloads.vocabulary import resolve_file
        vocabulary = resolve_file(vocabulary, base=Path(path).parent)
    try:
        sd = growing_slang(vocabulary, c["slang"] or None, c["n_days"], c["start_day"], c["peak_share"],
                           c["ramp_days"])
        per_day = c["rounds_per_day"] or sd.codec.length
        protocols = equal_privacy_protocols(sd.codec, c["epsilon"], c["delta"], c["n_days"], per_day, c["gamma"],
                                            tuple(c["protocols"]), cohort=round_cohort(c["n_devices"], c["p_online"]))
    except ValueError as exc:
        raise ScenarioError(path, "discovery_days", str(exc)) from None
    return discovery_days(sd, protocols, c["n_devices"], c["p_online"], per_day, c["top_k"], seeds)
