"""The attack memoization invites, and the one it prevents: a linking observer over many days.

Each of ``n_devices`` devices holds a value x_i drawn from the workload's frequencies π (a new
value x'_i ≠ x_i from ``change_day`` on, when given) and reports it once a day with one mechanism,
either freshly randomized every day or memoized (``simulator/memoization.py``: the report of (device,
value) is the same every day). The observer knows the protocol and π and guesses each device's
*current* value as the MAP of a posterior built from the per-report likelihoods
P[y | x] of the Bayesian adversary (``adversary.observer.log_likelihoods``: transition matrices,
sketch support):

* fresh reports, **linked** (device ids kept): π(x)·Π_{s≤t} P[y_s | x] — averaging many days
  reveals the value (the accuracy grows with t toward 1);
* memoized, linked: a repeated report is post-processing of the first and adds nothing, and a
  different report means the value changed, so the posterior is π(x)·P[y_t | x] for the latest
  report: the accuracy stays at its one-report level however many days — but every change of the
  value is visible as a change of the report (``report_changed``);
* **stripped** (no ids, reports shuffled within each day): the same rules applied to a random
  device's report of each day: about the prior-only accuracy max_x π(x).

Derivation: docs/math.md §7.5, "Memoization in the ledger". The fresh-report observer assumes a constant value (it does not look for change points), so after
a change its accuracy for the new value recovers only as new reports outweigh the old ones.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from ldpsim.mechanisms._validation import as_generator, check_int
from ldpsim.mechanisms.memo import keyed_perturb
from ldpsim.simulator.memoization import device_keys, report_keys


def _report_rows(mech, reports) -> np.ndarray:
    """Each report as one row of bytes (its wire form), to compare reports for equality."""
    return np.frombuffer(mech.encode(reports), np.uint8).reshape(-1, mech.report_bytes)


def _draw_values(prior: np.ndarray, n: int, rng, avoid=None) -> np.ndarray:
    x = rng.choice(prior.size, size=n, p=prior)
    if avoid is not None:  # redraw until different from the old value
        same = x == avoid
        while same.any():
            x[same] = rng.choice(prior.size, size=int(same.sum()), p=prior)
            same = x == avoid
    return x


def linking_accuracy(mech, items, prior, n_devices: int = 2000, n_days: int = 30, memoize: bool = False,
                     change_day: int | None = None, rng=None, key_base: int = 1) -> pd.DataFrame:
    """Accuracy of the linked and stripped observers after each day 1..``n_days``.

    Parameters
    ----------
    mech : FrequencyOracle
        The mechanism (item ids 0..D−1, or tokens ``items`` for CMS/HCMS).
    items : sequence
        The D candidate items (tokens or ids) in the order of ``prior``.
    prior : array of D floats
        The workload frequencies (values are drawn from them; the observer knows them).
    n_devices, n_days : int ≥ 1
    memoize : bool
        Memoized reports (keyed by device and value) instead of fresh ones.
    change_day : int in [2, n_days] or None
        From this day on (1-based) every device holds a new value, different from its first.
    rng : Generator, seed or None

    Returns
    -------
    DataFrame with one row per day: ``day`` (1-based number of days observed), ``linked``,
    ``stripped``, ``prior_only`` (accuracy of guessing the current value), ``report_changed``
    (share of devices whose report differs from the day before).
    """
    from ldpsim.evaluation.adversary.observer import log_likelihoods

    check_int("linking_accuracy", "n_devices", n_devices, low=1)
    check_int("linking_accuracy", "n_days", n_days, low=1)
    if change_day is not None:
        check_int("linking_accuracy", "change_day", change_day, low=2, high=n_days)
    rng = as_generator(rng)
    prior = np.asarray(prior, float) / np.sum(prior)
    tokens = np.empty(len(items), dtype=object)
    tokens[:] = list(items)
    takes_tokens = getattr(mech, "takes_tokens", False)
    first = _draw_values(prior, n_devices, rng)
    second = _draw_values(prior, n_devices, rng, avoid=first) if change_day is not None else first
    devices = np.arange(n_devices)
    log_prior = np.log(prior)
    tiebreak = rng.random((n_devices, prior.size))  # the observer breaks ties the same way every day
    log_post = {"linked": log_prior + np.zeros((n_devices, 1)), "stripped": log_prior + np.zeros((n_devices, 1))}
    last_rows = {"linked": None, "stripped": None}
    out = []
    for day in range(n_days):
        x = second if change_day is not None and day + 1 >= change_day else first
        arg = tokens[x] if takes_tokens else x
        if memoize:
            reports = keyed_perturb(mech, x, report_keys(key_base, devices, x), arg if takes_tokens else None,
                                    rng, device_keys(key_base, devices))
        else:
            reports = mech.perturb(arg, rng)
        rows = _report_rows(mech, reports)
        ll = log_likelihoods(mech, mech.decode(rows.tobytes()), tokens if takes_tokens else np.arange(len(items)))
        row = {"day": day + 1}
        changed = None
        for view, perm in (("linked", devices), ("stripped", rng.permutation(n_devices))):
            seen_ll, seen_rows = ll[perm], rows[perm]
            if memoize:  # the latest report carries everything: repeats add nothing
                log_post[view] = log_prior + seen_ll
            else:
                log_post[view] = log_post[view] + seen_ll
            if view == "linked":
                prev = last_rows["linked"]
                changed = np.zeros(n_devices, bool) if prev is None else np.any(prev != seen_rows, axis=1)
            last_rows[view] = seen_rows
            row[view] = float(np.mean(_map_guess(log_post[view], tiebreak) == x))
        row["prior_only"] = float(np.mean(np.argmax(prior) == x))
        row["report_changed"] = float(changed.mean())
        out.append(row)
    return pd.DataFrame(out)


def _map_guess(log_post: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """argmax per row, ties broken by the largest of the row's uniform ``tiebreak`` keys."""
    best = log_post >= log_post.max(axis=1, keepdims=True) - 1e-9
    return np.where(best, tiebreak, -1.0).argmax(axis=1)


def linking_study(cases: dict, items, prior, n_devices: int = 2000, n_days: int = 30, change_day: int = 15,
                  seed: int = 0) -> pd.DataFrame:
    """``linking_accuracy`` for every mechanism of ``cases`` (name → mechanism), memoized or not, with a
    constant value and with a value that changes on ``change_day``: one tidy table."""
    frames = []
    for k, (name, mech) in enumerate(cases.items()):
        for memoize in (False, True):
            for change in (None, change_day):
                rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(k, memoize, change or 0)))
                df = linking_accuracy(mech, items, prior, n_devices, n_days, memoize, change, rng, key_base=seed + k)
                frames.append(df.assign(mechanism=name, memoize=memoize, value="changes" if change else "constant"))
    return pd.concat(frames, ignore_index=True)


def plot_linking(df: pd.DataFrame, path, title: str | None = None) -> None:
    """Accuracy of the linked (solid) and stripped (dotted) observers against days, memoized or not;
    one panel per value model (constant, changes), one colour per mechanism and memo setting, under ``title``
    (the mechanisms and what their ε means); a PNG."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4))
    axes = fig.subplots(1, 2, sharey=True)
    for ax, value in zip(axes, ("constant", "changes")):
        d = df[df["value"] == value]
        for i, ((mech, memo), g) in enumerate(d.groupby(["mechanism", "memoize"])):
            label = f"{mech} {'memoized' if memo else 'fresh'}"
            ax.plot(g["day"], g["linked"], "-", color=f"C{i}", label=f"{label}, linked")
            ax.plot(g["day"], g["stripped"], ":", color=f"C{i}")
        ax.plot(d["day"].unique(), d.groupby("day")["prior_only"].mean(), "k--", lw=0.8, label="prior only")
        ax.set(xlabel="days observed", title=f"value {'changes on day ' + str(df.attrs.get('change_day', '')) if value == 'changes' else 'constant'}")
    axes[0].set_ylabel("accuracy of guessing the current value")
    axes[1].legend(fontsize=7, loc="upper left")
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100, format="png")


