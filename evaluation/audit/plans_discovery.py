"""Audit plans of the discovery protocols SFP, PEM and TreeHist: the whole report against the composed
ε (docs/math.md §7.5).

The pair is fixed before any trial: x = the first alphabet symbol repeated L times, x′ = the second
repeated L times, so the two words differ in every symbol, hence in every prefix (PEM, TreeHist) and
every fragment (SFP). The claim is the sum of the report's parts (``privacy_parts()``), the report's
total ε; the event constrains every part that depends on the word at once, so its ratio is that sum:

* TreeHist (level ℓ uniform, CMS of the length-ℓ prefix): bit h_j(prefix_ℓ(x)) is +1 and bit
  h_j(prefix_ℓ(x′)) is −1: P = mean_ℓ c_ℓ·(1−f)² vs mean_ℓ c_ℓ·f², c_ℓ the share of the sketch's rows
  separating the two prefixes;
* PEM (group i uniform, pool function s uniform, GRR over g buckets): y = H_s(prefix_i(x)) ≠
  H_s(prefix_i(x′)): P = d·p vs d·q, d the exact share of (group, pool function) pairs separating the
  prefixes (exact for the fixed pool);
* SFP (word CMS at ε_w, fragment CMS at ε_f of the token at the position sent in clear): the word
  event above on the word sketch *and* the same on the fragment sketch for the tokens of x and x′ at
  the report's position. The two sketches use independent randomness, so
  P = c_w(1−f_w)²·mean_l c_l(1−f_f)² vs c_w f_w²·mean_l c_l f_f², ratio e^{ε_w + ε_f}.
"""

from __future__ import annotations

import numpy as np

from ldpsim.evaluation.audit.event import AuditPlan, differ_share, sketch_pair_event


def _words(mech) -> tuple[str, str, np.ndarray]:
    """(x, x′, their padded symbol rows (2, L))."""
    a, b = mech.codec.alphabet[:2]
    x, x_prime = a * mech.codec.length, b * mech.codec.length
    rows, inv = mech.codec.symbols([x, x_prime])
    return x, x_prime, rows[inv]


def _claim(mech) -> float:
    return float(sum(mech.privacy_parts().values()))


def sketch_walk_plan(mech) -> AuditPlan:
    """TreeHist (module docstring)."""
    x, x_prime, rows = _words(mech)
    codes = np.stack([mech.codec.prefix_codes(rows, l + 1) for l in range(mech.levels)], axis=1)  # (2, L)
    share = np.mean([differ_share(mech.cms.family, *codes[:, l]) for l in range(mech.levels)])
    f = mech.cms.flip

    def event(r):
        level = np.asarray(r.level)
        return sketch_pair_event(mech.cms.family, r.bits, r.row, codes[0, level], codes[1, level])
    return AuditPlan(x, x_prime, "bit h_j(prefix(x)) = +1, bit h_j(prefix(x')) = -1 at the report's level",
                     event, share * (1 - f) ** 2, share * f * f, claim=_claim(mech))


def pem_plan(mech) -> AuditPlan:
    """PEM (module docstring)."""
    x, x_prime, rows = _words(mech)
    codes = mech.group_prefix_codes(rows)                                   # (2, G)
    seeds = np.arange(mech.pool)[:, None]
    share = float(np.mean(mech.hash_codes(seeds, codes[0][None, :]) != mech.hash_codes(seeds, codes[1][None, :])))

    def event(r):
        group, seed = np.asarray(r.group), np.asarray(r.seed)
        h, h_p = mech.hash_codes(seed, codes[0, group]), mech.hash_codes(seed, codes[1, group])
        return (np.asarray(r.y) == h) & (h != h_p)
    return AuditPlan(x, x_prime, "y = H_s(prefix(x)) != H_s(prefix(x')) in the report's group", event,
                     share * mech.p, share * mech.q, claim=_claim(mech))


def sfp_plan(mech) -> AuditPlan:
    """SFP (module docstring)."""
    x, x_prime, rows = _words(mech)
    codes, tokens = mech.word_tokens(rows)                            # (2,), (2, L/2)
    c_w = differ_share(mech.word_cms.family, *codes)
    c_f = np.mean([differ_share(mech.fragment_cms.family, *tokens[:, l]) for l in range(mech.positions)])
    f_w, f_f = mech.word_cms.flip, mech.fragment_cms.flip

    def event(r):
        pos = np.asarray(r.position)
        word = sketch_pair_event(mech.word_cms.family, r.word_bits, r.word_row, codes[0], codes[1])
        frag = sketch_pair_event(mech.fragment_cms.family, r.fragment_bits, r.fragment_row,
                                 tokens[0, pos], tokens[1, pos])
        return word & frag
    return AuditPlan(x, x_prime, "word sketch and fragment sketch (at the sent position) both: "
                     "bit of x = +1, bit of x' = -1", event, c_w * (1 - f_w) ** 2 * c_f * (1 - f_f) ** 2,
                     c_w * f_w ** 2 * c_f * f_f ** 2, claim=_claim(mech))
