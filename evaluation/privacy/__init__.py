"""Privacy accounting above the mechanisms: amplification by shuffling and the central ledger of a run."""
