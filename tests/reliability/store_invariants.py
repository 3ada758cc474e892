"""What a store must hold after any interruption: nothing half done (docs/reliability.md,
"Interrupted commands").

:func:`half_done` lists every violation it finds, in words, so that a failing round names
what was left behind:

- an ingest batch whose fact rows are not all there (``row_count`` differs from the rows
  of its kind carrying its id), a batch still ``pending`` (its hash is written last, in the
  same transaction), a run batch without its system;
- fact rows of no batch, or naming a query, item, annotator or system that is not stored;
- a build without its ORLs (distinct ORL queries differ from ``n_queries``) or without the
  batches it read; ORL, posterior, message or reliability rows of no build;
- an evaluation without all its per-query values (``n_queries`` x measures);
- a text batch without its texts;
- an Alembic revision this orlbuild does not ship.
"""

from __future__ import annotations

from sqlalchemy import Connection, inspect, text

from orlbuild.store import create_store_engine
from orlbuild.store.schema import is_known_revision
from tests.stores import disposed

__all__ = ["half_done", "revision", "row_counts", "schema_snapshot"]

#: Fact table of each batch kind, with its name references (column -> name table).
FACTS = {
    "pairwise": (
        "pairwise_judgments",
        {
            "query_id": "queries",
            "annotator_id": "annotators",
            "winner_id": "items",
            "loser_id": "items",
        },
    ),
    "listwise": (
        "listwise_judgments",
        {"query_id": "queries", "annotator_id": "annotators", "item_id": "items"},
    ),
    "graded": (
        "graded_judgments",
        {"query_id": "queries", "annotator_id": "annotators", "item_id": "items"},
    ),
    "run": ("run_entries", {"query_id": "queries", "item_id": "items", "system_id": "systems"}),
}

#: Tables whose rows belong to one build.
BUILD_ROWS = (
    "orl_entries",
    "query_posteriors",
    "posterior_boundaries",
    "tie_decisions",
    "annotator_reliabilities",
    "build_overrides",
    "build_messages",
    "build_batches",
)


def _rows(connection: Connection, sql: str) -> list[tuple[object, ...]]:
    return [tuple(row) for row in connection.execute(text(sql))]


def _orphans(connection: Connection, table: str, key: str, parents: str, what: str) -> list[str]:
    """Rows of ``table`` whose ``key`` names no row of ``parents``."""
    count = _rows(
        connection,
        f"SELECT COUNT(*) FROM {table} t WHERE NOT EXISTS "
        f"(SELECT 1 FROM {parents} p WHERE p.id = t.{key})",
    )[0][0]
    return [f"{count} {table} rows of no {what}"] if count else []


def _batch_problems(connection: Connection) -> list[str]:
    found = []
    for kind, (table, refs) in FACTS.items():
        for batch, stored, actual in _rows(
            connection,
            f"SELECT b.id, b.row_count, (SELECT COUNT(*) FROM {table} f WHERE f.batch_id = b.id) "
            f"FROM ingest_batches b WHERE b.kind = '{kind}'",
        ):
            if stored != actual:
                found.append(f"{kind} batch {batch} says {stored} rows, {actual} are stored")
        orphans = _rows(
            connection,
            f"SELECT DISTINCT f.batch_id FROM {table} f WHERE NOT EXISTS "
            f"(SELECT 1 FROM ingest_batches b WHERE b.id = f.batch_id AND b.kind = '{kind}')",
        )
        if orphans:
            found.append(f"{table} rows of no {kind} batch: batch ids {sorted(orphans)}")
        for column, names in refs.items():
            dangling = _rows(
                connection,
                f"SELECT COUNT(*) FROM {table} f WHERE NOT EXISTS "
                f"(SELECT 1 FROM {names} n WHERE n.id = f.{column})",
            )[0][0]
            if dangling:
                found.append(f"{dangling} {table} rows name a missing {column} ({names})")
    pending = _rows(connection, "SELECT id FROM ingest_batches WHERE sha256 LIKE 'pending%'")
    if pending:
        found.append(f"batches still pending (hash never written): {pending}")
    systemless = _rows(
        connection, "SELECT id FROM ingest_batches WHERE kind = 'run' AND system_id IS NULL"
    )
    if systemless:
        found.append(f"run batches without a system: {systemless}")
    return found


def _build_problems(connection: Connection) -> list[str]:
    found = []
    for build, queries, orl_queries, batches in _rows(
        connection,
        "SELECT b.id, b.n_queries, "
        "(SELECT COUNT(DISTINCT o.query) FROM orl_entries o WHERE o.build_id = b.id), "
        "(SELECT COUNT(*) FROM build_batches r WHERE r.build_id = b.id) FROM builds b",
    ):
        if queries != orl_queries:
            found.append(f"build {build} says {queries} queries, has ORLs of {orl_queries}")
        if not batches:
            found.append(f"build {build} records no batch it read")
    for table in BUILD_ROWS:
        found.extend(_orphans(connection, table, "build_id", "builds", "build"))
    return found


def _evaluation_problems(connection: Connection) -> list[str]:
    import json

    found = []
    for evaluation, queries, measures, values in _rows(
        connection,
        "SELECT e.id, e.n_queries, e.measures, "
        "(SELECT COUNT(*) FROM evaluation_values v WHERE v.evaluation_id = e.id) "
        "FROM evaluations e",
    ):
        names = json.loads(measures) if isinstance(measures, str) else measures
        assert isinstance(names, list)
        if values != int(str(queries)) * len(names):
            found.append(
                f"evaluation {evaluation} of {queries} queries x {len(names)} measures "
                f"holds {values} values"
            )
    found.extend(
        _orphans(connection, "evaluation_values", "evaluation_id", "evaluations", "evaluation")
    )
    return found


def _text_problems(connection: Connection) -> list[str]:
    found = []
    for batch, stored, actual in _rows(
        connection,
        "SELECT b.id, b.row_count, "
        "(SELECT COUNT(*) FROM query_texts q WHERE q.batch_id = b.id) + "
        "(SELECT COUNT(*) FROM item_texts i WHERE i.batch_id = b.id) FROM text_batches b",
    ):
        if stored != actual:
            found.append(f"text batch {batch} says {stored} texts, {actual} are stored")
    return found


def half_done(url: str) -> list[str]:
    """Every sign of a half-done write in the store at ``url`` (empty: consistent).

    Parameters
    ----------
    url
        A store at any revision from ``0015_posterior_evidence`` on (the tables checked
        exist in every such revision).

    Returns
    -------
    list of str
        One sentence per violation, as listed in the module docstring.
    """
    with disposed(create_store_engine(url)) as engine, engine.connect() as connection:
        revisions = [r for (r,) in _rows(connection, "SELECT version_num FROM alembic_version")]
        found = [f"unknown revision {r!r}" for r in revisions if not is_known_revision(str(r))]
        if len(revisions) != 1:
            found.append(f"alembic_version holds {len(revisions)} rows")
        for check in (_batch_problems, _build_problems, _evaluation_problems, _text_problems):
            found.extend(check(connection))
        return found


def row_counts(url: str) -> dict[str, int]:
    """Rows of every table of the store at ``url`` (``alembic_version`` included)."""
    with disposed(create_store_engine(url)) as engine, engine.connect() as connection:
        tables = inspect(connection).get_table_names()
        return {
            table: int(connection.execute(text(f'SELECT COUNT(*) FROM "{table}"')).scalar_one())
            for table in sorted(tables)
        }


def schema_snapshot(url: str) -> dict[str, object]:
    """The schema of the store at ``url``: each table's columns (name, type, nullability),
    indexes, unique constraints and foreign keys; on SQLite every ``CREATE`` statement too
    (``AUTOINCREMENT`` shows only there)."""
    with disposed(create_store_engine(url)) as engine, engine.connect() as connection:
        seen = inspect(connection)
        snapshot: dict[str, object] = {}
        for table in sorted(seen.get_table_names()):
            snapshot[table] = (
                [(c["name"], str(c["type"]), c["nullable"]) for c in seen.get_columns(table)],
                sorted(
                    (i["name"] or "", tuple(i["column_names"])) for i in seen.get_indexes(table)
                ),
                sorted(
                    (u["name"] or "", tuple(u["column_names"]))
                    for u in seen.get_unique_constraints(table)
                ),
                sorted(
                    (tuple(f["constrained_columns"]), f["referred_table"])
                    for f in seen.get_foreign_keys(table)
                ),
            )
        if connection.dialect.name == "sqlite":
            # a batch-mode rebuild may list a table's constraints in another order
            snapshot["sqlite_master"] = [
                (kind, name, sorted(line.strip().rstrip(",") for line in str(sql).splitlines()))
                for kind, name, sql in _rows(
                    connection,
                    "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
                    "ORDER BY type, name",
                )
            ]
        return snapshot


def revision(url: str) -> str:
    """The Alembic revision of the store at ``url``."""
    with disposed(create_store_engine(url)) as engine, engine.connect() as connection:
        return str(connection.execute(text("SELECT version_num FROM alembic_version")).scalar())
