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
    from ldpsim.simulator.fleet import draw_traits

    seed = int(np.random.SeedSequence(cfg.seed, spawn_key=(0x0B5E,)).generate_state(1)[0])
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
    reports = mech.decode(rows.tobytes())
    prior_fav, rho = favourite_model(cfg)
    pi = np.asarray(cfg.item_weights)
    ids, dev_idx = np.unique(device, return_inverse=True)
    if uc.memoize and isinstance(mech, two_stage.MECHANISMS):  # shared permanent response: joint per device
        post = np.log(prior_fav) + two_stage.device_log_likelihoods(mech, reports, candidates, dev_idx, ids.size,
                                                                    rho, pi)
    else:
        try:
            ll = log_likelihoods(mech, reports, candidates)
        except NotImplementedError:
            return {}
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
