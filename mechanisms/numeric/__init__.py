"""Numeric mechanisms (values in [-1, 1]) and their post-processing: PM, SDPM, personalized SDPM, 1BitMean, EM."""
