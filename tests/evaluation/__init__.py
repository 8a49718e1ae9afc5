"""Tests of the evaluation package."""
