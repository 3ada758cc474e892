"""What an ingest tells the user while it runs: progress in units and phases, Ctrl-C."""

from __future__ import annotations

import io

from rich.console import Console
from rich.progress import Progress

from orlbuild.progress import IngestProgress
from orlbuild.services.ingests import ingest_file
from tests.files import Write
from tests.stores import store_engine

PAIRS = "query,winner,loser\n" + "".join(f"q{i % 7},d{i},d{i + 1}\n" for i in range(2500))


def test_write_phase_reports_every_row(migrated_db_url: str, write_file: Write) -> None:
    path = write_file("p.csv", PAIRS)
    read: list[int] = []
    written: list[tuple[int, int]] = []
    with store_engine(migrated_db_url) as engine:
        result = ingest_file(
            engine,
            "pairwise",
            path,
            on_progress=read.append,
            on_write=lambda n, total: written.append((n, total)),
        )
    assert sum(read) == path.stat().st_size
    assert sum(n for n, _ in written) == result.rows == 2500
    assert {total for _, total in written} == {2500}


def test_progress_shows_bytes_with_units_then_rows() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    from orlbuild.progress import _AmountColumn

    with Progress(_AmountColumn(), console=console, auto_refresh=False) as progress:
        bars = IngestProgress(progress, 2_000_000, "ingest pairwise")
        bars.read(1_000_000)
        bars.write(1_234, 5_000)
        progress.refresh()
    text = buffer.getvalue()
    assert "1.0/2.0 MB" in text
    assert "1,234/5,000 rows" in text
