"""The confidence level of every interval ldpsim reports: one z for 95 % two-sided — docs/math.md §4.

Every "± 95 %" in a table, a summary or a figure is ``estimate ± Z95·sd`` with this constant; nothing else
writes the quantile (or its rounding 1.96).

>>> round(Z95, 6)
1.959964
"""

#: two-sided 95 % standard normal quantile, Φ⁻¹(0.975) (scipy.stats.norm.ppf(0.975))
Z95 = 1.959963984540054
