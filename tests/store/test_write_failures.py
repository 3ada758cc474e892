"""Every store write fails cleanly: one line naming the cause and the fix, nothing half-done.

Fault injection: every engine the commands open is made read-only at the
driver (``PRAGMA query_only`` on SQLite, ``default_transaction_read_only`` on
PostgreSQL), so the store raises on the first write of each command that
writes. Then real faults with small data and short timeouts: an SQLite lock
held by another connection, a full SQLite file (``max_page_count``), a
PostgreSQL connection killed in the middle of a build's write (retried once)
or closed by ``idle_session_timeout`` while the build computes (pre-ping), and
read-only stores that still serve every reading command.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url

import orlbuild.store.engine as engine_module
from orlbuild.store.schema import upgrade
from tests.pipeline_configs import pipeline_toml
from tests.store_cli import cli, cli_json, one_error_line
from tests.stores import disposed

LISTWISE = "query\titem\trank\n" + "".join(
    f"q{q}\t{item}\t{rank}\n" for q in range(1, 4) for rank, item in enumerate("abcd", 1)
)
RUN = "".join(f"q{q} Q0 {item} {rank} {10 - rank} r\n" for q in range(1, 4) for rank, item in
              enumerate("dcba", 1))  # fmt: skip


@pytest.fixture
def filled(migrated_db_url: str, tmp_path: Path) -> str:
    """A store with listwise judgments, a run, a build named ``b`` and a saved evaluation."""
    (tmp_path / "l.tsv").write_text(LISTWISE)
    (tmp_path / "r.trec").write_text(RUN)
    for args in (
        ("ingest", "listwise", str(tmp_path / "l.tsv")),
        ("ingest", "run", str(tmp_path / "r.trec"), "--system", "s1"),
        ("build", "--source", "listwise", "--name", "b"),
        ("score", "--build", "b", "--system", "s1", "-m", "nDCG@10", "--save"),
    ):
        code, _, err = cli(migrated_db_url, *args)
        assert code == 0, err
    (tmp_path / "l2.tsv").write_text(LISTWISE.replace("q1", "q9"))
    (tmp_path / "r2.trec").write_text(RUN.replace(" r\n", " other\n"))
    (tmp_path / "pipeline.toml").write_text(PIPELINE)
    return migrated_db_url


#: A pipeline that ingests, builds and scores (each a write).
PIPELINE = pipeline_toml(
    measure="nDCG@10", kind="listwise", judgments="l2.tsv", runs=[("r2.trec", "s2")], build="p"
)


def _snapshot(url: str) -> dict[str, Any]:
    return {
        "status": cli_json(url, "status"),
        "builds": [b["id"] for b in cli_json(url, "orl", "list")],
        "evaluations": [e["id"] for e in cli_json(url, "results", "list")["evaluations"]],
        "batches": [b["id"] for b in cli_json(url, "batches", "list")],
    }


@pytest.fixture
def read_only_driver(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every engine created from now on refuses writes at the driver."""
    real_create = engine_module.create_engine
    real_configure = engine_module._configure_sqlite

    def create(url: Any, **kwargs: Any) -> Engine:
        if make_url(str(url)).get_backend_name() == "postgresql":
            kwargs.setdefault("connect_args", {})["options"] = "-c default_transaction_read_only=on"
        return real_create(url, **kwargs)

    def configure(engine: Engine, **kwargs: Any) -> None:
        real_configure(engine, **kwargs)

        @event.listens_for(engine, "connect")
        def _query_only(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.execute("PRAGMA query_only = ON")

    monkeypatch.setattr(engine_module, "create_engine", create)
    monkeypatch.setattr(engine_module, "_configure_sqlite", configure)
    yield


WRITING_COMMANDS = {
    "ingest listwise": ("ingest", "listwise", "{tmp}/l2.tsv"),
    "ingest run": ("ingest", "run", "{tmp}/r2.trec", "--system", "s2"),
    "build": ("build", "--source", "listwise", "--name", "b2"),
    "score --save": ("score", "--build", "b", "--system", "s1", "-m", "nDCG@5", "--save"),
    "audit override": ("audit", "override", "b", "--query", "q1", "--merge-tiers", "1",
                       "--reason", "x"),
    "batches delete": ("batches", "delete", "2"),
    "pipeline": ("pipeline", "{tmp}/pipeline.toml"),
}  # fmt: skip


def test_a_store_that_raises_on_write_gives_one_line_and_stores_nothing(
    filled: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Each writing command in turn (one store: none of them may change it)."""
    before = _snapshot(filled)
    request.getfixturevalue("read_only_driver")
    for command, template in WRITING_COMMANDS.items():
        args = [a.replace("{tmp}", str(tmp_path)) for a in template]
        code, out, err = cli(filled, *args)
        if command == "pipeline":  # it names the database it uses first, then the error
            header, err = err.split("\n", 1)
            assert header.startswith("database: "), header
        one_error_line(code, out, err, "read-only", "writable")
        assert _snapshot(filled) == before, command
        if command in KEPT:
            KEPT[command](err, filled)


def test_db_upgrade_on_a_store_that_raises_on_write(db_url: str, read_only_driver: None) -> None:
    code, out, err = cli(db_url, "db", "upgrade")
    one_error_line(code, out, err, "read-only")
    with disposed(create_engine(db_url)) as engine, engine.connect() as connection:
        assert "alembic_version" not in connection.dialect.get_table_names(connection)


@pytest.fixture
def sqlite_filled(migrated_db_url: str, request: pytest.FixtureRequest) -> str:
    if not migrated_db_url.startswith("sqlite"):
        pytest.skip("an SQLite fault")
    return str(request.getfixturevalue("filled"))


def test_sqlite_lock_timeout_is_one_line(
    sqlite_filled: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _snapshot(sqlite_filled)
    monkeypatch.setattr(engine_module, "SQLITE_BUSY_TIMEOUT_MS", 200)
    holder = create_engine(sqlite_filled)
    for command in ("build", "audit override", "score --save", "ingest run"):
        try:
            with holder.connect() as connection:
                connection.exec_driver_sql("BEGIN IMMEDIATE")  # another process writing
                args = [a.replace("{tmp}", str(tmp_path)) for a in WRITING_COMMANDS[command]]
                started = time.perf_counter()
                code, out, err = cli(sqlite_filled, *args)
                assert time.perf_counter() - started < 30
                connection.exec_driver_sql("ROLLBACK")
        finally:
            holder.dispose()
        one_error_line(code, out, err, "write lock", "retry")
        assert _snapshot(sqlite_filled) == before, command
        if command in KEPT:
            KEPT[command](err, sqlite_filled)


def test_sqlite_disk_full_is_one_line(
    sqlite_filled: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _snapshot(sqlite_filled)
    big = tmp_path / "big.tsv"
    big.write_text(
        "query\titem\trank\n" + "".join(f"big{q}\titem{q}x{i}\t{i}\n" for q in range(200)
                                        for i in range(1, 40))
    )  # fmt: skip
    real_configure = engine_module._configure_sqlite

    def configure(engine: Engine, **kwargs: Any) -> None:
        real_configure(engine, **kwargs)

        @event.listens_for(engine, "connect")
        def _full(dbapi_connection: Any, _record: Any) -> None:
            pages = dbapi_connection.execute("PRAGMA page_count").fetchone()[0]
            dbapi_connection.execute(f"PRAGMA max_page_count = {pages + 2}")

    monkeypatch.setattr(engine_module, "_configure_sqlite", configure)
    code, out, err = cli(sqlite_filled, "ingest", "listwise", str(big))
    monkeypatch.setattr(engine_module, "_configure_sqlite", real_configure)
    one_error_line(code, out, err, "disk is full", "free some space")
    assert _snapshot(sqlite_filled) == before


@pytest.fixture
def pg_filled(migrated_db_url: str, request: pytest.FixtureRequest) -> str:
    if not migrated_db_url.startswith("postgresql"):
        pytest.skip("a PostgreSQL fault")
    return str(request.getfixturevalue("filled"))


def _kill_on_insert(engine: Engine, table: str, times: int, killed: list[int]) -> None:
    """Terminate the connection's backend at its INSERT into ``table``, ``times`` times in all."""
    admin = create_engine(engine.url, isolation_level="AUTOCOMMIT")

    @event.listens_for(engine, "before_cursor_execute")
    def _kill(connection: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith(f"INSERT INTO {table} ") and len(killed) < times:
            pid = cursor.connection.info.backend_pid
            with admin.connect() as other:
                other.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
            killed.append(int(pid))


#: Command -> (the table its write inserts into first, its list in the snapshot).
DROPPED = {
    "build": ("builds", "builds"),
    "score --save": ("evaluations", "evaluations"),
    "audit override": ("builds", "builds"),
}


@pytest.mark.parametrize("command", list(DROPPED))
@pytest.mark.parametrize("drops", [1, 2])
def test_a_dropped_postgres_connection_during_a_write(
    pg_filled: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drops: int, command: str
) -> None:
    """One drop: the write is retried and kept; two: one line, nothing stored, and the
    computed result saved to the file the line names."""
    import orlbuild.store.session as session_module

    before = _snapshot(pg_filled)
    real_create = session_module.create_store_engine
    killed: list[int] = []
    table, counted = DROPPED[command]

    def create(url: str, **kwargs: Any) -> Engine:
        engine = real_create(url, **kwargs)
        _kill_on_insert(engine, table, drops, killed)
        return engine

    monkeypatch.setattr(session_module, "create_store_engine", create)
    args = [a.replace("{tmp}", str(tmp_path)) for a in WRITING_COMMANDS[command]]
    code, out, err = cli(pg_filled, *args)
    monkeypatch.setattr(session_module, "create_store_engine", real_create)
    assert len(killed) == drops
    after = _snapshot(pg_filled)
    if drops == 1:
        assert code == 0, err
        assert len(after[counted]) == len(before[counted]) + 1
    else:
        one_error_line(code, out, err, "connection", "computed but not stored")
        assert after == before
        KEPT[command](err, pg_filled)


def _saved_file(err: str) -> Path:
    """The file the one-line error names."""
    return Path(re.search(r"saved in (\S+\.json)", err).group(1))  # type: ignore[union-attr]


def _kept_orls_are_an_orl_file(err: str, url: str) -> None:
    """The error names a JSON ORL file holding the computed build; `eval` reads it."""
    saved = _saved_file(err)
    document = json.loads(saved.read_text())
    assert document["build"]["stored"] is False and set(document["queries"]) == {"q1", "q2", "q3"}
    _eval_reads(saved, url)


def _kept_override_is_an_orl_file(err: str, url: str) -> None:
    """The overridden ORLs (query q1's tiers 1 and 2 merged) with their parent and override."""
    saved = _saved_file(err)
    assert "the override was computed but not stored" in err
    document = json.loads(saved.read_text())
    build = document["build"]
    assert build["stored"] is False and build["parent"] == 1 and build["name"] == "b"
    assert build["overrides"][-1]["action"] == "merge-tiers"
    assert build["overrides"][-1]["reason"] == "x"
    assert document["queries"]["q1"] == {"a": 1, "b": 1, "c": 2, "d": 3}  # tiers 1, 2 merged
    assert document["queries"]["q2"] == {"a": 1, "b": 2, "c": 3, "d": 4}
    _eval_reads(saved, url)


def _kept_scores_are_a_json_file(err: str, url: str) -> None:
    """The per-query scores the store refused, equal to what `score` prints."""
    saved = _saved_file(err)
    assert "the evaluation was computed but not stored" in err
    try:
        document = json.loads(saved.read_text())
        assert document["stored"] is False and document["system"] == "s1"
        assert document["build"]["name"] == "b"
        args = WRITING_COMMANDS["score --save"][:-1]
        printed = cli_json(url, *args, "--per-query")
        assert len(document["per_query"]) == 3  # {query: {measure: value}}, as `score` prints
        assert document["per_query"] == printed["per_query"]
    finally:
        saved.unlink()


#: Commands whose computation is kept in a file when the store refuses it.
KEPT = {
    "build": _kept_orls_are_an_orl_file,
    "score --save": _kept_scores_are_a_json_file,
    "audit override": _kept_override_is_an_orl_file,
}


def _eval_reads(saved: Path, url: str) -> None:
    """``orlbuild eval`` reads the saved file as its ORL file."""
    run = saved.with_suffix(".trec")
    run.write_text(RUN)
    try:
        code, out, err = cli(url, "eval", str(saved), str(run), "-m", "nDCG@3", "--format", "json")
        assert code == 0 and json.loads(out), err
    finally:
        saved.unlink()
        run.unlink()


def test_a_connection_closed_by_idle_session_timeout_is_replaced(
    pg_filled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build computes longer than the server keeps an idle connection open.

    Only the build runs under the 300 ms idle timeout: the snapshots before and
    after are taken without it, so that a read that a loaded machine stalls for
    300 ms between the pool's pre-ping and its query (a one-line error, see
    ``test_a_read_on_a_connection_closed_after_the_pre_ping_is_one_line``)
    cannot fail the check of the build.
    """
    before = _snapshot(pg_filled)
    name = make_url(pg_filled).database
    _set_idle_timeout(pg_filled, f"ALTER DATABASE \"{name}\" SET idle_session_timeout = '300ms'")
    import orlbuild.builders.build as build_module

    real = build_module.build_orls

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(1.0)  # the pooled connection is closed by the server meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(build_module, "build_orls", slow)
    code, _, err = cli(pg_filled, "build", "--source", "listwise", "--name", "slow")
    assert code == 0, err
    _set_idle_timeout(pg_filled, f'ALTER DATABASE "{name}" RESET idle_session_timeout')
    assert len(_snapshot(pg_filled)["builds"]) == len(before["builds"]) + 1


def _set_idle_timeout(url: str, statement: str) -> None:
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(statement))
    finally:
        admin.dispose()


def test_a_read_on_a_connection_closed_after_the_pre_ping_is_one_line(
    pg_filled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server closes the connection between the pool's pre-ping and the read's query
    (as a loaded machine can stall a process for longer than ``idle_session_timeout``):
    the read command says so in one line, no traceback."""
    import orlbuild.store.read as read_module

    real = read_module.connect

    @contextmanager
    def stalled(bind: Any) -> Iterator[Any]:
        with real(bind) as connection:
            pid = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
            _set_idle_timeout(pg_filled, f"SELECT pg_terminate_backend({pid})")
            yield connection

    monkeypatch.setattr(read_module, "connect", stalled)
    code, out, err = cli(pg_filled, "batches", "list")
    one_error_line(code, out, err, "server closed the connection")


READING_COMMANDS = (
    ("status",),
    ("orl", "list"),
    ("orl", "show", "b"),
    ("orl", "export", "b"),
    ("audit", "b"),
    ("results", "list"),
    ("results", "show", "1"),
    ("batches", "list"),
    ("score", "--build", "b", "--system", "s1", "-m", "nDCG@10"),
    ("quality", "b"),
)


def test_read_commands_work_on_a_read_only_store(filled: str, read_only_driver: None) -> None:
    for args in READING_COMMANDS:
        code, _, err = cli(filled, *args)
        assert code == 0, (args, err)


def test_mode_ro_uri_serves_reads_and_refuses_writes_in_one_line(
    sqlite_filled: str, tmp_path: Path
) -> None:
    path = make_url(sqlite_filled).database
    uri = f"sqlite:///file:{path}?mode=ro&uri=true"
    assert cli_json(uri, "status")["collections"]
    code, out, err = cli(uri, "build", "--source", "listwise")
    one_error_line(code, out, err, "read-only")


#: Runs a command as root without the capabilities that let root ignore file permissions,
#: so a read-only file in a read-only folder is read-only for it (these tests run as root).
WITHOUT_DAC = (
    "setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--inh-caps=-all",
)  # fmt: skip


def _permissions_apply(folder: Path) -> bool:
    """Whether a process started through :data:`WITHOUT_DAC` is refused a file in ``folder``."""
    if shutil.which("setpriv") is None:
        return False
    probe = subprocess.run([*WITHOUT_DAC, "touch", str(folder / "probe")], capture_output=True)
    created = (folder / "probe").exists()
    if created:
        (folder / "probe").unlink()
    return probe.returncode != 0 and not created


def _orlbuild(*args: str) -> subprocess.CompletedProcess[str]:
    """``orlbuild ARGS`` in a new process without the permission-bypassing capabilities."""
    command = [sys.executable, "-c", "from orlbuild.cli.main import run; run()", *args]
    return subprocess.run([*WITHOUT_DAC, *command], capture_output=True, text=True, timeout=120)


def test_a_read_only_store_in_a_read_only_folder(tmp_path: Path) -> None:
    """No ``-wal``/``-shm`` can be created there: the store opens immutable, creating nothing.

    Real permissions: the file is 0444 and its folder 0555, and the commands run
    in a process that file permissions stop (root without ``CAP_DAC_OVERRIDE``);
    reading commands work and create no file, a writing command is one line.
    """
    base = Path(tempfile.mkdtemp(prefix="orlbuild-ro-"))  # pytest's tmp_path is root's only
    folder = base / "ro"
    folder.mkdir()
    try:
        url = f"sqlite:///{folder / 's.db'}"
        upgrade(url)
        (base / "l.tsv").write_text(LISTWISE)
        assert cli(url, "ingest", "listwise", str(base / "l.tsv"))[0] == 0
        assert not list(folder.glob("s.db-*"))  # a clean close leaves the database file only
        (folder / "s.db").chmod(0o444)
        folder.chmod(0o555)
        base.chmod(0o755)
        if not _permissions_apply(folder):
            pytest.skip("cannot start a process that file permissions stop (setpriv)")
        done = _orlbuild("--db", url, "status", "--format", "json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["collections"]["default"]["listwise"] == 12
        for args in (("orl", "list"), ("batches", "list")):
            done = _orlbuild("--db", url, *args)
            assert done.returncode == 0, (args, done.stderr)
        done = _orlbuild("--db", url, "ingest", "listwise", str(base / "l.tsv"))
        one_error_line(done.returncode, done.stdout, done.stderr, "read-only")
        assert sorted(p.name for p in folder.iterdir()) == ["s.db"]
    finally:
        folder.chmod(0o755)
        shutil.rmtree(base)
