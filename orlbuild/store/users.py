"""Who did it: the one name stored as ``created_by`` of batches, builds, overrides, evaluations.

``$ORLBUILD_USER`` wins (a shared service account can record the person
behind it), else the login name, else ``unknown``; the name is cut to the
store's :data:`~orlbuild.store.models.NAME_LENGTH`. Every write of the store
that records a person calls :func:`current_user`, so one person is stored
under one name (docs/tiers-and-audit.md, "Audit"). A write made for a user
logged in to ``orlbuild serve`` runs inside :func:`acting_as` that user, whose
name then wins over both (docs/judging-in-the-browser.md, "Users and roles").
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from orlbuild.store.models import NAME_LENGTH

__all__ = ["USER_ENV_VAR", "acting_as", "current_user"]

#: Environment variable naming the person recorded as ``created_by``.
USER_ENV_VAR = "ORLBUILD_USER"

_ACTING: ContextVar[str | None] = ContextVar("orlbuild_acting_user", default=None)


@contextmanager
def acting_as(name: str) -> Iterator[None]:
    """Record ``name`` (a web identity) as the person behind every write in the block."""
    token = _ACTING.set(name[:NAME_LENGTH])
    try:
        yield
    finally:
        _ACTING.reset(token)


def current_user() -> str:
    """The name recorded as ``created_by`` when none is given.

    Returns
    -------
    str
        The web identity of :func:`acting_as`, if any; else
        ``$ORLBUILD_USER`` if set and non-empty, else the login name
        (:func:`getpass.getuser`), else ``"unknown"``; at most
        ``NAME_LENGTH`` characters.
    """
    acting = _ACTING.get()
    if acting is not None:
        return acting
    user = os.environ.get(USER_ENV_VAR, "").strip()
    if not user:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = "unknown"
    return user[:NAME_LENGTH]
