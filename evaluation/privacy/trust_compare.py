"""Trust models side by side at equal (ε, δ) per device over the run — docs/math.md §9.6.

:func:`compare_trust_models` calibrates every model of
:data:`~ldpsim.evaluation.privacy.trust_accounting.MODELS` (but ``sample_threshold``, whose ε follows from
its rate and threshold and is reported as it is) to the same ε per device over ``days`` days at one δ,
then measures one day's estimate of a Zipf histogram at the count level (exact laws, ``repeats`` draws)
next to its exact theory: MSE, top-k precision, the smallest frequency reliably detected, upload bytes
per device, who must be trusted, and what is left if they are not.

>>> r = compare_trust_models(n=20_000, domain_size=50, epsilons=(4.0,), models=("ldp", "two_server"),
...                          repeats=3, rng=1)
>>> sorted(r.table["model"])
['ldp', 'two_server']
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

from ldpsim.evaluation.privacy.trust_accounting import MODELS, TrustModel, calibrate, guarantees
from ldpsim.evaluation.report.legend import quiet_corner
from ldpsim.evaluation.workloads.synthetic import zipf
from ldpsim.mechanisms import make
from ldpsim.mechanisms._validation import as_generator, check_int
from ldpsim.mechanisms.aggregation.field_shares import prio3_histogram_bytes
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.secagg_cost import secagg_bytes
from ldpsim.mechanisms.aggregation.threshold import noisy_threshold_moments
from ldpsim.mechanisms.aggregation.two_server import TwoServer
from ldpsim.runtime.errors import InputError

#: starting parameters of each model before calibration (the noise families production uses)
DEFAULTS = {
    "ldp": TrustModel("ldp"),
    "shuffle": TrustModel("shuffle"),
    "secagg_local": TrustModel("secagg_local", min_cohort=10_000),
    "secagg": TrustModel("secagg", noise=IntegerNoise("skellam", 1000.0), min_cohort=10_000, min_arrival=0.8),
    "two_server": TrustModel("two_server", noise=IntegerNoise("discrete_gaussian", 30.0), noise_by="both"),
    "threshold": TrustModel("threshold", noise=IntegerNoise("discrete_gaussian", 30.0)),
    "sample_threshold": TrustModel("sample_threshold", rate=0.1, threshold=20),
}
#: share of devices whose upload arrives before the secure-aggregation round closes (channel dropouts)
ARRIVAL = 0.9
#: family-wise false-alarm rate and power of the detection floor
FALSE_ALARM, POWER = 0.05, 0.95


def release_threshold(model: TrustModel, d: int) -> TrustModel:
    """A ``threshold`` model with τ at the noise's family-wise false-alarm level over d items,
    τ = ⌈z_{1−FALSE_ALARM/d}·sd⌉ (other models unchanged)."""
    if model.kind != "threshold":
        return model
    return replace(model, threshold=int(math.ceil(stats.norm.isf(FALSE_ALARM / d) * model.noise.sd())))


def two_server(model: TrustModel, d: int) -> TwoServer:
    """The aggregators' protocol of a ``two_server`` model (with its client randomizer, if any)."""
    client = local_oracle(model, d) if model.client_epsilon is not None else None
    return TwoServer(model.noise, model.noise_by, client=client)


def local_oracle(model: TrustModel, d: int):
    """The local randomizer: OLH for pure LDP (small ε₀, large D), GRR under shuffling / aggregation,
    symmetric RAPPOR (SUE) for two servers with client randomization."""
    if model.kind == "two_server":
        return make("sue", epsilon=model.client_epsilon, domain_size=d)
    name = "olh" if model.kind == "ldp" else "grr"
    return make(name, epsilon=min(model.local_epsilon, 50.0), domain_size=d)


def _draw(model: TrustModel, counts: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """One day's estimate and the counts it estimates, at the count level."""
    k = model.kind
    if k in ("ldp", "shuffle", "secagg_local"):
        oracle = local_oracle(model, counts.size)
        return oracle.estimate(oracle.sample_aggregate(counts, rng=rng)), counts
    if k == "secagg":
        return model.secure_sum().release(counts, rng, arrival_rate=ARRIVAL)
    if k == "two_server":
        return two_server(model, counts.size).release(counts, rng), counts
    if k == "threshold":
        x = counts + model.noise.sample(counts.size, rng)
        return np.where(x >= model.threshold, x, 0).astype(float), counts
    return model.sampler().release(counts, rng), counts


def _theory(model: TrustModel, counts: np.ndarray) -> tuple[np.ndarray, float]:
    """Exact per-item MSE of the day's estimate, and the estimate's sd at a zero count."""
    k, n = model.kind, int(counts.sum())
    if k in ("ldp", "shuffle", "secagg_local"):
        var = local_oracle(model, counts.size).variance(counts)
        return var, math.sqrt(float(var[np.argmin(counts)]))
    if k == "secagg":
        v = model.secure_sum().noise_variance(n, ARRIVAL)
        return np.full(counts.size, v), math.sqrt(v)
    if k == "two_server":
        var = two_server(model, counts.size).variance(counts)
        return var, math.sqrt(float(var[np.argmin(counts)]))
    if k == "threshold":
        return noisy_threshold_moments(model.noise, counts, model.threshold)[1], model.noise.sd()
    return model.sampler().moments(counts)[1], math.nan


def _detection_floor(model: TrustModel, sd0: float, d: int, n: int) -> float:
    """Smallest count detected with probability POWER at a family-wise false-alarm rate FALSE_ALARM over
    the d items (normal approximation; threshold models: their release threshold)."""
    z_alarm, z_power = stats.norm.isf(FALSE_ALARM / d), stats.norm.isf(1 - POWER)
    if model.kind == "threshold":
        return model.threshold + z_power * sd0
    if model.kind == "sample_threshold":
        c = np.arange(1, n + 1)
        ok = stats.binom.sf(model.threshold - 1, c, model.rate) >= POWER
        return float(c[np.argmax(ok)]) if ok.any() else math.inf
    return (z_alarm + z_power) * sd0


def upload_bytes(model: TrustModel, d: int) -> int:
    """Bytes per device per report (docs/math.md §9.3 for the costs' sources; secure aggregation: sent and
    received, :func:`~ldpsim.mechanisms.aggregation.secagg_cost.secagg_bytes`)."""
    k = model.kind
    if k in ("ldp", "shuffle"):
        return local_oracle(model, d).report_bytes
    if k in ("secagg", "secagg_local"):          # SecAgg+ messages; each bin's sum: s one-hots (+ noise within ±10 sd)
        s = model.min_cohort
        spread = 20 * model.noise.sd() if k == "secagg" else 0.0
        return secagg_bytes(d, s, s + 1 + spread)
    if k == "two_server":
        return prio3_histogram_bytes(d)["upload"]
    return 4


@dataclass
class TrustComparison:
    """What :func:`compare_trust_models` returns: one row per (model, ε over the run); the error curves."""

    table: pd.DataFrame
    params: dict

    def figure(self):
        """Relative RMSE of one day's frequency estimates against ε per device over the run, one line per
        model (log–log). Returns a matplotlib Figure."""
        from matplotlib.figure import Figure     # no pyplot: the caller's backend is left alone

        fig = Figure(figsize=(6.4, 4.2))
        ax = fig.subplots()
        for model, rows in self.table.groupby("model", sort=False):
            rows = rows.sort_values("epsilon_run")
            ax.plot(rows["epsilon_run"], rows["rmse_frequency_theory"], marker="o", label=model)
        ax.set_xscale("log")
        ax.set_yscale("log")
        # one kind of guarantee on the axis: the server's view, per device over the run, δ ≤ the stated δ
        # (an ε-LDP device is also (ε, 0)-DP in the server's view); who must be trusted differs by line
        ax.set_xlabel(f"central ε per device over {self.params['days']} days (δ ≤ {self.params['delta']:g}), "
                      "trusted parties following the protocol", fontsize=8)
        ax.set_ylabel("RMSE of one day's frequencies")
        ax.set_title(f"n = {self.params['n']:,} devices, D = {self.params['domain_size']:,} items")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc=quiet_corner(ax))
        fig.tight_layout()
        return fig


def compare_trust_models(n: int = 1_000_000, domain_size: int = 2000, days: int = 30, delta: float = 1e-9,
                         epsilons=(0.5, 1.0, 2.0, 4.0, 8.0), models=MODELS, zipf_s: float = 1.1,
                         top_k: int = 10, repeats: int = 20, rng=None) -> TrustComparison:
    """Every model at the same ε per device over ``days`` days, one row per (model, ε).

    Parameters
    ----------
    n : int
        Devices reporting per day (one report each).
    domain_size : int
        Items D of the Zipf(``zipf_s``) histogram.
    days : int
        Length of the run the ε is spent over.
    delta : float
        δ of every central guarantee.
    epsilons : sequence of float
        Targets for ε per device over the run.
    models : sequence of str
        A subset of :data:`~ldpsim.evaluation.privacy.trust_accounting.MODELS`.
    top_k : int
        k of the top-k precision.
    repeats : int
        Count-level draws of one day per row (the measured MSE and precision).
    rng : numpy.random.Generator, int or None

    Returns
    -------
    TrustComparison
        ``table`` columns: model, epsilon_run, parameter, epsilon_report, epsilon_day, mse_theory,
        mse_measured, rmse_frequency_theory, top_k_precision, min_frequency, bytes_per_device, trusted,
        if_misbehaving.
    """
    n = check_int("compare_trust_models", "n", n, low=2)
    d = check_int("compare_trust_models", "domain_size", domain_size, low=2)
    repeats = check_int("compare_trust_models", "repeats", repeats, low=1)
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        raise InputError(f"The 'models' parameter of compare_trust_models must hold names from "
                         f"{', '.join(MODELS)}. Got {unknown[0]!r} instead.")
    seed = rng if isinstance(rng, int) else None
    rng = as_generator(rng)
    counts = zipf(n, domain_size=d, s=zipf_s).counts.astype(np.int64)
    true_top = set(np.argsort(-counts, kind="stable")[:top_k].tolist())
    rows = []
    for name in models:
        for eps in epsilons:
            model = release_threshold(calibrate(DEFAULTS[name], eps, n, days, delta), d)
            g = {x.scope: x for x in guarantees(model, n, days, delta)}
            mse_th, sd0 = _theory(model, counts)
            errs, precision = [], []
            for _ in range(repeats):
                est, target = _draw(model, counts, rng)
                errs.append(np.mean((est - target) ** 2))
                precision.append(len(true_top & set(np.argsort(-est, kind="stable")[:top_k].tolist())) / top_k)
            param = model.local_epsilon if name in ("ldp", "shuffle", "secagg_local") else (
                model.noise.scale if model.noise is not None and name != "sample_threshold" else model.rate)
            rows.append({"model": name, "epsilon_target": eps, "epsilon_run": g["run"].epsilon, "parameter": param,
                         "epsilon_report": g["report"].epsilon, "epsilon_day": g["day"].epsilon,
                         "mse_theory": float(np.mean(mse_th)), "mse_measured": float(np.mean(errs)),
                         "rmse_frequency_theory": math.sqrt(float(np.mean(mse_th))) / n,
                         "top_k_precision": float(np.mean(precision)),
                         "min_frequency": _detection_floor(model, sd0, d, n) / n,
                         "bytes_per_device": upload_bytes(model, d), "trusted": model.trusted,
                         "if_misbehaving": g["misbehaving server"].epsilon})
            if name == "sample_threshold":
                break              # its ε is fixed by (rate, threshold): one row
    return TrustComparison(pd.DataFrame(rows), {"n": n, "domain_size": d, "days": days, "delta": delta,
                                                "zipf_s": zipf_s, "top_k": top_k, "repeats": repeats,
                                                "epsilons": list(epsilons), "models": list(models),
                                                "seed": seed})
