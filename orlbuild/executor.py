"""Where per-query work runs: in this process, on a local process pool, or on a Dask cluster.

Every heavy stage of orlbuild (building an ORL, scoring a system, one
subsample of a power study) is independent per query, so one abstraction
serves them all (docs/parallel.md, "Running on many cores or a cluster"):

* ``serial`` - a plain loop in this process (the default, ``--jobs 1``);
* ``processes`` - ``--jobs N`` processes of this machine (``-1`` = every
  core): this one and ``N - 1`` workers. On Linux the workers are forked
  from this process once it has imported the task's modules
  (:func:`start_workers`), so they start in milliseconds with everything
  imported, instead of a new Python importing NumPy, SciPy and the estimators
  (about 1.2 s of CPU each); elsewhere (no safe ``fork``) they are joblib's
  reusable ``loky`` pool. This process runs small chunks itself whenever it
  has no finished chunk to collect, so it is one of the ``N``;
* ``dask`` - a Dask distributed cluster (``--scheduler tcp://HOST:PORT`` or
  the ``ORLBUILD_SCHEDULER`` environment variable), through
  ``dask.distributed`` futures (joblib's own ``dask`` backend fails with
  joblib 1.6 and distributed 2026.8: ``Batch.__call__() got an unexpected
  keyword argument 'nesting_level'``). The connection is made once per
  process and kept (:func:`start_workers` opens it in the background, while
  the caller reads its data, and has every worker import the task's modules);
* every chunk runs with one BLAS thread wherever it runs (:func:`_run_chunk`),
  the workers of an external ``dask worker`` included, whatever environment
  they were started with.

Tasks are cut into chunks as they are sent (large first, smaller toward the
end, so that per-chunk costs stay small and the processes finish together)
and results come back **in task order**,
whatever finished first, so the output is identical for any number of jobs or
workers as long as each task derives its randomness from its own key (the
builders seed each query with ``(seed, crc32(query))``). Workers receive
plain data (arrays, frames, frozen dataclasses), never an open database
session; the caller, in the one process that writes the store, consumes the
results as they arrive, so its memory does not grow with the number of
workers.

A task that raises an :class:`~orlbuild.errors.OrlbuildError` in a worker
raises the same error, with the same one-line message, in the caller.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import itertools
import math
import os
import pickle
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar
from urllib.parse import urlsplit

from orlbuild.errors import ConfigError, OrlbuildError
from orlbuild.vocabulary import ExecutorKind

__all__ = [
    "SCHEDULER_ENVIRONMENT_VARIABLE",
    "Executor",
    "close_dask_connections",
    "local_worker_pids",
    "map_largest_first",
    "map_ordered",
    "resolve_executor",
    "shutdown_local_workers",
    "start_workers",
]

T = TypeVar("T")
R = TypeVar("R")

SCHEDULER_ENVIRONMENT_VARIABLE = "ORLBUILD_SCHEDULER"

#: A chunk takes ``1 / (CHUNKS_PER_WORKER * workers)`` of the tasks still left
#: (guided self-scheduling, :func:`_chunk_sizes`) ...
CHUNKS_PER_WORKER = 4
#: ... but no fewer than ``n_tasks / (MAX_CHUNKS_PER_WORKER * workers)``, so the
#: per-chunk overhead (pickling, scheduling, a few milliseconds) stays small.
MAX_CHUNKS_PER_WORKER = 64
#: Chunks sent ahead per worker: one running, one waiting in its queue.
IN_FLIGHT_PER_WORKER = 2
#: Idle local workers exit after this many seconds (and are restarted on demand).
IDLE_WORKER_SECONDS = 300
#: Thread limits of the local workers (read by OpenBLAS, MKL, OpenMP at start-up).
_ONE_THREAD = {
    var: "1"
    for var in (
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "BLIS_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS",
    )
}


#: The Dask transports a scheduler address may name (docs/reliability.md, "Limits").
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")


def check_scheduler_address(address: str) -> str:
    """``address`` when it is ``SCHEME://HOST:PORT`` with a Dask transport and a valid port.

    Raises
    ------
    ConfigError
        Another scheme (``file://``, ``http://``), no host, or a port that is not
        a number from 1 to 65535; checked before any work starts.
    """
    hint = f"--scheduler must be an address like tcp://HOST:PORT, got {address!r}"
    if "://" not in address:
        raise ConfigError(hint)
    parts = urlsplit(address)
    if parts.scheme not in SCHEDULER_SCHEMES:
        schemes = ", ".join(f"{s}://" for s in SCHEDULER_SCHEMES)
        raise ConfigError(f"{hint}: the scheme must be one of {schemes}")
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"{hint}: the port must be a number from 1 to 65535") from None
    if not parts.hostname or port == 0:
        raise ConfigError(f"{hint}: give a host and a port from 1 to 65535")
    return address


@dataclass(frozen=True)
class Executor:
    """A resolved choice of where to run per-query work.

    Attributes
    ----------
    kind
        :class:`ExecutorKind`.
    jobs
        Worker processes for ``processes`` (1 for ``serial``; for ``dask`` the
        cluster's own workers are used and this is ignored).
    scheduler
        The Dask scheduler address for ``dask``.
    """

    kind: ExecutorKind = ExecutorKind.SERIAL
    jobs: int = 1
    scheduler: str | None = None

    def describe(self) -> str:
        """A short phrase for logs and summaries."""
        if self.kind is ExecutorKind.DASK:
            return f"Dask cluster at {self.scheduler}"
        if self.kind is ExecutorKind.PROCESSES:
            return f"{self.jobs} processes"
        return "serial"


def resolve_executor(
    jobs: int = 1,
    scheduler: str | None = None,
    *,
    environ: dict[str, str] | None = None,
) -> Executor:
    """Resolve ``--jobs`` and ``--scheduler`` (or ``$ORLBUILD_SCHEDULER``) to an :class:`Executor`.

    Parameters
    ----------
    jobs
        ``1`` runs serially, ``N > 1`` on ``N`` local processes, ``-1`` on
        every core of this machine.
    scheduler
        A Dask scheduler address (``tcp://HOST:PORT``); wins over ``jobs``.
        When not given, ``$ORLBUILD_SCHEDULER`` is used if set and non-empty.
    environ
        The environment to read (default ``os.environ``; for tests).

    Raises
    ------
    ConfigError
        ``jobs`` is 0 or below -1, or the scheduler address is not ``tcp://``-like.
    """
    env = os.environ if environ is None else environ
    address = scheduler or env.get(SCHEDULER_ENVIRONMENT_VARIABLE) or None
    if address is not None:
        address = check_scheduler_address(address.strip())
        return Executor(ExecutorKind.DASK, jobs=jobs, scheduler=address)
    if jobs == -1:
        jobs = os.cpu_count() or 1
    if jobs < 1:
        raise ConfigError(f"--jobs must be a positive number of processes or -1, got {jobs}")
    if jobs == 1:
        return Executor()
    return Executor(ExecutorKind.PROCESSES, jobs=jobs)


@dataclass(frozen=True)
class _Raised:
    """An error raised by a task in a worker, carried back to be raised again."""

    error: BaseException


@dataclass(frozen=True)
class _ChunkResult(Generic[R]):
    results: list[R]
    raised: _Raised | None = None


def _portable(error: OrlbuildError) -> OrlbuildError:
    """``error`` if it survives pickling, else an ``OrlbuildError`` with the same message."""
    try:
        copy = pickle.loads(pickle.dumps(error))
    except Exception:
        return OrlbuildError(str(error))
    return copy if str(copy) == str(error) else OrlbuildError(str(error))


#: This process's threadpoolctl controller, made once the task's modules are imported.
_BLAS: Any = None


def _blas_controller() -> Any:
    """The BLAS libraries loaded in this process, found once (a scan costs ~3 ms, a limit 0.04 ms).

    Made at the first chunk or warm-up, when unpickling the task has imported
    NumPy and SciPy, so that both OpenBLAS copies are in it.
    """
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()
    return _BLAS


def _run_chunk(function: Callable[[T], R], chunk: Sequence[T]) -> _ChunkResult[R]:
    """Run ``function`` over one chunk, with one BLAS thread; stop at the first user-facing error.

    The limit is set here, in the process that runs the chunk, and not only
    through the environment a pool starts its workers with: an external
    ``dask worker`` (without a nanny, or with its own ``OMP_NUM_THREADS``)
    would otherwise run each chunk on as many BLAS threads as cores, which on
    the per-query matrices of a few dozen rows only adds synchronisation and
    oversubscribes the cores the other workers use. The previous limits are
    restored after the chunk.
    """
    results: list[R] = []
    with _blas_controller().limit(limits=1, user_api="blas"):
        for task in chunk:
            try:
                results.append(function(task))
            except OrlbuildError as error:
                return _ChunkResult(results, _Raised(_portable(error)))
    return _ChunkResult(results)


def _import_modules(modules: tuple[str, ...]) -> int:
    """Import ``modules`` in a worker (the warm-up task of :func:`start_workers`)."""
    for module in modules:
        importlib.import_module(module)
    _blas_controller()
    return os.getpid()


def _run_pickled(function: bytes, chunk: Sequence[Any]) -> _ChunkResult[Any]:
    """:func:`_run_chunk` of a function sent by value (cloudpickle, as loky sends it)."""
    return _run_chunk(pickle.loads(function), chunk)


def _forking() -> bool:
    """Whether local workers are forked (Linux) rather than started as new Pythons (loky)."""
    return sys.platform == "linux"


#: The forked pool of this process and its number of workers (:func:`_forked_pool`).
_FORKED: tuple[int, Any] | None = None


def _forked_pool(workers: int) -> Any:
    """The process-wide pool of ``workers`` processes forked from this one, made or reused.

    Forked, a worker has every module this process imported, so it starts in
    milliseconds instead of a new Python importing NumPy, SciPy and the
    estimators; :func:`start_workers` imports the task's modules here first
    and then forks. A worker runs only the chunks it is sent (plain data,
    never this process's database connections, which it leaves untouched)
    and leaves with ``os._exit``, so nothing of this process is finalised
    twice. A pool whose worker died is replaced; the pool is kept for the
    rest of the process (the pipeline's builds, scoring and power reuse it)
    and shut down at exit.
    """
    global _FORKED
    if _FORKED is not None:
        count, pool = _FORKED
        if count == workers and not getattr(pool, "_broken", False):
            return pool
        pool.shutdown(wait=False, cancel_futures=True)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
    _FORKED = (workers, pool)
    return pool


def _release_forked_pool() -> None:
    """At exit, let go of the forked pool while every module is still loaded.

    Kept until the interpreter clears its modules, the pool would be collected
    after ``concurrent.futures.process`` lost its globals, and its collection
    callback would print "Exception ignored in: ... weakref_cb". By the time
    ``atexit`` runs, ``concurrent.futures`` has already joined the workers.
    """
    global _FORKED
    if _FORKED is not None:
        _FORKED[1].shutdown(wait=False, cancel_futures=True)
        _FORKED = None


atexit.register(_release_forked_pool)


def shutdown_local_workers() -> None:
    """Stop the local workers, so that the next map starts new ones (benchmarks, tests)."""
    global _FORKED
    if _FORKED is not None:
        _FORKED[1].shutdown(wait=True, cancel_futures=True)
        _FORKED = None
    if not _forking():
        _loky_pool(1).shutdown(wait=True)


def local_worker_pids() -> list[int]:
    """The process ids of the running local workers (benchmarks count their CPU)."""
    if _forking():
        return [] if _FORKED is None else list(_FORKED[1]._processes or {})
    return list(_loky_pool(1)._processes)


def _local_pool(workers: int) -> Any:
    return _forked_pool(workers) if _forking() else _loky_pool(workers)


def _submit_local(pool: Any, function: Callable[[T], R], chunk: list[T]) -> Any:
    """Send a chunk to a local worker; the function goes by value (a lambda works, as with loky)."""
    if not _forking():
        return pool.submit(_run_chunk, function, chunk)
    return pool.submit(_run_pickled, _cloudpickle().dumps(function), chunk)


def _cloudpickle() -> Any:
    """cloudpickle: a dependency of joblib since 1.5, vendored in it before."""
    try:
        return importlib.import_module("cloudpickle")
    except ImportError:  # pragma: no cover - joblib < 1.5
        return importlib.import_module("joblib.externals.cloudpickle")


def _loky_pool(workers: int) -> Any:
    """The process-wide loky pool of ``workers`` processes, started or reused.

    joblib's vendored loky keeps one reusable pool per process, so a second
    call (the pipeline's power step after its builds, a second build in the
    same Python session) finds its workers already started and their modules
    imported. Each worker gets one BLAS/OpenMP thread: the per-query matrices
    are a few dozen rows wide, where extra threads only add synchronisation,
    and the processes are the parallelism.
    """
    from joblib.externals.loky import get_reusable_executor

    return get_reusable_executor(
        max_workers=workers, timeout=IDLE_WORKER_SECONDS, env=dict(_ONE_THREAD)
    )


def start_workers(executor: Executor | None, modules: Sequence[str] = ()) -> None:
    """Start the local worker processes now, with ``modules`` imported in them, without waiting.

    A build calls this before it reads the store. On Linux this process
    imports ``modules`` (it runs chunks too, so it needs them) and then forks
    the workers, which start with everything imported and wait for chunks
    while this process reads the judgments; elsewhere new loky workers start
    and import ``modules`` meanwhile (about 1.3 s of CPU each). For a Dask
    cluster it connects in a background thread (the connection is kept for
    the rest of this process) and sends every worker one warm-up task that
    imports ``modules``, so that a cluster whose workers have not run
    orlbuild yet imports it while this process reads its data; this process
    does not import them (it only slices and sends the data). Does nothing
    for a serial executor.

    Parameters
    ----------
    executor
        Where the work will run.
    modules
        Modules the tasks will need (for example ``orlbuild.builders.build``).
    """
    if executor is None or executor.kind is ExecutorKind.SERIAL:
        return
    if executor.kind is ExecutorKind.DASK:
        _DaskConnection.open(str(executor.scheduler), tuple(modules))
        return
    if _forking():
        _import_modules(tuple(modules))
        # the first submit forks every worker now, with the modules imported
        _forked_pool(executor.jobs - 1).submit(os.getpid)
        return
    pool = _loky_pool(executor.jobs - 1)
    for _ in range(executor.jobs - 1):
        pool.submit(_import_modules, tuple(modules))


class _Cutter(Generic[T]):
    """Cuts tasks lazily into chunks that shrink as the work runs out.

    A requested size is used throughout. Otherwise each chunk takes
    ``1 / (CHUNKS_PER_WORKER * workers)`` of the tasks still left (guided
    self-scheduling), but no fewer than ``n_tasks / (MAX_CHUNKS_PER_WORKER *
    workers)``: large early chunks keep the per-chunk cost (pickling,
    scheduling) small, small late ones make the workers finish together, so
    that none waits on a straggler. Tasks are drawn only when a chunk is cut,
    so the workers start on the first chunks while the caller prepares the
    next ones.
    """

    def __init__(
        self, tasks: Iterable[T], n_tasks: int, workers: int, requested: int | None
    ) -> None:
        if requested is not None and requested < 1:
            raise ConfigError(f"chunk size must be at least 1, got {requested}")
        self._tasks = iter(tasks)
        self._remaining = n_tasks
        self._workers = workers
        self._requested = requested
        self.smallest = requested or max(1, math.ceil(n_tasks / (workers * MAX_CHUNKS_PER_WORKER)))
        self.exhausted = False

    def next(self, size: int | None = None) -> list[T] | None:
        """The next chunk (of ``size`` tasks if given), or None when no task is left."""
        if self.exhausted:
            return None
        if size is None:
            size = self._requested or max(
                self.smallest, math.ceil(self._remaining / (self._workers * CHUNKS_PER_WORKER))
            )
        chunk = list(itertools.islice(self._tasks, size))
        self._remaining -= len(chunk)
        if len(chunk) < size:  # the count given was an upper bound, or exact
            self.exhausted = True
        return chunk or None


@dataclass
class _Finished(Generic[R]):
    """A chunk this process ran itself, shaped like a finished future."""

    value: _ChunkResult[R]

    def done(self) -> bool:
        return True

    def result(self) -> _ChunkResult[R]:
        return self.value

    def cancel(self) -> bool:
        return False


def map_ordered(
    function: Callable[[T], R],
    tasks: Iterable[T],
    *,
    executor: Executor | None = None,
    advance: Callable[[int], None] | None = None,
    chunk_size: int | None = None,
    n_tasks: int | None = None,
) -> Iterator[R]:
    """Apply ``function`` to every task and yield the results in task order.

    With ``--jobs N`` this process is one of the ``N``: it starts ``N - 1``
    worker processes and runs small chunks itself while they start and
    whenever it has nothing to collect, so no core waits for the workers'
    start-up (a new Python importing NumPy, SciPy and the estimators).

    Parameters
    ----------
    function
        A picklable callable (a module-level function or a
        :func:`functools.partial` of one) taking one task.
    tasks
        Plain, picklable data, typically one entry per query. With a length
        (a list) or ``n_tasks`` given, tasks are drawn lazily, chunk by chunk,
        so the workers start on the first chunks while this process prepares
        the next; otherwise they are listed first.
    executor
        Where to run (default: serially in this process).
    advance
        Called with the number of tasks just finished (a progress bar that
        counts queries).
    chunk_size
        Tasks per chunk; by default chunks shrink from an eighth of the tasks
        per two processes to a small tail (:class:`_Cutter`).
    n_tasks
        How many tasks an iterator without a length will yield.

    Yields
    ------
    R
        ``function(task)`` for each task, in the order of ``tasks``.

    Raises
    ------
    OrlbuildError
        The first error a task raised, in task order, with its message
        unchanged (results before it have been yielded).
    """
    executor = executor or Executor()
    if executor.kind is ExecutorKind.SERIAL:
        for task in tasks:
            result = function(task)
            if advance is not None:
                advance(1)
            yield result
        return
    if isinstance(tasks, Sized):
        n_tasks = len(tasks)
    elif n_tasks is None:
        tasks = list(tasks)
        n_tasks = len(tasks)
    if n_tasks == 0:
        return
    if executor.kind is ExecutorKind.PROCESSES:
        workers = executor.jobs - 1
        pool = _local_pool(workers)
        yield from _stream(
            function,
            lambda chunk: _submit_local(pool, function, chunk),
            _wait_local,
            _Cutter(tasks, n_tasks, executor.jobs, chunk_size),
            workers,
            advance,
            run_here=True,
        )
        return
    yield from _map_dask(function, tasks, n_tasks, str(executor.scheduler), advance, chunk_size)


def map_largest_first(
    function: Callable[[T], R],
    tasks: Iterable[T],
    cost: Callable[[T], float],
    **options: Any,
) -> list[R]:
    """:func:`map_ordered` with the costliest tasks sent first; results in task order.

    For a few tasks of very unequal cost (the budgets of a power analysis):
    sent in their own order, the costliest one, last, would run alone at the
    end while the other processes wait. ``options`` are those of
    :func:`map_ordered`; progress counts tasks as they finish.
    """
    listed = list(tasks)
    order = sorted(range(len(listed)), key=lambda i: -cost(listed[i]))
    results: list[Any] = [None] * len(listed)
    for position, result in zip(
        order, map_ordered(function, [listed[i] for i in order], **options), strict=True
    ):
        results[position] = result
    return results


def _wait_local(futures: list[Any]) -> None:
    from concurrent.futures import FIRST_COMPLETED, wait

    wait(futures, return_when=FIRST_COMPLETED)


def _run_here(function: Callable[[T], R], chunk: list[T]) -> _ChunkResult[R]:
    """Run a chunk in this process, with one BLAS thread as in the workers."""
    return _run_chunk(function, chunk)


def _stream(
    function: Callable[[T], R],
    submit: Callable[[list[T]], Any],
    wait_any: Callable[[list[Any]], None],
    cutter: _Cutter[T],
    workers: int,
    advance: Callable[[int], None] | None,
    *,
    run_here: bool = False,
) -> Iterator[R]:
    """Keep ``IN_FLIGHT_PER_WORKER * workers`` chunks running; yield results in chunk order.

    A new chunk is sent as soon as any running chunk finishes (not only the
    oldest), so a slow chunk at the head does not leave workers idle; results
    that finished early wait in ``pending`` until the chunks before them are
    done. With ``run_here``, this process runs one of the smallest chunks
    itself whenever the oldest chunk is not done yet, instead of waiting. On
    an error, or when the caller stops early, chunks not yet started are
    cancelled.
    """
    pending: deque[Any] = deque()
    window = IN_FLIGHT_PER_WORKER * workers

    def fill() -> None:
        while sum(not f.done() for f in pending) < window:
            chunk = cutter.next()
            if chunk is None:
                return
            pending.append(submit(chunk))

    try:
        fill()
        while pending:
            if not pending[0].done():
                chunk = cutter.next(cutter.smallest) if run_here else None
                if chunk is not None:
                    pending.append(_Finished(_run_here(function, chunk)))
                else:
                    wait_any([f for f in pending if not f.done()])
                fill()
                continue
            result: _ChunkResult[R] = pending.popleft().result()
            fill()
            yield from result.results
            if advance is not None:
                advance(len(result.results))
            if result.raised is not None:
                raise result.raised.error
    finally:
        for future in pending:
            future.cancel()


def _dask_workers(client: Any) -> int:
    info = client.scheduler_info()
    return max(1, sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values()))


class _DaskConnection:
    """One kept connection per scheduler address, opened in a background thread.

    Connecting (importing ``distributed``, the handshake with the scheduler)
    and the workers' warm-up overlap with what the caller does meanwhile
    (reading the store); :meth:`client` waits for it. The client is reused
    by every later map in this process (the pipeline's builds, scoring and
    power) and closed when the process exits.
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _open: ClassVar[dict[str, _DaskConnection]] = {}

    def __init__(self, address: str) -> None:
        self.address = address
        self._client: Any = None
        self._error: BaseException | None = None
        self._warmed: set[tuple[str, ...]] = set()
        self._ready = threading.Event()

    @classmethod
    def open(cls, address: str, modules: tuple[str, ...] = ()) -> _DaskConnection:
        """The connection to ``address``, started now (in the background) if there is none."""
        with cls._lock:
            connection = cls._open.get(address)
            if connection is not None and connection._lost():
                cls._open.pop(address)
                connection = None
            if connection is None:
                connection = cls._open[address] = cls(address)
                threading.Thread(target=connection._connect, args=(modules,), daemon=True).start()
                return connection
        if connection._ready.is_set() and connection._client is not None:
            connection._warm(modules)
        return connection

    def _lost(self) -> bool:
        """A connection that failed, or whose scheduler has gone (a test's cluster closed)."""
        if not self._ready.is_set():
            return False
        return self._client is None or self._client.status != "running"

    def _connect(self, modules: tuple[str, ...]) -> None:
        try:
            try:
                from distributed import Client
            except ImportError as error:  # pragma: no cover - depends on the extra
                raise ConfigError(
                    "running on a Dask cluster needs the distributed extra: "
                    "pip install 'orlbuild[distributed]'"
                ) from error
            try:
                # not the default client: a caller's own dask.compute stays where it was
                self._client = Client(self.address, timeout="10s", set_as_default=False)
            except OSError as error:
                raise ConfigError(
                    f"cannot reach the Dask scheduler at {self.address}: {error}"
                ) from error
            self._warm(modules)
        except BaseException as error:  # handed to the thread that maps
            self._error = error
        finally:
            self._ready.set()

    def _warm(self, modules: tuple[str, ...]) -> None:
        """One task per worker importing ``modules`` (once per set of modules and process).

        Sent, not awaited: the first chunks queue behind it on each worker.
        """
        if not modules or modules in self._warmed:
            return
        from distributed import fire_and_forget

        self._warmed.add(modules)
        client = self._client
        for worker in client.scheduler_info().get("workers", {}):
            fire_and_forget(
                client.submit(
                    _import_modules,
                    modules,
                    workers=[worker],
                    allow_other_workers=False,
                    pure=False,
                )
            )

    def client(self) -> Any:
        """The connected client; raises the connection's error."""
        self._ready.wait()
        if self._error is not None:
            with self._lock:
                if self._open.get(self.address) is self:
                    self._open.pop(self.address)
            raise self._error
        return self._client

    @classmethod
    def close_all(cls) -> None:
        """Close every kept client (at exit, or before its cluster is shut down)."""
        with cls._lock:
            connections = list(cls._open.values())
            cls._open.clear()
        for connection in connections:
            if connection._ready.is_set() and connection._client is not None:
                # the process is exiting: a scheduler already gone is nothing to report
                with contextlib.suppress(Exception):
                    connection._client.close(timeout=2)


def close_dask_connections() -> None:
    """Close the kept connections to Dask schedulers (done at exit).

    Call it before shutting down a cluster this process started (a test's
    ``LocalCluster``): a client whose scheduler has gone tries for a while to
    reconnect.
    """
    _DaskConnection.close_all()


atexit.register(close_dask_connections)


def _map_dask(
    function: Callable[[T], R],
    tasks: Iterable[T],
    n_tasks: int,
    address: str,
    advance: Callable[[int], None] | None,
    chunk_size: int | None,
) -> Iterator[R]:
    client = _DaskConnection.open(address).client()
    from distributed import wait  # importable: the client connected

    def wait_any(futures: list[Any]) -> None:
        with client.as_current():  # not the default client (a caller's dask.compute)
            wait(futures, return_when="FIRST_COMPLETED")

    workers = _dask_workers(client)
    yield from _stream(
        function,
        lambda chunk: client.submit(_run_chunk, function, chunk, pure=False),
        wait_any,
        _Cutter(tasks, n_tasks, workers, chunk_size),
        workers,
        advance,
    )
