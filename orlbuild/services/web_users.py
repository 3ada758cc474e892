"""Users of ``orlbuild serve``: roles, one-time login links, API tokens; no passwords.

``orlbuild users add|list|disable|link|token`` and the server's login call
these (docs/judging-in-the-browser.md, "Users and roles"). A token is drawn
from :mod:`secrets` (32 random bytes), shown once, and only its SHA-256 is
stored; a login link works once, until it expires. A disabled user's links,
session and API token are all refused.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from orlbuild.errors import ConfigError, OrlbuildError
from orlbuild.services.ingests import check_name
from orlbuild.store.users import current_user
from orlbuild.store.web_models import ROLES
from orlbuild.store.web_users import (
    WebUserRecord,
    add_web_user,
    find_web_user,
    list_web_users,
    set_api_token_hash,
    set_web_user_disabled,
    store_login_link,
    use_login_link,
    web_user_by_api_token,
    web_user_by_id,
)

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = [
    "DEFAULT_BASE_URL",
    "LINK_HOURS",
    "AccessRefused",
    "LoginLink",
    "add_user",
    "allowed",
    "api_token",
    "disable_user",
    "list_users",
    "log_in",
    "login_link",
    "token_hash",
    "user_of_api_token",
    "user_of_session",
]

#: Where the links point when no ``--base-url`` is given (``orlbuild serve``'s default).
DEFAULT_BASE_URL = "http://127.0.0.1:8000"

#: How long a login link works: long enough to reach a colleague by mail the same day.
LINK_HOURS = 24.0


class AccessRefused(OrlbuildError):
    """A login, session or token that is refused (unknown, used, expired, disabled, or a
    role without the right)."""


@dataclass(frozen=True)
class LoginLink:
    """A login link just made: its URL (shown once) and when it stops working."""

    user: str
    url: str
    expires_at: datetime


def token_hash(token: str) -> str:
    """The SHA-256 (hex) of a token: the only form in which the store holds one."""
    return hashlib.sha256(token.encode()).hexdigest()


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _user(engine: Engine, name: str) -> WebUserRecord:
    user = find_web_user(engine, name)
    if user is None:
        raise ConfigError(f"no web user named {name!r} (see `orlbuild users list`)")
    return user


def allowed(user: WebUserRecord, role: str) -> bool:
    """Whether ``user``'s role includes ``role`` (lead > auditor > annotator)."""
    return ROLES.index(user.role) >= ROLES.index(role)


def login_link(
    engine: Engine, name: str, *, base_url: str = DEFAULT_BASE_URL, hours: float = LINK_HOURS
) -> LoginLink:
    """A new one-time login link for ``name`` (older unused links keep working until they
    expire)."""
    if not hours > 0:
        raise ConfigError(f"--hours must be positive, got {hours!r}")
    user = _user(engine, name)
    token = secrets.token_urlsafe(32)
    now = _now()
    expires = now + timedelta(hours=hours)
    store_login_link(engine, user.id, token_hash(token), now=now, expires_at=expires)
    return LoginLink(user.name, f"{base_url.rstrip('/')}/login/{token}", expires)


def add_user(
    engine: Engine,
    name: str,
    role: str,
    *,
    base_url: str = DEFAULT_BASE_URL,
    hours: float = LINK_HOURS,
) -> LoginLink:
    """Add a web user with ``role`` and make their first login link.

    Raises
    ------
    ConfigError
        An unknown role or a bad name.
    StoreError
        The name is taken.
    """
    if role not in ROLES:
        raise ConfigError(f"--role must be one of {', '.join(ROLES)}, got {role!r}")
    name = check_name(name, "user")
    add_web_user(engine, name, role, now=_now(), created_by=current_user())
    return login_link(engine, name, base_url=base_url, hours=hours)


def list_users(engine: Engine) -> list[WebUserRecord]:
    """Every web user, by name."""
    return list_web_users(engine)


def disable_user(engine: Engine, name: str, *, disabled: bool = True) -> WebUserRecord:
    """Disable a user (or enable again): their session, links and token stop working."""
    user = _user(engine, name)
    set_web_user_disabled(engine, user.id, disabled)
    return user


def api_token(engine: Engine, name: str) -> str:
    """A new API token for ``name`` (``Authorization: Bearer``); the previous one stops."""
    user = _user(engine, name)
    token = secrets.token_urlsafe(32)
    set_api_token_hash(engine, user.id, token_hash(token))
    return token


def _active(user: WebUserRecord | None) -> WebUserRecord:
    if user is None or user.disabled:
        raise AccessRefused("not logged in, or the account is disabled")
    return user


def log_in(engine: Engine, token: str) -> WebUserRecord:
    """The user of a login link's token, which is used up by this call.

    Raises
    ------
    AccessRefused
        An unknown, used or expired link, or a disabled user.
    """
    user_id = use_login_link(engine, token_hash(token), now=_now())
    if user_id is None:
        raise AccessRefused(
            "this login link is unknown, used or expired; ask a lead for a new one "
            "(`orlbuild users link NAME`)"
        )
    return _active(web_user_by_id(engine, user_id))


def user_of_session(engine: Engine, user_id: int) -> WebUserRecord:
    """The user a session cookie names, refused when gone or disabled."""
    return _active(web_user_by_id(engine, user_id))


def user_of_api_token(engine: Engine, token: str) -> WebUserRecord:
    """The user of an API token, refused when unknown or disabled."""
    return _active(web_user_by_api_token(engine, token_hash(token)))
