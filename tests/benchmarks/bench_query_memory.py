"""Peak memory and time of one large pairwise query (issue 23, docs/reliability.md, "Limits").

One query of ``n`` items, each compared with about 20 others (a ring plus
random pairs), built with ``bt`` and the defaults (Fisher, ``--tiering
simultaneous``, 2,000 Monte Carlo draws), measured with ``tracemalloc`` (NumPy
reports its buffers to it). The peer, run side by side in the same process,
is the same build with the Monte Carlo null computed in one block
(``NULL_BLOCK_BYTES`` raised past the whole null), which is what builds did
before the null was blocked; the blocked and the one-block builds must give
the same tiers. ``--tiering leader`` (no Monte Carlo null) is shown for the
dense arrays alone.

Run as a script: ``python tests/benchmarks/bench_query_memory.py --items 250 500 1000``
(``--peer-max N``: largest ``n`` for the one-block peer, whose memory grows
with ``draws x n^2``).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script

import orlbuild.builders.tiering.critical_values as critical_values
from orlbuild.builders import BuildParameters, build_orls
from orlbuild.limits import pairwise_peak_bytes
from tests.builders.simulation import drawn_preferences


def one_query(items: int, per_item: int = 20, seed: int = 0, spread: float = 1.0) -> pd.DataFrame:
    """Pairwise judgments of one query: a ring (connected) plus random pairs, strengths
    normal with standard deviation ``spread``."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, spread, items)
    ring = np.arange(items)
    extra = rng.integers(0, items, size=(items * (per_item - 2) // 2, 2))
    extra = extra[extra[:, 0] != extra[:, 1]]
    a = np.concatenate([ring, extra[:, 0]])
    b = np.concatenate([(ring + 1) % items, extra[:, 1]])
    names = np.array([f"d{i:05d}" for i in range(items)], dtype=object)
    frame = drawn_preferences(rng, strength, a, b, names, annotator="a")
    frame["batch_id"] = 1
    return frame


@contextmanager
def block_bytes(value: int) -> Iterator[None]:
    real = critical_values.NULL_BLOCK_BYTES
    critical_values.NULL_BLOCK_BYTES = value
    try:
        yield
    finally:
        critical_values.NULL_BLOCK_BYTES = real


def measure(frame: pd.DataFrame, params: BuildParameters) -> tuple[float, float, list[list[str]]]:
    """Peak GiB above the start, seconds, and the query's tiers."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        _, outcome = build_orls(frame, params)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / 2**30, time.perf_counter() - started, outcome.orls["q"].tiers


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--peer-max", type=int, default=500)
    args = parser.parse_args(argv)
    default = BuildParameters(source="pairwise", method="bt")
    leader = BuildParameters(source="pairwise", method="bt", tiering="leader")
    print("n  blocked GiB  s  | one-block GiB  s | ratio GiB, s | leader GiB s | estimate GiB")
    for n in args.items:
        frame = one_query(n)
        gib, sec, tiers = measure(frame, default)
        line = f"{n:6d} {gib:7.3f} {sec:7.1f}"
        if n <= args.peer_max:
            with block_bytes(2**62):
                peer_gib, peer_sec, peer_tiers = measure(frame, default)
            assert peer_tiers == tiers, "blocked and one-block tiers differ"
            ratios = f"{peer_gib / gib:6.1f} {peer_sec / sec:5.2f}"
            line += f" | {peer_gib:7.3f} {peer_sec:7.1f} | {ratios}"
        else:
            line += " |       -       - |      -     -"
        lead_gib, lead_sec, _ = measure(frame, leader)
        estimate = pairwise_peak_bytes(
            n, tiering="simultaneous", uncertainty="fisher", mc_draws=2000, bootstrap=200
        )
        line += f" | {lead_gib:6.3f} {lead_sec:5.1f} | {estimate / 2**30:6.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
