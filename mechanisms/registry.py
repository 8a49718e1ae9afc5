"""The explicit registry of mechanisms by name (used by scenario files and the contract tests)."""

from __future__ import annotations

import dataclasses
import difflib

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


#: The shapes the designs run at in deployment, beside ε: Apple's count-mean sketch (k = m = 1024), Google's
#: RAPPOR (128-bit Bloom filters, 2 hashes, 8 cohorts: C·k = 1024 regression rows for a few hundred
#: candidates), Microsoft's dBitFlip (d = 4 buckets a report) and FLH's pool of 1024 hashes. The comparison
#: of designs, the benchmark and the accuracy table take them from here.
DEPLOYED_PARAMS = {
    "cms": {"k": 1024, "m": 1024},
    "rappor": {"num_bits": 128, "num_hashes": 2, "cohorts": 8},
    "dbitflip": {"d": 4},
    "flh": {"pool_size": 1024},
}


def make(name: str, **params):
    """Build the mechanism registered as ``name`` (see :data:`MECHANISMS`).

    Parameters
    ----------
    name : str
        Registry name, case-insensitive: grr, rr, urr, sdgrr, personalized-sdgrr, oue, olh, cms, hcms,
        pm, sdpm, personalized-sdpm, … (:data:`MECHANISMS`) and the interactive triehh, triehh_pp,
        ldp_trie, prefix_tree (:data:`INTERACTIVE`).
    **params
        The mechanism's parameters (see each class), e.g. ``epsilon=1.0, k=256, m=1024`` for CMS.

    Returns
    -------
    The mechanism (a frozen dataclass).

    Raises
    ------
    InputError
        For an unknown name or parameter (the message lists the choices and suggests the closest), a
        missing parameter, or an invalid parameter value.
    TypeError
        For a parameter of the wrong type.

    Examples
    --------
    >>> make("GRR", epsilon=1.0, domain_size=4)
    GRR(epsilon=1.0, domain_size=4)
    """
    try:
        cls = {**MECHANISMS, **INTERACTIVE}[name.lower()]
    except (KeyError, AttributeError):
        known = {*MECHANISMS, *INTERACTIVE}
        raise InputError(f"Unknown mechanism {name!r}; choose one of {sorted(known)}"
                         f"{_did_you_mean(str(name).lower(), known)}.") from None
    check_parameters(cls, params)
    return cls(**params)


def _did_you_mean(key: str, allowed) -> str:
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
            raise InputError(f"{cls.__name__} has no parameter {key!r}{_did_you_mean(key, names)}; "
                             f"its parameters are {', '.join(names)}.")
    missing = [f.name for f in fields if f.name not in params and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise InputError(f"{cls.__name__} needs the parameter(s) {', '.join(missing)}; "
                         f"its parameters are {', '.join(names)}.")
