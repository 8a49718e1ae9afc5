"""The explicit registry of mechanisms by name (used by scenario files and the contract tests)."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass

from ldpsim.mechanisms.sketches.cms import CMS
from ldpsim.mechanisms.frequency.dbitflip import DBitFlip
from ldpsim.mechanisms.frequency.grr import GRR
from ldpsim.mechanisms.frequency.hadamard_response import HR
from ldpsim.mechanisms.sketches.hcms import HCMS
from ldpsim.mechanisms.frequency.histogram_encoding import SHE, THE
from ldpsim.mechanisms.frequency.local_hashing import BLH, FLH
from ldpsim.mechanisms.frequency.olh import OLH
from ldpsim.mechanisms.numeric.onebitmean import OneBitMean
from ldpsim.mechanisms.frequency.oue import OUE
from ldpsim.mechanisms.frequency.personalized import PersonalizedSDGRR
from ldpsim.mechanisms.numeric.personalized_numeric import PersonalizedSDPM
from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie
from ldpsim.mechanisms.discovery.ldp_trie import LDPTrie
from ldpsim.mechanisms.discovery.prefix_tree import PrefixTree
from ldpsim.mechanisms.discovery.pem import PEM
from ldpsim.mechanisms.numeric.pm import PM
from ldpsim.mechanisms.frequency.rappor import RAPPOR
from ldpsim.mechanisms.frequency.rr import RR
from ldpsim.mechanisms.frequency.sdgrr import SDGRR
from ldpsim.mechanisms.numeric.sdpm import SDPM
from ldpsim.mechanisms.numeric.square_wave import SW
from ldpsim.mechanisms.frequency.sue import SUE
from ldpsim.mechanisms.discovery.sample_threshold import TrieHHPP
from ldpsim.mechanisms.discovery.sfp import SFP
from ldpsim.mechanisms.discovery.treehist import TreeHist
from ldpsim.mechanisms.discovery.triehh import TrieHH
from ldpsim.mechanisms.frequency.urr import URR
from ldpsim.runtime.errors import InputError

#: name used in scenario files → mechanism class
MECHANISMS: dict[str, type] = {
    "grr": GRR,
    "rr": RR,
    "urr": URR,
    "sdgrr": SDGRR,
    "personalized-sdgrr": PersonalizedSDGRR,
    "oue": OUE,
    "olh": OLH,
    "cms": CMS,
    "hcms": HCMS,
    "pm": PM,
    "sdpm": SDPM,
    "personalized-sdpm": PersonalizedSDPM,
    "sw": SW,
    # deployed designs and the peers' oracles (docs/math.md §7.1–§7.3)
    "rappor": RAPPOR,
    "hr": HR,
    "sue": SUE,
    "she": SHE,
    "the": THE,
    "blh": BLH,
    "flh": FLH,
    "dbitflip": DBitFlip,
    "onebitmean": OneBitMean,
    # discovery without a dictionary (docs/math.md §7.4): ``discover(agg, top_k)`` on the server
    "sfp": SFP,
    "pem": PEM,
    "treehist": TreeHist,
}

#: interactive discovery protocols (docs/math.md §10): rounds of votes on a growing trie — not one
#: report per device, so not in :data:`MECHANISMS` (no ``perturb``/``aggregate``). TrieHH and TrieHH++
#: are (ε, δ) central after the threshold; LDPTrie is pure ε-LDP per round; GboardTrie and PrefixTree (Apple's
#: adaptive segments, thresholds and deny list) are ε₀-LDP per round and (ε, δ) central after secure aggregation.
INTERACTIVE: dict[str, type] = {
    "triehh": TrieHH,
    "triehh_pp": TrieHHPP,
    "ldp_trie": LDPTrie,
    "gboard": GboardTrie,
    "prefix_tree": PrefixTree,
}


@dataclass(frozen=True)
class Shapes:
    """The typical parameters of one registered mechanism besides ε (one row of :data:`PARAMETERS`).

    Attributes
    ----------
    typical : dict
        Small, valid parameters every caller that does not choose its own builds it with (the audit's
        battery, the contract and fault-injection tests, examples): small domains and sketches, so an
        audit's cost is its trials; the sets of URR, SDGRR and the personalized mechanisms hold ids of
        domains of at least 10 items.
    deployed : dict or None
        The shape the design runs at in deployment, where it is one: Apple's count-mean sketch (k = m =
        1024), Google's RAPPOR (128-bit Bloom filters, 2 hashes, 8 cohorts: C·k = 1024 regression rows for
        a few hundred candidates), Microsoft's dBitFlip (d = 4 buckets a report) and FLH's pool of 1024
        hashes (docs/math.md §1.5, §7.1–§7.3).
    pair : dict or None
        The shape over the two values {0, 1} of an audit pair (the whole-run audit's oracles, docs/math.md
        §11.7), where the typical sets do not fit two values: SDGRR and URR with 0 the high (sensitive)
        value, the personalized SDGRR with one group for each value. The other oracles' pair shape is the
        typical one at domain size 2.
    """

    typical: dict
    deployed: dict | None = None
    pair: dict | None = None


#: The one table of typical parameters (as scipy.stats keeps its distributions' typical parameters): every
#: name of :data:`MECHANISMS` and :data:`INTERACTIVE`, in the order the audit's battery runs them.
#: :func:`make` builds from a row with ``shape="typical"`` or ``shape="deployed"``.
PARAMETERS: dict[str, Shapes] = {
    "grr": Shapes({"domain_size": 10}),
    "rr": Shapes({}),
    "urr": Shapes({"domain_size": 10, "sensitive": (0, 1, 2)}, pair={"domain_size": 2, "sensitive": (0,)}),
    "sdgrr": Shapes({"domain_size": 10, "high": (0, 1, 2, 3, 4)}, pair={"domain_size": 2, "high": (0,)}),
    "personalized-sdgrr": Shapes({"domain_size": 10, "partitions": ((0, 1, 2, 3, 4), (0, 1))},
                                 pair={"domain_size": 2, "partitions": ((0,), (1,))}),
    "oue": Shapes({"domain_size": 10}),
    "olh": Shapes({"domain_size": 10}),
    "cms": Shapes({"k": 64, "m": 256}, deployed={"k": 1024, "m": 1024}),
    "hcms": Shapes({"k": 64, "m": 256}),
    "pm": Shapes({}),
    "sdpm": Shapes({"low": (-0.5, 0.5)}),
    "sw": Shapes({}),
    "personalized-sdpm": Shapes({"ranges": ((-0.5, 0.5), (-0.25, 0.25)), "bins": 64}),
    "rappor": Shapes({"num_bits": 16, "num_hashes": 2, "cohorts": 8},
                     deployed={"num_bits": 128, "num_hashes": 2, "cohorts": 8}),
    "hr": Shapes({"domain_size": 6}),
    "sue": Shapes({"domain_size": 6}),
    "she": Shapes({"domain_size": 6}),
    "the": Shapes({"domain_size": 6}),
    "blh": Shapes({"domain_size": 10}),
    "flh": Shapes({"domain_size": 6}, deployed={"pool_size": 1024}),
    "dbitflip": Shapes({"domain_size": 6, "d": 2}, deployed={"d": 4}),
    "onebitmean": Shapes({"m": 10.0}),
    "sfp": Shapes({"length": 4, "alphabet": "abcd", "hash_bits": 4, "word_k": 16, "word_m": 64, "fragment_k": 16,
                   "fragment_m": 64}),
    "pem": Shapes({"length": 4, "alphabet": "abcd", "start": 1, "pool": 64}),
    "treehist": Shapes({"length": 4, "alphabet": "abcd", "k": 16, "m": 64}),
    # interactive protocols: one round (the threshold ones take no ε: theirs follows from γ and θ)
    "triehh": Shapes({"gamma": 0.5, "theta": 4, "length": 8, "alphabet": "abcd"}),
    "triehh_pp": Shapes({"gamma": 0.5, "theta": 4, "length": 8, "alphabet": "abcd"}),
    "ldp_trie": Shapes({"length": 4, "alphabet": "abcd"}),
    "gboard": Shapes({"length": 4, "alphabet": "abcd", "min_cohort": 10}),
    "prefix_tree": Shapes({"length": 4, "alphabet": "abcd", "max_candidates": 64, "survivors": 4}),
}
#: the rows of :data:`PARAMETERS`
SHAPES = ("typical", "deployed", "pair")


def mechanism_class(name: str) -> type:
    """The class registered as ``name`` (case-insensitive; :data:`MECHANISMS` or :data:`INTERACTIVE`).

    Raises
    ------
    InputError
        For an unknown name (the message lists the choices and suggests the closest).
    """
    try:
        return {**MECHANISMS, **INTERACTIVE}[name.lower()]
    except (KeyError, AttributeError):
        known = {*MECHANISMS, *INTERACTIVE}
        raise InputError(f"Unknown mechanism {name!r}; choose one of {sorted(known)}"
                         f"{did_you_mean(str(name).lower(), known)}.") from None


def takes(name: str, parameter: str) -> bool:
    """Whether the mechanism registered as ``name`` has the constructor parameter ``parameter``.

    >>> takes("grr", "domain_size"), takes("cms", "domain_size")
    (True, False)
    """
    return parameter in {f.name for f in dataclasses.fields(mechanism_class(name)) if f.init}


def typical(name: str, shape: str = "typical") -> dict:
    """A copy of the ``shape`` row ("typical" or "deployed") of :data:`PARAMETERS` for ``name``.

    >>> typical("cms", "deployed")
    {'k': 1024, 'm': 1024}
    """
    if shape not in SHAPES:
        raise InputError(f"The 'shape' parameter of make must be one of {', '.join(SHAPES)}. Got {shape!r} instead.")
    mechanism_class(name)
    row = getattr(PARAMETERS[name.lower()], shape)
    if row is None:
        having = ", ".join(n for n, r in PARAMETERS.items() if getattr(r, shape) is not None)
        which = "the deployed designs are" if shape == "deployed" else "the mechanisms with one are"
        raise InputError(f"{name} has no {shape} shape; {which} {having}.")
    return dict(row)


def make(name: str, *, epsilon: float | None = None, domain_size: int | None = None, shape: str | None = None,
         **params):
    """Build the mechanism registered as ``name``: the one builder every caller uses.

    Parameters
    ----------
    name : str
        Registry name, case-insensitive: grr, rr, urr, sdgrr, personalized-sdgrr, oue, olh, cms, hcms,
        pm, sdpm, personalized-sdpm, … (:data:`MECHANISMS`) and the interactive triehh, triehh_pp,
        ldp_trie, gboard, prefix_tree (:data:`INTERACTIVE`).
    epsilon : float, optional
        The mechanism's ε parameter (its meaning is the mechanism's: ε of one report, or ε_∞ of a
        memoized permanent response; its ``guarantee`` says which).
    domain_size : int, optional
        The number of items, given only to a mechanism that takes it (sketches and discovery protocols
        take tokens: the domain is not theirs); it replaces the row's.
    shape : {"typical", "deployed"}, optional
        Start from this row of :data:`PARAMETERS` (None: from nothing, every required parameter given).
    **params
        The mechanism's other parameters (see each class), over the row's, e.g. ``k=256, m=1024`` for CMS.

    Returns
    -------
    The mechanism (a frozen dataclass).

    Raises
    ------
    InputError
        For an unknown name, shape or parameter (the message lists the choices and suggests the closest),
        a missing parameter, or an invalid parameter value.
    TypeError
        For a parameter of the wrong type.

    Examples
    --------
    >>> make("GRR", epsilon=1.0, domain_size=4)
    GRR(epsilon=1.0, domain_size=4)
    >>> make("cms", epsilon=2.0, shape="deployed")
    CMS(epsilon=2.0, k=1024, m=1024, seed=0)
    """
    cls = mechanism_class(name)
    merged = {} if shape is None else typical(name, shape)
    if domain_size is not None and takes(name, "domain_size"):
        merged["domain_size"] = domain_size
    if epsilon is not None:
        merged["epsilon"] = epsilon
    merged.update(params)
    check_parameters(cls, merged)
    return cls(**merged)


def did_you_mean(key: str, allowed) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``allowed`` to ``key``, or an empty string."""
    near = difflib.get_close_matches(key, list(allowed), n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def check_parameters(cls, params: dict) -> None:
    """Raise :class:`InputError` for a parameter ``cls`` does not take (listing those it takes and the
    closest one) or a required parameter left out, before the constructor sees them.

    >>> check_parameters(GRR, {"eps": 1.0, "domain_size": 4})
    Traceback (most recent call last):
    ...
    ldpsim.runtime.errors.InputError: GRR has no parameter 'eps' (did you mean 'epsilon'?); its parameters are epsilon, domain_size.
    """
    fields = [f for f in dataclasses.fields(cls) if f.init]
    names = [f.name for f in fields]
    for key in params:
        if key not in names:
            raise InputError(f"{cls.__name__} has no parameter {key!r}{did_you_mean(key, names)}; "
                             f"its parameters are {', '.join(names)}.")
    missing = [f.name for f in fields if f.name not in params and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise InputError(f"{cls.__name__} needs the parameter(s) {', '.join(missing)}; "
                         f"its parameters are {', '.join(names)}.")
