"""LDP mechanisms: pure, vectorized math (no I/O, no SimPy, no pandas). See SPEC §1–§3."""

from .base import Aggregate, DiscreteOracle, FrequencyOracle
from .central_dp import LaplaceHistogram, project_lattice, project_simplex_l1, synthetic_data
from .cms import CMS, CMSReports
from .em import EM, EMResult
from .grr import GRR
from .hashing import HashFamily
from .hcms import HCMS, HCMSReports
from .olh import OLH, OLHReports
from .oue import OUE
from .numeric import NumericMechanism
from .personalized import PersonalizedSDGRR, combine_inverse_variance
from .personalized_numeric import PersonalizedSDPM
from .pm import PM
from .quadtree import (NoisyQuadtree, arithmetic_allocation, cormode_allocation, geometric_allocation,
                       uniform_allocation)
from .rr import RR
from .sdgrr import SDGRR
from .sdpm import SDPM
from .urr import URR
from .registry import MECHANISMS, make

__all__ = ["Aggregate", "DiscreteOracle", "FrequencyOracle", "GRR", "RR", "SDGRR", "URR", "MECHANISMS",
           "PersonalizedSDGRR", "combine_inverse_variance", "make", "OLH", "OLHReports", "OUE",
           "CMS", "CMSReports", "HCMS", "HCMSReports", "HashFamily",
           "NumericMechanism", "PM", "SDPM", "EM", "EMResult", "PersonalizedSDPM",
           "LaplaceHistogram", "project_lattice", "project_simplex_l1", "synthetic_data",
           "NoisyQuadtree", "arithmetic_allocation", "cormode_allocation", "geometric_allocation",
           "uniform_allocation"]
