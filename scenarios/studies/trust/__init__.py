"""Trust models side by side and trust-model scenario files (``ldpsim trust``, ``ldpsim compare --trust``)."""
