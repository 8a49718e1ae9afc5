"""The trust models' registry: every model's name and class, in one place — docs/math.md §9.

:data:`TRUST_MODELS` maps each ``aggregation`` name of the scenario files, the CLI and the studies to its
class of the :class:`~ldpsim.evaluation.privacy.trust_accounting.TrustModel` family
(:mod:`.trust_local`, :mod:`.trust_exact`, :mod:`.tee_model`); :func:`trust_model` builds one by name,
refusing a parameter the model does not read. :func:`model_params` / :func:`model_from` turn a model into
plain values and back (a deployment's use case keeps them).

>>> trust_model("secagg", noise=IntegerNoise("skellam", 100.0), min_cohort=500).trusted
'the secure-aggregation protocol (no server–device collusion)'
>>> trust_model("shuffle", noise=IntegerNoise("skellam", 100.0))
Traceback (most recent call last):
...
ldpsim.runtime.errors.InputError: The trust model 'shuffle' takes no parameter 'noise' (it takes: epsilon_report). Got noise = IntegerNoise(kind='skellam', scale=100.0, copies=1.0).
"""

from __future__ import annotations

from dataclasses import astuple, fields

from ldpsim.evaluation.privacy.trust_accounting import TrustModel
from ldpsim.evaluation.privacy.trust_exact import HardwareSampleThreshold, HardwareThreshold, SecAgg, TwoServers
from ldpsim.evaluation.privacy.tee_model import ConfidentialAggregation
from ldpsim.evaluation.privacy.trust_local import LocalDP, SecAggLocal, Shuffled
from ldpsim.mechanisms.aggregation.integer_noise import IntegerNoise
from ldpsim.mechanisms.aggregation.tee import TeeDesign
from ldpsim.runtime.errors import InputError

#: name → class of every trust model (a new model: its class, and one line here)
TRUST_MODELS: dict[str, type[TrustModel]] = {cls.kind: cls for cls in (
    LocalDP, Shuffled, SecAggLocal, SecAgg, TwoServers, HardwareThreshold, HardwareSampleThreshold,
    ConfidentialAggregation,
)}

#: the registered names, in the tables' order
MODELS = tuple(TRUST_MODELS)

#: starting parameters of each model before calibration (the noise families production uses)
DEFAULTS = {name: cls.starting() for name, cls in TRUST_MODELS.items()}


def model_class(name: str) -> type[TrustModel]:
    """The class registered as ``name``.

    Raises
    ------
    InputError
        ``name`` is not registered.
    """
    if name not in TRUST_MODELS:
        raise InputError(f"The 'aggregation' setting must be one of {', '.join(MODELS)}. Got {name!r} instead.")
    return TRUST_MODELS[name]


def trust_model(name: str, **params) -> TrustModel:
    """The trust model ``name`` with ``params`` (the others at their defaults).

    Raises
    ------
    InputError
        ``name`` is not registered, a parameter is not one the model reads, or a value is refused.
    """
    cls = model_class(name)
    takes = tuple(f.name for f in fields(cls))
    for key, value in params.items():
        if key not in takes:
            raise InputError(f"The trust model {name!r} takes no parameter {key!r} (it takes: {', '.join(takes)}). "
                             f"Got {key} = {value!r}.")
    return cls(**params)


def model_params(model: TrustModel) -> tuple:
    """A trust model as (key, value) pairs of plain values (hashable, JSON-ready); :func:`model_from` inverts it."""
    def plain(value):
        if isinstance(value, IntegerNoise):
            return value.kind, value.scale, value.copies
        return astuple(value) if isinstance(value, TeeDesign) else value

    return (("kind", model.kind), *((f.name, plain(getattr(model, f.name))) for f in fields(model)))


def model_from(params) -> TrustModel:
    """The trust model of :func:`model_params` pairs (other keys are ignored)."""
    p = dict(params)
    cls = model_class(p["kind"])
    values = {f.name: p[f.name] for f in fields(cls)}
    if values.get("noise") is not None:
        values["noise"] = IntegerNoise(*values["noise"])
    if values.get("tee") is not None:
        values["tee"] = TeeDesign(*values["tee"])
    return cls(**values)
