"""The default δ of ldpsim's (ε, δ) guarantees: one value per meaning — docs/math.md §8.

Two meanings, two values; every signature, scenario key and command-line default whose δ is not chosen
by the user takes one of them from here (nothing else writes them):

* :data:`DELTA_SPEND` = 10⁻⁶: the δ of what one device spends over a deployment run when δ comes only
  from the accounting — the accountant's composition of the device's reports (advanced or
  privacy-loss-distribution composition) and the central ε that the server's shuffle buys. Nothing the
  devices or the server do depends on it: a larger δ only states a smaller ε for the same run.
* :data:`DELTA_RELEASE` = 10⁻⁹: the δ per device over the run of a protocol whose *release* carries a δ
  and is calibrated to it — thresholds (TrieHH and its kin, sample-and-threshold), secure aggregation,
  two servers and the other trust models with calibrated noise (a threshold θ or a noise scale is chosen
  so that the run's δ is at most this). It is the chance one device's contribution is released outright,
  so it is set far below 1/n for the fleets ldpsim simulates (n up to 10⁸).

Published numbers at other δ (Gboard's 10⁻¹⁰, a draft's 10⁻⁹) are quoted with their own δ where they are
recomputed.

>>> DELTA_SPEND, DELTA_RELEASE
(1e-06, 1e-09)
"""

#: δ of a device's spend over a deployment run, from composition and shuffling (docs/math.md §8.3, §7.5)
DELTA_SPEND = 1e-6
#: δ per device over the run of a calibrated release: thresholds, secure aggregation, trust models (§9, §10.9)
DELTA_RELEASE = 1e-9
#: the largest δ a user may choose for an (ε, δ) guarantee: δ must stay far below 1/devices
DELTA_MAX = 1e-3
#: δ at which the whole-run audit checks a central-noise design's (ε, δ) claim: P[S] − δ stays measurable (§11.7)
DELTA_AUDIT = 1e-3
