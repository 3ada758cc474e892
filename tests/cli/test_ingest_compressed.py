"""``orlbuild ingest``: gzip/bz2 files of every kind, and TREC qrels/runs under any name."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner, Result

from orlbuild.cli.main import app
from orlbuild.store.read import load_graded, load_listwise, load_pairwise, load_run
from tests.stores import store_engine

FILES = {
    "pairwise": ("pairs.tsv", "query\tannotator\twinner\tloser\nq1\ta1\td1\td2\nq1\ta2\td2\td3\n"),
    "listwise": ("lists.csv", "query,annotator,item,rank\nq1,a1,d1,1\nq1,a1,d2,2\nq2,a1,e1,1\n"),
    "graded": ("labels.qrels", "q1 0 d1 2\nq1 0 d2 0\nq2 0 e1 1\n"),
    "run": ("bm25.trec", "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 e1 1 0.5 bm25\n"),
}
LOADERS = {
    "pairwise": load_pairwise,
    "listwise": load_listwise,
    "graded": load_graded,
    "run": lambda engine, collection: load_run(engine, collection, "s"),
}
COMPRESSORS = {".gz": gzip.compress, ".bz2": bz2.compress}


def _ingest(url: str, kind: str, path: Path, collection: str) -> Result:
    extra = ["--system", "s"] if kind == "run" else []
    return CliRunner().invoke(
        app, ["--db", url, "--quiet", "ingest", kind, str(path), "-c", collection, *extra]
    )


def _stored(url: str, kind: str, collection: str) -> pd.DataFrame:
    with store_engine(url) as engine:
        frame = LOADERS[kind](engine, collection)  # type: ignore[operator]
    frame = frame.drop(columns=[c for c in ("batch_id",) if c in frame.columns])
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


@pytest.mark.parametrize("kind", list(FILES))
@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_compressed_round_trip(
    migrated_db_url: str, tmp_path: Path, kind: str, suffix: str
) -> None:
    name, text = FILES[kind]
    plain = tmp_path / name
    plain.write_text(text)
    packed = tmp_path / (name + suffix)
    packed.write_bytes(COMPRESSORS[suffix](text.encode()))
    assert _ingest(migrated_db_url, kind, plain, "plain").exit_code == 0
    result = _ingest(migrated_db_url, kind, packed, "packed")
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(
        _stored(migrated_db_url, kind, "plain"), _stored(migrated_db_url, kind, "packed")
    )
    again = _ingest(migrated_db_url, kind, packed, "plain")  # same content as the plain file
    assert again.exit_code == 0 and "already stored" in again.output


def test_compressed_content_is_recognised_whatever_the_name(
    migrated_db_url: str, tmp_path: Path
) -> None:
    _, text = FILES["listwise"]
    odd = tmp_path / "lists.csv"  # gzip bytes behind a plain name
    odd.write_bytes(gzip.compress(text.encode()))
    result = _ingest(migrated_db_url, "listwise", odd, "c")
    assert result.exit_code == 0, result.output
    assert len(_stored(migrated_db_url, "listwise", "c")) == 3


def test_bad_line_in_compressed_file_is_named(migrated_db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "run.trec.bz2"
    path.write_bytes(bz2.compress(b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 high t\n"))
    result = _ingest(migrated_db_url, "run", path, "c")
    assert result.exit_code == 1
    assert "run.trec.bz2, line 2: score must be a number (got 'high')" in result.output


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("graded", "qrels.test"),
        ("graded", "2021.qrels.pass.final.txt"),
        ("graded", "qrels"),
        ("run", "run.1"),
        ("run", "p_bm25.txt"),
        ("run", "input.bm25.tsv"),
        ("run", "run.1.gz"),
    ],
)
def test_trec_files_recognised_by_content(
    migrated_db_url: str, tmp_path: Path, kind: str, name: str
) -> None:
    _, text = FILES[kind]
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    result = _ingest(migrated_db_url, kind, path, "c")
    assert result.exit_code == 0, result.output
    assert len(_stored(migrated_db_url, kind, "c")) == 3


def test_unknown_extension_hint_names_format(migrated_db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "labels.dat"
    path.write_text("query\titem\tgrade\nq1\td1\t1\n")
    result = _ingest(migrated_db_url, "graded", path, "c")
    assert result.exit_code == 1
    assert "pass --format" in result.output


def test_open_input_leaves_a_given_stream_open() -> None:
    import io

    from orlbuild.ingest.source import open_input

    plain = io.BytesIO(b"q1 0 d1 1\n")
    assert open_input(plain).read() == b"q1 0 d1 1\n"
    packed = io.BytesIO(gzip.compress(b"q1 0 d1 1\n"))
    assert open_input(packed).read() == b"q1 0 d1 1\n"
    assert not plain.closed and not packed.closed
