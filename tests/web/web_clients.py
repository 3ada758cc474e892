"""Starlette TestClients of ``orlbuild serve`` logged in as users of a built store."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from fastapi.testclient import TestClient

from orlbuild.services import web_users
from orlbuild.web.app import create_app

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class User:
    """A logged-in client and the CSRF token of its session."""

    name: str
    client: TestClient
    csrf: str

    def post(self, path: str, data: dict[str, str] | None = None, **kwargs):  # type: ignore[no-untyped-def]
        """A form post with the session's CSRF token."""
        return self.client.post(path, data={"csrf": self.csrf, **(data or {})}, **kwargs)


def link_token(engine, name: str, role: str = "annotator") -> str:  # type: ignore[no-untyped-def]
    """Add a user; the token of their login link."""
    return web_users.add_user(engine, name, role).url.rsplit("/", 1)[1]


@contextmanager
def app_client(engine) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    """A client of a new application on ``engine`` (no session)."""
    with TestClient(create_app(engine, secret="test secret"), follow_redirects=False) as client:
        yield client


def log_in(client: TestClient, name: str, token: str) -> User:
    """Log ``client`` in with a link's token (the button's post) and read its CSRF token."""
    assert client.get(f"/login/{token}").status_code == 200
    answer = client.post("/login", data={"token": token})
    assert answer.status_code == 303 and answer.headers["location"] == "/judge"
    page = client.get("/me")
    assert page.status_code == 200, page.text
    match = _CSRF.search(page.text)
    assert match is not None
    return User(name, client, match.group(1))


@contextmanager
def logged_in(engine, name: str, role: str = "annotator") -> Iterator[User]:  # type: ignore[no-untyped-def]
    """A new user ``name`` with ``role``, logged in on their own client."""
    token = link_token(engine, name, role)
    with app_client(engine) as client:
        yield log_in(client, name, token)
