"""``orlbuild judge`` against the fake endpoint: throughput at --concurrency 16, memory over a plan.

Target (issue 37): at least 200 pairs per second at ``--concurrency 16`` (each pair in
both orders: two requests), memory flat in the plan's length. The fake server runs in a
separate process so that it does not share the client's interpreter. Prints figures;
``PYTHONPATH=.:tests python tests/benchmarks/bench_judge.py [pairs] [memory_pairs]``.
"""

from __future__ import annotations

import multiprocessing
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
            peaks = []
            for n in (memory_pairs // 4, memory_pairs):
                plan = Path(tmp) / f"plan{n}.tsv"
                write_plan(plan, n, items=2000)
                options = JudgeOptions(
                    chat=ChatSettings(base_url=url, model="fake", concurrency=16),
                    orders=JudgeOrders.random,
                )
                tracemalloc.start()
                judge_plan(plan, Path(tmp) / f"a{n}.tsv", options)
                peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
                tracemalloc.stop()
                print(f"memory: {n} pairs (one order each): tracemalloc peak {peaks[-1]:.1f} MiB")
            print(
                f"memory ratio {memory_pairs}/{memory_pairs // 4} pairs: {peaks[1] / peaks[0]:.2f}"
            )
    finally:
        server.terminate()
        server.join(5)


if __name__ == "__main__":
    main()
