"""``orlbuild serve`` under a team's load: 20 annotators judging at once over HTTP (issue 34).

Setup: a fresh PostgreSQL database on the server of ``$ORLBUILD_TEST_PG_URL``, a
small pairwise build, and one open round of ``--assignments`` synthetic pairs
(default 10,000, one slot each). The server runs in its own process on a free
loopback port; ``--annotators`` client threads (default 20), each logged in from
its own link, loop: ask for the next pair (``GET /judge`` as HTMX does), answer it
(``POST /judge/answer``), until nothing is left. Reported: median and p99
latency of "next pair" and "submit" (targets 20 ms and 100 ms), throughput in
judgments per second, and the check that every assignment was judged exactly
as often as asked (none lost, none twice).

Run: ``PYTHONPATH=. python tests/benchmarks/bench_serve.py [--assignments N] [--annotators K]``.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from orlbuild.services import web_users
from orlbuild.store import open_store, upgrade
from orlbuild.store.rounds import NewAssignment, create_round
from tests.web.rounds_data import built_store

_KEY = re.compile(r'data-key="([0-9a-f]+)"')

SERVER = (
    "import sys, uvicorn\n"
    "from orlbuild.store import open_store\n"
    "from orlbuild.web.app import create_app\n"
    "engine = open_store(sys.argv[1])\n"
    "uvicorn.run(create_app(engine, secret='bench'), host='127.0.0.1', port=int(sys.argv[2]),"
    " log_level='warning', access_log=False)\n"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _fresh_database(server_url: str) -> str:
    name = f"orlbuild_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return server_url.rsplit("/", 1)[0] + "/" + name


def _drop_database(server_url: str, url: str) -> None:
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)'))
    admin.dispose()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--assignments", type=int, default=10_000)
    parser.add_argument("--annotators", type=int, default=20)
    args = parser.parse_args()
    server_url = os.environ.get("ORLBUILD_TEST_PG_URL")
    if not server_url:
        sys.exit("bench_serve needs ORLBUILD_TEST_PG_URL (a PostgreSQL server)")
    url = _fresh_database(server_url)
    port = _free_port()
    server = None
    try:
        upgrade(url)
        with tempfile.TemporaryDirectory() as folder:
            built_store(url, Path(folder))
        engine = open_store(url)
        items = [f"x{i:05d}" for i in range(args.assignments + 1)]
        create_round(
            engine,
            build_id=1,
            collection="default",
            budget=args.assignments,
            per_pair=1,
            gold_rate=None,
            created_by="bench",
            now=datetime.now(timezone.utc),
            assignments=[
                NewAssignment("q0", items[i], items[i + 1], "bench", 1)
                for i in range(args.assignments)
            ],
        )
        tokens = [
            web_users.add_user(engine, f"a{k:02d}", "annotator").url.rsplit("/", 1)[1]
            for k in range(args.annotators)
        ]
        server = subprocess.Popen([sys.executable, "-c", SERVER, url, str(port)])
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/static/judge.js", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        next_ms: list[float] = []
        submit_ms: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()
        start = threading.Barrier(args.annotators)

        def annotator(token: str) -> None:
            with httpx.Client(base_url=base, timeout=30) as client:
                client.post("/login", data={"token": token})
                csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/me").text)
                assert csrf is not None
                own_next, own_submit = [], []
                start.wait()
                while True:
                    t0 = time.perf_counter()
                    page = client.get("/judge", headers={"HX-Request": "true"})
                    own_next.append((time.perf_counter() - t0) * 1000)
                    match = _KEY.search(page.text)
                    if match is None:
                        break
                    t0 = time.perf_counter()
                    answer = client.post(
                        "/judge/answer",
                        data={"csrf": csrf.group(1), "key": match.group(1), "choice": "left"},
                    )
                    own_submit.append((time.perf_counter() - t0) * 1000)
                    if answer.status_code != 303:
                        with lock:
                            errors.append(f"{answer.status_code}: {answer.text[:200]}")
            with lock:
                next_ms.extend(own_next)
                submit_ms.extend(own_submit)

        threads = [threading.Thread(target=annotator, args=(t,)) for t in tokens]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - began
        with engine.connect() as connection:
            counts = connection.execute(
                text(
                    "SELECT a.slots, count(j.id) FROM web_assignments a LEFT JOIN web_judgments j "
                    "ON j.assignment_id = a.id AND j.outcome = 'left' GROUP BY a.id, a.slots"
                )
            ).all()
        engine.dispose()
        wrong = sum(1 for slots, judged in counts if slots != judged)
        print(
            f"{args.annotators} annotators, {args.assignments} assignments, PostgreSQL, "
            f"loopback HTTP, server in one process"
        )
        print(
            f"next pair: median {statistics.median(next_ms):.1f} ms, "
            f"p99 {_percentile(next_ms, 0.99):.1f} ms (target 20 / 100 ms)"
        )
        print(
            f"submit:    median {statistics.median(submit_ms):.1f} ms, "
            f"p99 {_percentile(submit_ms, 0.99):.1f} ms (target 20 / 100 ms)"
        )
        print(f"throughput: {len(submit_ms) / elapsed:.1f} judgments/s over {elapsed:.1f} s")
        print(
            f"assignments judged other than asked: {wrong} of {len(counts)}; "
            f"refused submits: {len(errors)}"
        )
        if wrong or errors:
            sys.exit(1)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        _drop_database(server_url, url)


if __name__ == "__main__":
    main()
