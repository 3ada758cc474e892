"""An annotator judges in Chromium with the keyboard (playwright-python; issue 34).

Logs in from the link, judges five pairs with the keys, undoes one, skips one; the
store then holds exactly what was pressed, with ``winner_first`` matching what was
shown. The screenshots are kept under ``ORLBUILD_ARTIFACTS`` (default: the test's
tmp folder), printed by the test, and used by docs/judging-in-the-browser.md.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from orlbuild.services import rounds, web_users
from tests.stores import store_engine
from tests.web.rounds_data import built_store

CHROMIUM = Path("/usr/bin/chromium")

pytest.importorskip("fastapi")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not CHROMIUM.exists():
    pytest.skip(f"no Chromium at {CHROMIUM}", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, object]]:
    """A server on a free loopback port over a built SQLite store with one open round."""
    import uvicorn

    from orlbuild.web.app import create_app

    url = f"sqlite:///{tmp_path / 'orlbuild.db'}"
    from orlbuild.store import upgrade

    upgrade(url)
    built_store(url, tmp_path)
    with store_engine(url) as engine:
        rounds.open_round(engine, "b", budget=8, per_pair=1)
        port = _free_port()
        server = uvicorn.Server(
            uvicorn.Config(create_app(engine), host="127.0.0.1", port=port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started
        try:
            yield f"http://127.0.0.1:{port}", engine
        finally:
            server.should_exit = True
            thread.join(timeout=20)


def _replaced(page, before: str | None) -> None:  # type: ignore[no-untyped-def]
    """Wait until HTMX swapped in another pair (a locator: the page's CSP forbids eval)."""
    page.locator(f'#pair:not([data-key="{before}"])').wait_for()


def _shown(page) -> tuple[str, str, str]:  # type: ignore[no-untyped-def]
    pair = page.locator("#pair")
    return (
        pair.get_attribute("data-query"),
        pair.get_attribute("data-left"),
        pair.get_attribute("data-right"),
    )


def test_an_annotator_judges_with_the_keyboard(served, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base, engine = served
    artifacts = Path(os.environ.get("ORLBUILD_ARTIFACTS", tmp_path / "artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    link = web_users.add_user(engine, "ann", "annotator", base_url=base).url
    pressed: list[tuple[str, str, str, str]] = []  # query, left, right, key
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        page.goto(link)
        page.click("#login")
        page.wait_for_url(f"{base}/judge")
        page.screenshot(path=str(artifacts / "judge.png"))
        for key in ("1", "ArrowRight", "0", "2", "ArrowLeft"):
            shown = _shown(page)
            before = page.locator("#pair").get_attribute("data-key")
            page.keyboard.press(key)
            _replaced(page, before)
            pressed.append((*shown, key))
        # undo the last one (ArrowLeft): its pair comes back, and is answered with 2
        before = page.locator("#pair").get_attribute("data-key")
        page.keyboard.press("u")
        _replaced(page, before)
        assert _shown(page) == pressed[-1][:3]
        page.screenshot(path=str(artifacts / "undo.png"))
        pressed[-1] = (*pressed[-1][:3], "2")
        before = page.locator("#pair").get_attribute("data-key")
        page.keyboard.press("2")
        _replaced(page, before)
        # skip one with a reason
        skipped = _shown(page)
        before = page.locator("#pair").get_attribute("data-key")
        page.keyboard.press("s")
        page.keyboard.type("both items are empty")
        page.keyboard.press("Enter")
        _replaced(page, before)
        page.goto(f"{base}/me")
        page.screenshot(path=str(artifacts / "me.png"), full_page=True)
        browser.close()
    print(f"screenshots in {artifacts}")
    closed = rounds.close_round(engine, 1)
    assert closed.batches["ann"][1] == 5
    verdict = {"1": "left", "ArrowLeft": "left", "2": "right", "ArrowRight": "right", "0": "tie"}
    expected = sorted((q, left, right, verdict[k]) for q, left, right, k in pressed)
    with engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT q.name, w.name, l.name, p.tie, p.winner_first "
                "FROM pairwise_judgments p JOIN ingest_batches b ON b.id = p.batch_id "
                "JOIN queries q ON q.id = p.query_id JOIN items w ON w.id = p.winner_id "
                "JOIN items l ON l.id = p.loser_id WHERE b.file_name = 'round-1-ann.tsv'"
            )
        ).all()
        skips = connection.execute(
            text("SELECT outcome, reason FROM web_judgments WHERE outcome = 'skip'")
        ).all()
    stored = []
    for query, winner, loser, tie, winner_first in rows:
        # shown first (left) is the winner when winner_first; for a tie, the first given
        left, right = (winner, loser) if winner_first else (loser, winner)
        outcome = "tie" if tie else ("left" if winner_first else "right")
        stored.append((query, left, right, outcome))
    assert sorted(stored) == expected
    assert [tuple(s) for s in skips] == [("skip", "both items are empty")]
    assert skipped[1:] not in [(left, right) for _, left, right, _ in stored]
