"""Who did it: the one name stored as ``created_by`` of batches, builds, overrides, evaluations.

``$ORLBUILD_USER`` wins (a shared service account can record the person
behind it), else the login name, else ``unknown``; the name is cut to the
store's :data:`~orlbuild.store.models.NAME_LENGTH`. Every write of the store
that records a person calls :func:`current_user`, so one person is stored
under one name (docs/tiers-and-audit.md, "Audit").
"""

from __future__ import annotations

import getpass
import os

from orlbuild.store.models import NAME_LENGTH

__all__ = ["USER_ENV_VAR", "current_user"]

#: Environment variable naming the person recorded as ``created_by``.
USER_ENV_VAR = "ORLBUILD_USER"


def current_user() -> str:
    """The name recorded as ``created_by`` when none is given.

    Returns
    -------
    str
        ``$ORLBUILD_USER`` if set and non-empty, else the login name
        (:func:`getpass.getuser`), else ``"unknown"``; at most
        ``NAME_LENGTH`` characters.
    """
    user = os.environ.get(USER_ENV_VAR, "").strip()
    if not user:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = "unknown"
    return user[:NAME_LENGTH]
