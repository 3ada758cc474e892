"""The executor gives the same results, in the same order, serially, on processes and on Dask."""

from __future__ import annotations

import subprocess
import sys
import zlib
from functools import partial

import numpy as np
import pytest

from orlbuild.errors import ConfigError, InputError, OrlbuildError
from orlbuild.executor import (
    Executor,
    map_ordered,
    resolve_executor,
)
from orlbuild.vocabulary import ExecutorKind


def seeded_work(seed: int, query: str) -> tuple[str, float]:
    """A task whose randomness comes from its own key, as the builders' queries do."""
    rng = np.random.default_rng([seed, zlib.crc32(query.encode())])
    return query, float(rng.normal(size=50).sum())


class TwoArgumentError(OrlbuildError):
    """An error whose constructor does not take its message (does not unpickle as is)."""

    def __init__(self, query: str, cause: str) -> None:
        super().__init__(f"query {query!r}: {cause}")


def fail_on(bad: str, kind: str, query: str) -> str:
    if query == bad:
        if kind == "input":
            raise InputError("rank must be an integer >= 1", file="runs.tsv", line=7, value="x")
        raise TwoArgumentError(query, "the comparison graph is disconnected")
    return query.upper()


QUERIES = [f"q{i:03d}" for i in range(40)]


def executors(scheduler: str) -> dict[str, Executor]:
    return {
        "serial": resolve_executor(1),
        "jobs2": resolve_executor(2),
        "dask": resolve_executor(scheduler=scheduler),
    }


def test_results_are_identical_and_ordered_everywhere(dask_scheduler: str) -> None:
    work = partial(seeded_work, 17)
    expected = [seeded_work(17, q) for q in QUERIES]
    for name, executor in executors(dask_scheduler).items():
        got = list(map_ordered(work, QUERIES, executor=executor, chunk_size=3))
        assert got == expected, name
        default_chunks = list(map_ordered(work, QUERIES, executor=executor))
        assert default_chunks == expected, name


@pytest.mark.parametrize("kind", ["input", "custom"])
def test_a_failing_task_raises_the_same_one_line_error(dask_scheduler: str, kind: str) -> None:
    messages = {}
    for name, executor in executors(dask_scheduler).items():
        done: list[str] = []
        with pytest.raises(OrlbuildError) as caught:
            for result in map_ordered(
                partial(fail_on, "q021", kind), QUERIES, executor=executor, chunk_size=4
            ):
                done.append(result)
        messages[name] = str(caught.value)
        # Everything before the failing task came back, in order, and nothing after it.
        assert done == [q.upper() for q in QUERIES[:21]], name
        if kind == "input":
            assert isinstance(caught.value, InputError), name
    assert len(set(messages.values())) == 1, messages
    assert "q021" in messages["serial"] or "runs.tsv" in messages["serial"]


def test_progress_counts_every_task() -> None:
    steps: list[int] = []
    results = list(
        map_ordered(
            str.upper, QUERIES, executor=resolve_executor(2), advance=steps.append, chunk_size=7
        )
    )
    assert results == [q.upper() for q in QUERIES]
    assert sum(steps) == len(QUERIES)
    assert steps == [7, 7, 7, 7, 7, 5]


def test_no_tasks_gives_no_results() -> None:
    assert list(map_ordered(str.upper, [], executor=resolve_executor(2))) == []


def test_resolve_jobs_and_scheduler() -> None:
    assert resolve_executor(1, environ={}).kind is ExecutorKind.SERIAL
    assert resolve_executor(3, environ={}) == Executor(ExecutorKind.PROCESSES, jobs=3)
    assert resolve_executor(-1, environ={}).jobs >= 1
    from_env = resolve_executor(1, environ={"ORLBUILD_SCHEDULER": "tcp://10.0.0.1:8786"})
    assert from_env.kind is ExecutorKind.DASK
    assert from_env.scheduler == "tcp://10.0.0.1:8786"
    given = resolve_executor(scheduler="tcp://127.0.0.1:1", environ={"ORLBUILD_SCHEDULER": "x"})
    assert given.scheduler == "tcp://127.0.0.1:1"
    for bad in (0, -2):
        with pytest.raises(ConfigError, match="--jobs"):
            resolve_executor(bad, environ={})
    with pytest.raises(ConfigError, match="--scheduler"):
        resolve_executor(scheduler="localhost:8786", environ={})


def test_an_unreachable_scheduler_is_a_config_error() -> None:
    pytest.importorskip("distributed")
    executor = resolve_executor(scheduler="tcp://127.0.0.1:9", environ={})
    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler"):
        list(map_ordered(str.upper, QUERIES, executor=executor))


def pid_of(query: str) -> tuple[str, int]:
    import os

    return query, os.getpid()


def test_jobs_n_is_this_process_and_n_minus_one_workers() -> None:
    """The first chunks always go to a worker; this process runs chunks while it waits."""
    import os

    got = list(map_ordered(pid_of, QUERIES, executor=resolve_executor(2), chunk_size=2))
    assert [q for q, _ in got] == QUERIES
    assert got[0][1] != os.getpid()  # sent to the worker before anything runs here
    assert len({pid for _, pid in got}) <= 2  # one worker and this process


@pytest.mark.parametrize("kind", ["input", "custom"])
def test_a_task_failing_in_a_worker_raises_the_serial_error(kind: str) -> None:
    """q000 is in the first chunk, which is always sent to a worker."""
    expected = None
    for executor in (resolve_executor(1), resolve_executor(2)):
        with pytest.raises(OrlbuildError) as caught:
            list(map_ordered(partial(fail_on, "q000", kind), QUERIES, executor=executor))
        expected = expected or str(caught.value)
        assert str(caught.value) == expected
        assert "\n" not in expected


def test_chunks_shrink_toward_the_end() -> None:
    from orlbuild.executor import _Cutter

    cutter = _Cutter(range(1000), 1000, 2, None)
    sizes = []
    while (chunk := cutter.next()) is not None:
        sizes.append(len(chunk))
    assert sum(sizes) == 1000
    assert sizes[0] == 125 and sizes == sorted(sizes, reverse=True)
    assert sizes[-2] == cutter.smallest == 8
    uncounted = _Cutter(iter(range(10)), 12, 2, 4)  # a count that was too high
    assert [cutter_chunk for cutter_chunk in iter(uncounted.next, None)] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [8, 9],
    ]


def test_largest_first_gives_results_in_task_order() -> None:
    from orlbuild.executor import map_largest_first

    sizes = [5, 1, 40, 3, 22, 8]
    expected = [s * s for s in sizes]
    for executor in (resolve_executor(1), resolve_executor(2)):
        steps: list[int] = []
        got = map_largest_first(
            square, sizes, float, executor=executor, chunk_size=1, advance=steps.append
        )
        assert got == expected
        assert sum(steps) == len(sizes)


def square(value: int) -> int:
    return value * value


def blas_threads(_: object = None) -> int:
    """The BLAS threads of the process running this (NumPy's and SciPy's OpenBLAS)."""
    import scipy.linalg  # noqa: F401 - loads SciPy's own OpenBLAS
    from threadpoolctl import threadpool_info

    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def test_chunks_run_on_one_blas_thread_on_a_worker_started_with_more() -> None:
    """An external ``dask worker`` started with two BLAS threads still runs chunks on one."""
    distributed = pytest.importorskip("distributed")
    from orlbuild.executor import close_dask_connections

    many = {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        env=many,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # its HTTP server: any free port
    ) as cluster:
        try:
            with distributed.Client(cluster) as client:
                # what the worker runs outside a chunk: the test can fail
                assert set(client.run(blas_threads).values()) == {2}
            executor = resolve_executor(scheduler=cluster.scheduler_address)
            assert list(map_ordered(blas_threads, range(6), executor=executor)) == [1] * 6
            with distributed.Client(cluster) as client:  # restored after the chunks
                assert set(client.run(blas_threads).values()) == {2}
        finally:
            close_dask_connections()


def test_a_kept_dask_connection_is_reused_and_reopened_after_close(dask_scheduler: str) -> None:
    from orlbuild.executor import _DaskConnection, close_dask_connections, start_workers

    executor = resolve_executor(scheduler=dask_scheduler)
    start_workers(executor, ["orlbuild.builders.build"])  # connects in the background
    first = _DaskConnection.open(dask_scheduler).client()
    assert list(map_ordered(str.upper, QUERIES, executor=executor)) == [q.upper() for q in QUERIES]
    assert _DaskConnection.open(dask_scheduler).client() is first
    close_dask_connections()
    assert first.status == "closed"
    assert list(map_ordered(str.upper, QUERIES, executor=executor))[:2] == ["Q000", "Q001"]
    assert _DaskConnection.open(dask_scheduler).client() is not first


#: Set by the test below after the modules are imported: a forked worker has it, a new one not.
MARK: list[str] = []


def marked(_: object = None) -> tuple[list[str], int]:
    import os

    return MARK, os.getppid()


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
def test_local_workers_are_forked_with_this_process_s_modules() -> None:
    """On Linux a worker starts as a fork of this process: nothing to import, this state."""
    import os

    from orlbuild.executor import local_worker_pids, shutdown_local_workers, start_workers

    shutdown_local_workers()  # a pool forked by an earlier test would not have the mark
    MARK.append("set here")
    try:
        jobs2 = resolve_executor(2)
        start_workers(jobs2, ["orlbuild.builders.build"])
        assert len(local_worker_pids()) == 1  # forked at once, before any chunk
        # one chunk of 4 goes to the worker first, then this process runs its own
        got = list(map_ordered(marked, range(8), executor=jobs2, chunk_size=4))
        assert got[0] == (["set here"], os.getpid())  # the worker: forked from this process
    finally:
        MARK.clear()
        shutdown_local_workers()
    assert local_worker_pids() == []


def test_a_coordinator_that_only_sends_chunks_does_not_import_the_estimators() -> None:
    """The build service and the builders' entry point leave SciPy, choix and networkx to
    the workers; the per-query functions import them where they run."""
    code = (
        "import sys\n"
        "import orlbuild.services.builds, orlbuild.builders.build\n"
        "print(sorted(m for m in ('scipy', 'choix', 'networkx') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_estimator_modules_leave_choix_and_scipy_optimize_to_the_solvers_using_them() -> None:
    """What ``--jobs`` imports before forking (``ESTIMATOR_MODULES``) and every build imports:
    choix (with scipy.stats) and scipy.optimize cost about 0.4 s of CPU and are used only by
    ``bt --solver opt|mm``, ``--uncertainty ep``, Plackett-Luce and the L-BFGS fallbacks, so a
    rank-centrality or default ``bt`` build does not import them; a solver that needs them
    still works."""
    code = (
        "import sys\n"
        "import orlbuild.builders.build, orlbuild.builders.pairwise, orlbuild.builders.listwise\n"
        "import orlbuild.builders.graded\n"
        "print(sorted(m for m in ('choix', 'scipy.optimize', 'scipy.stats') if m in sys.modules))\n"
        "import numpy as np\n"
        "from orlbuild.builders.estimation import bradley_terry\n"
        "counts = np.array([[0.0, 3.0], [1.0, 0.0]])\n"
        "bradley_terry.bradley_terry_pairwise(counts, alpha=0.1, solver='mm')\n"
        "print('choix' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "True"]


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
def test_forked_workers_start_with_the_inherited_objects_frozen_and_this_process_not() -> None:
    """The workers' collections skip what they inherited (gc.freeze at the fork); this
    process unfreezes at once, so nothing of a long-lived caller stays uncollectable."""
    import gc

    from orlbuild.executor import _forked_pool, shutdown_local_workers, start_workers

    shutdown_local_workers()
    before = gc.get_freeze_count()
    try:
        start_workers(resolve_executor(2), ["orlbuild.builders.build"])
        assert gc.get_freeze_count() == before
        assert _forked_pool(1).submit(gc.get_freeze_count).result() > before
    finally:
        shutdown_local_workers()
