"""Security of ``orlbuild serve``: each test asserts a refusal (issue 34;
docs/judging-in-the-browser.md, "What each role may do")."""

from __future__ import annotations

import logging
import re
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from orlbuild.services import rounds, web_users
from orlbuild.store import create_store_engine
from tests.stores import store_engine
from tests.web.rounds_data import built_store
from tests.web.web_clients import app_client, link_token, log_in, logged_in

pytest.importorskip("fastapi")

_KEY = re.compile(r'data-key="([0-9a-f]+)"')


@pytest.fixture
def engine(migrated_db_url: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    built_store(migrated_db_url, tmp_path)
    with store_engine(migrated_db_url) as engine:
        rounds.open_round(engine, "b", budget=4, per_pair=2)
        yield engine


def _page_routes() -> list[tuple[str, str]]:
    """Every route but the login pages and the static files: (method, path)."""
    from orlbuild.web import api, judge_pages, lead_pages, login_pages

    found = []
    routes = [r for m in (login_pages, judge_pages, lead_pages, api) for r in m.router.routes]
    for route in routes:
        path = getattr(route, "path", "")
        if path.startswith(("/login", "/static", "/logged-out")):
            continue
        for method in sorted(getattr(route, "methods", ()) or ()):
            if method != "HEAD":
                found.append((method, path.replace("{round_id}", "1")))
    return found


def test_no_page_or_api_answers_without_a_session_or_token(engine) -> None:  # type: ignore[no-untyped-def]
    routes = _page_routes()
    assert len(routes) >= 10
    with app_client(engine) as client:
        for method, path in routes:
            answer = client.request(method, path, data={"key": "x", "choice": "left"})
            assert answer.status_code == 401, (method, path, answer.status_code)
        for path in ("/api/me", "/api/judgments", "/api/rounds"):
            answer = client.get(path, headers={"Authorization": "Bearer not-a-token"})
            assert answer.status_code == 401 and "detail" in answer.json()
        client.cookies.set("orlbuild_session", "forged.value.here")
        assert client.get("/judge").status_code == 401


def test_api_token_answers_only_its_user(engine) -> None:  # type: ignore[no-untyped-def]
    web_users.add_user(engine, "ann", "annotator")
    token = web_users.api_token(engine, "ann")
    with app_client(engine) as client:
        answer = client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
        assert answer.json() == {"name": "ann", "role": "annotator"}
        web_users.disable_user(engine, "ann")
        assert (
            client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401
        )


def test_an_annotator_cannot_reach_another_judgments_or_the_lead_pages(engine) -> None:  # type: ignore[no-untyped-def]
    with logged_in(engine, "ann") as ann, logged_in(engine, "bob") as bob:
        key = _KEY.search(ann.client.get("/judge").text).group(1)  # type: ignore[union-attr]
        ann.post("/judge/answer", {"key": key, "choice": "left"})
        # bob answers or corrects ann's judgment by its key: refused, ann's stays
        assert bob.post("/judge/answer", {"key": key, "choice": "right"}).status_code == 404
        assert bob.post("/me/correct", {"key": key, "choice": "right"}).status_code == 404
        assert key not in bob.client.get("/me").text
        (mine,) = rounds.my_judgments(engine, web_users.find_web_user(engine, "ann"))  # type: ignore[attr-defined]
        assert mine.outcome == "left"
        assert bob.client.get("/rounds").status_code == 403
        assert bob.post("/rounds/open", {"build": "b", "budget": "2"}).status_code == 403
        assert bob.post("/rounds/1/close").status_code == 403
        assert [r.status for r in rounds.all_rounds(engine)] == ["open"]


def test_a_form_without_its_csrf_token_is_refused(engine) -> None:  # type: ignore[no-untyped-def]
    with logged_in(engine, "lea", "lead") as lea:
        key = _KEY.search(lea.client.get("/judge").text).group(1)  # type: ignore[union-attr]
        for path, data in (
            ("/judge/answer", {"key": key, "choice": "left"}),
            ("/judge/undo", {}),
            ("/rounds/1/close", {}),
            ("/rounds/open", {"build": "b", "budget": "2"}),
        ):
            assert lea.client.post(path, data=data).status_code == 403, path
            wrong = {**data, "csrf": "x" + lea.csrf}
            assert lea.client.post(path, data=wrong).status_code == 403, path
        assert rounds.my_judgments(engine, web_users.find_web_user(engine, "lea")) == []  # type: ignore[attr-defined]
        assert [r.status for r in rounds.all_rounds(engine)] == ["open"]


def test_a_reused_or_expired_login_link_is_refused(engine) -> None:  # type: ignore[no-untyped-def]
    token = link_token(engine, "ann")
    with app_client(engine) as first:
        log_in(first, "ann", token)
    with app_client(engine) as second:
        again = second.post("/login", data={"token": token})
        assert again.status_code == 401 and "used or expired" in again.text
        assert "orlbuild_session" not in again.headers.get("set-cookie", "")
    expired = web_users.login_link(engine, "ann", hours=1).url.rsplit("/", 1)[1]
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE web_login_links SET expires_at = :t WHERE token_hash = :h"),
            {"t": rounds._now() - timedelta(minutes=1), "h": web_users.token_hash(expired)},
        )
    with app_client(engine) as third:
        assert third.post("/login", data={"token": expired}).status_code == 401
        assert third.get("/judge").status_code == 401


def test_html_and_script_in_texts_render_as_text(engine) -> None:  # type: ignore[no-untyped-def]
    with logged_in(engine, "ann") as ann:
        page = ann.client.get("/judge").text
    assert "<script>alert(" not in page and "<b>" not in page and "<i>better" not in page
    assert "&lt;script&gt;alert(" in page and "&lt;i&gt;better&lt;/i&gt;" in page
    assert "script-src 'self'" in ann.client.get("/judge").headers["content-security-policy"]


def test_the_session_cookie_is_httponly_and_samesite(engine) -> None:  # type: ignore[no-untyped-def]
    token = link_token(engine, "ann")
    with app_client(engine) as client:
        answer = client.post("/login", data={"token": token})
    cookie = answer.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie


def test_the_database_url_and_password_are_in_no_page_log_or_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = "postgresql+psycopg://orl:s3cret-pw@127.0.0.1:1/secretdb"
    engine = create_store_engine(url)
    caplog.set_level(logging.DEBUG)
    with app_client(engine) as client:
        client.cookies.set("orlbuild_session", "x")
        answers = [
            client.post("/login", data={"token": "abc"}),
            client.get("/api/me", headers={"Authorization": "Bearer abc"}),
        ]
    engine.dispose()
    assert [a.status_code for a in answers] == [503, 503]
    shown = "".join(a.text for a in answers) + caplog.text
    assert "store failed" in caplog.text
    for secret in ("s3cret-pw", "secretdb", "127.0.0.1:1", "postgresql"):
        assert secret not in shown, secret
