"""LDP mechanisms: pure, vectorized math (no I/O, no SimPy, no pandas). See docs/math.md §1–§3."""

from ldpsim.mechanisms.base import Aggregate, DiscreteOracle, FrequencyOracle
from ldpsim.mechanisms.central_dp import LaplaceHistogram, project_lattice, project_simplex_l1, synthetic_data
from ldpsim.mechanisms.cms import CMS, CMSReports
from ldpsim.mechanisms.dbitflip import DBitFlip, DBitFlipReports
from ldpsim.mechanisms.em import EM, EMResult
from ldpsim.mechanisms.grr import GRR
from ldpsim.mechanisms.hadamard_response import HR
from ldpsim.mechanisms.hashing import HashFamily
from ldpsim.mechanisms.histogram_encoding import SHE, THE
from ldpsim.mechanisms.local_hashing import BLH, FLH, FLHReports
from ldpsim.mechanisms.hcms import HCMS, HCMSReports
from ldpsim.mechanisms.olh import OLH, OLHReports
from ldpsim.mechanisms.onebitmean import OneBitMean
from ldpsim.mechanisms.oue import OUE
from ldpsim.mechanisms.numeric import NumericMechanism
from ldpsim.mechanisms.personalized import PersonalizedSDGRR, combine_inverse_variance
from ldpsim.mechanisms.personalized_numeric import PersonalizedSDPM
from ldpsim.mechanisms.pm import PM
from ldpsim.mechanisms.quadtree import (NoisyQuadtree, arithmetic_allocation, cormode_allocation, geometric_allocation,
                       uniform_allocation)
from ldpsim.mechanisms.rappor import RAPPOR, RAPPORReports
from ldpsim.mechanisms.rappor_decode import RAPPORDecoding
from ldpsim.mechanisms.rr import RR
from ldpsim.mechanisms.sdgrr import SDGRR
from ldpsim.mechanisms.sdpm import SDPM
from ldpsim.mechanisms.sue import SUE
from ldpsim.mechanisms.urr import URR
from ldpsim.mechanisms.words import DiscoveryProtocol, DiscoveryResult, WordCodec
from ldpsim.mechanisms.pem import PEM
from ldpsim.mechanisms.sfp import SFP
from ldpsim.mechanisms.treehist import TreeHist
from ldpsim.mechanisms.registry import MECHANISMS, make

__all__ = ["Aggregate", "DiscreteOracle", "FrequencyOracle", "GRR", "RR", "SDGRR", "URR", "MECHANISMS",
           "PersonalizedSDGRR", "combine_inverse_variance", "make", "OLH", "OLHReports", "OUE",
           "CMS", "CMSReports", "HCMS", "HCMSReports", "HashFamily",
           "NumericMechanism", "PM", "SDPM", "EM", "EMResult", "PersonalizedSDPM",
           "LaplaceHistogram", "project_lattice", "project_simplex_l1", "synthetic_data",
           "NoisyQuadtree", "arithmetic_allocation", "cormode_allocation", "geometric_allocation",
           "uniform_allocation", "RAPPOR", "RAPPORReports", "RAPPORDecoding", "HR", "SUE", "SHE", "THE",
           "BLH", "FLH", "FLHReports", "DBitFlip", "DBitFlipReports", "OneBitMean",
           "DiscoveryProtocol", "DiscoveryResult", "WordCodec", "PEM", "SFP", "TreeHist"]
