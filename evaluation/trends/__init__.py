"""Trends over a run: designs for an item's daily counts, and detecting a rising item — docs/math.md §12.5–12.6."""
