"""The names of the whole-run audit's designs and planted bugs (:mod:`.run_audit`, docs/math.md §11.7): plain
data without imports, so ``ldpsim audit --help`` can list them without loading numpy."""

#: the frequency oracles a run audits, each over the two values {0, 1}: the registry's pair shape (SDGRR: the planted
#: value 0 the high-sensitivity one, its ε the mechanism's ε; URR: 0 the sensitive one; personalized SDGRR: one group
#: for each value), else its typical shape at domain size 2 (:func:`.run_audit.oracle_params`)
ORACLES = ("grr", "oue", "olh", "rr", "sdgrr", "sue", "blh", "flh", "hr", "she", "the", "cms", "hcms", "dbitflip",
           "urr", "personalized-sdgrr")
#: the numeric mechanisms a run audits (a reading use case's; 1BitMean fresh every round), each at its typical shape
#: on the pair of its plan (:func:`~.plans.plan_for`: 1 and −1, 1BitMean's m and 0)
NUMERIC = ("pm", "sdpm", "sw", "onebitmean", "personalized-sdpm")
#: the personalized mechanisms: the group the canary chose (public, the same in both worlds; the plan's target
#: "group<g>")
RUN_GROUPS = {"personalized-sdgrr": 1, "personalized-sdpm": 1}
#: central-noise trust models: the released count of the canary's word each round carries this noise
#: (secure aggregation: Skellam; trusted hardware: discrete Gaussian; two servers: the discrete Gaussian one
#: aggregator adds, the view of the other, colluding, aggregator), audited as (ε, δ) at
#: :data:`~ldpsim.mechanisms.deltas.DELTA_AUDIT`
CENTRAL = {"secagg": ("skellam", 2.0), "threshold": ("discrete_gaussian", 2.0), "two_server": ("discrete_gaussian", 2.0)}
#: the designs the run audit knows: daily frequency oracles, numeric readings, the LDP tries' rounds, central noise
DESIGNS = ORACLES + NUMERIC + ("ldp_trie", "gboard") + tuple(CENTRAL)

#: the planted bugs (:mod:`.run_audit`'s docstring); the client bug needs a GRR report (the categories themselves)
#: or a numeric reading whose event holds the true value x and not x′
BUGS = ("uncharged-round", "clear-round", "split-noise")
CLEAR_ROUND_DESIGNS = ("grr", "rr", "sdgrr", "ldp_trie", "gboard", "secagg", "threshold", "two_server", "urr", "pm",
                       "sdpm", "sw", "personalized-sdgrr", "personalized-sdpm")
