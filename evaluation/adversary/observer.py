"""The server-side observer of a deployment: guessing each tapped device's favourite item.

A device's items are drawn from its personal preference θ (``simulator/fleet.py``); its favourite is
argmax θ. The observer knows the fleet model and the mechanism, not θ, and guesses the favourite by
the Bayes rule argmax_x P(fav = x) · P(its reports | fav = x) (docs/math.md §3), under this model:

* **prior** P(fav = x): the favourites of a fleet drawn from the same model with another seed
  (8 192 devices), smoothed by the workload frequencies π;
* **one report** y given fav = x: its item is the favourite with probability ρ (the mean preference
  weight of the favourite in that fleet) and otherwise drawn from π, so
  P(y | fav = x) = ρ·P(y | x) + (1 − ρ)·Σ_z π(z)·P(y | z); a device's reports are taken as independent
  given its favourite (they are independent given θ; this is the model's one approximation).

P(y | x) is the mechanism's likelihood (``log_likelihoods``: the transition matrix of discrete
oracles; RAPPOR's and dBitFlip's exact law of the bits, ``adversary.two_stage``; for sketches and
unary/hashed oracles a report either supports x or not, with the log gap of ``adversary.sketch.support``).
When RAPPOR or dBitFlip is memoized the reports of one value share their permanent response, so a
linked device's reports are not independent given x: the observer then scores a device's reports
jointly (``two_stage.device_log_likelihoods``: shared permanent, fresh instantaneous response, the
favourite's share ρ mixed per position with the workload's background).
Any other memoized event oracle memoizes the whole report: a device reports M(v) for the value v it
typed, M fixed per (device, value). Its identical reports are then one value's memo, not independent
observations; the observer groups them and weighs a group of c identical reports by how likely one
value is to be typed on c of the device's days (:func:`memo_device_log_likelihoods`, docs/math.md §7.5).

*Linked*: reports keep the device id; the observer combines all of a device's reports.
*Stripped and shuffled*: the store holds no id. A report then has the same likelihood whichever
device sent it, so it carries no information about one device's favourite and the Bayes observer's
posterior is its prior: its accuracy is that of the prior-only guess, argmax P(fav = x). (Attributing
random reports to a device, as an earlier version did, is not a Bayes rule: it scored below the prior.)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ldpsim.evaluation.adversary import two_stage
from ldpsim.evaluation.adversary.sketch import support

#: devices of the model fleet that estimates the prior of favourites and ρ
_MODEL_BLOCKS_DEVICES = 8192


def log_likelihoods(mech, reports, items) -> np.ndarray:
    """log P[y_r | x] up to a per-report constant, for every report r and item x (n_reports × n_items).

    Discrete oracles: the transition matrix. RAPPOR and dBitFlip: the exact law of one report's bits
    (``two_stage.report_log_likelihoods``, docs/math.md §7.5). Sketches and unary/hashed oracles
    (docs/math.md §3): a report either supports a candidate or not, with a fixed log-likelihood gap
    (``sketch.support``).
    """
    if hasattr(mech, "transition_matrix"):
        with np.errstate(divide="ignore"):
            return np.log(mech.transition_matrix()[:, np.asarray(reports)].T)
    if isinstance(mech, two_stage.MECHANISMS):
        return two_stage.report_log_likelihoods(mech, reports, items)
    try:
        supported, gap = support(mech, reports, items)
    except TypeError as exc:
        raise NotImplementedError(str(exc)) from None
    return np.where(supported, gap, 0.0)


def favourite_model(cfg) -> tuple[np.ndarray, float]:
    """(P(fav = x) for every item, ρ) from a model fleet of ``cfg`` drawn with another seed."""
    from ldpsim.simulator.fleet import draw_traits, stream

    seed = int(stream(cfg.seed, "adversary").generate_state(1)[0])
    model = dataclasses.replace(cfg, seed=seed)
    blocks = range(min(model.n_blocks, -(-_MODEL_BLOCKS_DEVICES // model.block_size)))
    n_items = len(cfg.items)
    counts, weight, n = np.zeros(n_items), 0.0, 0
    for b in blocks:
        t = draw_traits(model, b)
        w = np.diff(t.cum, axis=1, prepend=0.0)
        pref = np.zeros((t.atoms.shape[0], n_items))
        np.add.at(pref, (np.repeat(np.arange(t.atoms.shape[0]), t.atoms.shape[1]), t.atoms.ravel()), w.ravel())
        counts += np.bincount(pref.argmax(axis=1), minlength=n_items)
        weight += pref.max(axis=1).sum()
        n += pref.shape[0]
    pi = np.asarray(cfg.item_weights)
    return (counts + pi) / (n + 1), weight / max(n, 1)


def device_posteriors(ll: np.ndarray, dev_idx: np.ndarray, n_devices: int, log_prior_fav: np.ndarray,
                      pi: np.ndarray, rho: float) -> np.ndarray:
    """log P(fav = x | a device's reports) up to a constant per device (n_devices × n_items).

    ``ll`` holds log P(y_r | x) per report (rows) and item; ``dev_idx`` the device of each report.
    """
    lik = np.exp(ll - ll.max(axis=1, keepdims=True))            # P(y_r | x) / max_x, per report
    mix = rho * lik + (1 - rho) * (lik @ pi)[:, None]           # P(y_r | fav = x), same scale
    out = np.tile(log_prior_fav, (n_devices, 1))
    np.add.at(out, dev_idx, np.log(mix))
    return out


def report_groups(dev_idx: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, group_dev, counts): a device's identical encoded reports form one group.

    ``rows`` holds the encoded reports (n_reports × report_bytes, uint8) and ``dev_idx`` the device
    of each; returns, per group, the index of its first report, its device and its size c_g.
    """
    rows = np.ascontiguousarray(rows, np.uint8)
    dev = np.asarray(dev_idx, np.int64)
    if rows.ndim != 2 or dev.shape != (rows.shape[0],):
        raise ValueError(f"report_groups: 'rows' must be (n_reports, report_bytes) with one device each; "
                         f"got rows {rows.shape}, dev_idx {dev.shape}.")
    keyed = np.ascontiguousarray(np.concatenate([dev.astype(">i8").view(np.uint8).reshape(-1, 8), rows], axis=1))
    _, first, counts = np.unique(keyed.view(np.dtype((np.void, keyed.shape[1]))).ravel(),
                                 return_index=True, return_counts=True)
    return first, dev[first], counts


def _segment_logsumexp(values: np.ndarray, seg: np.ndarray, n_seg: int) -> np.ndarray:
    """log Σ exp(values[r]) over the rows r of each segment (n_seg × columns; −inf for an empty one)."""
    top = np.full((n_seg, values.shape[1]), -np.inf)
    np.maximum.at(top, seg, values)
    shift = np.where(np.isfinite(top), top, 0.0)
    acc = np.zeros_like(top)
    np.add.at(acc, seg, np.exp(values - shift[seg]))
    with np.errstate(divide="ignore"):
        return np.log(acc) + shift


def memo_device_log_likelihoods(ll: np.ndarray, group_dev: np.ndarray, counts: np.ndarray, n_devices: int,
                                pi: np.ndarray, rho: float) -> np.ndarray:
    """log P(a memoized device's reports | fav = x) up to a constant per device (n_devices × n_items).

    A group g (``report_groups``) of c_g identical reports is taken as one value's memo typed on c_g
    days, each day's value drawn from q(u | x) = ρ·𝟙[u = x] + (1 − ρ)·π(u), and the favourite x fills
    at most one group (docs/math.md §7.5): with b_g(x) = Σ_{u≠x} ((1 − ρ)π(u))^{c_g}·P(r_g | u) and
    a_g(x) = q(x | x)^{c_g}·P(r_g | x), P ≈ Π_g b_g·(1 + Σ_g a_g/b_g). The candidates must be the
    whole domain (π is over them).

    Parameters
    ----------
    ll : numpy.ndarray, shape (n_groups, n_items)
        log P(r_g | u) of each group's report, up to a per-group constant.
    group_dev : array_like of int, shape (n_groups,)
        Device index 0..n_devices−1 of each group.
    counts : array_like of int, shape (n_groups,)
        c_g ≥ 1, the number of reports in each group.
    n_devices : int
    pi : array_like, shape (n_items,)
        Background frequencies of the values (normalized here).
    rho : float
        Probability that a day's value is the favourite, in [0, 1].

    Returns
    -------
    numpy.ndarray of float, shape (n_devices, n_items)
        0 in every column for a device without reports.
    """
    ll = np.asarray(ll, float)
    c = np.asarray(counts, float)[:, None]
    g_dev = np.asarray(group_dev, np.int64)
    pi = np.asarray(pi, float)
    if not 0 <= rho <= 1:
        raise ValueError(f"memo_device_log_likelihoods: 'rho' must be in [0, 1]; got {rho}.")
    if ll.ndim != 2 or pi.shape != (ll.shape[1],) or c.shape[0] != ll.shape[0] or g_dev.shape != (ll.shape[0],):
        raise ValueError(f"memo_device_log_likelihoods: need ll (groups × items), pi (items,), counts and "
                         f"group_dev (groups,); got {ll.shape}, {pi.shape}, {c.shape[0]}, {g_dev.shape}.")
    if c.size and c.min() < 1:
        raise ValueError(f"memo_device_log_likelihoods: 'counts' must be ≥ 1; got min {c.min():g}.")
    pi = pi / pi.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        bg = c * np.log((1 - rho) * pi)[None, :] + ll                       # one background value u
        log_a = c * np.log(rho + (1 - rho) * pi)[None, :] + ll              # the favourite
        top = bg.max(axis=1, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        e = np.exp(bg - top)
        excl = e.sum(axis=1, keepdims=True) - e                             # Σ over u ≠ x, ≥ e[argmax]
        arg = e.argmax(axis=1)
        rest = e.copy()
        rest[np.arange(e.shape[0]), arg] = 0.0
        excl[np.arange(e.shape[0]), arg] = rest.sum(axis=1)                 # no cancellation at the argmax
        log_b = np.log(np.maximum(excl, 0.0)) + top
    # Σ_{h≠g} log b_h per device, exact when some b_h = 0 (counted apart)
    zero = ~np.isfinite(log_b)
    fin = np.where(zero, 0.0, log_b)
    F, Z = np.zeros((n_devices, ll.shape[1])), np.zeros((n_devices, ll.shape[1]))
    np.add.at(F, g_dev, fin)
    np.add.at(Z, g_dev, zero)
    others = np.where(Z[g_dev] - zero > 0, -np.inf, F[g_dev] - fin)
    with_fav = _segment_logsumexp(log_a + others, g_dev, n_devices)       # the favourite fills group g
    without = np.where(Z > 0, -np.inf, F)                                 # the favourite fills none
    return np.logaddexp(without, with_fav)


def guesses(cfg, result) -> dict | None:
    """Per tapped device: its favourite (``favourite``), the linked observer's guess (``linked``) and the
    prior-only guess (``prior``, the stripped and shuffled observer's too); None without taps, and
    ``{}`` when the mechanism has no likelihood rule."""
    uc = cfg.use_case("event")
    taps = [t for t in result.tap if uc is not None and t["use_case"] == uc.name]
    if not taps:
        return None
    mech = uc.make_mechanism()
    device = np.concatenate([t["device"] for t in taps])
    rows = np.concatenate([t["rows"] for t in taps])
    candidates = cfg.items if mech.takes_tokens else np.arange(len(cfg.items))  # id oracles take ids
    prior_fav, rho = favourite_model(cfg)
    pi = np.asarray(cfg.item_weights)
    ids, dev_idx = np.unique(device, return_inverse=True)
    if uc.memoize and isinstance(mech, two_stage.MECHANISMS):  # shared permanent response: joint per device
        post = np.log(prior_fav) + two_stage.device_log_likelihoods(mech, mech.decode(rows.tobytes()), candidates,
                                                                    dev_idx, ids.size, rho, pi)
    else:
        if uc.memoize:  # the whole report memoized: a group of identical reports is one value's memo
            first, group_dev, counts = report_groups(dev_idx, rows)
        try:
            ll = log_likelihoods(mech, mech.decode((rows[first] if uc.memoize else rows).tobytes()), candidates)
        except NotImplementedError:
            return {}
        if uc.memoize:
            post = np.log(prior_fav) + memo_device_log_likelihoods(ll, group_dev, counts, ids.size, pi, rho)
        else:
            post = device_posteriors(ll, dev_idx, ids.size, np.log(prior_fav), pi, rho)
    return {"favourite": np.array([result.favourite[i] for i in ids.tolist()]), "linked": post.argmax(axis=1),
            "prior": np.full(ids.size, int(np.argmax(prior_fav))), "reports": int(device.size), "rho": float(rho)}


def adversary(cfg, result, rng=None) -> dict:
    """Accuracy of the Bayes observer guessing each tapped device's favourite item: linked, stripped
    and shuffled (= prior only, see the module docstring), and the prior-only guess. ``rng`` is unused
    (the observer is deterministic)."""
    g = guesses(cfg, result)
    if g is None:
        return {}
    if not g:
        return {"adversary_linked": np.nan, "adversary_stripped": np.nan}
    fav = g["favourite"]
    prior_only = float(np.mean(g["prior"] == fav))
    return {"adversary_devices": int(fav.size), "adversary_reports": g["reports"],
            "adversary_linked": float(np.mean(g["linked"] == fav)),
            "adversary_stripped": prior_only, "adversary_prior_only": prior_only, "adversary_rho": g["rho"]}
