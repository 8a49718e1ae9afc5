"""Physical floors of the benchmark's hot paths: the raw draws and gathers a path cannot avoid.

A path's time depends on the machine and its load; the ratio of that time to the time of the path's
*floor*, measured in the same process right before, largely does not (both slow down together on a
busy machine). ``ldpsim bench`` reports that ratio, and ``--check`` compares it with a stored baseline.

Each floor does only work the path must also do, at the same sizes, with the same numpy generator:

* ``exponentials`` — n·D float64 ziggurat exponentials (``Generator.standard_exponential``): SHE's
  per-user path draws one per user and item (its Laplace noise is a sign times an exponential).
* ``report-bits`` — 32 raw random bits per 16 report bits, n·W bits in all (W = D for unary encodings,
  m for CMS): the alias sampler of :func:`~ldpsim.mechanisms.bitsampling.bernoulli_words` reads that many.
* ``user-draws`` — one raw 64-bit draw per user: any per-user report needs at least one.
* ``cell-shares`` — the SecAgg quadtree's per-device path when every cell splits: one raw draw per device
  (its level) and two per noise share it adds (one share per asked cell, and one for the cells not asked).
* ``level-bits`` — a tree histogram's (or HDG's): one raw draw per device (its level or group) and the
  report bits of each level's or group's oracle for its share of the devices.
* ``sketch-cells`` — one raw draw per user (the exact direct sampler places every user in a row), one
  16-bit uniform per cell of a k × m sketch (its binomial per cell) and k·D random gathers from a
  table of k × (m+1) int64 (the estimate reads one cell per row and item).

A floor function takes ``(mechanism, n, domain_size, rng)`` and returns the :class:`Stopwatch` of
the floor's work alone (set-up outside the clock).
"""

from __future__ import annotations

import time

import numpy as np

_CHUNK = 1 << 21  # elements per step of a floor (16 MiB of float64): the paths work in batches too
_CACHED = 1 << 17  # draws per step where the path keeps its draws in cache (1 MiB of float64)


class Stopwatch:
    """Wall and CPU seconds of a ``with`` block (``time.perf_counter`` and ``time.process_time``)."""

    wall: float = float("nan")
    cpu: float = float("nan")

    def __enter__(self) -> "Stopwatch":
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu


def _raw_words(total: int, rng: np.random.Generator) -> None:
    for start in range(0, total, _CHUNK):
        rng.bit_generator.random_raw(min(_CHUNK, total - start))


def exponentials(mech, n: int, domain_size: int, rng: np.random.Generator) -> Stopwatch:
    """n·D standard exponentials, into a float64 buffer of ``_CACHED`` (it stays in cache)."""
    total = n * domain_size
    buf = np.empty(min(_CACHED, total))
    with Stopwatch() as sw:
        for start in range(0, total, _CACHED):
            rng.standard_exponential(out=buf[:min(_CACHED, total - start)])
    return sw


def report_bits(mech, n: int, domain_size: int, rng: np.random.Generator) -> Stopwatch:
    """n·⌈W/16⌉ 32-bit raw draws, W = the report's bits (``mech.m`` for sketches, else D)."""
    width = getattr(mech, "m", domain_size)
    with Stopwatch() as sw:
        _raw_words(-(-n * -(-width // 16) // 2), rng)
    return sw


def user_draws(mech, n: int, domain_size: int, rng: np.random.Generator) -> Stopwatch:
    """n raw 64-bit draws."""
    with Stopwatch() as sw:
        _raw_words(n, rng)
    return sw


def sketch_cells(mech, n: int, domain_size: int, rng: np.random.Generator) -> Stopwatch:
    """n raw draws (each user's row), k·m 16-bit uniforms and k·D gathers from a k × (m+1) int64 table
    (one fixed block of random positions, drawn before the clock, is reused)."""
    k, m = mech.k, mech.m
    table = np.zeros(k * (m + 1), dtype=np.int64)
    positions = rng.integers(0, table.size, size=min(_CHUNK, k * domain_size))
    gathers = k * domain_size
    with Stopwatch() as sw:
        table[:] = 1  # the sketch's pages, written once as the sampler does
        _raw_words(n, rng)
        _raw_words(-(-k * m // 4), rng)
        for start in range(0, gathers, positions.size):
            table.take(positions[:min(positions.size, gathers - start)]).sum()
    return sw


def level_report_bits(mech, n: int, domain_size: int, rng: np.random.Generator) -> Stopwatch:
    """A tree histogram's levels (docs/math.md §2.6), or HDG's groups (§2.8): n raw draws (each device's level
    or group) plus, per level or group, its devices' report bits (⌈W/16⌉ 32-bit draws each, W = the oracle's
    domain for a unary one, 16 for GRR's one draw)."""
    oracles = mech.level_oracles if hasattr(mech, "level_oracles") else mech.oracles
    share = n // len(oracles)
    words = sum(share * -(-(o.domain_size if hasattr(o, "bit_probabilities") else 16) // 16) for o in oracles)
    with Stopwatch() as sw:
        _raw_words(n + -(-words // 2), rng)
    return sw


def cell_shares(mech, n: int, domain_size: int, rng: np.random.Generator) -> Stopwatch:
    """The SecAgg quadtree's per-device noise when every cell splits (docs/math.md §9.11): n raw draws (each
    device's level) plus, for the n/h devices of level ℓ, two raw draws (a Skellam share is two Poissons) for
    each of the 4^ℓ asked cells and the slot of the cells not asked."""
    h = mech.height
    words = sum((n // h) * 2 * (4 ** lv + 1) for lv in range(1, h + 1))
    with Stopwatch() as sw:
        _raw_words(n + words, rng)
    return sw


#: floor name → function ``(mechanism, n, domain_size, rng) -> Stopwatch``
FLOORS = {"exponentials": exponentials, "report-bits": report_bits, "user-draws": user_draws,
          "sketch-cells": sketch_cells, "level-bits": level_report_bits, "cell-shares": cell_shares}
