"""The poisoning sweep: every oracle × attack × ε × β (× defense), measured beside the closed form.

A scenario file with a ``[poisoning]`` table (``scenarios/poisoning.toml``) is the grid; every cell
measures ``repeats`` frequency gains in the population engine (:func:`.measure.measure_gain`) and
stores the mean, its standard error, the closed form (:func:`.gains.expected_gain`) and, undefended,
z = (mean − closed form)/se in one row; :func:`closed_form_check` tests every undefended cell at a
family-wise false-alarm rate.
Defenses: ``none``, ``normalization`` (Norm-Sub of the whole domain's estimates), ``detection``
(fake-user detection, MGA on the oracles whose reports support item sets — OUE, SUE, THE, OLH, BLH,
FLH, dBitFlip — per-report path with ``detection_repeats`` repeats) and ``decoder`` (RAPPOR's MGA: the
paper's LASSO + least-squares decoding instead of plain least squares; non-linear, so measured without
a closed form — its row's ``closed_form`` is the least-squares one, for comparison).

Sensitive ids of URR and high ids of SDGRR: every ``sensitive_every``-th id (0, k, 2k, …).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ldpsim.evaluation.poisoning.defenses import DETECTABLE, decoded_frequencies, normalized_frequencies
from ldpsim.evaluation.poisoning.gains import ATTACKS, expected_gain
from ldpsim.evaluation.poisoning.measure import gain_after_detection, measure_gain
from ldpsim.runtime.plain import plain_name
from ldpsim.scenarios.studies.scenario.schema import Field, ScenarioError, load_toml, parse_table
from ldpsim.evaluation.workloads import make_workload
from ldpsim.mechanisms import make
from ldpsim.runtime.durable import write_file

MECHANISMS = ("grr", "urr", "sdgrr", "hr", "oue", "sue", "the", "she", "olh", "blh", "flh", "dbitflip",
              "cms", "hcms", "rappor")
DEFENSES = ("none", "normalization", "detection", "decoder")


def _subset(allowed):
    def check(values):
        bad = [v for v in values if v not in allowed]
        return f"must be a non-empty list of {allowed}" if not values or bad else None
    return check


def _positive_list(values):
    return None if values and all(isinstance(v, (int, float)) and v > 0 for v in values) else "must be positive numbers"


def _fractions(values):
    return None if values and all(isinstance(v, (int, float)) and 0 < v < 1 for v in values) else "must be in (0, 1)"


SPEC = {
    "name": Field(str, "poisoning", plain_name), "seed": Field(int, 0), "repeats": Field(int, 50, lambda v: None if v >= 2 else "must be >= 2"),
    "detection_repeats": Field(int, 3, lambda v: None if v >= 1 else "must be >= 1"),
    "n": Field(int, 100_000, lambda v: None if v >= 100 else "must be >= 100"),
    "workload": Field(str, "zipf"), "domain_size": Field(int, 100, lambda v: None if v >= 4 else "must be >= 4"),
    "targets": Field(int, 3, lambda v: None if v >= 1 else "must be >= 1"),
    "mechanisms": Field(list, list(MECHANISMS), _subset(MECHANISMS)),
    "attacks": Field(list, list(ATTACKS), _subset(ATTACKS)),
    "defenses": Field(list, ["none"], _subset(DEFENSES)),
    "epsilon": Field(list, [1.0], _positive_list), "beta": Field(list, [0.01, 0.05], _fractions),
    "sketch_k": Field(int, 64, lambda v: None if v >= 1 else "must be >= 1"),
    "sketch_m": Field(int, 256, lambda v: None if v >= 2 and not v & (v - 1) else "must be a power of 2"),
    "sensitive_every": Field(int, 2, lambda v: None if v >= 1 else "must be >= 1"),
    "dbitflip_d": Field(int, 4, lambda v: None if v >= 1 else "must be >= 1"),
    "flh_pool": Field(int, 1024, lambda v: None if v >= 1 else "must be >= 1"),
}


def _non_negative_ints(values):
    return None if values and all(isinstance(v, int) and v >= 0 for v in values) else "must be integers >= 0"


#: ``[poisoning_fleet]``: fake devices in a deployment scenario (:mod:`.deployment_attack`)
FLEET_SPEC = {
    "name": Field(str, "poisoning-fleet", plain_name), "scenario": Field(str, "keyboard"),
    "devices": Field(int, 5000, lambda v: None if v >= 1 else "must be >= 1"),
    "days": Field(int, 7, lambda v: None if v >= 1 else "must be >= 1"),
    "seed": Field(int, 0), "target_rank": Field(int, 80, lambda v: None if v >= 1 else "must be >= 1"),
    "fakes": Field(list, [0, 10, 20, 40, 80], _non_negative_ints),
    "epsilon": Field(list, [2.0, 4.0, 8.0], _positive_list),
    "defenses": Field(list, ["none", "attestation 50%", "rate limit 10 ids × 5/day"],
                      _subset(("none", "attestation 50%", "rate limit 10 ids × 5/day"))),
    # "event": push the emoji of rank target_rank; "word": push the made-up `word` into the nightly discovery
    "use_case": Field(str, "event", lambda v: None if v in ("event", "word") else "must be 'event' or 'word'"),
    "word": Field(str, "xqzw"),
}


def load_poisoning(path) -> dict:
    """Read and check a poisoning scenario: a ``[poisoning]`` table (the population sweep) or a
    ``[poisoning_fleet]`` table (fake devices in a deployment); the result has ``kind`` set."""
    raw = load_toml(path)
    tables = [t for t in ("poisoning", "poisoning_fleet") if t in raw]
    if len(tables) != 1:
        raise ScenarioError(path, "poisoning", "is required: a poisoning scenario has one [poisoning] or "
                                               "[poisoning_fleet] table")
    extra = sorted(set(raw) - set(tables))
    if extra:
        raise ScenarioError(path, extra[0], f"unknown table; this poisoning scenario has only [{tables[0]}]")
    if tables[0] == "poisoning_fleet":
        return {"kind": "fleet", **parse_table(raw["poisoning_fleet"], FLEET_SPEC, "poisoning_fleet", path)}
    cfg = {"kind": "population", **parse_table(raw["poisoning"], SPEC, "poisoning", path)}
    if cfg["targets"] >= cfg["domain_size"]:
        raise ScenarioError(path, "poisoning.targets", f"must be smaller than domain_size; got {cfg['targets']}")
    return cfg


def _mechanism(name: str, eps: float, cfg: dict):
    d = cfg["domain_size"]
    if name in ("cms", "hcms"):
        return make(name, epsilon=eps, k=cfg["sketch_k"], m=cfg["sketch_m"])
    if name == "rappor":
        return make(name, epsilon=eps)
    extra = {"urr": {"sensitive": list(range(0, d, cfg["sensitive_every"]))},
             "sdgrr": {"high": list(range(0, d, cfg["sensitive_every"]))},
             "dbitflip": {"d": min(cfg["dbitflip_d"], d)}, "flh": {"pool_size": cfg["flh_pool"]}}.get(name, {})
    return make(name, epsilon=eps, domain_size=d, **extra)


def _applies(mech, attack: str, defense: str) -> bool:
    """Detection runs on MGA for oracles with item-set reports; the decoder on RAPPOR's MGA only."""
    if defense == "detection":
        return attack == "mga" and isinstance(mech, DETECTABLE)
    return defense != "decoder" or (attack == "mga" and mech.name == "RAPPOR")


def run_poisoning(cfg: dict, progress=None) -> pd.DataFrame:
    """One row per cell: measured gain (mean, se), closed form, and the defense's measurements."""
    w = make_workload(cfg["workload"], cfg["n"], domain_size=cfg["domain_size"])
    ids = list(range(cfg["domain_size"] - cfg["targets"], cfg["domain_size"]))  # the least frequent items
    root = np.random.SeedSequence(cfg["seed"])
    cells = [(mech, attack, eps, beta, defense) for mech in cfg["mechanisms"] for attack in cfg["attacks"]
             for eps in cfg["epsilon"] for beta in cfg["beta"] for defense in cfg["defenses"]
             if _applies(_mechanism(mech, eps, cfg), attack, defense)]
    rows = []
    for i, ((name, attack, eps, beta, defense), child) in enumerate(zip(cells, root.spawn(len(cells)))):
        mech = _mechanism(name, eps, cfg)
        items = w.items if mech.takes_tokens else np.arange(w.items.size)
        targets = [w.items[j] for j in ids]
        m = max(1, round(beta * cfg["n"] / (1 - beta)))  # β = m / (n + m)
        rng = np.random.default_rng(child)
        g = mech.guarantee
        row = {"mechanism": name, "attack": attack, "epsilon": eps, "guarantee": g.label,
               "epsilon_report": g.epsilon_report, "beta": beta, "defense": defense, "m_fake": m,
               "targets": cfg["targets"], "n": cfg["n"],
               "closed_form": expected_gain(mech, attack, [items[j] for j in ids], w.counts, items, m)}
        if defense == "detection":
            gains, fakes, genuine = gain_after_detection(mech, attack, targets, w.counts, w.items, m,
                                                         cfg["detection_repeats"], rng)
            row.update(fakes_flagged=fakes, genuine_flagged=genuine)
        else:
            fn = {"normalization": normalized_frequencies, "decoder": decoded_frequencies}.get(defense)
            gains = measure_gain(mech, attack, targets, w.counts, w.items, m, cfg["repeats"], rng, fn)
        row.update(gain=float(gains.mean()), gain_se=float(gains.std(ddof=1) / math.sqrt(gains.size))
                   if gains.size > 1 else float("nan"), repeats=int(gains.size))
        row["z"] = (row["gain"] - row["closed_form"]) / row["gain_se"] if defense == "none" else float("nan")
        rows.append(row)
        if progress:
            progress(i + 1, len(cells))
    return pd.DataFrame(rows)


def closed_form_check(table: pd.DataFrame, alpha: float = 0.01) -> dict:
    """Do the undefended cells agree with their closed forms? Largest |z| = |gain − closed form|/se against
    the two-sided bound at family-wise false-alarm rate ``alpha`` (Bonferroni over the cells; Student's t
    with repeats − 1 degrees of freedom, since se is estimated from the repeats)."""
    from scipy import stats

    none = table[table["defense"] == "none"]
    z = none["z"].abs()
    df = max(int(none["repeats"].min()) - 1, 1) if len(none) else 1
    bound = float(stats.t.isf(alpha / (2 * max(len(z), 1)), df))
    return {"cells": int(len(z)), "max_abs_z": float(z.max()) if len(z) else float("nan"), "bound": bound,
            "alpha": alpha, "agree": bool((z <= bound).all())}


def plot_gains(table: pd.DataFrame, path) -> str:
    """Gain against β per oracle: measured (markers, ±2 se) and closed form (lines), per attack."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps = sorted(table["epsilon"].unique())[0]
    t = table[table["epsilon"] == eps]
    mechs = list(dict.fromkeys(t["mechanism"]))
    cols = min(len(mechs), 5)
    rows = -(-len(mechs) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.8 * cols, 2.6 * rows), sharey=False, squeeze=False)
    colors = {"rpa": "tab:blue", "ria": "tab:orange", "mga": "tab:red"}
    for ax in axes.flat[len(mechs):]:
        ax.set_visible(False)
    for ax, mech in zip(axes.flat, mechs):
        for attack, g in t[(t["mechanism"] == mech) & (t["defense"] == "none")].groupby("attack"):
            g = g.sort_values("beta")
            ax.plot(g["beta"], g["closed_form"], "-", color=colors[attack], lw=1, label=f"{attack.upper()} closed form")
            ax.errorbar(g["beta"], g["gain"], yerr=2 * g["gain_se"], fmt="o", ms=3, color=colors[attack],
                        label=f"{attack.upper()} measured")
        norm = t[(t["mechanism"] == mech) & (t["defense"] == "normalization") & (t["attack"] == "mga")]
        if not norm.empty:
            ax.plot(norm["beta"], norm["gain"], "s--", ms=3, color="gray", lw=0.8, label="MGA + normalization")
        det = t[(t["mechanism"] == mech) & (t["defense"] == "detection")]
        if not det.empty:
            ax.plot(det["beta"], det["gain"], "^:", ms=3, color="k", lw=0.8, label="MGA + detection")
        dec = t[(t["mechanism"] == mech) & (t["defense"] == "decoder") & (t["attack"] == "mga")]
        if not dec.empty:
            ax.plot(dec["beta"], dec["gain"], "v-.", ms=3, color="tab:green", lw=0.8, label="MGA, LASSO decoder")
        g = t[t["mechanism"] == mech].iloc[0]
        ax.set(xscale="log", title=f"{mech.upper()}: {g['guarantee']}, ε = {g['epsilon_report']:.3g} a report")
        ax.title.set_fontsize(8)
        ax.tick_params(labelsize=7)
        ax.axhline(0, color="k", lw=0.5)
        ax.grid(alpha=0.3)
    for row in axes:
        row[0].set_ylabel("gain", fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("β (share of fake users)", fontsize=8)
    labels = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            labels.setdefault(label, handle)
    fig.legend(list(labels.values()), list(labels), loc="lower center", ncol=min(len(labels), 5), fontsize=7)
    fig.tight_layout(rect=(0, 0.04 + 0.025 * (-(-len(labels) // 5)), 1, 1))
    write_file(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    plt.close(fig)
    return str(path)
