"""The Bayesian adversary: finite output spaces (:mod:`.bayes`), sketches (:mod:`.sketch`), numeric
mechanisms (:mod:`.continuous`), and one entry point for all of them (:func:`attack`)."""

from ldpsim.evaluation.adversary.attack import attack

__all__ = ["attack"]
