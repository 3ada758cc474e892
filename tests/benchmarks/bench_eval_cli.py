"""Benchmark: ``orlbuild eval`` end to end as a whole process, against the tools it replaces.

Run: ``python tests/benchmarks/bench_eval_cli.py`` (all parts) or with
``--part speed|startup|many|memory``. Each tool runs as its own process on the
same generated files, side by side and interleaved, best of ``--repeat`` runs;
ratios (ours / theirs) are printed, so a loaded machine shifts both sides.
Besides wall time, each process's CPU time (user + system, from
``getrusage``) is printed: on a machine shared with other work it moves much
less than wall time, and it is what a comparison with a fixed per-call
figure (the issue's 9 ms per trec_eval call) should use there. Every process
runs with compiled bytecode, as after a normal install: the benchmark clears
``PYTHONDONTWRITEBYTECODE`` (which some shells set, and which makes Python
compile orlbuild's modules afresh on every start of an editable install),
keeps the bytecode under a temporary ``PYTHONPYCACHEPREFIX`` and runs each
command once untimed before the timed rounds.

Targets (issue 11):

* ``speed``: on a 600,000-line run (6,000 queries x 100 documents, graded
  qrels), nDCG@10 and AP: ``orlbuild eval`` / ``ir_measures`` CLI <= 1.0 and
  ``orlbuild eval`` / trec_eval <= 2.0. No PyPI or Debian package ships the
  C trec_eval binary, so trec_eval is stood in for by pytrec_eval - trec_eval
  9.0.8 compiled in -
  run as a whole process that parses the files with its own C parser and
  evaluates.
* ``startup``: ``orlbuild --help`` and ``--version`` <= 5x ``python3 -c pass``.
* ``many``: 63 runs (53 queries x 100 documents) in one ``orlbuild eval``
  call <= 1.5x the total of 63 separate trec_eval-like calls (the same
  pytrec_eval process, once per run); the ratio against the issue's 9 ms per
  C trec_eval call is printed too.
* ``memory``: peak resident memory of ``orlbuild eval`` < 2 GB at 10,000
  queries x 1,000 documents.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BIN = Path(sys.executable).parent
ORLBUILD = [str(BIN / "orlbuild")]
IR_MEASURES = [sys.executable, "-m", "ir_measures"]
PYTREC = [
    sys.executable,
    "-c",
    "import sys, pytrec_eval\n"
    "qrels = pytrec_eval.parse_qrel(open(sys.argv[1]))\n"
    "measures = {'ndcg_cut_10', 'map'}\n"
    "ev = pytrec_eval.RelevanceEvaluator(qrels, measures)\n"
    "for path in sys.argv[2:]:\n"
    "    res = ev.evaluate(pytrec_eval.parse_run(open(path)))\n"
    "    for m in ('ndcg_cut_10', 'map'):\n"
    "        print(path, m, sum(q[m] for q in res.values()) / len(qrels))\n",
]
#: The issue's measured time of one C trec_eval call on a TREC-DL-sized run.
TREC_EVAL_CALL_SECONDS = 0.009


def write_files(
    folder: Path, n_queries: int, n_docs: int, n_judged: int, n_runs: int = 1, seed: int = 0
) -> tuple[Path, list[Path]]:
    """Graded qrels (grades 0-3) and ``n_runs`` TREC runs, written with NumPy only."""
    rng = np.random.default_rng(seed)
    queries = np.char.add("q", np.arange(n_queries).astype(str))
    doc_pool = 4 * n_docs
    judged = np.argsort(rng.random((n_queries, doc_pool)), axis=1)[:, :n_judged]
    grades = rng.integers(0, 4, size=judged.shape)
    qrels = folder / "qrels.txt"
    lines = [
        f"{queries[q]} 0 d{judged[q, j]} {grades[q, j]}\n"
        for q in range(n_queries)
        for j in range(n_judged)
    ]
    qrels.write_text("".join(lines))
    runs = []
    for r in range(n_runs):
        docs = np.argsort(rng.random((n_queries, doc_pool)), axis=1)[:, :n_docs]
        scores = np.sort(rng.random((n_queries, n_docs)), axis=1)[:, ::-1] * 100
        path = folder / f"run{r:02d}.txt"
        with path.open("w") as handle:
            for q in range(n_queries):
                handle.write(
                    "".join(
                        f"{queries[q]} Q0 d{docs[q, j]} {j + 1} {scores[q, j]:.6f} sys{r:02d}\n"
                        for j in range(n_docs)
                    )
                )
        runs.append(path)
    return qrels, runs


#: CPU seconds (user + system) of every process run by :func:`wall`, by command name.
CPU: dict[str, float] = {}

#: The environment of every timed process (see the module doc: bytecode as installed).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall(command: list[str]) -> tuple[float, float]:
    """Wall and CPU time of one process run to completion (output discarded, failure raised)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    return time.perf_counter() - start, _children_cpu() - cpu


def best_of(commands: dict[str, list[list[str]]], repeat: int) -> dict[str, float]:
    """Best total wall time of each named command list, the tools interleaved round by round.

    The best total CPU time of each is left in :data:`CPU`.
    """
    best = dict.fromkeys(commands, float("inf"))
    for sequence in commands.values():  # untimed: bytecode compiled and cached
        wall(sequence[0])
    for _ in range(repeat):
        for name, sequence in commands.items():
            timings = [wall(c) for c in sequence]
            best[name] = min(best[name], sum(t for t, _ in timings))
            CPU[name] = min(CPU.get(name, float("inf")), sum(c for _, c in timings))
    return best


def report(times: dict[str, float], ours: str) -> None:
    """Print each wall and CPU time and the ratios ours / theirs."""
    for name, seconds in times.items():
        ratio = "" if name == ours else f"   {ours} / {name} = {times[ours] / seconds:.2f}"
        cpu_ratio = "" if name == ours else f" (cpu {CPU[ours] / CPU[name]:.2f})"
        print(f"  {name:<34} {seconds:8.3f} s  cpu {CPU[name]:7.3f} s{ratio}{cpu_ratio}")


def part_speed(folder: Path, repeat: int, n_queries: int) -> None:
    qrels, (run,) = write_files(folder, n_queries, 100, 50)
    lines = sum(1 for _ in run.open())
    print(f"speed: {lines:,}-line run ({n_queries} queries x 100), {qrels.name} graded")
    times = best_of(
        {
            "orlbuild eval": [
                [*ORLBUILD, "eval", str(qrels), str(run), "-m", "nDCG@10", "-m", "AP"]
            ],
            "ir_measures CLI": [[*IR_MEASURES, str(qrels), str(run), "nDCG@10 AP"]],
            "pytrec_eval process (trec_eval)": [[*PYTREC, str(qrels), str(run)]],
        },
        repeat,
    )
    report(times, "orlbuild eval")


def part_startup(repeat: int) -> None:
    print("startup:")
    times = best_of(
        {
            "orlbuild --version": [[*ORLBUILD, "--version"]],
            "orlbuild --help": [[*ORLBUILD, "--help"]],
            "python3 -c pass": [[sys.executable, "-c", "pass"]],
        },
        repeat * 3,
    )
    for name in ("orlbuild --version", "orlbuild --help"):
        print(
            f"  {name:<34} {times[name]:8.3f} s   / python3 -c pass "
            f"({times['python3 -c pass']:.3f} s) = {times[name] / times['python3 -c pass']:.2f}"
        )


def part_many(folder: Path, repeat: int) -> None:
    qrels, runs = write_files(folder, 53, 100, 50, n_runs=63, seed=1)
    print("many: 63 runs x 53 queries x 100 documents")
    measures = ["-m", "nDCG@10", "-m", "AP"]
    times = best_of(
        {
            "orlbuild eval, one call": [
                [*ORLBUILD, "eval", str(qrels), *map(str, runs), *measures]
            ],
            "63 pytrec_eval processes": [[*PYTREC, str(qrels), str(r)] for r in runs],
        },
        repeat,
    )
    report(times, "orlbuild eval, one call")
    estimate = 63 * TREC_EVAL_CALL_SECONDS
    ours = "orlbuild eval, one call"
    print(
        f"  63 C trec_eval calls at the issue's 9 ms: {estimate:.3f} s   "
        f"{ours} / that = {times[ours] / estimate:.2f} (wall), "
        f"{CPU[ours] / estimate:.2f} (cpu)"
    )


def part_memory(folder: Path) -> None:
    qrels, (run,) = write_files(folder, 10_000, 1_000, 100)
    print(f"memory: 10,000 queries x 1,000 documents ({run.stat().st_size / 1e6:.0f} MB run)")
    start = time.perf_counter()
    command = [*ORLBUILD, "eval", str(qrels), str(run), "-m", "nDCG@10", "-m", "AP"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=ENV)
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"  orlbuild eval peak RSS {peak_kb / 1e6:.2f} GB (target < 2 GB), {seconds:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["speed", "startup", "many", "memory", "all"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--queries", type=int, default=6000)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    try:
        _main(args)
    finally:
        print(f"load average {os.getloadavg()[0]:.1f} at the end")


def _main(args: argparse.Namespace) -> None:
    """Run the parts chosen by ``args``."""
    part = args.part or "all"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ENV["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        if part in ("startup", "all"):
            part_startup(args.repeat)
        if part in ("speed", "all"):
            part_speed(folder, args.repeat, args.queries)
        if part in ("many", "all"):
            part_many(folder, args.repeat)
        if part in ("memory", "all"):
            part_memory(folder)


if __name__ == "__main__":
    main()
