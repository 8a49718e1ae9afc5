"""The Bayesian adversary of the SDLDP paper (sections 3.5 and 4.4) — docs/math.md §3.

Seeing a report y, the adversary guesses A(y) = argmax_x P[y|x]·π(x), with π uniform (the paper's
adversary, who does not know the prior) or the workload's frequencies (a stronger adversary); ties
are broken uniformly at random, independently for every report. Class inference is the same MAP
over the sensitivity classes: argmax_c Σ_{x∈c} P[y|x]·π(x).

Exact expectations use the transition matrix P (rows inputs x, columns outputs y):
P(A(y) = x) = 𝟙[x ∈ T(y)]/|T(y)| with T(y) the tied maximisers, and
E[ACC] = Σ_x π_true(x) Σ_y P[y|x]·P(A(y) = x). Reference values (paper eqs. (17), (18)) for
high-sensitivity inputs under a uniform prior: GRR and SDGRR e^ε/(D+e^ε−1), URR e^ε/(|X_S|+e^ε−1).
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_item_ids

#: relative tolerance under which two posterior weights count as a tie
TIE_RTOL = 1e-9


def normalized_prior(prior, size: int, name: str) -> np.ndarray:
    """``prior`` as probabilities summing to one (uniform when None); raises naming ``name``."""
    if prior is None:
        return np.full(size, 1.0 / size)
    p = np.asarray(prior, dtype=np.float64)
    if p.shape != (size,) or not np.all(np.isfinite(p)) or p.min() < 0 or p.sum() <= 0:
        raise ValueError(f"{name!r} must be {size} non-negative finite weights, not all zero; got shape {p.shape}.")
    return p / p.sum()


def _matrix(transition_matrix) -> np.ndarray:
    P = np.asarray(transition_matrix, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] < 1 or np.any(P < 0) or not np.allclose(P.sum(axis=1), 1.0):
        raise ValueError(f"'transition_matrix' must be a 2-D row-stochastic array; got shape {P.shape}.")
    return P


def _group_index(groups, size: int) -> tuple[np.ndarray, int]:
    if groups is None:
        return np.arange(size), size
    _, g = np.unique(np.asarray(groups), return_inverse=True)
    if g.shape != (size,):
        raise ValueError(f"'groups' must label each of the {size} inputs; got shape {np.shape(groups)}.")
    return g, int(g.max()) + 1


def _tied(P: np.ndarray, prior, groups) -> tuple[np.ndarray, np.ndarray]:
    """(T, g): T[c, y] True where class c maximises Σ_{x∈c} π(x)P[x,y]; g the class of each input."""
    P = _matrix(P)
    pi = normalized_prior(prior, P.shape[0], "prior")
    g, n_groups = _group_index(groups, P.shape[0])
    w = np.zeros((n_groups, P.shape[1]))
    np.add.at(w, g, pi[:, None] * P)
    return w >= w.max(axis=0) * (1 - TIE_RTOL), g


def guess_probabilities(transition_matrix, prior=None, groups=None) -> np.ndarray:
    """G[y, c] = P(A(y) = c): uniform over the tied MAP inputs (or classes, with ``groups``)."""
    t, _ = _tied(transition_matrix, prior, groups)
    return (t / t.sum(axis=0)).T


def bayes_guess(transition_matrix, prior=None, rng=None) -> np.ndarray:
    """One guess table: the adversary's guess for every output y (ties broken uniformly at random)."""
    t, _ = _tied(transition_matrix, prior, None)
    keys = np.where(t, as_generator(rng).random(t.shape), -1.0)
    return keys.argmax(axis=0)


def accuracy_by_input(transition_matrix, adversary_prior=None, groups=None) -> np.ndarray:
    """P(correct guess | input x) = Σ_y P[y|x]·P(A(y) = x) (or of x's class, with ``groups``)."""
    P = _matrix(transition_matrix)
    t, g = _tied(P, adversary_prior, groups)
    G = t / t.sum(axis=0)  # classes × outputs
    return (P * G[g]).sum(axis=1)


def expected_accuracy(transition_matrix, true_prior=None, adversary_prior=None, subset=None,
                      groups=None) -> float:
    """E[ACC] = Σ_x π_true(x) Σ_y P[y|x]·P(A(y) = x), over the inputs in ``subset`` (renormalised).

    ``true_prior`` (default uniform) is how users' values are distributed; ``adversary_prior``
    (default uniform, the paper's adversary) is what the adversary assumes. ``subset``: ids or a
    boolean mask of inputs (e.g. the high-sensitivity ones). ``groups``: accuracy of inferring the
    class label instead of the value.
    """
    acc = accuracy_by_input(transition_matrix, adversary_prior, groups)
    pi = normalized_prior(true_prior, acc.size, "true_prior")
    if subset is not None:
        mask = np.zeros(acc.size, dtype=bool)
        mask[np.asarray(subset)] = True
        if not (mask & (pi > 0)).any():
            raise ValueError("'subset' selects no input with positive prior probability.")
        pi = np.where(mask, pi, 0.0)
    return float((pi * acc).sum() / pi.sum())


def high_mask(mechanism) -> np.ndarray:
    """High-sensitivity inputs of a discrete oracle: SDGRR's ``high``, URR's ``sensitive``, else all."""
    mask = np.zeros(mechanism.domain_size, dtype=bool)
    ids = getattr(mechanism, "high", getattr(mechanism, "sensitive", None))
    mask[list(range(mechanism.domain_size)) if ids is None else list(ids)] = True
    return mask


def _sample_guesses(t: np.ndarray, reports: np.ndarray, rng) -> np.ndarray:
    """A guess per report, uniform over the tied classes of its output (independently per report)."""
    n_tied = t.sum(axis=0)
    table = np.argsort(~t, axis=0, kind="stable")  # per output: tied classes first, in class order
    pick = np.floor(rng.random(reports.size) * n_tied[reports]).astype(np.int64)
    return table[pick, reports]


def binomial_rate(hits: np.ndarray) -> tuple[float, float]:
    """(share of hits, its binomial standard error √(acc(1−acc)/n)); nan for no users."""
    if hits.size == 0:
        return float("nan"), float("nan")
    acc = float(hits.mean())
    return acc, float(np.sqrt(acc * (1 - acc) / hits.size))


def empirical_accuracy(mechanism, values, reports, prior=None, rng=None, high=None) -> dict:
    """Attack every report of a discrete oracle; ACC = share of users whose value is guessed (eq. (21)).

    Returns ``overall``, ``high`` (high-sensitivity users only) and ``class`` (how often the
    adversary's MAP class — high vs low — is right; nan when the mechanism has a single class), each
    with a binomial standard error (``*_se``), and ``expected_*`` (the exact expectation given the
    users' values, from :func:`accuracy_by_input`). ``class_high`` / ``class_low`` are the shares of
    high / low users whose class is inferred right (the class MAP weighs classes by the prior: with a
    uniform item prior the larger class is favoured). ``high`` defaults to :func:`high_mask`.
    """
    P = mechanism.transition_matrix()
    x = check_item_ids("empirical_accuracy", values, P.shape[0])
    y = check_item_ids("empirical_accuracy", reports, P.shape[1], "reports")
    if x.shape != y.shape:
        raise ValueError(f"empirical_accuracy: 'values' and 'reports' differ in length ({x.size} vs {y.size}).")
    rng = as_generator(rng)
    hi = high_mask(mechanism) if high is None else np.isin(np.arange(P.shape[0]), np.asarray(high))
    t, _ = _tied(P, prior, None)
    hits = _sample_guesses(t, y, rng) == x
    per_input = accuracy_by_input(P, prior)
    out = {"n": int(x.size), "n_high": int(hi[x].sum())}
    for key, sel in (("overall", slice(None)), ("high", hi[x])):
        out[key], out[key + "_se"] = binomial_rate(hits[sel])
        out["expected_" + key] = float(per_input[x[sel]].mean()) if hits[sel].size else float("nan")
    if hi.all() or not hi.any():
        for key in ("class", "class_se", "expected_class", "class_high", "class_low"):
            out[key] = float("nan")
    else:
        tc, _ = _tied(P, prior, hi)
        class_hits = _sample_guesses(tc, y, rng) == hi[x].astype(np.int64)
        out["class"], out["class_se"] = binomial_rate(class_hits)
        out["class_high"] = binomial_rate(class_hits[hi[x]])[0]
        out["class_low"] = binomial_rate(class_hits[~hi[x]])[0]
        out["expected_class"] = float(accuracy_by_input(P, prior, hi)[x].mean())
    return out


def empirical_personalized_accuracy(mechanism, values, reports, prior=None, rng=None) -> dict:
    """Personalized SDGRR (docs/math.md §2.4): each report carries its user's partition, so the adversary
    attacks every group with that group's SDGRR (:func:`empirical_accuracy`) and the rates are pooled
    over users; ``high`` means high under the user's own partition."""
    x = np.asarray(values)
    y, g = (np.asarray(r) for r in reports)
    rng = as_generator(rng)
    parts = [empirical_accuracy(mech, x[g == k], y[g == k], prior, rng)
             for k, mech in enumerate(mechanism.groups) if np.any(g == k)]
    out = {"n": sum(o["n"] for o in parts), "n_high": sum(o["n_high"] for o in parts)}
    for key, size in (("overall", "n"), ("high", "n_high"), ("class", "n")):
        total = out[size]
        if total == 0:
            out[key] = out[key + "_se"] = out["expected_" + key] = float("nan")
            continue
        acc = sum(o[key] * o[size] for o in parts if o[size]) / total
        out[key], out[key + "_se"] = acc, float(np.sqrt(acc * (1 - acc) / total))
        out["expected_" + key] = sum(o["expected_" + key] * o[size] for o in parts if o[size]) / total
    return out
