"""Tests of the simulator package."""
