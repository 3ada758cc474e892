"""The byte reader of ``orlbuild eval`` (orlbuild/ingest/trec_bytes.py) reads as the exact reader.

On any input, :func:`orlbuild.ingest.trec_reader._bytes_eval` either gives
``None`` (the pandas path, then the exact reader, take over) or exactly what
the line-exact reader reads - same ids, grades, scores bit for bit, comment
counts - with the codes the pandas path gives. Malformed input is always
``None``, so ``orlbuild eval`` reports the exact reader's one-line error.
"""

from __future__ import annotations

import gzip
import string
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from orlbuild.errors import InputError
from orlbuild.ingest import trec_bytes, trec_reader
from orlbuild.ingest.trec_reader import _bytes_eval, fast_trec_eval, fast_trec_runs
from orlbuild.orl_io.eval_files import parse_file
from orlbuild.services.file_evaluations import evaluate_files
from orlbuild.vocabulary import InputFormat
from scoring.batch import IdTable

GOOD_QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n"
GOOD_RUN = "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 2.5 t\nq2 Q0 d3 1 0.25 t\n"


def _write(folder: Path, name: str, content: str | bytes, packed: bool = False) -> Path:
    data = content.encode() if isinstance(content, str) else content
    path = folder / (name + (".gz" if packed else ""))
    path.write_bytes(gzip.compress(data) if packed else data)
    return path


def _exact(qrels: Path, runs: list[Path]) -> tuple[pd.DataFrame, list[pd.DataFrame]] | None:
    """What the line-exact reader reads, ``None`` when it refuses a file."""
    try:
        judged = parse_file("graded", qrels, fmt=InputFormat.qrels).frame
        frames = [parse_file("run", run, fmt=InputFormat.trec).frame for run in runs]
    except InputError:
        return None
    return judged, frames


def _bits(values: np.ndarray) -> list[int]:
    """Float64 values as their bit patterns (-0.0 and 0.0 differ)."""
    return np.asarray(values, dtype=np.float64).view(np.int64).tolist()


def _check_against_exact(qrels: Path, runs: list[Path]) -> bool:
    """The byte reader reads as the exact reader, or gives ``None``; whether it read the files."""
    exact = _exact(qrels, runs)
    read = _bytes_eval(qrels, runs)
    if exact is None:
        assert read is None, "the byte reader accepted a file the exact reader refuses"
        return False
    if read is None:
        return False
    judgments, coded, comments = read
    assert judgments is not None
    judged, frames = exact
    queries = judgments.queries[judgments.query_codes].tolist()
    assert queries == judged["query"].astype(str).tolist()
    assert judgments.items[judgments.item_codes].tolist() == judged["item"].astype(str).tolist()
    assert judgments.grades.tolist() == judged["grade"].tolist()
    assert judgments.grades.dtype == np.int64 and coded.scores.dtype == np.float64
    assert len(comments) == len(runs)
    for i, frame in enumerate(frames):
        mine = coded.runs == i
        assert (
            coded.queries[coded.query_codes[mine]].tolist() == frame["query"].astype(str).tolist()
        )
        assert coded.items[coded.item_codes[mine]].tolist() == frame["item"].astype(str).tolist()
        assert _bits(coded.scores[mine]) == _bits(frame["score"].to_numpy())
    # Codes numbered as pandas.factorize numbers the ids (qrels first, then the runs).
    for column, table in (("query", judgments.queries), ("item", judgments.items)):
        every = [judged[column], *(frame[column] for frame in frames)]
        texts = np.concatenate([part.astype(str).to_numpy(dtype=object) for part in every])
        assert table.tolist() == pd.unique(texts).tolist()
    return True


def _check_against_pandas_path(
    monkeypatch: pytest.MonkeyPatch, qrels: Path, runs: list[Path]
) -> None:
    """Where both paths read the files, every array is identical (codes and their order too)."""
    read = _bytes_eval(qrels, runs)
    with monkeypatch.context() as patched:
        patched.setattr(trec_reader, "_bytes_eval", lambda *_: None)
        other = fast_trec_eval(qrels, runs)
    if read is None or other is None:
        return
    for mine, theirs in zip(read[:2], other[:2], strict=True):
        assert mine is not None
        for field in mine.__dataclass_fields__:
            a, b = getattr(mine, field), getattr(theirs, field)
            if isinstance(a, IdTable):  # the byte reader's items: the same strings, made here
                a = np.asarray(a)
                assert a.dtype == object
            if isinstance(a, np.ndarray):
                assert a.dtype == b.dtype or field in ("queries", "items"), field
                if a.dtype.kind == "f":
                    assert _bits(a) == _bits(b), field
                else:
                    assert a.tolist() == b.tolist(), field
            else:
                assert a == b, field
    assert read[2] == other[2]


ODD_RUNS = {
    "plain": GOOD_RUN,
    "bom": "\ufeff" + GOOD_RUN,
    "crlf_tabs_spaces": "q1\tQ0\td1\t1\t2.5\tt\r\n  q1   Q0 d2 2 1.5 t  \r\n",
    "blank_lines": "\nq1 Q0 d1 1 2.5 t\n\n   \nq2 Q0 d1 1 2.5 t\n\n",
    "comments": "# ir_metadata\nq1 Q0 d1 1 2.5 t\n  # two\n\t# three\nq2 Q0 #d 1 1 t\n",
    "signs_and_exponents": "q1 Q0 d1 1 1e3 t\nq1 Q0 d2 2 -0.0 t\nq1 Q0 d3 3 -1.5E-3 t\n",
    "score_spellings": "q1 Q0 a 1 .5 t\nq1 Q0 b 2 5. t\nq1 Q0 c 3 +2 t\nq1 Q0 d 4 0.1 t\n",
    "long_scores": "q1 Q0 a 1 13.618047714233398 t\nq1 Q0 b 2 123456789012345678901.5 t\n"
    "q1 Q0 c 3 0.000000000000000000000000123 t\nq1 Q0 d 4 4.9e-324 t\n",
    "leading_zero_ids": "01 Q0 007 1 1 t\n1 Q0 7 2 0 t\n",
    "na_like_ids": "NA Q0 nan 1 1 t\nnull Q0 None 2 0 t\n",
    "quotes_in_ids": 'q"1 Q0 "d1" 1 1 t\n',
    "no_newline_at_end": "q1 Q0 d1 1 2.5 t",
    "long_id": f"q1 Q0 {'d' * 512} 1 2.5 t\nq1 Q0 {'e' * 24} 2 1 t\n",
    "zero_rank": "q1 Q0 d1 0 2.5 t\n",
    "leading_zero_rank": "q1 Q0 d1 0007 2.5 t\n",
    "max_rank": "q1 Q0 d1 2147483647 2.5 t\n",
}
BAD_RUNS = {
    "delete_in_ids": "q\x7f Q0 d\x7f1 1 1 t\n",  # a control character (issue 39): refused
    "unicode_ids": "q\u00e9 Q0 d\u4e2d 1 1 t\n",
    "form_feed": "q1 Q0 d1\x0c 1 1 t\n",
    "nul": "q1 Q0 d\x001 1 1 t\n",
    "unit_separator": "q1 Q0 d\x1f1 1 1 t\n",
    "next_line": "q1 Q0 d\u00851 1 1 t\n",
    "no_break_space": "q1 Q0 d\u00a01 1 1 t\n",
    "lone_carriage_return": "q1 Q0 d1 1 2.5 t\rq1 Q0 d2 2 1.5 t\n",
    "duplicate": "q1 Q0 d1 1 2.5 t\nq1 Q0 d1 2 1.5 t\n",
    "short_row": "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5\n",
    "long_row": "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t x\n",
    "rows_swapped_fields": "q1 Q0 d1 1 2.5\nt q1 Q0 d2 2 1.5 t\n",
    "float_rank": "q1 Q0 d1 1.0 2.5 t\n",
    "signed_rank": "q1 Q0 d1 +1 2.5 t\n",
    "underscore_rank": "q1 Q0 d1 1_000 2.5 t\n",
    "underscore_score": "q1 Q0 d1 1 1_0 t\n",
    "negative_rank": "q1 Q0 d1 -1 2.5 t\n",
    "huge_rank": "q1 Q0 d1 2147483648 2.5 t\n",
    "inf_score": "q1 Q0 d1 1 inf t\n",
    "overflowing_score": "q1 Q0 d1 1 1e999 t\n",
    "nan_score": "q1 Q0 d1 1 NaN t\n",
    "word_score": "q1 Q0 d1 1 high t\n",
    "two_points": "q1 Q0 d1 1 1.2.3 t\n",
    "sign_only": "q1 Q0 d1 1 - t\n",
    "too_long_id": f"q1 Q0 {'d' * 513} 1 2.5 t\n",
    "empty": "",
    "only_blank": "\n\n",
    "only_comments": "# a\n# b\n",
    "not_utf8": b"q1 Q0 d\xff 1 2.5 t\n",
}


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("name", [*ODD_RUNS, *BAD_RUNS])
def test_runs_read_as_the_exact_reader_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, packed: bool
) -> None:
    qrels = _write(tmp_path, "qrels", GOOD_QRELS)
    run = _write(tmp_path, name, {**ODD_RUNS, **BAD_RUNS}[name], packed)
    read = _check_against_exact(qrels, [run])
    assert read is (name in ODD_RUNS), "odd but good files take the byte path, bad ones never"
    _check_against_pandas_path(monkeypatch, qrels, [run])


@pytest.mark.parametrize(
    "content",
    [
        GOOD_QRELS,
        "\ufeffq1 0 d1 1\r\nq2 0 d1 0\r\n",
        "# c\nq1 0 d1 3\n\nq1\t0\td2\t0",
        "q1 0 d1 -1\n",
        "q1 0 d1 1.5\n",
        "q1 0 d1 1\nq1 0 d1 1\n",
        "q1 0 d1 1\nq1 d2 1\n",
        "q1 0 d1 1 x\n",
    ],
)
def test_qrels_read_as_the_exact_reader_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    qrels = _write(tmp_path, "qrels", content)
    run = _write(tmp_path, "run", GOOD_RUN)
    _check_against_exact(qrels, [run])
    _check_against_pandas_path(monkeypatch, qrels, [run])


def test_several_runs_share_the_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels = _write(tmp_path, "qrels", GOOD_QRELS)
    runs = [
        _write(tmp_path, "a", ODD_RUNS["comments"], True),
        _write(tmp_path, "b", ODD_RUNS["long_id"]),
        _write(tmp_path, "c", GOOD_RUN),
    ]
    assert _check_against_exact(qrels, runs)
    _check_against_pandas_path(monkeypatch, qrels, runs)
    read = _bytes_eval(qrels, runs)
    assert read is not None and read[2] == [3, 0, 0]
    coded = fast_trec_runs(runs)  # runs alone (ORLs of another format) take it too
    assert coded is not None and coded[1] == [3, 0, 0] and coded[0].n_runs == 3
    # One bad run sends every file to the pandas path.
    assert _bytes_eval(qrels, [*runs, _write(tmp_path, "bad", BAD_RUNS["float_rank"])]) is None


def test_a_hash_collision_is_left_to_the_pandas_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codes are checked exact: with every hash made equal, distinct ids are never merged."""
    qrels = _write(tmp_path, "qrels", GOOD_QRELS)
    run = _write(tmp_path, "run", GOOD_RUN)
    monkeypatch.setattr(trec_bytes, "_MIX", (np.uint64(0), np.uint64(0)))
    assert _bytes_eval(qrels, [run]) is None
    assert fast_trec_eval(qrels, [run]) is not None  # the pandas path reads it


def test_blocks_of_lines_join_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files longer than one block are read block by block with the same result."""
    rng = np.random.default_rng(3)
    lines = [
        f"q{q} Q0 doc_{d} {r} {s:.2f} t\n"
        for q in range(40)
        for r, (d, s) in enumerate(
            zip(rng.permutation(500)[:60], rng.uniform(0, 3, 60), strict=True), 1
        )
    ]
    run = _write(tmp_path, "run", "".join(lines))
    qrels = _write(tmp_path, "qrels", "".join(f"q{q} 0 doc_{q} 1\n" for q in range(40)))
    whole = _bytes_eval(qrels, [run])
    monkeypatch.setattr(trec_bytes, "_BLOCK", 97)  # a few lines per block
    assert _check_against_exact(qrels, [run])
    assert whole is not None
    again = _bytes_eval(qrels, [run])
    assert again is not None
    assert again[1].item_codes.tolist() == whole[1].item_codes.tolist()
    assert _bits(again[1].scores) == _bits(whole[1].scores)
    monkeypatch.setattr(trec_bytes, "_BLOCK", 20)  # shorter than a line
    assert _bytes_eval(qrels, [run]) is None


@pytest.mark.parametrize(
    "name", ["float_rank", "word_score", "short_row", "duplicate", "negative_rank", "not_utf8"]
)
def test_eval_still_names_the_file_line_and_value(tmp_path: Path, name: str) -> None:
    """Malformed input: ``orlbuild eval`` raises the exact reader's one-line error."""
    qrels = _write(tmp_path, "qrels", GOOD_QRELS)
    run = _write(tmp_path, name, BAD_RUNS[name])
    with pytest.raises(InputError) as exact:
        parse_file("run", run, fmt=InputFormat.trec)
    with pytest.raises(InputError) as got:
        evaluate_files(qrels, [run], ["AP"])
    assert str(got.value) == str(exact.value)
    assert str(run) in str(got.value) and "line" in str(got.value)


# Random files: ids from a small alphabet (ties and repeats), separators and line
# endings of every kind the exact reader accepts, comment and blank lines, scores
# in many spellings, and now and then a defect.
_ID = st.text(
    alphabet=string.ascii_letters[:6] + string.digits[:4] + "_#\"'.", min_size=1, max_size=6
)
_SEP = st.sampled_from([" ", "\t", "  ", " \t "])
_SCORE = st.one_of(
    st.integers(-3, 3).map(str),
    st.sampled_from(["0.5", "1.25", "-0.0", ".5", "5.", "+1.5", "1e2", "-2.5E-1", "1.0000001"]),
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda f: f"{f:.9g}"),
)
_DEFECT = st.sampled_from(["1.0", "x", "nan", "1_0", "\x0b", "\xe9", "", "a b", "\r", "-1"])


@st.composite
def _trec_file(draw: st.DrawFn, width: int) -> bytes:
    rows = []
    n_rows = draw(st.integers(1, 12))
    # One file in four has one defect (a bad value, a control or non-ASCII character,
    # a missing or extra field, a lone carriage return).
    defective = draw(st.integers(0, 3 * n_rows))
    for row in range(n_rows):
        fields = [draw(_ID), "0" if width == 4 else "Q0", draw(_ID)]
        if width == 4:
            fields.append(str(draw(st.integers(0, 3))))
        else:
            fields += [str(draw(st.integers(0, 20))), draw(_SCORE), "tag"]
        if row == defective:
            fields[draw(st.integers(0, width - 1))] = draw(_DEFECT)
        seps = [draw(_SEP) for _ in fields[1:]]
        line = fields[0] + "".join(s + f for s, f in zip(seps, fields[1:], strict=True))
        lead, trail = draw(st.sampled_from(["", " ", "\t"])), draw(st.sampled_from(["", " "]))
        rows.append(lead + line + trail)
        if draw(st.integers(0, 6)) == 0:
            rows.append(draw(st.sampled_from(["", "   ", "# comment", "  #x y", "\t# 1 2 3"])))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(rows) + draw(st.sampled_from([end, ""]))
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text.encode()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    qrels=_trec_file(4), runs=st.lists(_trec_file(6), min_size=1, max_size=3), packed=st.booleans()
)
def test_random_files_read_as_the_exact_reader_reads_them(
    tmp_path_factory: pytest.TempPathFactory, qrels: bytes, runs: list[bytes], packed: bool
) -> None:
    folder = tmp_path_factory.mktemp("random")
    qrels_path = _write(folder, "qrels", qrels)
    run_paths = [_write(folder, f"run{i}", run, packed and i == 0) for i, run in enumerate(runs)]
    event("byte path" if _check_against_exact(qrels_path, run_paths) else "other paths")


def test_random_good_files_mostly_take_the_byte_path(tmp_path: Path) -> None:
    """The property above is not vacuous: well-formed random files are read by the byte reader."""
    read = 0
    rng = np.random.default_rng(11)
    for trial in range(40):
        ids = [f"d{i}" for i in rng.integers(0, 30, size=25)]
        lines = {}
        for query in ("q1", "q2", "#q"):
            for doc in ids:
                lines[(query, doc)] = f"{query}\t Q0 {doc}  1 {rng.integers(0, 4) / 2} t\r\n"
        run = _write(tmp_path, f"run{trial}", "\ufeff" + "".join(lines.values()) + "# end\n")
        qrels = _write(tmp_path, f"qrels{trial}", "".join(f"q1 0 {d} 1\n" for d in set(ids)))
        read += _check_against_exact(qrels, [run])
    assert read == 40


@pytest.mark.parametrize(
    ("block", "regular"),
    [
        (b"q1 Q0 d1 1 2.5 t\nq1\tQ0 d2 2 2.5 t\n", True),
        (b"q1 0 d1 2\nq2 0 d3 0\n", True),
        (b"q1 Q0 d1 1 2.5 t\n\nq1 Q0 d2 2 2.5 t\n", False),  # a blank line
        (b"q1 Q0 d1 1  2.5 t\nq1 Q0 d2 2 2.5 t\n", False),  # two spaces
        (b" q1 Q0 d1 1 2.5 t\n", False),  # a leading space
        (b"q1 Q0 d1 1 2.5 t \n", False),  # a trailing space
        (b"q1 Q0 d1 1 2.5 t\r\n", False),  # a carriage return
        (b"q1 Q0 d1 1 2.5 t x\nq1 Q0 d2 2 2.5\n", False),  # 7 and 5 fields
        (b"q1 Q0 d1 1 2.5\x0bt\n", False),  # a vertical tab
    ],
)
def test_regular_blocks_are_split_as_the_general_search_splits_them(
    block: bytes, regular: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = np.frombuffer(block, dtype=np.uint8)
    width = 4 if block.count(b" ") + block.count(b"\t") == 3 * block.count(b"\n") else 6
    blank = np.flatnonzero(raw.view(np.int8) <= 0x20)
    fast = trec_bytes._regular_fields(blank, raw[blank], width)
    assert (fast is not None) == regular
    got = trec_bytes._block_fields(raw, width)
    monkeypatch.setattr(trec_bytes, "_regular_fields", lambda *args: None)
    general = trec_bytes._block_fields(raw, width)
    if general is None:
        assert got is None
        return
    assert got is not None
    assert got[0].tolist() == general[0].tolist() and got[1].tolist() == general[1].tolist()
    if fast is not None:
        assert fast[0].tolist() == general[0].tolist() and fast[1].tolist() == general[1].tolist()


def test_a_long_line_leaves_the_regular_split_too(monkeypatch: pytest.MonkeyPatch) -> None:
    block = b"q1 Q0 d1 1 2.5 t\nq1 Q0 " + b"d" * 40 + b" 2 2.5 t\n"
    raw = np.frombuffer(block, dtype=np.uint8)
    blank = np.flatnonzero(raw.view(np.int8) <= 0x20)
    assert trec_bytes._regular_fields(blank, raw[blank], 6) is not None
    monkeypatch.setattr(trec_bytes, "LONGEST_LINE", 40)
    assert trec_bytes._regular_fields(blank, raw[blank], 6) is None
    assert trec_bytes._block_fields(raw, 6) is None


@pytest.mark.parametrize(("shortest", "longest"), [(1, 40), (9, 30), (16, 17), (24, 33), (8, 8)])
def test_field_words_hold_each_fields_bytes(shortest: int, longest: int) -> None:
    """Whole words of every field are taken unmasked; the rest is zero after each field."""
    rng = np.random.default_rng(shortest)
    buffer = bytearray(rng.integers(33, 127, 20_000, dtype=np.uint8).tobytes() + bytes(16))
    words = np.ndarray(shape=(len(buffer) - 7,), dtype="<u8", buffer=buffer, strides=(1,))
    lengths = rng.integers(shortest, longest + 1, 500)
    starts = rng.integers(0, 20_000 - longest, 500)
    got = trec_bytes._field_words(words, starts, lengths)
    table = np.ascontiguousarray(got.T).view(np.uint8).reshape(len(starts), -1)
    for row, start, length in zip(table, starts.tolist(), lengths.tolist(), strict=True):
        assert bytes(row[:length]) == bytes(buffer[start : start + length])
        assert not row[length:].any()
