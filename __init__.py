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
