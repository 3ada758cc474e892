"""Who is asking: the signed session cookie, CSRF tokens, API tokens and role checks.

The cookie holds the user's id and a random CSRF token, signed (and dated)
with the server's secret by :mod:`itsdangerous`; it is ``HttpOnly``,
``SameSite=Lax`` and, behind an HTTPS proxy, ``Secure``. Every form and every
HTMX request carries the CSRF token (a field ``csrf`` or the header
``X-CSRF-Token``), compared in constant time. The JSON API takes
``Authorization: Bearer TOKEN`` instead (docs/judging-in-the-browser.md,
"Users and roles"). Each route declares what it needs as a dependency
(:func:`page_user`, :func:`lead_user`, :func:`api_user`, :func:`checked_csrf`),
so no route can forget the check.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Form, Header, Request
from itsdangerous import BadSignature, URLSafeTimedSerializer

from orlbuild.services.web_users import (
    AccessRefused,
    WebUserRecord,
    allowed,
    user_of_api_token,
    user_of_session,
)

if TYPE_CHECKING:
    from orlbuild.services.databases import Engine

__all__ = [
    "COOKIE",
    "SESSION_DAYS",
    "Forbidden",
    "Session",
    "api_user",
    "auditor_user",
    "checked_csrf",
    "engine_of",
    "lead_user",
    "page_session",
    "page_user",
    "session_cookie",
]

#: The session cookie's name.
COOKIE = "orlbuild_session"

#: How long a session lasts before its user must log in from a new link.
SESSION_DAYS = 7


class Forbidden(AccessRefused):
    """A logged-in user whose role does not allow the page."""


@dataclass(frozen=True)
class Session:
    """The logged-in user and the CSRF token their forms carry."""

    user: WebUserRecord
    csrf: str


def engine_of(request: Request) -> Engine:
    """The store engine of the application."""
    engine: Engine = request.app.state.engine
    return engine


def _signer(request: Request) -> URLSafeTimedSerializer:
    signer: URLSafeTimedSerializer = request.app.state.signer
    return signer


def session_cookie(request: Request, user_id: int) -> str:
    """A new signed session value for ``user_id`` with a fresh CSRF token."""
    return _signer(request).dumps({"uid": user_id, "csrf": secrets.token_urlsafe(24)})


def page_session(request: Request) -> Session:
    """The session of the cookie; :class:`AccessRefused` without a valid one."""
    value = request.cookies.get(COOKIE)
    if not value:
        raise AccessRefused("not logged in: open your login link")
    try:
        data = _signer(request).loads(value, max_age=SESSION_DAYS * 86400)
    except BadSignature:
        raise AccessRefused("the session is invalid or expired: open a new login link") from None
    user = user_of_session(engine_of(request), int(data["uid"]))
    return Session(user, str(data["csrf"]))


def page_user(session: Annotated[Session, Depends(page_session)]) -> WebUserRecord:
    """The logged-in user (any role)."""
    return session.user


def _role(user: WebUserRecord, role: str) -> WebUserRecord:
    if not allowed(user, role):
        raise Forbidden(f"this page is for the role {role}; you are {user.role}")
    return user


def auditor_user(user: Annotated[WebUserRecord, Depends(page_user)]) -> WebUserRecord:
    """The logged-in user, refused unless an auditor or a lead."""
    return _role(user, "auditor")


def lead_user(user: Annotated[WebUserRecord, Depends(page_user)]) -> WebUserRecord:
    """The logged-in user, refused unless a lead."""
    return _role(user, "lead")


async def checked_csrf(
    request: Request,
    session: Annotated[Session, Depends(page_session)],
    csrf: Annotated[str | None, Form()] = None,
    x_csrf_token: Annotated[str | None, Header()] = None,
) -> Session:
    """The session of a form post, refused unless it carries the session's CSRF token."""
    given = csrf or x_csrf_token or ""
    if not hmac.compare_digest(given.encode(), session.csrf.encode()):
        raise Forbidden("the form's CSRF token is missing or wrong: reload the page")
    return session


def api_user(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> WebUserRecord:
    """The user of ``Authorization: Bearer TOKEN``; refused without a valid token."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AccessRefused("the API needs `Authorization: Bearer TOKEN` (`orlbuild users token`)")
    return user_of_api_token(engine_of(request), token.strip())
