"""Web users and their one-time login links: persisted, never interpreted.

The use cases (tokens drawn, links built, roles checked) are
:mod:`orlbuild.services.web_users`'; this module stores and finds rows by the
SHA-256 of a token, which is all the store ever holds of one
(docs/judging-in-the-browser.md, "Users and roles").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, insert, select, update
from sqlalchemy.exc import IntegrityError

from orlbuild.errors import StoreError
from orlbuild.store.engine import Bind, as_utc, connect, write_transaction
from orlbuild.store.web_models import WebLoginLink, WebUser

__all__ = [
    "WebUserRecord",
    "add_web_user",
    "find_web_user",
    "list_web_users",
    "set_api_token_hash",
    "set_web_user_disabled",
    "store_login_link",
    "use_login_link",
    "web_user_by_api_token",
    "web_user_by_id",
]


@dataclass(frozen=True)
class WebUserRecord:
    """A web user as stored (without any token)."""

    id: int
    name: str
    role: str
    disabled: bool
    created_at: datetime
    created_by: str
    has_api_token: bool = False


_COLUMNS = (
    WebUser.id,
    WebUser.name,
    WebUser.role,
    WebUser.disabled,
    WebUser.created_at,
    WebUser.created_by,
    WebUser.api_token_hash,
)


def _record(row: Sequence[Any]) -> WebUserRecord:
    values = tuple(row)
    return WebUserRecord(
        int(values[0]),
        values[1],
        values[2],
        bool(values[3]),
        as_utc(values[4]),
        values[5],
        values[6] is not None,
    )


def add_web_user(engine: Engine, name: str, role: str, *, now: datetime, created_by: str) -> int:
    """Insert a user; a name already taken is a :class:`StoreError`."""
    try:
        with write_transaction(engine) as connection:
            inserted = connection.execute(
                insert(WebUser).values(
                    name=name, role=role, disabled=False, created_at=now, created_by=created_by
                )
            ).inserted_primary_key
    except IntegrityError:
        raise StoreError(
            f"a web user named {name!r} exists already (see `orlbuild users list`)"
        ) from None
    assert inserted is not None
    return int(inserted[0])


def _one(bind: Bind, where: object) -> WebUserRecord | None:
    with connect(bind) as connection:
        row = connection.execute(select(*_COLUMNS).where(where)).first()  # type: ignore[arg-type]
    return None if row is None else _record(row)


def find_web_user(bind: Bind, name: str) -> WebUserRecord | None:
    """The user of this name, if any."""
    return _one(bind, WebUser.name == name)


def web_user_by_id(bind: Bind, user_id: int) -> WebUserRecord | None:
    """The user of this id, if any."""
    return _one(bind, WebUser.id == user_id)


def web_user_by_api_token(bind: Bind, token_hash: str) -> WebUserRecord | None:
    """The user whose API token hashes to ``token_hash``, if any."""
    return _one(bind, WebUser.api_token_hash == token_hash)


def list_web_users(bind: Bind) -> list[WebUserRecord]:
    """Every web user, by name."""
    with connect(bind) as connection:
        rows = connection.execute(select(*_COLUMNS).order_by(WebUser.name)).all()
    return [_record(row) for row in rows]


def set_web_user_disabled(engine: Engine, user_id: int, disabled: bool) -> None:
    """Disable (or enable again) a user."""
    with write_transaction(engine) as connection:
        connection.execute(update(WebUser).where(WebUser.id == user_id).values(disabled=disabled))


def set_api_token_hash(engine: Engine, user_id: int, token_hash: str) -> None:
    """Replace the user's API token (the old one stops working)."""
    with write_transaction(engine) as connection:
        connection.execute(
            update(WebUser).where(WebUser.id == user_id).values(api_token_hash=token_hash)
        )


def store_login_link(
    engine: Engine, user_id: int, token_hash: str, *, now: datetime, expires_at: datetime
) -> None:
    """Store a login link's token hash and expiry."""
    with write_transaction(engine) as connection:
        connection.execute(
            insert(WebLoginLink).values(
                user_id=user_id, token_hash=token_hash, created_at=now, expires_at=expires_at
            )
        )


def use_login_link(engine: Engine, token_hash: str, *, now: datetime) -> int | None:
    """Mark the link used and return its user's id; ``None`` when it is unknown, used or
    expired. Two concurrent uses of one link: one gets the id, the other ``None``."""
    with write_transaction(engine) as connection:
        changed = connection.execute(
            update(WebLoginLink)
            .where(
                WebLoginLink.token_hash == token_hash,
                WebLoginLink.used_at.is_(None),
                WebLoginLink.expires_at > now,
            )
            .values(used_at=now)
        )
        if changed.rowcount != 1:
            return None
        user_id = connection.execute(
            select(WebLoginLink.user_id).where(WebLoginLink.token_hash == token_hash)
        ).scalar_one()
    return int(user_id)
