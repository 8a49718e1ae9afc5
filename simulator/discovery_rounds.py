"""Discovery across simulated days: interactive rounds (TrieHH family) and one-shot nightly jobs on
the same fleet — docs/math.md §10.4.

*Scenario.* A fleet of ``n_devices`` phones; on day d each device types one word, word w with share
π_d(w) (a slang word's share grows over the days), and is online with probability ``p_online``.

* :func:`online_holders` draws, per day, how many online devices hold each word — exactly:
  holders ~ Multinomial(n, π_d), online ~ Bin(holders, p_online) per word (days × words, int64).
* :func:`interactive_passes` runs an interactive protocol's rounds over those days: passes of L
  rounds, ``rounds_per_day`` rounds a day one after the other (a pass may span days, or a day hold
  several passes); each round samples that day's online devices (the protocol's exact tally
  sampler, :meth:`~ldpsim.mechanisms.discovery.triehh.TrieHH.sample_votes`); a pass publishes its
  words on the day of its last round. A pass still running on the last day publishes nothing.
* :func:`nightly_one_shot` runs a one-shot discovery protocol (SFP, PEM, TreeHist): every online
  device sends one report a day (the aggregate drawn exactly, ``sample_aggregate``), and each night
  the server discovers from the sum of all aggregates so far (they merge by addition).

Both take one ``rng`` (``numpy.random.Generator``); results are plain lists of records.
"""

from __future__ import annotations

import numpy as np

from ldpsim.mechanisms._validation import as_generator, check_int, check_real


def online_holders(shares: np.ndarray, n_devices: int, p_online: float, rng=None) -> np.ndarray:
    """Online holders of each word on each day (days × words), drawn exactly (module docstring).

    Parameters
    ----------
    shares : array (days × words)
        π_d(w), each row non-negative and summing to 1.
    n_devices : int ≥ 1
    p_online : float in (0, 1]
    rng : seed or Generator
    """
    rng = as_generator(rng)
    n_devices = check_int("online_holders", "n_devices", n_devices, low=1)
    p_online = check_real("online_holders", "p_online", p_online, 0.0, 1.0, high_open=False)
    shares = np.asarray(shares, dtype=float)
    if shares.ndim != 2 or (shares < 0).any() or not np.allclose(shares.sum(axis=1), 1.0):
        raise ValueError("online_holders: 'shares' must be a days × words array of non-negative rows "
                         "summing to 1.")
    holders = rng.multinomial(n_devices, shares / shares.sum(axis=1, keepdims=True))
    return rng.binomial(holders, p_online)


def interactive_passes(protocol, words, online: np.ndarray, rounds_per_day: int, rng=None) -> list[dict]:
    """Every completed pass of ``protocol`` (a :class:`~ldpsim.mechanisms.discovery.triehh.TrieHH`)
    over the days of ``online`` (module docstring).

    Returns
    -------
    list of dict
        One per completed pass: ``pass``, ``start_day``, ``day`` (when it publishes), ``words``
        (object array), ``votes``, ``counts`` (estimated holders; NaN for TrieHH), ``online`` (the
        online devices of its last day), ``expected_false`` (invented words to expect in the pass, at
        most: docs/math.md §10.10) and ``dropped`` (prefixes that passed a round but were cut).
    """
    rng = as_generator(rng)
    rounds_per_day = check_int("interactive_passes", "rounds_per_day", rounds_per_day, low=1)
    rows, inv = protocol.codec.symbols(list(words))
    online = np.asarray(online, dtype=np.int64)
    # distinct words (the same word twice in ``words`` adds its holders)
    per_day = np.stack([np.bincount(inv, weights=o, minlength=rows.shape[0]) for o in online]).astype(np.int64)
    passes, n_rounds = [], online.shape[0] * rounds_per_day
    for t in range(n_rounds):
        day, level = t // rounds_per_day, t % protocol.rounds + 1
        if level == 1:
            trie, found, votes, start, dropped = protocol.root(), [], [], day, 0
        codes, v = protocol.sample_votes(rows, per_day[day], trie, level, rng)
        trie, done, done_votes = protocol.advance(codes, v, level)
        dropped += protocol.passing(codes, v) - trie.size - done.size
        found.append(protocol.decode_found(done, level))
        votes.append(done_votes)
        if level == protocol.rounds:
            v_all = np.concatenate(votes)
            passes.append({"pass": len(passes), "start_day": start, "day": day, "words": np.concatenate(found),
                           "votes": v_all, "counts": protocol.estimates(v_all), "online": int(online[day].sum()),
                           "expected_false": protocol.false_bound(), "dropped": dropped + int(trie.size)})
    return passes


def nightly_one_shot(protocol, words, online: np.ndarray, top_k: int, rng=None) -> list[dict]:
    """Each night's discovery of a one-shot ``protocol`` over all reports so far (module docstring).

    Returns
    -------
    list of dict
        One per day with reports: ``day``, ``words``, ``counts`` (estimated holders among the reports),
        ``reports`` (all reports so far), ``expected_false`` (invented words to expect in the list, at
        most: docs/math.md §10.10) and ``dropped`` (live prefixes cut by a survivors cap).
    """
    rng = as_generator(rng)
    items = list(words)
    nights, running = [], None
    for day, counts in enumerate(np.asarray(online, dtype=np.int64)):
        if counts.sum() > 0:
            agg = protocol.sample_aggregate(counts, rng, items)
            running = agg if running is None else running + agg
        if running is None:
            continue
        res = protocol.discover(running, top_k=top_k)
        nights.append({"day": day, "words": res.words, "counts": res.counts, "reports": int(running.n),
                       "expected_false": res.expected_false, "dropped": res.dropped})
    return nights
