"""The C-speed TREC reader never accepts, nor reads differently, what the exact reader rejects."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orlbuild.errors import InputError
from orlbuild.ingest.trec_reader import (
    fast_trec_frame,
    fast_trec_frames,
    fast_trec_qrels,
    fast_trec_runs,
)
from orlbuild.orl_io.eval_files import parse_file
from orlbuild.vocabulary import InputFormat

RUNS = {
    "plain": "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n",
    "bom": "\ufeffq1 Q0 d1 1 2.5 t\n",
    "crlf_tabs_spaces": "q1\tQ0\td1\t1\t2.5\tt\r\n  q1   Q0 d2 2 1.5 t  \r\n",
    "blank_lines": "\nq1 Q0 d1 1 2.5 t\n\n   \nq2 Q0 d1 1 2.5 t\n\n",
    "signs_and_exponents": "q1 Q0 d1 +1 1e3 t\nq1 Q0 d2 2 -0.0 t\nq1 Q0 d3 3 -1.5E-3 t\n",
    "leading_zero_ids": "01 Q0 007 1 1 t\n1 Q0 7 2 0 t\n",
    "na_like_ids": "NA Q0 nan 1 1 t\nnull Q0 None 2 0 t\n",
    "quotes_in_ids": 'q"1 Q0 "d1" 1 1 t\n',
    "unicode_ids": "q\u00e9 Q0 d\u4e2d 1 1 t\n",
    "no_newline_at_end": "q1 Q0 d1 1 2.5 t",
    "duplicate": "q1 Q0 d1 1 2.5 t\nq1 Q0 d1 2 1.5 t\n",
    "short_row": "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5\n",
    "long_row": "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t x\n",
    "float_rank": "q1 Q0 d1 1.0 2.5 t\n",
    "underscore_rank": "q1 Q0 d1 1_000 2.5 t\n",
    "underscore_score": "q1 Q0 d1 1 1_0 t\n",
    "negative_rank": "q1 Q0 d1 -1 2.5 t\n",
    "huge_rank": "q1 Q0 d1 99999999999 2.5 t\n",
    "inf_score": "q1 Q0 d1 1 inf t\n",
    "nan_score": "q1 Q0 d1 1 NaN t\n",
    "word_score": "q1 Q0 d1 1 high t\n",
    "long_id": f"q1 Q0 {'d' * 600} 1 2.5 t\n",
    "empty": "",
    "only_blank": "\n\n",
    "not_utf8": b"q1 Q0 d\xff 1 2.5 t\n",
}
QRELS = {
    "plain": "q1 0 d1 2\nq1 0 d2 0\n",
    "negative_grade": "q1 0 d1 -1\n",
    "float_grade": "q1 0 d1 1.5\n",
    "repeat_same": "q1 0 d1 1\nq1 0 d1 1\n",
    "repeat_conflict": "q1 0 d1 1\nq1 0 d1 2\n",
    "three_fields": "q1 0 d1 1\nq1 d2 1\n",
    "bom_crlf": "\ufeffq1 0 d1 1\r\nq2 0 d1 0\r\n",
}


def _write(tmp_path: Path, name: str, content: str | bytes, packed: bool) -> Path:
    data = content.encode() if isinstance(content, str) else content
    path = tmp_path / (name + (".gz" if packed else ""))
    path.write_bytes(gzip.compress(data) if packed else data)
    return path


def _check(path: Path, fmt: InputFormat, kind: str, columns: list[str]) -> None:
    fast = fast_trec_frame(path, fmt)
    try:
        exact = parse_file(kind, path, fmt=fmt).frame
    except InputError:
        assert fast is None, "the fast reader accepted a file the exact reader rejects"
        return
    if fast is None:  # allowed (e.g. repeated identical grades): the exact reader reads it
        return
    assert len(fast) == len(exact)
    for column in ("query", "item"):
        assert fast[column].astype(str).tolist() == exact[column].astype(str).tolist()
    for column in columns:
        assert np.array_equal(fast[column].to_numpy(), exact[column].to_numpy())


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("name", list(RUNS))
def test_runs_read_alike(tmp_path: Path, name: str, packed: bool) -> None:
    _check(_write(tmp_path, name, RUNS[name], packed), InputFormat.trec, "run", ["rank", "score"])


@pytest.mark.parametrize("name", list(QRELS))
def test_qrels_read_alike(tmp_path: Path, name: str) -> None:
    _check(_write(tmp_path, name, QRELS[name], False), InputFormat.qrels, "graded", ["grade"])


def test_good_files_take_the_fast_path(tmp_path: Path) -> None:
    for name in ("plain", "bom", "crlf_tabs_spaces", "blank_lines", "signs_and_exponents"):
        path = _write(tmp_path, name, RUNS[name], True)
        assert fast_trec_frame(path, InputFormat.trec) is not None, name


def _same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Equal frames, categories (in order) included."""
    return a.equals(b) and all(
        a[c].cat.categories.tolist() == b[c].cat.categories.tolist() for c in ("query", "item")
    )


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("name", list(RUNS))
def test_runs_read_together_as_alone(tmp_path: Path, name: str, packed: bool) -> None:
    """Each odd file between two good ones: the one-pass reader gives each file's own frame,
    or ``None`` (never a different frame) - and ``None`` whenever a file needs the exact reader."""
    paths = [
        _write(tmp_path, "before", "q9 Q0 d1 1 3 t\nq1 Q0 d1 1 2.5 t\n", packed),
        _write(tmp_path, name, RUNS[name], packed),
        _write(tmp_path, "after", "q1 Q0 d7 1 1 u\nq2 Q0 d1 1 2.5 u", False),
    ]
    alone = [fast_trec_frame(path, InputFormat.trec) for path in paths]
    together = fast_trec_frames(paths)
    if any(frame is None for frame in alone):
        assert together is None
        return
    if together is None:  # allowed only where a file boundary could blur
        assert name in {"blank_lines"}, name
        return
    assert len(together) == 3
    for mine, theirs in zip(together, alone, strict=True):
        assert theirs is not None and _same(mine, theirs)


def test_a_pair_repeated_across_files_is_no_duplicate(tmp_path: Path) -> None:
    paths = [_write(tmp_path, f"r{i}", RUNS["plain"], False) for i in range(3)]
    together = fast_trec_frames(paths)
    assert together is not None
    assert all(_same(frame, fast_trec_frame(paths[0], InputFormat.trec)) for frame in together)


def test_a_lone_carriage_return_is_left_to_the_exact_reader(tmp_path: Path) -> None:
    paths = [
        _write(tmp_path, "a", "q1 Q0 d1 1 2.5 t\rq1 Q0 d2 2 1.5 t\n", False),
        _write(tmp_path, "b", RUNS["plain"], False),
    ]
    assert fast_trec_frames(paths) is None


def test_runs_as_codes_hold_what_the_frames_hold(tmp_path: Path) -> None:
    paths = [
        _write(tmp_path, "a", RUNS["signs_and_exponents"], True),
        _write(tmp_path, "b", RUNS["leading_zero_ids"], False),
        _write(tmp_path, "c", RUNS["plain"], False),
    ]
    read = fast_trec_runs(paths)
    frames = fast_trec_frames(paths)
    assert read is not None and frames is not None
    coded, comments = read
    assert coded.n_runs == 3 and comments == [0, 0, 0]
    for i, frame in enumerate(frames):
        mine = coded.runs == i
        assert (
            coded.queries[coded.query_codes[mine]].tolist() == frame["query"].astype(str).tolist()
        )
        assert coded.items[coded.item_codes[mine]].tolist() == frame["item"].astype(str).tolist()
        assert np.array_equal(coded.scores[mine], frame["score"].to_numpy())
    assert fast_trec_runs([*paths, _write(tmp_path, "bad", RUNS["float_rank"], False)]) is None


def test_runs_as_codes_count_each_files_comment_lines(tmp_path: Path) -> None:
    paths = [
        _write(tmp_path, "a", "# ir_metadata\n" + RUNS["plain"], False),
        _write(tmp_path, "b", RUNS["plain"] + "  # two\n# lines\n", True),
        _write(tmp_path, "c", RUNS["plain"], False),
    ]
    read = fast_trec_runs(paths)
    assert read is not None
    coded, comments = read
    assert comments == [1, 2, 0] and len(coded.scores) == 6
    frames = fast_trec_frames(paths)
    assert frames is not None
    assert [f.attrs["comment_lines"] for f in frames] == [1, 2, 0]
    assert fast_trec_runs([paths[0]]) is not None  # one run takes this path too


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("name", list(QRELS))
def test_qrels_as_arrays_hold_what_the_frame_holds(tmp_path: Path, name: str, packed: bool) -> None:
    path = _write(tmp_path, name, QRELS[name], packed)
    frame = fast_trec_frame(path, InputFormat.qrels)
    arrays = fast_trec_qrels(path)
    assert (frame is None) == (arrays is None)
    if frame is None or arrays is None:
        return
    queries, items, grades, comments = arrays
    assert queries.tolist() == frame["query"].astype(str).tolist()
    assert items.tolist() == frame["item"].astype(str).tolist()
    assert grades.tolist() == frame["grade"].tolist()
    assert comments == frame.attrs["comment_lines"]
