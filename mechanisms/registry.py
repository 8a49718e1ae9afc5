"""The explicit registry of mechanisms by name (used by scenario files and the contract tests)."""

from __future__ import annotations

from .cms import CMS
from .grr import GRR
from .hcms import HCMS
from .olh import OLH
from .oue import OUE
from .personalized import PersonalizedSDGRR
from .personalized_numeric import PersonalizedSDPM
from .pm import PM
from .rr import RR
from .sdgrr import SDGRR
from .sdpm import SDPM
from .urr import URR

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
}


def make(name: str, **params):
    """Build the mechanism registered as ``name`` with ``params``; unknown names list the choices."""
    try:
        cls = MECHANISMS[name.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"Unknown mechanism {name!r}; choose one of {sorted(MECHANISMS)}.") from None
    return cls(**params)
