"""Rounds of the kill harness: a real ``orlbuild`` process, killed at a seeded random time.

Each round runs an operation (ingest pairwise, ingest run, build, ``score --save``,
``db upgrade``, ``pipeline``: each once in every six rounds, in a seeded order),
starts it as a subprocess in its own process group, sends SIGKILL or SIGINT after a seeded
random delay (up to 1.2 times the longest run of that operation seen so far, so the kills
spread over the whole command, its writes included), then checks that the store holds
nothing half done (:func:`tests.reliability.store_invariants.half_done`), that the
interrupted command either fully landed or left every table as it was, and that running
the command again succeeds (docs/reliability.md, "Interrupted commands").
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from orlbuild.store.schema import HEAD_REVISION, downgrade
from tests.reliability.store_invariants import (
    half_done,
    revision,
    row_counts,
    schema_snapshot,
)
from tests.store_cli import cli

__all__ = ["KillHarness", "RoundResult"]

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"
#: The revision ``db upgrade`` rounds start from: two migrations to go, one rewriting stored
#: measure names (0016), one rebuilding ``ingest_batches`` on SQLite (0017).
UPGRADE_FROM = "0015_posterior_evidence"
MEASURES = ("RDQm2-a1@10", "RDQm1@10", "nDCG@10", "AP@10", "P@5")
Counts = dict[str, int]


def _orlbuild() -> list[str]:
    """The console script of this interpreter's environment (a real process, as users run)."""
    script = Path(sys.executable).with_name("orlbuild")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from orlbuild.cli.main import run; run()"]


@dataclass
class RoundResult:
    """One round: what ran, how it was stopped, what the checks found."""

    number: int
    operation: str
    signal: str
    delay: float
    exit_code: int
    problems: list[str] = field(default_factory=list)
    traceback: bool = False


@dataclass(frozen=True)
class _Attempt:
    """A command of one round and its own check of "fully landed or nothing"."""

    argv: tuple[str, ...]
    landed: Callable[[Counts, Counts], list[str]]
    rerun: tuple[str, ...] | None = None  # default: argv again


def _grew(before: Counts, after: Counts, **grown: int) -> list[str]:
    """Nothing changed, or exactly the tables in ``grown`` grew (by at least/exactly)."""
    changed = {t for t in after if after[t] != before.get(t, 0)}
    if not changed:
        return []
    problems = []
    for table, rows in grown.items():
        delta = after.get(table, 0) - before.get(table, 0)
        if rows and delta != rows:
            problems.append(f"{table} grew by {delta}, not 0 or {rows}")
    return problems


class KillHarness:
    """Kill rounds against one store (``url``), files under ``work``, seeded by ``seed``."""

    def __init__(self, url: str, work: Path, seed: int) -> None:
        self.url, self.work = url, work
        self.rng = random.Random(seed)
        self.longest: dict[str, float] = {}
        self.build_names = 0
        code, _, err = cli(url, "ingest", "pairwise", str(SAMPLE / "pairwise.tsv"))
        assert code == 0, err
        runs = [str(SAMPLE / "runs" / f"{s}.trec") for s in ("bm25", "dense")]
        code, _, err = cli(url, "ingest", "run", *runs, "--system-from", "stem")
        assert code == 0, err
        code, _, err = cli(url, "build", "--source", "pairwise", "--name", "base")
        assert code == 0, err

    # --- operations -------------------------------------------------------------------

    def _ingest_pairwise(self, number: int) -> _Attempt:
        rng = random.Random(self.rng.random())
        path = self.work / f"pairs{number}.tsv"
        rows = 30_000
        lines = ["query\tannotator\twinner\tloser\n"]
        for _ in range(rows):
            a, b = rng.sample(range(400), 2)
            lines.append(f"k{rng.randrange(60)}\tann{rng.randrange(9)}\td{a}\td{b}\n")
        path.write_text("".join(lines))

        def landed(before: Counts, after: Counts) -> list[str]:
            return _grew(before, after, ingest_batches=1, pairwise_judgments=rows)

        return _Attempt(("ingest", "pairwise", str(path), "-c", "ingested"), landed)

    def _ingest_runs(self, number: int) -> _Attempt:
        paths = []
        for k in range(3):
            path = self.work / f"r{number}_{k}.trec"
            path.write_text(
                "".join(
                    f"q{q:02d} Q0 doc{i} {i} {1000 - i} r{number}_{k}\n"
                    for q in range(40)
                    for i in range(1, 101)
                )
            )
            paths.append(str(path))

        def landed(before: Counts, after: Counts) -> list[str]:
            new = after["ingest_batches"] - before["ingest_batches"]
            grown = after["run_entries"] - before["run_entries"]
            if not 0 <= new <= 3 or grown != new * 4000:
                return [f"{new} run batches stored with {grown} entries (each run is 4000)"]
            return []

        argv = ("ingest", "run", *paths, "--system-from", "stem", "-c", "ingested")
        return _Attempt(argv, landed)

    def _build(self, number: int) -> _Attempt:
        tiering = self.rng.choice(["posterior", "simultaneous", "leader"])

        def landed(before: Counts, after: Counts) -> list[str]:
            return _grew(before, after, builds=1)

        argv = ("build", "--source", "pairwise", "--name", "killed", "--tiering", tiering)
        return _Attempt(argv, landed)

    def _score(self, number: int) -> _Attempt:
        system = self.rng.choice(["bm25", "dense"])
        measures = [m for name in MEASURES for m in ("-m", name)]

        def landed(before: Counts, after: Counts) -> list[str]:
            return _grew(before, after, evaluations=1)

        argv = ("score", "-b", "base", "-s", system, *measures, "--save")
        return _Attempt(argv, landed)

    def _upgrade(self, number: int) -> _Attempt:
        downgrade(self.url, UPGRADE_FROM)
        old = schema_snapshot(self.url)

        def landed(before: Counts, after: Counts) -> list[str]:
            reached = revision(self.url)
            if reached not in (UPGRADE_FROM, HEAD_REVISION):
                return [f"upgrade stopped at {reached}"]
            problems = [
                f"{t}: {before[t]} -> {after.get(t)} rows"
                for t in before
                if t != "alembic_version" and before[t] != after.get(t)
            ]
            if reached == UPGRADE_FROM and schema_snapshot(self.url) != old:
                problems.append(f"at {UPGRADE_FROM} but the schema changed")
            if reached == HEAD_REVISION and schema_snapshot(self.url) != self.head_schema:
                problems.append("at head but the schema is not head's")
            return problems

        return _Attempt(("db", "upgrade"), landed)

    def _pipeline(self, number: int) -> _Attempt:
        folder = self.work / f"pipeline{number}"
        folder.mkdir()
        runs = "".join(
            f'[[inputs]]\nkind = "run"\npath = "{SAMPLE / "runs" / s}.trec"\nsystem = "{s}"\n\n'
            for s in ("bm25", "dense", "tfidf")
        )
        config = folder / "pipeline.toml"
        config.write_text(
            f'collection = "piped{number}"\nmeasures = ["RDQm2-a1@10", "nDCG@10"]\n\n'
            f'[[inputs]]\nkind = "pairwise"\npath = "{SAMPLE / "pairwise.tsv"}"\n\n{runs}'
            '[[builds]]\nname = "piped"\nsource = "pairwise"\n\n[scoring]\nbuild = "piped"\n'
        )

        def landed(before: Counts, after: Counts) -> list[str]:
            return []  # several transactions: each is checked whole by half_done

        return _Attempt(("pipeline", str(config)), landed)

    OPERATIONS: ClassVar[dict[str, Callable[[KillHarness, int], _Attempt]]] = {
        "ingest pairwise": _ingest_pairwise,
        "ingest run": _ingest_runs,
        "build": _build,
        "score --save": _score,
        "db upgrade": _upgrade,
        "pipeline": _pipeline,
    }

    # --- rounds -----------------------------------------------------------------------

    def round(self, number: int, operation: str | None = None) -> RoundResult:
        """Run one round (its operation seeded unless given) and check the store."""
        if not hasattr(self, "head_schema"):
            self.head_schema = schema_snapshot(self.url)
        if operation is None:  # each operation once in every six rounds, in a seeded order
            if number % len(self.OPERATIONS) == 1 or not hasattr(self, "order"):
                self.order = self.rng.sample(sorted(self.OPERATIONS), len(self.OPERATIONS))
            operation = self.order[(number - 1) % len(self.OPERATIONS)]
        attempt = self.OPERATIONS[operation](self, number)
        stop = self.rng.choice([signal.SIGKILL, signal.SIGINT])
        delay = self.rng.uniform(0.0, 1.2 * self.longest.get(operation, 3.0))
        before = row_counts(self.url)
        code, err, elapsed = self._killed(attempt.argv, stop, delay)
        if code == 0:
            self.longest[operation] = max(self.longest.get(operation, 0.0), elapsed)
        result = RoundResult(number, operation, stop.name, round(delay, 3), code)
        result.traceback = "Traceback" in err
        result.problems += [f"after the kill: {p}" for p in half_done(self.url)]
        result.problems += attempt.landed(before, row_counts(self.url))
        if stop == signal.SIGINT and code not in (0, 1, 130, -signal.SIGINT):
            result.problems.append(f"exit {code} after SIGINT: {err[-300:]}")
        rerun_code, _, rerun_err = cli(self.url, *(attempt.rerun or attempt.argv))
        if rerun_code != 0:
            result.problems.append(f"the rerun failed ({rerun_code}): {rerun_err.strip()[-300:]}")
        result.problems += [f"after the rerun: {p}" for p in half_done(self.url)]
        if operation == "db upgrade" and schema_snapshot(self.url) != self.head_schema:
            result.problems.append("after the rerun the schema is not head's")
        return result

    def _killed(
        self, argv: tuple[str, ...], stop: signal.Signals, delay: float
    ) -> tuple[int, str, float]:
        """Run ``orlbuild --db URL --quiet ARGV``; ``stop`` its process group after ``delay``."""
        errors = self.work / "stderr.txt"
        start = time.monotonic()
        with errors.open("w") as sink:
            process = subprocess.Popen(
                [*_orlbuild(), "--db", self.url, "--quiet", *argv],
                stdout=subprocess.DEVNULL,
                stderr=sink,
                start_new_session=True,
                cwd=self.work,
            )
            try:
                process.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, stop)
            try:
                code = process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                code = process.wait()
        return code, errors.read_text(), time.monotonic() - start
