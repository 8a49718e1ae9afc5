"""Metrics of discovery without a dictionary."""
