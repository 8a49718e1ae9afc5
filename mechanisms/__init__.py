"""LDP mechanisms: pure, vectorized math (no I/O, no SimPy, no pandas). See SPEC §1–§3."""

from .base import Aggregate, DiscreteOracle, FrequencyOracle
from .grr import GRR
from .registry import MECHANISMS, make

__all__ = ["Aggregate", "DiscreteOracle", "FrequencyOracle", "GRR", "MECHANISMS", "make"]
