"""Days until a new slang word is found: interactive (TrieHH, TrieHH++, LDPTrie, Gboard, PrefixTree) against
one-shot (SFP, PEM, TreeHist) discovery on the same fleet, at equal ε per device over the run — docs/math.md §10.4.

* :func:`growing_slang`: the words of a vocabulary (English or Chinese chat corpus shipped with
  ldpsim, or the user's file, :func:`~ldpsim.evaluation.workloads.vocabulary.load_vocabulary`) plus a
  slang word whose share ramps up from ``start_day`` to ``peak_share`` over ``ramp_days`` (the
  fleet's trend shape); the other words share the rest in their vocabulary proportions.
* :func:`equal_privacy_protocols`: each protocol set to the same ε per device over the run — TrieHH
  and TrieHH++ over the R rounds of the run with the smallest threshold θ whose δ at ε_total, composed
  through the rounds' privacy-loss distribution (docs/math.md §10.9), is at most ``delta`` (central
  (ε, δ) after the threshold; the basic composition's θ is shown beside it); LDPTrie at ε_total/R per
  round, pure ε-LDP; Gboard's trie (``gboard``) and the prefix tree (``prefix_tree``) at the ε₀ per round
  whose *central* ε per device over the run after secure aggregation is ε_total at ``delta`` (locally
  ε₀-LDP per round); the one-shot ones at ε_total/D per daily report (D days), pure ε-LDP, δ = 0.
  The ε are equal and the δ and kinds are shown; ``epsilon_pld`` is each one's ε over the run at
  δ = ``delta`` by the project's accountant (privacy-loss distributions of the per-step guarantees),
  tighter than the basic sum.
* :func:`discovery_days`: runs them on the same draws of the fleet (one per seed) and scores every
  day: ``found`` (the slang word is in the list published by that day), F1 of the list against the
  true top-k, the slang word's estimated and true share. Interactive lists are scored against the
  online devices of the day their pass ended, one-shot lists against all reports so far. The
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

from ldpsim.evaluation.discovery.scores import first_reaching, run_scores
from ldpsim.evaluation.privacy.threshold_composition import threshold_run
from ldpsim.mechanisms._validation import check_int, check_real
from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie
from ldpsim.mechanisms.discovery.ldp_trie import LDPTrie
from ldpsim.mechanisms.discovery.prefix_tree import PrefixTree
from ldpsim.mechanisms.discovery.words import WordCodec
from ldpsim.mechanisms.registry import INTERACTIVE, make
from ldpsim.simulator.discovery_rounds import interactive_passes, nightly_one_shot, online_holders

#: shipped corpora by language, and a slang word each holds nowhere
CORPORA = {"en": ("chat_en.corpus.txt", "rizz"), "zh": ("chat_zh.corpus.txt", "绝绝子")}
ONE_SHOT = ("sfp", "pem", "treehist")


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


def equal_privacy_protocols(codec: WordCodec, epsilon_total: float, delta: float, n_days: int,
                            rounds_per_day: int, gamma: float, names=(*INTERACTIVE, *ONE_SHOT),
                            one_shot_params: dict | None = None, cohort: int | None = None) -> dict[str, tuple]:
    """name → (protocol, privacy row) at equal ε per device over the run (module docstring); ``cohort``
    is the fewest devices a round of Gboard's trie or the prefix tree aggregates (:func:`round_cohort`)."""
    epsilon_total = check_real("equal_privacy_protocols", "epsilon_total", epsilon_total, 0.0, np.inf)
    rounds = n_days * rounds_per_day
    out = {}
    for name in names:
        if name in INTERACTIVE and issubclass(INTERACTIVE[name], (GboardTrie, PrefixTree)):
            proto, row = _under_secure_aggregation(name, codec, epsilon_total, delta, rounds, cohort)
            steps = None
        elif name in INTERACTIVE and issubclass(INTERACTIVE[name], LDPTrie):
            proto = make(name, epsilon=epsilon_total / rounds, length=codec.length, alphabet=codec.alphabet)
            row = {"kind": "pure ε-LDP", "guarantee": "pure ε-LDP, composed over the rounds", "epsilon": epsilon_total,
                   "delta": 0.0, "per_step": f"ε={epsilon_total / rounds:.3g}/round"}
            steps = [(epsilon_total / rounds, 0.0)] * rounds
        elif name in INTERACTIVE:
            probe = make(name, gamma=gamma, theta=1, length=codec.length, alphabet=codec.alphabet)
            run = threshold_run(probe, epsilon_total, delta, rounds)
            proto = make(name, gamma=gamma, theta=run["theta"], length=codec.length, alphabet=codec.alphabet)
            row = {"kind": "central (ε, δ)", "guarantee": "central (ε, δ) after the threshold, per device over the run",
                   "epsilon": epsilon_total, "delta": run["delta"], "epsilon_pld": run["epsilon_pld"],
                   "per_step": f"θ={run['theta']} (basic composition: θ={run['theta_basic']}), γ={gamma:g}"}
            steps = None  # composed exactly above (docs/math.md §10.9)
        elif name in ONE_SHOT:
            eps = epsilon_total / n_days
            proto = make(name, epsilon=eps, length=codec.length, alphabet=codec.alphabet,
                         **(one_shot_params or {}).get(name, {}))
            row = {"kind": "pure ε-LDP", "guarantee": "pure ε-LDP, composed over the daily reports", "epsilon": epsilon_total,
                   "delta": 0.0, "per_step": f"ε={eps:.3g}/daily report"}
            steps = [(eps, 0.0)] * n_days
        else:
            raise ValueError(f"equal_privacy_protocols: unknown protocol {name!r}; choose from "
                             f"{sorted((*INTERACTIVE, *ONE_SHOT))}.")
        if steps is not None:
            row["epsilon_pld"] = _pld_epsilon(steps, delta)
        out[name] = (proto, row)
    return out


def round_cohort(n_devices: int, p_online: float) -> int:
    """The cohort a day's rounds can count on: ⌊μ − 5σ⌋ of the online devices, Bin(n_devices, p_online)."""
    mu = n_devices * p_online
    return max(2, int(mu - 5 * np.sqrt(mu * (1 - p_online))))


def _under_secure_aggregation(name: str, codec: WordCodec, epsilon_total: float, delta: float, rounds: int,
                              cohort: int | None):
    """A trie of local reports summed by secure aggregation (Gboard's, the prefix tree) at the ε₀ per round
    whose central ε per device over the run, after aggregation of at least ``cohort`` reports a round, is
    ``epsilon_total`` at ``delta`` (docs/math.md §10.6)."""
    from ldpsim.evaluation.privacy.secagg_rounds import local_epsilon_for, round_guarantees

    if cohort is None:
        raise ValueError(f"equal_privacy_protocols: {name!r} needs the 'cohort' of its rounds (round_cohort).")
    eps0 = local_epsilon_for(epsilon_total, delta, cohort, rounds)
    extra = {"min_cohort": cohort} if issubclass(INTERACTIVE[name], GboardTrie) else {}
    proto = make(name, epsilon=eps0, length=codec.length, alphabet=codec.alphabet, **extra)
    run = round_guarantees(proto, cohort, delta, rounds).set_index("scope").loc["run, central"]
    return proto, {"kind": "central (ε, δ) after secure aggregation",
                   "guarantee": f"central (ε, δ) per device over the run, secure aggregation of ≥ {cohort} "
                                f"reports a round; locally ε₀-LDP per round ({rounds * eps0:.3g} over the run)",
                   "epsilon": float(run["epsilon"]), "delta": delta, "epsilon_pld": float(run["epsilon"]),
                   "per_step": f"ε₀={eps0:.3g}/round (local)"}


def _pld_epsilon(steps, delta: float) -> float:
    """ε per device over the run at total ``delta`` by the project's accountant (privacy-loss
    distributions, :func:`~ldpsim.evaluation.privacy.composition.compose`); NaN if the steps' δ
    already exceed it."""
    from ldpsim.evaluation.privacy.composition import compose

    try:
        return float(compose(steps, delta).epsilon)
    except ValueError:
        return float("nan")


def _score(day, words, holders, found, counts, n, top_k, slang) -> dict:
    order = np.argsort(-holders, kind="stable")
    s = run_scores(np.asarray(words, dtype=object)[order], holders[order], found, counts, top_k, planted=slang)
    est = dict(zip(np.asarray(found).tolist(), (np.asarray(counts, float) / max(n, 1)).tolist()))
    return {"day": day, "found": bool(s["found"]), "f1": s["f1"], "slang_estimate": est.get(slang, np.nan),
            "slang_true": holders[-1] / max(holders.sum(), 1)}


def interactive_scores(protocol, words, online: np.ndarray, rounds_per_day: int, top_k: int, slang, rng) -> list[dict]:
    """Each day's scores of the list published by the latest completed pass (rows: day, found, f1,
    slang_estimate, slang_true), scored against the online devices of the day that pass ended."""
    published = {p["day"]: p for p in interactive_passes(protocol, words, online, rounds_per_day, rng)}
    rows, last = [], None
    for day in range(online.shape[0]):
        last = published.get(day, last)
        if last is None:
            continue
        order = np.argsort(-last["votes"], kind="stable")  # most votes first, as one-shot lists
        rows.append(_score(day, words, online[last["day"]], last["words"][order], last["counts"][order],
                           last["online"], top_k, slang))
    return rows


@dataclass(frozen=True)
class DaysResult:
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
        with RunFolder.open(out, "discover", {"fingerprint": "discovery-days"}, replace=force,
                            keep_finished=True) as folder:
            paths = [folder.write_text(name, table.to_csv(index=False)) for name, table in tables.items()]
            buf = io.BytesIO()
            self.figure().savefig(buf, format="png", dpi=110)
            durable.write_bytes(folder.path("discovery_days.png"), buf.getvalue())
            paths.append(folder.record("discovery_days.png"))
            folder.finalize()
        return paths


def discovery_days(slang_days: SlangDays, protocols: dict, n_devices: int, p_online: float = 0.5,
                   rounds_per_day: int = 8, top_k: int = 10, seeds=(0,)) -> DaysResult:
    """Run ``protocols`` (from :func:`equal_privacy_protocols`) on the same fleet per seed (module
    docstring); one ``numpy.random.SeedSequence`` per seed, spawned into the fleet and one stream per
    protocol, so every protocol sees the same devices."""
    seeds = list(seeds)
    if not seeds or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x >= 0 for x in seeds):
        raise ValueError(f"discovery_days: 'seeds' must be a non-empty list of integers >= 0; got {seeds!r}.")
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
                    rows.append({"protocol": name, "seed": seed, **_score(
                        night["day"], slang_days.words, cumulative[night["day"]], night["words"],
                        night["counts"], night["reports"], top_k, slang_days.slang)})
    days = pd.DataFrame(rows, columns=["protocol", "seed", "day", "found", "f1", "slang_estimate", "slang_true"])
    summary = []
    for name, (_, privacy) in protocols.items():
        g = days[days["protocol"] == name] if len(days) else days
        firsts = [first_reaching(s["day"], s["found"].astype(float), level=1.0) for _, s in g.groupby("seed")]
        hit = [f for f in firsts if f is not None]
        last_day = g[g["day"] == g["day"].max()] if len(g) else g
        summary.append({"protocol": name, **privacy, "seeds": len(seeds), "found_share": len(hit) / len(seeds),
                        "first_day_found_median": float(np.median(hit)) if hit else np.nan,
                        "days_to_discovery_median": float(np.median(hit)) - slang_days.start_day if hit else np.nan,
                        "f1_last_day": float(last_day["f1"].mean()) if len(last_day) else np.nan})
    return DaysResult(days, pd.DataFrame(summary))


#: the keys of a ``[discovery_days]`` table, with defaults (``scenarios/discovery_days.toml``)
FILE_KEYS = {"vocabulary": "en", "slang": "", "n_days": 14, "start_day": 2, "peak_share": 0.05, "ramp_days": 7,
             "n_devices": 1_000_000, "p_online": 0.5, "rounds_per_day": 0, "top_k": 10, "epsilon": 4.0,
             "delta": 1e-9, "gamma": 0.05, "seeds": [0], "protocols": [*INTERACTIVE, *ONE_SHOT]}


def discovery_days_from_file(path, seeds=None) -> DaysResult:
    """Run the ``[discovery_days]`` table of a scenario file (keys: :data:`FILE_KEYS`;
    ``rounds_per_day = 0`` means one pass a day, ``slang = ""`` the corpus's default word);
    ``seeds`` overrides the file's."""
    from ldpsim.scenarios.studies.scenario.schema import Field, ScenarioError, load_toml, parse_table

    raw = load_toml(path)
    if set(raw) != {"discovery_days"}:
        raise ScenarioError(path, "file", "must hold exactly one [discovery_days] table")
    spec = {k: Field(type(v) if not isinstance(v, float) else (float, int), v) for k, v in FILE_KEYS.items()}
    spec["seeds"] = Field(list, FILE_KEYS["seeds"], lambda v: None if v and all(
        isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v) else "must be a non-empty list of integers >= 0")
    spec["protocols"] = Field(list, FILE_KEYS["protocols"], lambda v: None if v and set(v) <= {*INTERACTIVE, *ONE_SHOT}
                              else f"must be a non-empty list of {sorted((*INTERACTIVE, *ONE_SHOT))}")
    c = parse_table(raw["discovery_days"], spec, "discovery_days", path)
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
    return discovery_days(sd, protocols, c["n_devices"], c["p_online"], per_day, c["top_k"],
                          c["seeds"] if seeds is None else seeds)
