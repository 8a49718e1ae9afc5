"""Trust models between the devices and the aggregate: integer noise for sums, two-server shares and validity, threshold release — docs/math.md §9."""
