"""The deployment simulation (SimPy) and the population engine; imports only ``mechanisms``."""

from ldpsim.simulator.config import DeploymentConfig, UseCase
from ldpsim.simulator.deployment import DeploymentResult, run
from ldpsim.simulator.population import estimate_counts, items_for, simulate_aggregate

__all__ = ["DeploymentConfig", "DeploymentResult", "UseCase", "estimate_counts", "items_for", "run",
           "simulate_aggregate"]
