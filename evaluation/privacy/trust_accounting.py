"""The trust models' accounting under the names it is imported by: it lives in the project's one accountant,
:mod:`ldpsim.evaluation.privacy.accountant` (docs/math.md §9.5)."""

from ldpsim.evaluation.privacy.accountant import (EPS_CAP, MODELS, NOISE_MODELS, Guarantee, TrustModel, calibrate,
                                                  calibrate_threshold,
                                                  client_rappor_epsilon, dropout_epsilon, guarantees, noise_epsilon,
                                                  noise_pld, run_epsilon)

__all__ = ["EPS_CAP", "MODELS", "NOISE_MODELS", "Guarantee", "TrustModel", "calibrate", "calibrate_threshold",
           "client_rappor_epsilon",
           "dropout_epsilon", "guarantees", "noise_epsilon", "noise_pld", "run_epsilon"]
