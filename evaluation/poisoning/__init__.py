"""Data-poisoning attacks on frequency oracles and their defenses (Cao, Jia, Gong, USENIX Security 2021)."""

from ldpsim.evaluation.poisoning.attacks import fake_aggregate, fake_reports
from ldpsim.evaluation.poisoning.defenses import detect_fake_users, norm_sub, normalized_frequencies
from ldpsim.evaluation.poisoning.gains import ATTACKS, expected_gain, fake_contribution, paper_gain
from ldpsim.evaluation.poisoning.measure import gain_after_detection, measure_gain

__all__ = ["ATTACKS", "detect_fake_users", "expected_gain", "fake_aggregate", "fake_contribution", "fake_reports",
           "gain_after_detection", "measure_gain", "norm_sub", "normalized_frequencies", "paper_gain"]
