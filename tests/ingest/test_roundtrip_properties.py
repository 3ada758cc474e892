"""Property: whatever identifiers a CSV writer can quote come back from the store unchanged.

CSV and quoted TSV (every header field quoted) follow the csv module's quoting;
a plain TSV has no quoting, so its quotes come back as they were written.
"""

from __future__ import annotations

import csv
import io
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orlbuild.services.ingests import ingest_file
from orlbuild.store import load_pairwise
from tests.ingest.conftest import pairwise_tuples
from tests.stores import store_engine

# Printable identifiers, commas, quotes, tabs and non-ASCII included; no surrounding
# whitespace (it is stripped by design) and no line breaks.
identifiers = (
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85"
        ),
        min_size=1,
        max_size=12,
    )
    .map(str.strip)
    .filter(bool)
)

preferences = st.lists(
    st.tuples(identifiers, identifiers, identifiers, identifiers, st.booleans()).filter(
        lambda row: row[2] != row[3]
    ),
    min_size=1,
    max_size=30,
)

_collections = itertools.count()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(rows=preferences, style=st.sampled_from(["csv", "quoted-tsv", "tsv"]), crlf=st.booleans())
def test_pairwise_rows_round_trip(
    migrated_db_url: str, rows: list[tuple[str, str, str, str, bool]], style: str, crlf: bool
) -> None:
    end = "\r\n" if crlf else "\n"
    header = ["query", "annotator", "winner", "loser", "tie"]
    buffer = io.StringIO()
    body = [(q, a, w, lo, int(t)) for q, a, w, lo, t in rows]
    if style == "tsv":  # no quoting: quotes are data, tabs cannot occur
        rows = [tuple(f.replace("\t", " ").strip() or "x" for f in r[:4]) + r[4:] for r in rows]
        rows = [r for r in rows if r[2] != r[3]] or [("q", "a", "w", "l", False)]
        body = [(q, a, w, lo, int(t)) for q, a, w, lo, t in rows]
        buffer.write(end.join("\t".join(map(str, r)) for r in [header, *body]) + end)
    else:
        delimiter = "," if style == "csv" else "\t"
        quoting = csv.QUOTE_MINIMAL if style == "csv" else csv.QUOTE_ALL
        csv.writer(buffer, delimiter=delimiter, lineterminator=end, quoting=quoting).writerow(
            header
        )
        writer = csv.writer(buffer, delimiter=delimiter, lineterminator=end)
        writer.writerows(body)
    delimiter = "," if style == "csv" else "\t"
    collection = f"c{next(_collections)}"  # one database, a fresh namespace per example
    with store_engine(migrated_db_url) as engine:
        ingest_file(
            engine,
            "pairwise",
            "rows.csv" if delimiter == "," else "rows.tsv",
            collection=collection,
            stream=io.BytesIO(buffer.getvalue().encode("utf-8")),
        )
        frame = load_pairwise(engine, collection)
    assert pairwise_tuples(frame) == sorted(rows)
