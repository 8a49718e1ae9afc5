"""LDP mechanisms: pure, vectorized math (no I/O, no SimPy, no pandas). See docs/math.md §1–§3."""

from ldpsim.mechanisms.base import GUARANTEE_KINDS, Aggregate, DiscreteOracle, FrequencyOracle, Guarantee
from ldpsim.mechanisms.central.central_dp import LaplaceHistogram, project_lattice, project_simplex_l1, synthetic_data
from ldpsim.mechanisms.sketches.cms import CMS, CMSReports
from ldpsim.mechanisms.frequency.dbitflip import DBitFlip, DBitFlipReports
from ldpsim.mechanisms.numeric.em import EM, EMResult
from ldpsim.mechanisms.frequency.grr import GRR
from ldpsim.mechanisms.frequency.hadamard_response import HR
from ldpsim.mechanisms.hashing import HashFamily
from ldpsim.mechanisms.frequency.histogram_encoding import SHE, THE
from ldpsim.mechanisms.frequency.local_hashing import BLH, FLH, FLHReports
from ldpsim.mechanisms.sketches.hcms import HCMS, HCMSReports
from ldpsim.mechanisms.frequency.olh import OLH, OLHReports
from ldpsim.mechanisms.numeric.onebitmean import OneBitMean
from ldpsim.mechanisms.frequency.oue import OUE
from ldpsim.mechanisms.numeric.interface import NumericMechanism
from ldpsim.mechanisms.frequency.personalized import PersonalizedSDGRR, combine_inverse_variance
from ldpsim.mechanisms.numeric.personalized_numeric import PersonalizedSDPM
from ldpsim.mechanisms.numeric.pm import PM
from ldpsim.mechanisms.central.quadtree import (NoisyQuadtree, arithmetic_allocation, cormode_allocation, geometric_allocation,
                       uniform_allocation)
from ldpsim.mechanisms.frequency.rappor import RAPPOR, RAPPORReports
from ldpsim.mechanisms.frequency.rappor_decode import RAPPORDecoding
from ldpsim.mechanisms.frequency.rr import RR
from ldpsim.mechanisms.frequency.sdgrr import SDGRR
from ldpsim.mechanisms.numeric.sdpm import SDPM
from ldpsim.mechanisms.numeric.square_wave import SW
from ldpsim.mechanisms.numeric.tree_histogram import TreeHistogram, TreeReports
from ldpsim.mechanisms.numeric.quadtree_heatmap import QuadtreeHeatmap
from ldpsim.mechanisms.frequency.sue import SUE
from ldpsim.mechanisms.frequency.urr import URR
from ldpsim.mechanisms.discovery.words import DiscoveryProtocol, DiscoveryResult, WordCodec
from ldpsim.mechanisms.discovery.pem import PEM
from ldpsim.mechanisms.discovery.sfp import SFP
from ldpsim.mechanisms.discovery.treehist import TreeHist
from ldpsim.mechanisms.discovery.triehh import TrieHH, TrieResult
from ldpsim.mechanisms.discovery.sample_threshold import TrieHHPP
from ldpsim.mechanisms.discovery.ldp_trie import LDPTrie
from ldpsim.mechanisms.discovery.gboard_trie import GboardTrie
from ldpsim.mechanisms.discovery.prefix_tree import PrefixTree
from ldpsim.mechanisms.registry import INTERACTIVE, MECHANISMS, make

__all__ = ["Aggregate", "Guarantee", "GUARANTEE_KINDS", "DiscreteOracle", "FrequencyOracle", "GRR", "RR", "SDGRR", "URR", "MECHANISMS",
           "PersonalizedSDGRR", "combine_inverse_variance", "make", "OLH", "OLHReports", "OUE",
           "CMS", "CMSReports", "HCMS", "HCMSReports", "HashFamily",
           "NumericMechanism", "PM", "SDPM", "SW", "TreeHistogram", "TreeReports", "QuadtreeHeatmap", "EM", "EMResult", "PersonalizedSDPM",
           "LaplaceHistogram", "project_lattice", "project_simplex_l1", "synthetic_data",
           "NoisyQuadtree", "arithmetic_allocation", "cormode_allocation", "geometric_allocation",
           "uniform_allocation", "RAPPOR", "RAPPORReports", "RAPPORDecoding", "HR", "SUE", "SHE", "THE",
           "BLH", "FLH", "FLHReports", "DBitFlip", "DBitFlipReports", "OneBitMean",
           "DiscoveryProtocol", "DiscoveryResult", "WordCodec", "PEM", "SFP", "TreeHist",
           "TrieHH", "TrieHHPP", "TrieResult", "LDPTrie", "GboardTrie", "PrefixTree", "INTERACTIVE"]
