"""Evaluation: workloads, metrics, the adversary, scenarios, sweeps, reports and the benchmark."""
