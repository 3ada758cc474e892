"""The reading thread of an ingest (``orlbuild.ingest.prefetch``): order, errors, stopping.

A file is read one chunk ahead by a thread while the store writes the
current chunk (docs/performance.md, "Ingesting large vocabularies"). The
thread must hand the chunks over in order, raise a reading error where the
caller would have met it without the thread, stay bounded, never touch the
store and end when the ingest stops (an error or Ctrl-C).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

import orlbuild.ingest.prefetch as prefetch_module
import orlbuild.ingest.rows as rows_module
import orlbuild.services.ingests as ingests_module
import orlbuild.store.batches as batches_module
from orlbuild.errors import InputError
from orlbuild.ingest.prefetch import Prefetched
from orlbuild.ingest.reading import read_input
from orlbuild.services.ingests import ingest_file
from orlbuild.store.read import load_pairwise
from tests.files import Write
from tests.ingest.conftest import run_cli, store_counts
from tests.stores import store_engine


def _reading_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("read ")]


def test_items_come_in_order_from_another_thread() -> None:
    readers: set[int] = set()

    def items() -> Iterator[int]:
        for i in range(200):
            readers.add(threading.get_ident())
            yield i

    with Prefetched(items(), depth=2) as ahead:
        assert list(ahead) == list(range(200))
        assert list(ahead) == []  # spent: the end is given once, then nothing
    assert readers and threading.get_ident() not in readers
    assert not ahead.alive


def test_the_next_item_is_read_while_the_caller_holds_the_current_one() -> None:
    # No timing: the caller waits, holding item 0, until the thread has read item 1.
    read_second = threading.Event()

    def items() -> Iterator[int]:
        yield 0
        read_second.set()
        yield 1

    with Prefetched(items()) as ahead:
        first = next(ahead)
        assert read_second.wait(10), "the thread did not read ahead"
        assert (first, next(ahead)) == (0, 1)


def test_the_thread_reads_at_most_depth_items_ahead() -> None:
    read: list[int] = []
    taken_first = threading.Event()

    def items() -> Iterator[int]:
        for i in range(50):
            read.append(i)
            yield i

    for depth in (1, 2):
        read.clear()
        with Prefetched(items(), depth=depth) as ahead:
            assert next(ahead) == 0
            taken_first.wait(0.3)  # let the thread run as far as it may
            # item 0 taken, ``depth`` queued, one more read and waiting for room
            assert len(read) <= depth + 2
            assert list(ahead) == list(range(1, 50))


def test_an_error_comes_after_the_items_before_it_as_the_same_exception() -> None:
    failure = InputError("bad value 'x'", file="f.tsv", line=7)
    failed = threading.Event()

    def items() -> Iterator[int]:
        yield 1
        yield 2
        failed.set()
        raise failure

    taken = []
    with pytest.raises(InputError) as caught, Prefetched(items(), depth=2) as ahead:
        taken.append(next(ahead))
        assert failed.wait(10)  # the thread has met the error before item 2 was taken
        taken.extend(ahead)
    assert taken == [1, 2]
    assert caught.value is failure and str(caught.value) == str(failure)
    assert not ahead.alive


def test_leaving_early_stops_the_thread() -> None:
    def endless() -> Iterator[int]:
        i = 0
        while True:
            yield i
            i += 1

    with pytest.raises(KeyboardInterrupt), Prefetched(endless()) as ahead:
        for i in ahead:
            if i == 3:
                raise KeyboardInterrupt  # Ctrl-C while the caller writes item 3
    assert not ahead.alive
    assert list(ahead) == []  # nothing more after close


def test_closing_does_not_wait_for_a_long_item(monkeypatch: pytest.MonkeyPatch) -> None:
    # A whole run file is one item: Ctrl-C must not wait for it to be read.
    monkeypatch.setattr(prefetch_module, "CLOSE_WAIT", 0.05)
    reading = threading.Event()
    release = threading.Event()

    def slow() -> Iterator[int]:
        yield 0
        reading.set()
        release.wait(10)
        yield 1

    ahead = Prefetched(slow())
    with ahead:
        assert next(ahead) == 0
        assert reading.wait(10)
    assert ahead.alive  # close() came back while the item was being read
    release.set()
    ahead._thread.join(10)
    assert not ahead.alive  # and the thread ended at the item's end, without queueing it


def test_closing_unstarted_starts_nothing() -> None:
    with Prefetched(iter([1])) as ahead:
        pass
    assert not ahead.alive
    with pytest.raises(ValueError, match="depth"):
        Prefetched([], depth=0)


ROWS = "".join(f"q{i % 5}\td{i % 40}\td{(i + 1) % 40}\n" for i in range(300))


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows_module, "CHUNK_ROWS", 50)
    # the thread on both backends (by default none reads ahead)
    monkeypatch.setattr(ingests_module, "READ_AHEAD", frozenset({"sqlite", "postgresql"}))


def test_no_backend_reads_ahead_by_default() -> None:
    # measured slower on two cores (docs/performance.md, "Reading in a thread")
    assert frozenset() == ingests_module.READ_AHEAD


def test_a_bad_line_read_ahead_stores_nothing_with_the_readers_message(
    migrated_db_url: str, write_file: Write, small_chunks: None
) -> None:
    path = write_file("p.tsv", "query\twinner\tloser\n" + ROWS + "q1\td7\td7\n")
    with pytest.raises(InputError) as without_thread:
        read_input("pairwise", path)
    before = store_counts(migrated_db_url)
    with store_engine(migrated_db_url) as engine, pytest.raises(InputError) as caught:
        ingest_file(engine, "pairwise", path)
    assert str(caught.value) == str(without_thread.value)
    assert f"{path}, line 302: winner and loser are the same item" in str(caught.value)
    assert store_counts(migrated_db_url) == before
    assert _reading_threads() == []


def test_chunks_are_written_in_file_order_by_the_calling_thread(
    migrated_db_url: str, write_file: Write, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_file("p.tsv", "query\twinner\tloser\n" + ROWS)
    written: list[tuple[int, str]] = []
    readers: list[int] = []
    real = batches_module._FactWriter.write

    def write(self: Any, chunk: Any) -> None:
        written.append((threading.get_ident(), chunk.names["items"][chunk.facts["winner_id"][0]]))
        readers.append(len(_reading_threads()))
        real(self, chunk)

    monkeypatch.setattr(batches_module._FactWriter, "write", write)
    totals: list[int] = []
    statements: set[int] = set()
    with store_engine(migrated_db_url) as engine:
        event.listen(
            engine, "before_cursor_execute", lambda *_a: statements.add(threading.get_ident())
        )
        result = ingest_file(engine, "pairwise", path, on_write=lambda _n, t: totals.append(t))
        stored = load_pairwise(engine, "default")
    assert result.rows == 300 and len(stored) == 300
    # the store is written, and its statements run, by the calling thread only
    assert {ident for ident, _ in written} == statements == {threading.get_ident()}
    # each chunk of 50 rows starts at line 50 k: its first winner is d(50 k mod 40)
    assert [first for _, first in written] == [f"d{50 * k % 40}" for k in range(6)]
    # the bar's total is the rows handed to the writer, not the rows read ahead
    assert totals == [50, 100, 150, 200, 250, 300]
    assert readers[0] == 1  # the reading thread ran while the first chunk was written
    assert _reading_threads() == []


def test_ctrl_c_while_writing_stores_nothing_and_ends_the_thread(
    migrated_db_url: str, write_file: Write, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_file("p.tsv", "query\twinner\tloser\n" + ROWS)
    real = batches_module._FactWriter.write
    calls = []

    def interrupted(self: Any, chunk: Any) -> None:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        real(self, chunk)

    monkeypatch.setattr(batches_module._FactWriter, "write", interrupted)
    before = store_counts(migrated_db_url)
    result = run_cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert result.exit_code == 130
    assert f"interrupted: nothing from {path} was stored" in result.output
    assert store_counts(migrated_db_url) == before
    assert _reading_threads() == []
