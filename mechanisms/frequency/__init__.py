"""Frequency oracles: randomized response, unary and histogram encodings, local hashing, Hadamard response, RAPPOR, dBitFlip."""
