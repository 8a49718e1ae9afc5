"""The deployment simulation (SimPy) and the population engine; imports only ``mechanisms``."""

from .config import DeploymentConfig, UseCase
from .deployment import DeploymentResult, run
from .population import estimate_counts, items_for, simulate_aggregate

__all__ = ["DeploymentConfig", "DeploymentResult", "UseCase", "estimate_counts", "items_for", "run",
           "simulate_aggregate"]
