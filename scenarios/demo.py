"""``ldpsim demo``: compare frequency oracles on a Zipf workload and print a table."""

from __future__ import annotations

import numpy as np

from mechanisms import make


def add_arguments(parser):
    parser.add_argument("--users", type=int, default=1_000_000, help="population size n")
    parser.add_argument("--items", type=int, default=100, help="domain size D")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)


def run(args) -> int:
    ranks = np.arange(1, args.items + 1)
    freq = ranks ** -1.0 / (ranks ** -1.0).sum()
    counts = np.floor(freq * args.users).astype(np.int64)
    counts[: args.users - counts.sum()] += 1
    rng = np.random.default_rng(args.seed)
    print(f"{'mechanism':<12}{'MSE (freq)':>14}{'theory':>14}")
    for name in ("grr",):
        mech = make(name, epsilon=args.epsilon, domain_size=args.items)
        est = mech.estimate(mech.sample_aggregate(counts, rng)) / args.users
        mse = float(np.mean((est - counts / args.users) ** 2))
        theory = float(np.mean(mech.variance(counts))) / args.users ** 2
        print(f"{name:<12}{mse:>14.3e}{theory:>14.3e}")
    return 0
