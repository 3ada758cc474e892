"""``orlbuild judge`` against the fake endpoint: throughput at --concurrency 16, memory over a plan.

Target (issue 37): at least 200 pairs per second at ``--concurrency 16`` (each pair in
both orders: two requests), memory flat in the plan's length. The fake server runs in a
separate process so that it does not share the client's interpreter. Memory: each plan
length is judged in a fresh process (one order per pair), which reports its tracemalloc
peak and its RSS growth (peak RSS less the RSS before the run). Prints figures;
``PYTHONPATH=.:tests python tests/benchmarks/bench_judge.py [pairs] [memory_pairs]``;
``memory_pairs`` (default 20,000) is the larger length, a quarter of it the smaller, or
``ORLBUILD_BENCH_JUDGE_MEMORY=10000,100000`` names the lengths (the 100,000-pair run
takes several minutes; ``ORLBUILD_BENCH_JUDGE_TRACE=0`` measures RSS alone, about three
times faster than under tracemalloc). Measured on 2 shared, loaded cores: RSS growth 7.1 MiB
at 10,000 pairs and 7.2 MiB at 100,000 (99,661 answers in 1,100 s); tracemalloc peak 0.9
and 1.1 MiB at 2,500 and 10,000 pairs.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from tempfile import TemporaryDirectory

from fake_judge import FakeJudge, serving

from orlbuild.judging.chat_client import ChatSettings
from orlbuild.services.judging import JudgeOptions, judge_plan
from orlbuild.vocabulary import JudgeOrders
from tests.judging.test_judge import write_plan


def _serve(queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    with serving(FakeJudge(rho=0.4)) as url:
        queue.put(url)
        time.sleep(3600)


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _memory_run(url: str, n: int, tmp: str, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """Judge an ``n``-pair plan in this (fresh) process; report tracemalloc and RSS."""
    plan = Path(tmp) / f"plan{n}.tsv"
    write_plan(plan, n, items=2000)
    options = JudgeOptions(
        chat=ChatSettings(base_url=url, model="fake", concurrency=16), orders=JudgeOrders.random
    )
    trace = os.environ.get("ORLBUILD_BENCH_JUDGE_TRACE", "1") != "0"
    before = _rss_mib()
    if trace:
        tracemalloc.start()
    started = time.perf_counter()
    summary = judge_plan(plan, Path(tmp) / f"a{n}.tsv", options)
    peak = tracemalloc.get_traced_memory()[1] / 2**20 if trace else float("nan")
    tracemalloc.stop()
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((summary.asked, time.perf_counter() - started, peak, max_rss - before))


def _memory(url: str, sizes: list[int], tmp: str) -> None:
    figures = []
    for n in sizes:
        queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
        child = multiprocessing.Process(target=_memory_run, args=(url, n, tmp, queue))
        child.start()
        asked, seconds, peak, rss = queue.get()
        child.join()
        figures.append((peak, rss))
        print(
            f"memory: {n} pairs (one order each, {asked} answers in {seconds:.0f} s): "
            f"tracemalloc peak {peak:.1f} MiB, RSS growth {rss:.1f} MiB"
        )
    (p0, r0), (p1, r1) = figures[0], figures[-1]
    print(
        f"memory ratio {sizes[-1]}/{sizes[0]} pairs: tracemalloc {p1 / p0:.2f}, "
        f"RSS growth {r1:.1f} against {r0:.1f} MiB"
    )


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    memory_pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    server = multiprocessing.Process(target=_serve, args=(queue,), daemon=True)
    server.start()
    url = queue.get(timeout=30)
    try:
        with TemporaryDirectory() as tmp:
            plan = Path(tmp) / "plan.tsv"
            write_plan(plan, pairs, items=2000)
            options = JudgeOptions(
                chat=ChatSettings(base_url=url, model="fake", concurrency=16, timeout=10)
            )
            started = time.perf_counter()
            summary = judge_plan(plan, Path(tmp) / "a.tsv", options)
            seconds = time.perf_counter() - started
            print(
                f"throughput: {pairs} pairs ({summary.asked} answers) in {seconds:.2f} s = "
                f"{pairs / seconds:.0f} pairs/s, {summary.asked / seconds:.0f} answers/s "
                "at --concurrency 16 (target >= 200 pairs/s)"
            )
            named = os.environ.get("ORLBUILD_BENCH_JUDGE_MEMORY")
            sizes = (
                [int(v) for v in named.split(",")] if named else [memory_pairs // 4, memory_pairs]
            )
            _memory(url, sizes, tmp)
    finally:
        server.terminate()
        server.join(5)


if __name__ == "__main__":
    main()
