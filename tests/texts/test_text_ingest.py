"""``orlbuild ingest text``: every shape, filtering against the collection, no-op and replace,
bad input (issue 33; docs/input-formats.md, "Query and item text")."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import pytest

from orlbuild.services.texts import display_texts, text_fields
from orlbuild.store import list_collections
from orlbuild.store.texts import list_text_batches
from tests.store_cli import cli, one_error_line
from tests.stores import store_engine

#: Judgments naming queries q1, q2 and items d1..d3 (collection "default").
JUDGMENTS = "query\twinner\tloser\nq1\td1\td2\nq2\td2\td3\n"


@pytest.fixture
def judged(migrated_db_url: str, tmp_path: Path) -> str:
    """A store whose collection names q1, q2 and d1, d2, d3."""
    path = tmp_path / "judgments.tsv"
    path.write_text(JUDGMENTS)
    code, _, err = cli(migrated_db_url, "ingest", "pairwise", str(path))
    assert code == 0, err
    return migrated_db_url


def ingest(url: str, path: Path, *args: str) -> tuple[int, str, str]:
    return cli(url, "ingest", "text", str(path), *args)


def stored(url: str, of: str) -> dict[str, tuple[str | None, str | None, str | None]]:
    with store_engine(url) as engine:
        return text_fields(engine, "default", of)


def test_msmarco_collection_tsv_keeps_only_named_items(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "collection.tsv"
    path.write_text("d0\tnot judged\nd1\tfirst passage\nd9\tnot judged either\nd3\tthird\n")
    code, out, err = ingest(judged, path, "--of", "items")
    assert code == 0, err
    assert "4 lines read, 2 item texts kept, 2 skipped" in out
    assert "(read as tsv: id text): " in out and "stored as text batch" in out
    assert stored(judged, "items") == {
        "d1": (None, "first passage", None),
        "d3": (None, "third", None),
    }


def test_the_filter_finds_a_wanted_id_among_longer_ids_that_start_with_it(
    judged: str, tmp_path: Path
) -> None:
    """``d1`` is found by its offset in the block: not inside ``d10`` or ``d1x`` before it,
    and a repeat with the same text is counted once, with its line number right."""
    path = tmp_path / "collection.tsv"
    path.write_text("d10\tnot me\nd1x\tnor me\nd1\tthe one\nd2\tsecond\nd1\tthe one\nd11\tno\n")
    code, out, err = ingest(judged, path, "--of", "items")
    assert code == 0, err
    assert "6 lines read, 2 item texts kept, 4 skipped" in out
    assert stored(judged, "items") == {
        "d1": (None, "the one", None),
        "d2": (None, "second", None),
    }
    path.write_text("d10\tx\nd1\tthe one\nd1\tanother\n")
    one_error_line(*ingest(judged, path, "--of", "items"), "line 3", "'d1'", "first on line 2")


def test_all_keeps_every_item_and_creates_its_name(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "collection.tsv"
    path.write_text("d0\tnot judged\nd1\tfirst passage\n")
    code, out, err = ingest(judged, path, "--of", "items", "--all")
    assert code == 0, err
    assert "2 lines read, 2 item texts kept, 0 skipped" in out
    assert set(stored(judged, "items")) == {"d0", "d1"}


def test_queries_tsv_with_crlf_and_gzip(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "queries.tsv.gz"
    path.write_bytes(gzip.compress(b"q1\twhat is a <b>cat</b>\r\nq2\thow tall\r\nq7\tother\r\n"))
    code, _, err = ingest(judged, path, "--of", "queries")
    assert code == 0, err
    assert stored(judged, "queries") == {
        "q1": ("what is a <b>cat</b>", None, None),
        "q2": ("how tall", None, None),
    }


def test_title_tsv_is_sniffed_and_bz2_read(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "docs.data"  # no telling extension: the content decides
    path.write_bytes(bz2.compress(b"d1\tA title\tthe body\nd2\t\tno title\n"))
    code, out, err = ingest(judged, path, "--of", "items")
    assert code == 0, err
    assert "(read as title-tsv: id title text): " in out
    assert stored(judged, "items") == {
        "d1": ("A title", "the body", None),
        "d2": (None, "no title", None),
    }


def test_header_row_is_skipped(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "c.tsv"
    path.write_text("id\ttext\nd1\tone\n")
    code, _, err = ingest(judged, path, "--of", "items", "--all")
    assert code == 0, err
    assert set(stored(judged, "items")) == {"d1"}


def test_beir_corpus_and_queries_jsonl(judged: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        '{"_id": "d1", "title": "T1", "text": "body one", "metadata": {}}\n'
        '{"_id": "d5", "title": "", "text": "unjudged"}\n'
        "\n"
        '{"_id": "d2", "title": "", "text": "body two", "url": "https://x.org/2"}\n'
    )
    code, out, err = ingest(judged, corpus, "--of", "items")
    assert code == 0, err
    assert "(read as jsonl: one object a line): " in out and "2 item texts kept" in out
    assert stored(judged, "items") == {
        "d1": ("T1", "body one", None),
        "d2": (None, "body two", "https://x.org/2"),
    }
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "cats?", "metadata": {}}\n')
    assert ingest(judged, queries, "--of", "queries")[0] == 0
    assert stored(judged, "queries") == {"q1": ("cats?", None, None)}


def test_pyserini_and_ir_datasets_jsonl_keys(judged: str, tmp_path: Path) -> None:
    pyserini = tmp_path / "p.jsonl"
    pyserini.write_text('{"id": "d1", "contents": "pyserini text"}\n{"doc_id": "d2", "body": 2}\n')
    assert ingest(judged, pyserini, "--of", "items")[0] == 0
    assert stored(judged, "items") == {
        "d1": (None, "pyserini text", None),
        "d2": (None, "2", None),
    }
    topics = tmp_path / "q.jsonl"
    topics.write_text(
        '{"query_id": "q2", "title": "tall", "description": "How tall?", "narrative": "N."}\n'
    )
    assert ingest(judged, topics, "--of", "queries")[0] == 0
    assert stored(judged, "queries") == {"q2": ("tall", "How tall?", "N.")}


TOPICS = """<top>
<num> Number: q1
<title> International Organized Crime

<desc> Description:
Identify organizations that participate
in international criminal activity.

<narr> Narrative:
A relevant document must name the <i>organization</i>.
</top>

<top>
<num> Number: q9 </num>
<title> Not judged
</top>
"""


def test_trec_topic_file(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "topics.301-350"
    path.write_text(TOPICS)
    code, out, err = ingest(judged, path, "--of", "queries")
    assert code == 0, err
    assert (
        "(read as trec-topics: num title desc narr): " in out
        and "1 query texts kept, 1 skipped" in out
    )
    assert stored(judged, "queries") == {
        "q1": (
            "International Organized Crime",
            "Identify organizations that participate in international criminal activity.",
            "A relevant document must name the <i>organization</i>.",
        )
    }


def test_same_text_again_is_a_no_op(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "c.tsv"
    path.write_text("d1\tone\nd2\ttwo\n")
    assert ingest(judged, path, "--of", "items")[0] == 0
    other = tmp_path / "again.tsv"  # another file, the same texts
    other.write_text("d2\ttwo\nd1\tone\nd7\tseven\n")
    code, out, err = ingest(judged, other, "--of", "items")
    assert code == 0, err
    assert "already stored (2 unchanged), nothing to do" in out
    with store_engine(judged) as engine:
        assert len(list_text_batches(engine)) == 1


def test_a_new_text_for_a_stored_id_is_refused_then_replaced(judged: str, tmp_path: Path) -> None:
    first = tmp_path / "c.tsv"
    first.write_text("d1\tone\nd2\ttwo\n")
    assert ingest(judged, first, "--of", "items")[0] == 0
    changed = tmp_path / "c2.tsv"
    changed.write_text("d1\tone\nd2\tTWO, revised\nd3\tthree\n")
    err = one_error_line(*ingest(judged, changed, "--of", "items"), "'d2'", "--replace", "line 2")
    assert "c2.tsv" in err
    assert stored(judged, "items")["d2"] == (None, "two", None)
    assert "d3" not in stored(judged, "items")  # nothing of the refused file was stored
    code, out, err = ingest(judged, changed, "--of", "items", "--replace")
    assert code == 0, err
    assert "1 new, 1 replaced, 1 unchanged" in out
    assert stored(judged, "items")["d2"] == (None, "TWO, revised", None)
    with store_engine(judged) as engine:
        batches = list_text_batches(engine)
    assert list(batches["row_count"]) == [2, 2]
    # deleting the replacing batch brings the replaced text back: nothing was lost
    newest = int(batches["id"].max())
    code, out, err = cli(judged, "batches", "delete", str(newest), "--text")
    assert code == 0, err
    assert stored(judged, "items") == {"d1": (None, "one", None), "d2": (None, "two", None)}


def test_batches_list_shows_text_batches(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "c.tsv"
    path.write_text("d1\tone\n")
    assert ingest(judged, path, "--of", "items")[0] == 0
    code, out, err = cli(judged, "batches", "list", "--format", "csv")
    assert code == 0, err
    kinds = [line.split(",")[2] for line in out.splitlines()[1:]]
    assert kinds == ["pairwise", "text"]


def test_a_collection_that_names_nothing_keeps_nothing(migrated_db_url: str, tmp_path) -> None:
    path = tmp_path / "c.tsv"
    path.write_text("d1\tone\n")
    code, out, err = ingest(migrated_db_url, path, "--of", "items")
    assert code == 0, err
    assert "nothing stored" in out and "--all" in out
    with store_engine(migrated_db_url) as engine:
        assert list_collections(engine) == []  # a file that keeps nothing creates no collection


def test_display_text_of_an_item_joins_title_and_text(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "c.tsv"
    path.write_text("d1\tTitle\tBody\nd2\t\tOnly body\n")
    assert ingest(judged, path, "--of", "items", "--format", "title-tsv")[0] == 0
    with store_engine(judged) as engine:
        assert display_texts(engine, "default", "items") == {
            "d1": "Title: Body",
            "d2": "Only body",
        }


@pytest.mark.parametrize(
    ("content", "args", "words"),
    [
        (b"d1\tone\nd2\n", ("--all",), ("line 2", "too few fields", "'d2'")),
        (b"d1\tone\nd2\n", (), ("line 2", "too few fields", "'d2'")),  # d2 is named: kept
        (b"d1\tone\n\tno id\n", ("--all",), ("line 2", "empty id", "no id")),
        (b"d1\tone\nd2\ttwo\nd1\tuno\n", (), ("line 3", "'d1'", "first on line 1")),
        (b"d1\tone\nd2\ttw\xff\n", (), ("line 2", "UTF-8", "xff")),
        (b"d1\tone\nd2\ttw\xff\n", ("--all",), ("line 2", "UTF-8", "xff")),
        (b"d1\tT\tx\nd2\tT2\n", ("--format", "title-tsv"), ("line 2", "id<TAB>title<TAB>text")),
        (b'{"_id": "d1", "text": "a"}\n{"_id": "d2"\n', (), ("line 2", "JSON")),
        (b'{"_id": "d1", "text": "a"}\n{"_id": "d2", "title": "t"}\n', (), ("line 2", "no text")),
        (b'{"text": "a"}\n', (), ("line 1", "no id", "_id")),
        (b"<top>\n<num> Number: q1\n<title> x\n", ("--of", "queries"), ("line 1", "not closed")),
        (b"<top>\n<title> x\n</top>\n", ("--of", "queries"), ("line 1", "empty id")),
    ],
)
def test_bad_input_is_one_line_naming_file_line_value_and_stores_nothing(
    judged: str, tmp_path: Path, content: bytes, args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    of = () if "--of" in args else ("--of", "items")
    one_error_line(*ingest(judged, path, *of, *args), "bad.txt", *words)
    assert stored(judged, "items") == {} and stored(judged, "queries") == {}


def test_an_over_long_line_is_refused(judged: str, tmp_path: Path) -> None:
    from orlbuild.ingest.source import MAX_LINE_CHARS

    path = tmp_path / "long.tsv"
    path.write_bytes(b"d1\tone\nd2\t" + b"x" * (MAX_LINE_CHARS + 10) + b"\nd3\tthree\n")
    one_error_line(*ingest(judged, path, "--of", "items"), "long.tsv", "line 2", "longer than")
    assert stored(judged, "items") == {}


def test_a_line_just_under_the_limit_across_blocks_is_read(judged: str, tmp_path: Path) -> None:
    from orlbuild.ingest.source import MAX_LINE_CHARS

    long_text = "é" * (MAX_LINE_CHARS - 10)  # more bytes than the limit, fewer characters
    path = tmp_path / "long.tsv"
    path.write_text(f"d1\tone\nd2\t{long_text}\nd3\tthree\n", encoding="utf-8")
    code, _, err = ingest(judged, path, "--of", "items")
    assert code == 0, err
    assert stored(judged, "items")["d2"] == (None, long_text, None)
    assert stored(judged, "items")["d3"] == (None, "three", None)


def test_trec_topics_of_items_is_refused(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "topics.txt"
    path.write_text(TOPICS)
    one_error_line(*ingest(judged, path, "--of", "items"), "topics.txt", "queries")


def test_multi_member_gzip_with_bom_is_read_whole(judged: str, tmp_path: Path) -> None:
    path = tmp_path / "c.tsv.gz"
    path.write_bytes(gzip.compress("\ufeffd1\tone\n".encode()) + gzip.compress(b"d2\ttwo\n"))
    code, _, err = ingest(judged, path, "--of", "items")
    assert code == 0, err
    assert stored(judged, "items") == {"d1": (None, "one", None), "d2": (None, "two", None)}


def test_a_truncated_or_damaged_gzip_is_refused(judged: str, tmp_path: Path) -> None:
    whole = gzip.compress(b"".join(b"d%d\tpassage %d\n" % (i, i) for i in range(5000)))
    path = tmp_path / "cut.tsv.gz"
    path.write_bytes(whole[: len(whole) // 2])
    one_error_line(*ingest(judged, path, "--of", "items"), "cut.tsv.gz", "decompress")
    damaged = tmp_path / "bad.tsv.gz"
    damaged.write_bytes(whole[:20] + b"\xff" * 50 + whole[70:])
    one_error_line(*ingest(judged, damaged, "--of", "items"), "bad.tsv.gz", "decompress")
    assert stored(judged, "items") == {}


def test_standard_input(judged: str) -> None:
    from tests.ingest.conftest import run_cli

    result = run_cli(judged, "ingest", "text", "-", "--of", "items", stdin=b"d1\tfrom stdin\n")
    assert result.exit_code == 0, result.output
    assert stored(judged, "items") == {"d1": (None, "from stdin", None)}


def test_jsonl_filter_keeps_escaped_and_numeric_ids(judged: str, tmp_path: Path) -> None:
    filler = "".join(f'{{"_id": "x{i}", "text": "other \\"{i}\\""}}\n' for i in range(3000))
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        filler
        + '{"_id": "d\\u0031", "text": "escaped id"}\n'  # d1, written with an escape
        + filler
        + '{"text": "id last", "metadata": {"id": "zz"}, "_id": "d2"}\n'
        + filler
    )
    code, out, err = ingest(judged, path, "--of", "items")
    assert code == 0, err
    assert "9,002 lines read, 2 item texts kept, 9,000 skipped" in out
    assert stored(judged, "items") == {
        "d1": (None, "escaped id", None),
        "d2": (None, "id last", None),
    }
