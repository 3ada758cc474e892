"""Issue 39's input cases owned by the readers: a FIFO input, NUL and control characters in
``eval`` as in ingest, invisible characters in ids, one tie vocabulary."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orlbuild.cli.main import app
from tests.files import Write
from tests.store_cli import cli, one_error_line, outcome

runner = CliRunner()

QRELS = "q1 0 d1 2\nq1 0 d2 1\n"


def _eval(*args: str) -> tuple[int, str, str]:
    return outcome(runner.invoke(app, ["eval", *args]))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_input_is_refused_saying_what_it_is(
    migrated_db_url: str, write_file: Write, tmp_path: Path
) -> None:
    """A FIFO is refused in one line (not "no such file"): read it through standard input."""
    fifo = tmp_path / "judgments.fifo"
    os.mkfifo(fifo)
    expected = (
        f"Error: {fifo}: is a named pipe (FIFO), not a regular file; read it through standard "
        f"input instead: give '-' as the file and < {fifo}"
    )
    assert one_error_line(*cli(migrated_db_url, "ingest", "pairwise", str(fifo))) == expected
    run = write_file("run.trec", "q1 Q0 d1 1 2.5 bm25\n")
    assert one_error_line(*_eval(str(fifo), str(run), "-m", "AP")) == expected
    qrels = write_file("qrels.txt", QRELS)
    assert one_error_line(*_eval(str(qrels), str(fifo), "-m", "AP")) == expected
    assert (
        one_error_line(*cli(migrated_db_url, "ingest", "run", str(fifo), "--system-from", "stem"))
        == expected
    )
    text = cli(migrated_db_url, "ingest", "text", str(fifo), "--of", "items", "-c", "c")
    assert one_error_line(*text) == expected  # ingest text reads through the same check
    assert one_error_line(*cli(migrated_db_url, "ingest", "graded", str(tmp_path))) == (
        f"Error: {tmp_path}: is a directory, not a file; name a file in it"
    )


def test_a_device_or_socket_input_is_named_as_such(
    migrated_db_url: str, write_file: Write, tmp_path: Path
) -> None:
    """``/dev/null`` is a character device and a Unix socket a socket, not "no such file"."""
    import socket

    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        for node, what in (("/dev/null", "a character device"), (str(path), "a socket")):
            line = one_error_line(*cli(migrated_db_url, "ingest", "pairwise", node))
            assert line.startswith(f"Error: {node}: is {what}, not a regular file; "), line
            run = write_file("run.trec", "q1 Q0 d1 1 2.5 bm25\n")
            assert one_error_line(*_eval(node, str(run), "-m", "AP")) == line
    finally:
        server.close()


@pytest.mark.parametrize(
    ("char", "reason", "hint"),
    [
        (
            "\x00",
            "item contains a NUL byte (\\x00)",
            "identifiers are text: remove the NUL byte (is this a binary or UTF-16 file?)",
        ),
        *(
            (
                char,
                "item contains a control character",
                "identifiers are printable text: remove it (tabs and line ends separate fields)",
            )
            for char in ("\x07", "\x1b", "\x7f", "\x9b")
        ),
    ],
)
def test_nul_and_control_characters_are_refused_by_eval_as_by_ingest(
    migrated_db_url: str, write_file: Write, char: str, reason: str, hint: str
) -> None:
    """Issue 39: ``eval`` parses as strictly as ``ingest`` (both TREC fast paths included)."""
    qrels = write_file("qrels.txt", QRELS)
    run = write_file("run.trec", f"q1 Q0 d{char}1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n")
    expected = f"Error: {run}, line 1: {reason} (got {f'd{char}1'!r}); {hint}"
    assert one_error_line(*_eval(str(qrels), str(run), "-m", "AP")) == expected
    assert one_error_line(*_eval(str(qrels), str(run), str(run), "-m", "AP")) == expected
    assert one_error_line(*cli(migrated_db_url, "ingest", "run", str(run), "--system", "s")) == (
        expected
    )
    judged = write_file("judged.qrels", f"q1 0 d{char}1 2\n")
    assert f"Error: {judged}, line 1: {reason}" in _eval(str(judged), str(run), "-m", "AP")[2]


def test_invisible_characters_in_ids_are_warned_about_and_twins_refused(
    migrated_db_url: str, write_file: Write
) -> None:
    """Issue 39: zero-width and bidi controls: a warning naming the line; a preference whose
    two sides differ only by them is refused."""
    prefs = write_file("p.tsv", "query\twinner\tloser\nq1\td1\td2\nq1\td\u200b1\td2\n")
    code, out, err = cli(migrated_db_url, "ingest", "pairwise", str(prefs))
    assert code == 0 and out.startswith("stored 2 pairwise rows")
    assert err == (
        f"Warning: {prefs}, line 3: winner 'd\\u200b1' holds an invisible character (U+200B "
        "ZERO WIDTH SPACE); ids are compared exactly, so it is not 'd1' (the first such id of "
        "the file)\n"
    )
    twins = write_file("t.csv", "query,item_a,item_b,winner\nq1,d1,d\u202e1,a\n")
    assert one_error_line(*cli(migrated_db_url, "ingest", "pairwise", str(twins))) == (
        f"Error: {twins}, line 2: the two items differ only by invisible characters (U+202E "
        "RIGHT-TO-LEFT OVERRIDE) (got \"'d1' vs 'd\\\\u202e1'\"); remove the zero-width or "
        "bidi-control characters from the ids"
    )
    qrels = write_file("qrels.txt", QRELS)
    run = write_file("run.trec", "q1 Q0 d\u2066x 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n")
    code, _, err = _eval(str(qrels), str(run), "-m", "AP")
    assert code == 0
    assert f"Warning: {run}, line 1: item 'd\\u2066x' holds an invisible character (U+2066" in err


def test_the_tie_column_has_one_vocabulary(migrated_db_url: str, write_file: Write) -> None:
    """Issue 39: 1, 1.0, true, yes (any case, spaces around) are ties; 0, 0.0, false, no, empty
    are not; the same in TSV, CSV and JSON Lines; anything else is refused naming the line."""
    from orlbuild.services.databases import open_database
    from orlbuild.store import load_pairwise

    words = ["1", " 1", "1.0", "TRUE", " Yes", "0", "0.0", "false", "NO ", ""]
    tsv = "query\twinner\tloser\ttie\n" + "".join(
        f"q\td{i}\te{i}\t{w}\n" for i, w in enumerate(words)
    )
    csv = "query,winner,loser,tie\n" + "".join(f"r,d{i},e{i},{w}\n" for i, w in enumerate(words))
    jsonl = "".join(
        f'{{"query": "s", "winner": "d{i}", "loser": "e{i}", "tie": {w}}}\n'
        for i, w in enumerate(["true", "1", "1.0", "false", "0", "0.0"])
    )
    for name, text in (("t.tsv", tsv), ("t.csv", csv), ("t.jsonl", jsonl)):
        code, _, err = cli(migrated_db_url, "ingest", "pairwise", str(write_file(name, text)))
        assert code == 0, err
    engine = open_database(migrated_db_url, upgrade_if_empty=False)
    try:
        rows = load_pairwise(engine)
    finally:
        engine.dispose()
    ties = {q: part.sort_values("winner")["tie"].tolist() for q, part in rows.groupby("query")}
    assert ties["q"] == ties["r"] == [True] * 5 + [False] * 5
    assert ties["s"] == [True] * 3 + [False] * 3
    bad = write_file("bad.tsv", "query\twinner\tloser\ttie\nq\td1\td2\t0.5\n")
    assert one_error_line(*cli(migrated_db_url, "ingest", "pairwise", str(bad))) == (
        f"Error: {bad}, line 2: tie must be 0 or 1 (got '0.5'); use 1 (or 1.0, true, yes) for a "
        "tie, 0 (0.0, false, no or empty) for none"
    )


def test_invisible_characters_in_every_reader(migrated_db_url: str, write_file: Write) -> None:
    """Issue 39: listwise lists, run system names (the run ids) and text ids are checked as
    the pairwise ids are; a list holding two items that look the same stores nothing."""
    twins = write_file("l.tsv", "query\tannotator\titem\trank\nq1\ta\td1\t1\nq1\ta\td\u200d1\t2\n")
    assert one_error_line(*cli(migrated_db_url, "ingest", "listwise", str(twins))) == (
        f"Error: {twins}, line 3: one list holds two items that differ only by invisible "
        "characters (U+200D ZERO WIDTH JOINER) (got \"'d1' vs 'd\\\\u200d1'\"); remove the "
        "zero-width or bidi-control characters from the ids"
    )
    code, out, err = cli(migrated_db_url, "status", "--format", "json")
    assert code == 0 and json.loads(out) == {"collections": {}}, out  # nothing stored
    run = write_file("r.trec", "q1 Q0 d1 1 2.5 bm\u200b25\nq1 Q0 d2 2 1.5 bm\u200b25\n")
    code, out, err = cli(migrated_db_url, "ingest", "run", str(run), "--system-from", "tag")
    assert code == 0, err
    assert (
        f"Warning: {run}: system 'bm\\u200b25' holds an invisible character (U+200B ZERO WIDTH "
        "SPACE); names are compared exactly, so it is not 'bm25'"
    ) in err
    texts = write_file("items.tsv", "id\ttext\nd1\thello\nd\u2067x\tworld\n")
    code, out, err = cli(migrated_db_url, "ingest", "text", str(texts), "--of", "items", "--all")
    assert code == 0, err
    assert err == (
        f"Warning: {texts}, line 3: id 'd\\u2067x' holds an invisible character (U+2067 "
        "RIGHT-TO-LEFT ISOLATE); names are compared exactly, so it is not 'dx' (the first such "
        "id of the file)\n"
    )
