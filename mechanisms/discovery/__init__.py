"""Discovery without a dictionary: words as symbol sequences, the protocols that find frequent ones, and their theory."""
