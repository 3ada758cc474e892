"""Benchmark of per-query work on many cores and on a Dask cluster (docs/parallel.md, "Running on
many cores or a cluster").

Measured side by side in one run, on the same generated data:

1. ``rank-centrality`` with 200 bootstrap resamples on 500 queries x 20 items
   x 200 comparisons: serial (``--jobs 1``), a local process pool
   (``--jobs 2``) and a local Dask cluster of two single-threaded worker
   processes. Targets: ``--jobs 2`` at least 1.7x faster than serial, the
   cluster at least 1.5x.
2. ``bt`` on 1,000,000 comparisons (5,000 queries x 20 items x 200), serial
   against ``--jobs 2`` (target 1.5x for the build itself).
3. ``power``: the power analysis of ``orlbuild power`` (Tukey HSD over 6
   systems, 200 queries, budgets 25..200, 300 subsamples of 1,000 draws, two
   measures) through :func:`orlbuild.services.evaluations.power_for_panels`,
   serial against ``--jobs 2`` and the two-worker cluster; the figures must be
   identical.

Every parallel result is checked to be identical to the serial one. The peak
resident memory of this (coordinating) process is printed after each run:
workers hold their own chunks, so it must not grow with their number.

Run as a script: ``python tests/benchmarks/bench_parallel.py [--queries N] [--bt-queries N]
[--power-queries N] [--only build|power]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import pandas as pd
from bench_build import simulated_pairwise

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.build import ESTIMATOR_MODULES
from orlbuild.executor import (
    Executor,
    close_dask_connections,
    local_worker_pids,
    map_ordered,
    resolve_executor,
    shutdown_local_workers,
    start_workers,
)
from orlbuild.services.comparisons import power_budgets, power_for_panels


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _load() -> str:
    """The 1-minute load average: a ratio measured while other work runs means little."""
    return f"load {os.getloadavg()[0]:.1f}"


def _stop_local_pool() -> None:
    """Shut the local workers down, so that the next parallel run starts new ones."""
    shutdown_local_workers()


class _TimedWork:
    """Wrap the per-query function of a serial build and add up its CPU seconds."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.calls = 0

    def mapper(self, function, tasks):  # type: ignore[no-untyped-def]
        for task in tasks:
            start = time.process_time()
            result = function(task)
            self.cpu += time.process_time() - start
            self.calls += 1
            yield result


def serial_build(frame, params: BuildParameters) -> tuple[float, str, float]:  # type: ignore[no-untyped-def]
    """Time a serial build, and split its CPU time into per-query work and the rest (Amdahl)."""
    work = _TimedWork()
    load = _load()
    start, cpu_start = time.perf_counter(), time.process_time()
    _, outcome = build_orls(frame, params, mapper=work.mapper)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    rest = cpu - work.cpu
    print(
        f"  {'serial':<34} {seconds:8.2f} s   ({load}; peak RSS of this process "
        f"{_peak_mb():5.0f} MB)\n"
        f"    CPU {cpu:.2f} s = per-query work {work.cpu:.2f} s "
        f"({1000 * work.cpu / work.calls:.2f} ms a query) + the rest in this process "
        f"{rest:.2f} s ({rest / cpu:.1%})\n"
        f"    Amdahl bound on 2 workers (the rest stays serial): "
        f"{cpu / (rest + work.cpu / 2):.2f}x",
        flush=True,
    )
    return seconds, repr(outcome), cpu


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used since it started (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _worker_cpu(executor: Executor) -> dict[str, float]:
    """CPU seconds so far of every worker process of ``executor``, by worker."""
    if executor.scheduler is not None:
        from distributed import Client

        with Client(executor.scheduler) as client:
            times = client.run(os.times)
        return {w: t[0] + t[1] for w, t in times.items()}
    return {str(pid): _proc_cpu(pid) for pid in local_worker_pids()}


def timed_build(
    frame,  # type: ignore[no-untyped-def]
    params: BuildParameters,
    executor: Executor,
    label: str,
    *,
    cold: bool = False,
) -> tuple[float, str, tuple[float, float]]:
    """Time a build on ``executor``; ``cold``: a new local pool, started when the build starts.

    Returns the wall seconds, the build, and two CPU figures that bracket the
    wall time on an idle machine: the CPU seconds of all processes (this one
    and the workers, start-up included for a new pool) spread over every core
    (no machine can do better), and those of the busiest process (the
    coordinator runs chunks whenever it waits, so the work rebalances and an
    idle machine does better than that).
    """
    if cold:
        _stop_local_pool()
    before = {} if cold else _worker_cpu(executor)
    load = _load()
    start, cpu_start = time.perf_counter(), time.process_time()
    # what build_and_store does
    start_workers(executor, ["orlbuild.builders.build", *ESTIMATOR_MODULES["pairwise"]])
    _, outcome = build_orls(frame, params, mapper=partial(map_ordered, executor=executor))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    workers = {w: c - before.get(w, 0.0) for w, c in _worker_cpu(executor).items()}
    busiest = max([cpu, *workers.values()])
    spread = sum([cpu, *workers.values()]) / (os.cpu_count() or 1)
    shown = " + ".join(f"{c:.2f}" for c in workers.values())
    print(
        f"  {label:<34} {seconds:8.2f} s   ({load}; peak RSS of this process "
        f"{_peak_mb():5.0f} MB)\n"
        f"    CPU: this process {cpu:.2f} s, workers {shown} s"
        f"{' (start-up included)' if cold else ''}",
        flush=True,
    )
    return seconds, repr(outcome), (busiest, spread)


def compare(
    label: str,
    frame,  # type: ignore[no-untyped-def]
    params: BuildParameters,
    runs: list[tuple[str, Executor, bool]],
    repeat: int,
) -> None:
    print(f"{label}: {len(frame):,} comparisons, {frame['query'].nunique():,} queries")
    for round_ in range(repeat):
        if repeat > 1:
            print(f" round {round_ + 1} of {repeat}")
        serial, reference, serial_cpu = serial_build(frame, params)
        for name, executor, cold in runs:
            seconds, result, (busiest, spread) = timed_build(
                frame, params, executor, name, cold=cold
            )
            if result != reference:
                raise SystemExit(f"{name} gave a different build than serial")
            print(
                f"    RATIO {label} | {name}: {serial / seconds:.2f}x against serial "
                f"(wall clock, {_load()}); from CPU times, on an idle machine "
                f"{serial_cpu / busiest:.2f}x to {serial_cpu / spread:.2f}x (serial CPU against "
                "the busiest process, against all processes' CPU over the cores)"
            )


def store_share(n_queries: int) -> None:
    """Build-and-store on SQLite, serial and ``--jobs 2``: the share of reading and writing."""
    import tempfile

    from bench_build_service import compare as compare_stored

    from orlbuild.store import upgrade

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.builders.store_data import store_judgments

    params = BuildParameters(source="pairwise", method="bt", tiering="simultaneous", seed=1)
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bt.db'}"
        upgrade(url)
        frame = simulated_pairwise(n_queries, seed=2)
        store_judgments(url, "pairwise", frame)
        print(f"bt with the store (SQLite), {_load()}:")
        compare_stored(url, "  build-and-store, bt, simultaneous tiers", params, len(frame))


def simulated_panels(n_queries: int, seed: int = 3) -> dict[str, pd.DataFrame]:
    """Two measures x six systems of slowly growing quality, per-query noise."""
    rng = np.random.default_rng(seed)
    difficulty = rng.random((n_queries, 1))
    return {
        measure: pd.DataFrame(
            difficulty + 0.02 * np.arange(6) + rng.normal(0.0, 0.15, (n_queries, 6)),
            columns=[f"s{i}" for i in range(6)],
        )
        for measure in ("RDQm2-a1@10", "nDCG@10")
    }


def timed_power(panels: dict[str, pd.DataFrame], executor: Executor) -> tuple[float, object]:
    plan = power_budgets(panels, None)
    start = time.perf_counter()
    results = power_for_panels(
        panels, plan, subsamples=300, permutations=1000, seed=1, executor=executor
    )
    seconds = time.perf_counter() - start
    print(
        f"  {executor.describe():<32} {seconds:8.2f} s   peak RSS of this process "
        f"{_peak_mb():7.0f} MB",
        flush=True,
    )
    return seconds, {m: r.to_dict() for m, r in results.items()}


def compare_power(n_queries: int, executors: list[Executor]) -> None:
    panels = simulated_panels(n_queries)
    print(f"power: 6 systems, {n_queries} queries, Tukey HSD, 300 subsamples x 1,000 draws")
    seconds, reference = timed_power(panels, Executor())
    for executor in executors:
        parallel_seconds, result = timed_power(panels, executor)
        if result != reference:
            raise SystemExit(f"{executor.describe()} gave different power figures than serial")
        print(f"    speed-up against serial: {seconds / parallel_seconds:.2f}x")


def simulated_runs(
    n_queries: int, depth: int, n_systems: int, seed: int = 4
) -> tuple[dict[str, object], dict[str, pd.DataFrame]]:
    """ORLs of 20 items in 5 tiers per query, and ``n_systems`` runs of ``depth`` entries."""
    from scoring import ORL

    rng = np.random.default_rng(seed)
    orls: dict[str, object] = {}
    for q in range(n_queries):
        items = [f"d{q}_{i}" for i in range(20)]
        orls[f"q{q:05d}"] = ORL.from_tiers([items[i : i + 4] for i in range(0, 20, 4)])
    queries = np.repeat([f"q{q:05d}" for q in range(n_queries)], depth).astype(object)
    runs = {}
    for system in range(n_systems):
        picks = np.argsort(rng.random((n_queries, 2 * depth)), axis=1)[:, :depth]
        items = np.array([f"d{q}_{i}" for q in range(n_queries) for i in picks[q]], dtype=object)
        runs[f"s{system}"] = pd.DataFrame(
            {
                "query": queries,
                "item": items,
                "rank": np.tile(np.arange(1, depth + 1), n_queries),
                "score": rng.random(n_queries * depth),
            }
        )
    return orls, runs


def compare_scoring(n_queries: int, depths: list[int], n_systems: int) -> None:
    """Several systems, one task each (what ``score_systems`` does), serial against 2 processes.

    The runs are in memory here; reading them from the store stays in this
    process (overlapped with scoring: the next run is read while the previous
    ones are scored).
    """
    from orlbuild.services.evaluations import _evaluate, _ScoringTask

    measures = ("RDQm2-a1@10", "nDCG@10", "AP", "KendallTau@10")
    jobs2 = resolve_executor(2)
    for depth in depths:
        orls, runs = simulated_runs(n_queries, depth, n_systems)
        tasks = [
            _ScoringTask(orls, run, measures, "zero", "score", "float32")  # type: ignore[arg-type]
            for run in runs.values()
        ]
        label = f"score {n_systems} systems x {n_queries:,} queries x {depth} entries"
        print(f"{label}, 4 measures ({_load()}):")
        start, cpu_start = time.perf_counter(), time.process_time()
        reference = [r.per_query for r in map(_evaluate, tasks)]
        serial, serial_cpu = time.perf_counter() - start, time.process_time() - cpu_start
        print(f"  {'serial':<34} {serial:8.2f} s   (CPU {serial_cpu:.2f} s)", flush=True)
        for name, cold in (("--jobs 2, new pool", True), ("--jobs 2, pool already started", False)):
            if cold:
                _stop_local_pool()
            before = {} if cold else _worker_cpu(jobs2)
            start, cpu_start = time.perf_counter(), time.process_time()
            start_workers(jobs2, ["orlbuild.services.evaluations", "scoring"])
            got = [r.per_query for r in map_ordered(_evaluate, tasks, executor=jobs2, chunk_size=1)]
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            workers = [c - before.get(w, 0.0) for w, c in _worker_cpu(jobs2).items()]
            if any(not a.equals(b) for a, b in zip(got, reference, strict=True)):
                raise SystemExit(f"{label}: {name} scored differently than serial")
            busiest, spread = max([cpu, *workers]), (cpu + sum(workers)) / (os.cpu_count() or 1)
            print(
                f"  {name:<34} {seconds:8.2f} s   (CPU: this process {cpu:.2f} s, "
                f"worker {' + '.join(f'{w:.2f}' for w in workers)} s)\n"
                f"    RATIO {label} | {name}: {serial / seconds:.2f}x against serial "
                f"(wall clock, {_load()}); from CPU times, on an idle machine "
                f"{serial_cpu / busiest:.2f}x to {serial_cpu / spread:.2f}x",
                flush=True,
            )


def _memory_child(jobs: int, n_queries: int) -> None:
    """One Rank Centrality bootstrap build on ``jobs`` processes; prints this process's peak RSS."""
    params = BuildParameters(
        source="pairwise", method="rank-centrality", uncertainty="bootstrap", bootstrap=200, seed=1
    )
    frame = simulated_pairwise(n_queries, seed=1)
    before = _peak_mb()
    mapper = None if jobs == 1 else partial(map_ordered, executor=resolve_executor(jobs))
    _, outcome = build_orls(frame, params, mapper=mapper)
    assert len(outcome.orls) == n_queries
    print(f"{before:.0f} {_peak_mb():.0f}")


def compare_memory(n_queries: int, counts: list[int]) -> None:
    """Peak RSS of the coordinating process for 1, 2, 4, 8 processes, each in a fresh interpreter.

    Workers beyond the cores only take turns; what is measured is whether the
    coordinator holds more the more workers it feeds (it should not: chunks are
    cut as they are sent and results are kept only until they are written).
    """
    import subprocess

    print(f"coordinator peak memory, rank-centrality bootstrap build of {n_queries} queries")
    for jobs in counts:
        child = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(jobs), "--queries", str(n_queries)],
            capture_output=True,
            text=True,
            check=True,
        )
        before, peak = child.stdout.split()[-2:]
        print(
            f"  --jobs {jobs}: peak RSS of the coordinating process {peak} MB "
            f"(data generated: {before} MB; {_load()})"
        )


# --- whole processes: `orlbuild build` serial, --jobs 2 and on a pre-started cluster -------------

#: The build command the issue times (docs/performance.md, "Builds on many cores or a cluster").
CLI_BUILD = [
    "build",
    "--source",
    "pairwise",
    "--method",
    "rank-centrality",
    "--uncertainty",
    "bootstrap",
    "--bootstrap",
    "200",
    "--seed",
    "1",
    "--name",
    "rc",
]


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (Linux /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(parents.get(current, []))
    return found


def _tree_cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):  # exited meanwhile
            total += _proc_cpu(pid)
    return total


#: Runs the CLI and, as its very last act (after the pool's shutdown), writes its own CPU
#: seconds and those it spent in the per-query work of the queries it built itself (a serial
#: build: all of them), so that the rest (imports, reading, writing) is known.
CLI_WITH_OWN_CPU = (
    "import atexit, functools, os, sys, time\n"
    "import orlbuild.builders.build as build\n"
    "spent = [0.0]\n"
    "real = build._build_query\n"
    "@functools.wraps(real)\n"
    "def timed(*args):\n"
    "    start = time.process_time()\n"
    "    try:\n"
    "        return real(*args)\n"
    "    finally:\n"
    "        spent[0] += time.process_time() - start\n"
    "if os.environ.get('BENCH_TIME_QUERIES'):\n"
    "    build._build_query = timed\n"
    "atexit.register(lambda: open(os.environ['BENCH_CPU_FILE'], 'w').write("
    "f'{os.times().user + os.times().system} {spent[0]}'))\n"
    "from orlbuild.cli.main import run\n"
    "run()\n"
)


def _timed_process(
    command: list[str], cluster: list[int], folder: Path, *, time_queries: bool = False
) -> tuple[float, float, float, float]:
    """Wall seconds of ``command``, the CPU seconds it caused (itself, its children, the
    cluster's processes meanwhile), those of the command's own process, and (with
    ``time_queries``, for a serial build) those of its per-query work."""
    before_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    before_cluster = _tree_cpu(cluster)
    own = folder / "own-cpu"
    start = time.perf_counter()
    subprocess.run(
        command,
        check=True,
        stdout=subprocess.DEVNULL,
        env={
            **os.environ,
            "BENCH_CPU_FILE": str(own),
            **({"BENCH_TIME_QUERIES": "1"} if time_queries else {}),
        },
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before_children.ru_utime) + (after.ru_stime - before_children.ru_stime)
    own_cpu, query_cpu = (float(v) for v in own.read_text().split())
    return wall, cpu + _tree_cpu(cluster) - before_cluster, own_cpu, query_cpu


#: A trivially parallel unit of work shaped like a build's: many small solves (``{n}`` of them).
NUMPY_UNIT = (
    "import numpy as np\n"
    "a = np.random.default_rng(0).random((20, 20)) + 20 * np.eye(20)\n"
    "b = np.ones(20)\n"
    "for _ in range({n}):\n"
    "    np.linalg.solve(a, b)\n"
)


def _calibration(repeats: int) -> float:
    """How much faster two processes do two units than one process does them, now: the
    share of 2 cores this benchmark actually has (2.0 on an idle machine)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", NUMPY_UNIT.format(n=2 * repeats)], check=True)
    one = time.perf_counter() - start
    start = time.perf_counter()
    both = [subprocess.Popen([sys.executable, "-c", NUMPY_UNIT.format(n=repeats)]) for _ in "ab"]
    for process in both:
        process.wait()
    return one / (time.perf_counter() - start)


def _start_cluster(folder: Path) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """``dask scheduler`` and two ``dask worker --nthreads 1`` processes, as a user starts them."""
    from distributed import Client

    scheduler_file = folder / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dask",
                "scheduler",
                "--host",
                "127.0.0.1",  # loopback only
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(scheduler_file),
            ],
            **quiet,
        )
    ]
    while not scheduler_file.exists():
        time.sleep(0.2)
    with Client(scheduler_file=str(scheduler_file)) as client:
        address = client.scheduler.address
        for _ in range(2):
            processes.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "dask",
                        "worker",
                        address,
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                    ],
                    **quiet,
                )
            )
        client.wait_for_workers(2, timeout=300)
    return address, processes


def compare_cli(n_queries: int, repeat: int, calibration_repeats: int) -> None:
    """``orlbuild build`` as whole processes, serial against ``--jobs 2`` and a pre-started cluster.

    The store (SQLite) and the cluster (a ``dask scheduler`` and two ``dask
    worker --nthreads 1`` processes) are made before any timing; every
    process is timed from its start to its exit (imports, reading the store,
    the build, writing it). The first build on the cluster finds workers that
    have not imported orlbuild yet (``dask`` first); later ones find them
    warm. Each round also measures the share of the two cores this run has
    (:func:`_calibration`): the machine may be shared.
    """
    import tempfile

    from orlbuild.services.builds import built_orls
    from orlbuild.store import open_store, upgrade

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.builders.store_data import store_judgments

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        url = f"sqlite:///{folder / 'rc.db'}"
        upgrade(url)
        store_judgments(url, "pairwise", simulated_pairwise(n_queries, seed=1))
        address, cluster = _start_cluster(folder)
        try:
            cluster_pids = [p for process in cluster for p in _descendants(process.pid)]
            cli = [sys.executable, "-c", CLI_WITH_OWN_CPU]
            cli += ["--db", url, "--quiet", *CLI_BUILD]
            runs = [
                ("serial", []),
                ("--jobs 2", ["--jobs", "2"]),
                ("dask", ["--scheduler", address]),
            ]
            print(
                f"orlbuild build, whole processes: rank-centrality, 200 bootstrap resamples, "
                f"{n_queries} queries x 20 items x 200 comparisons, SQLite ({_load()})"
            )
            rows: dict[str, list[tuple[float, float]]] = {}
            bounds: dict[str, list[float]] = {}
            balanced: dict[str, list[float]] = {}
            capacity = []
            outside = 0.0
            for round_ in range(repeat):
                capacity.append(_calibration(calibration_repeats))
                print(
                    f" round {round_ + 1}: two processes of numpy work {capacity[-1]:.2f}x one "
                    f"({_load()})",
                    flush=True,
                )
                for label, extra in runs:
                    if label == "dask" and round_ == 0:
                        label = "dask, first build on new workers"
                    wall, cpu, own, queries = _timed_process(
                        cli + extra,
                        cluster_pids if "dask" in label else [],
                        folder,
                        time_queries=label == "serial",
                    )
                    rows.setdefault(label, []).append((wall, cpu))
                    # on two free cores the wall time is at least the CPU over both cores,
                    # and at least this process's own CPU (imports, reading, writing, its chunks)
                    bounds.setdefault(label, []).append(
                        cpu if label == "serial" else max(cpu / 2, own)
                    )
                    if label == "serial":
                        # imports, reading, writing: no other process has work meanwhile
                        outside = own - queries
                        detail = f"; per-query work {queries:.2f} s, the rest {outside:.2f} s"
                    else:
                        # that part on one core, everything else spread over both
                        balanced.setdefault(label, []).append((cpu + outside) / 2)
                        detail = ""
                    print(
                        f"  {label:<34} {wall:8.2f} s wall, CPU {cpu:7.2f} s, of which the "
                        f"build command's own process {own:.2f} s{detail} ({cpu / wall / 2:.0%} "
                        f"of 2 cores in use; {_load()})",
                        flush=True,
                    )
            engine = open_store(url)
            try:
                from orlbuild.store.builds import build_versions

                stored = {repr(built_orls(engine, b)[0]) for b in build_versions(engine, "rc")}
            finally:
                engine.dispose()
            if len(stored) != 1:
                raise SystemExit("the builds differ between serial, --jobs 2 and the cluster")
            serial = min(w for w, _ in rows["serial"])
            serial_cpu = min(c for _, c in rows["serial"])
            print(f"  every build stored identical ORLs ({repeat * len(runs)} builds)")
            for label, measured in rows.items():
                if label == "serial":
                    continue
                best = min(w for w, _ in measured)
                cpu = min(c for _, c in measured)
                print(
                    f"    RATIO {label} | serial: {serial / best:.2f}x (best wall of "
                    f"{len(measured)}; serial {serial:.2f} s); CPU {cpu:.2f} s "
                    f"against serial {serial_cpu:.2f} s; two processes of numpy work "
                    f"{max(capacity):.2f}x one in the same run"
                )
                print(
                    "    from CPU times, on two free cores at most "
                    f"{min(bounds['serial']) / min(balanced[label]):.2f}x (serial CPU against "
                    "(all CPU + the serial command's CPU outside the per-query work) / 2: that "
                    "part runs on one core, the rest on both at best); "
                    f"{min(bounds['serial']) / min(bounds[label]):.2f}x against "
                    "max(all CPU / 2, the command's own CPU)"
                    + (
                        "; the cluster's CPU counts its scheduler, nannies and event loops over "
                        "the whole run, which a loaded machine stretches"
                        if "dask" in label
                        else ""
                    )
                )
        finally:
            for process in reversed(cluster):
                process.terminate()
            for process in cluster:
                process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--bt-queries", type=int, default=5000)
    parser.add_argument("--power-queries", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every build comparison")
    parser.add_argument("--no-store", action="store_true", help="skip the store share (bt)")
    parser.add_argument("--score-queries", type=int, default=5000)
    parser.add_argument("--score-systems", type=int, default=4)
    parser.add_argument(
        "--score-depths", default="20,100,400", help="run entries per query, comma-separated"
    )
    parser.add_argument(
        "--only", choices=["build", "power", "score", "memory", "cli"], default=None
    )
    parser.add_argument("--cli-queries", type=int, default=500)
    parser.add_argument(
        "--calibration", type=int, default=100_000, help="solves per unit of the numpy workload"
    )
    parser.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # a timeout or Ctrl-C still runs the finally blocks that stop the cluster this run started
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    if args.memory_child is not None:
        _memory_child(args.memory_child, args.queries)
        return
    print(f"{os.cpu_count()} cores, {_load()} at the start")
    if args.only == "cli":
        compare_cli(args.cli_queries, args.repeat, args.calibration)
        return
    if args.only == "memory":
        compare_memory(args.queries, [1, 2, 4, 8])
        return
    if args.only == "score":
        depths = [int(d) for d in args.score_depths.split(",")]
        compare_scoring(args.score_queries, depths, args.score_systems)
        return

    from distributed import LocalCluster

    jobs2 = resolve_executor(2)
    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # its HTTP server: any free port
    ) as cluster:
        cluster_executor = resolve_executor(scheduler=cluster.scheduler_address)
        if args.only != "build":
            compare_power(args.power_queries, [jobs2, cluster_executor])
        if args.only == "power":
            close_dask_connections()
            return
        rc = BuildParameters(
            source="pairwise",
            method="rank-centrality",
            uncertainty="bootstrap",
            bootstrap=200,
            seed=1,
        )
        compare(
            "rank-centrality, 200 bootstrap resamples",
            simulated_pairwise(args.queries, seed=1),
            rc,
            [
                ("--jobs 2, new pool", jobs2, True),
                ("--jobs 2, pool already started", jobs2, False),
                ("Dask, 2 single-threaded workers", cluster_executor, False),
            ],
            args.repeat,
        )
        close_dask_connections()  # the kept client would try to reach the closed cluster
    bt = BuildParameters(source="pairwise", method="bt", tiering="simultaneous", seed=1)
    compare(
        "bt, simultaneous tiers",
        simulated_pairwise(args.bt_queries, seed=2),
        bt,
        [("--jobs 2, new pool", jobs2, True), ("--jobs 2, pool already started", jobs2, False)],
        args.repeat,
    )
    if not args.no_store:
        store_share(args.bt_queries)


if __name__ == "__main__":
    main()
