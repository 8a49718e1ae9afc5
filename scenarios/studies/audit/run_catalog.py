"""The names and defaults of the whole-run audit's designs (:mod:`.run_designs`, docs/math.md §11.8): plain data
without numpy, so ``ldpsim audit --help`` lists every design and planted bug from here."""

from ldpsim.evaluation.audit.run_names import BUGS as RUN_BUGS
from ldpsim.evaluation.audit.run_names import DESIGNS as RUN_DESIGNS

#: each design of this module: its planted bugs and its defaults (days D, rounds or reports a day, and the
#: design's own sizes); the defaults keep every planted bug within 10⁶ runs at power 0.95
PLANS = {
    "shuffle": (("amplified-by-reports",), dict(days=1, rounds_per_day=30, devices=300, epsilon_report=1.0)),
    "secagg_local": (("amplified-by-reports",), dict(days=1, rounds_per_day=30, devices=300, epsilon_report=1.0)),
    "tee": (("bound-l0",), dict(days=30, rounds_per_day=1, epsilon=2.0, max_keys=3)),
    "tee_selection": (("bound-l0",), dict(days=10, rounds_per_day=1, epsilon=1.0, max_keys=3)),
    "triehh": (("threshold-before-bounding",), dict(days=2, rounds_per_day=2, epsilon=2.0, gamma=0.5)),
    "sample_threshold": (("threshold-before-bounding",), dict(days=2, rounds_per_day=1, epsilon=2.0, rate=0.5)),
    "pem": (("claimed-per-group",), dict(days=1, rounds_per_day=1, epsilon=1.0, length=3, pool=64)),
    "treehist": (("claimed-per-group",), dict(days=1, rounds_per_day=1, epsilon=1.0, length=3, k=16, m=64)),
    "sfp": (("fragment-uncharged",), dict(days=1, rounds_per_day=1, epsilon=2.0, length=4, k=16, m=64)),
    "prefix_tree": (("uncharged-round",), dict(days=1, rounds_per_day=3, epsilon=3.0)),
    "grr_memo": (("redrawn-memo", "one-class-charged", "claimed-per-pattern"),
                 dict(days=3, rounds_per_day=2, epsilon=1.0)),
    "rappor": (("redrawn-memo", "report-loss-per-class", "claimed-per-pattern"), dict(days=6, rounds_per_day=2, epsilon=2.0, p=0.1, q=0.9)),
    "dbitflip_memo": (("redrawn-memo", "one-class-charged", "claimed-per-pattern"),
                      dict(days=3, rounds_per_day=2, epsilon=1.0)),
    "onebitmean_memo": (("redrawn-memo", "one-class-charged", "claimed-per-pattern"),
                        dict(days=3, rounds_per_day=2, epsilon=1.0, granularity=1)),
}
#: every design the run audit covers
ALL_DESIGNS = RUN_DESIGNS + tuple(PLANS)
#: a design's runs are drawn from child i of the seed's SeedSequence, i its place here (the order designs were
#: added in): a design draws the same runs audited alone or beside others, and a new design changes no other's
STREAMS = ("grr", "oue", "olh", "ldp_trie", "gboard", "secagg", "threshold", "two_server", "shuffle", "secagg_local",
           "tee", "tee_selection", "triehh", "sample_threshold", "pem", "treehist", "sfp", "prefix_tree",
           "rr", "sdgrr", "sue", "blh", "flh", "hr", "she", "the", "cms", "hcms", "dbitflip",
           "grr_memo", "rappor", "dbitflip_memo",
           "urr", "personalized-sdgrr", "pm", "sdpm", "sw", "onebitmean", "personalized-sdpm", "onebitmean_memo")
#: every planted bug
ALL_BUGS = tuple(dict.fromkeys(RUN_BUGS + tuple(b for bugs, _ in PLANS.values() for b in bugs)))
