"""The names of the whole-run audit's designs and planted bugs (:mod:`.run_audit`, docs/math.md §11.7): plain
data without imports, so ``ldpsim audit --help`` can list them without loading numpy."""

#: the frequency oracles a run audits, each over the two values {0, 1}: the registry's typical shape at domain size 2,
#: with :data:`ORACLE_PARAMS` where that shape needs a change for two values (:func:`.run_audit.oracle_params`)
ORACLES = ("grr", "oue", "olh", "rr", "sdgrr", "sue", "blh", "flh", "hr", "she", "the", "cms", "hcms", "dbitflip")
#: SDGRR: the planted value 0 is the high-sensitivity one (its ε is the mechanism's ε)
ORACLE_PARAMS = {"sdgrr": {"high": (0,)}}
#: central-noise trust models: the released count of the canary's word each round carries this noise
#: (secure aggregation: Skellam; trusted hardware: discrete Gaussian; two servers: the discrete Gaussian one
#: aggregator adds, the view of the other, colluding, aggregator), audited as (ε, δ) at
#: :data:`~ldpsim.mechanisms.deltas.DELTA_AUDIT`
CENTRAL = {"secagg": ("skellam", 2.0), "threshold": ("discrete_gaussian", 2.0), "two_server": ("discrete_gaussian", 2.0)}
#: the designs the run audit knows: daily frequency oracles, the LDP tries' rounds, central noise
DESIGNS = ORACLES + ("ldp_trie", "gboard") + tuple(CENTRAL)

#: the planted bugs (:mod:`.run_audit`'s docstring); the client bug needs a GRR report (the categories themselves)
BUGS = ("uncharged-round", "clear-round", "split-noise")
CLEAR_ROUND_DESIGNS = ("grr", "rr", "sdgrr", "ldp_trie", "gboard", "secagg", "threshold", "two_server")
