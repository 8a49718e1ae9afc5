"""Trend studies: detecting a rising item under each continual-release design."""
