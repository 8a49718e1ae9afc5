"""ldpsim: simulate and evaluate local-differential-privacy keyboard telemetry.

The installed package is one name, ``ldpsim``; the repository keeps the user's folders
(``mechanisms/``, ``simulator/``, ``evaluation/``, ``scenarios/``), which the build maps to
``ldpsim.mechanisms``, ``ldpsim.simulator``, ``ldpsim.evaluation`` and ``ldpsim.scenarios``.

The short API for notebooks (imported on first use, so ``import ldpsim`` stays fast):

>>> import ldpsim
>>> grr = ldpsim.make("grr", epsilon=1.0, domain_size=4)
>>> round(grr.p, 4)
0.4754

``ldpsim.run(...)`` simulates a deployment scenario, ``ldpsim.sweep(...)`` runs a sweep scenario,
``ldpsim.compare(...)`` runs several designs on one fleet at the same privacy budget.
``ldpsim.tune(...)`` finds the cheapest sketch meeting a target, ``ldpsim.check(...)`` compares a rerun
with a baseline, ``ldpsim.reproduce(...)`` re-runs a published figure and ``ldpsim.scenarios_table()``
lists the shipped scenarios: each is what the command of the same name runs.
``ldpsim.audit(...)`` audits a mechanism or client for its claimed ε, ``ldpsim.poison(...)`` runs a
poisoning experiment.
``ldpsim.bench(...)`` times the mechanisms against their physical floors.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("ldpsim")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

#: public name → (module, attribute), imported on first access (PEP 562)
_LAZY = {
    "make": ("ldpsim.mechanisms.registry", "make"),
    "MECHANISMS": ("ldpsim.mechanisms.registry", "MECHANISMS"),
    "make_workload": ("ldpsim.evaluation.workloads.make", "make_workload"),
    "run": ("ldpsim.scenarios.api", "run"),
    "sweep": ("ldpsim.scenarios.api", "sweep"),
    "compare": ("ldpsim.scenarios.api", "compare"),
    "tune": ("ldpsim.scenarios.studies.sweep.tune", "tune"),
    "check": ("ldpsim.scenarios.api", "check"),
    "reproduce": ("ldpsim.scenarios.api", "reproduce"),
    "scenarios_table": ("ldpsim.scenarios.api", "scenarios_table"),
    "audit": ("ldpsim.scenarios.studies.audit.gate", "audit"),
    "poison": ("ldpsim.scenarios.api", "poison"),
    "discover": ("ldpsim.scenarios.api", "discover"),
    "bench": ("ldpsim.scenarios.studies.bench.suite", "bench"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'ldpsim' has no attribute {name!r}")
    import importlib
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
