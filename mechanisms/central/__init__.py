"""Central DP on a trusted server: Laplace histograms and noisy quadtrees."""
