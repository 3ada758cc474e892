"""The read-only JSON API (``Authorization: Bearer TOKEN``, from ``orlbuild users token``).

Its answers are the records the services return (FastAPI serialises the
dataclasses), never a second copy of their fields.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from orlbuild.services.rounds import all_rounds, my_judgments
from orlbuild.services.web_users import WebUserRecord
from orlbuild.web.sessions import api_user, engine_of

__all__ = ["router"]

router = APIRouter(prefix="/api")


@router.get("/me")
def whoami(user: Annotated[WebUserRecord, Depends(api_user)]) -> dict[str, Any]:
    """The token's user: name and role."""
    return {"name": user.name, "role": user.role}


@router.get("/judgments")
def judgments(request: Request, user: Annotated[WebUserRecord, Depends(api_user)]) -> list[Any]:
    """The token user's own judgments, newest first."""
    return list(my_judgments(engine_of(request), user))


@router.get("/rounds")
def rounds(request: Request, user: Annotated[WebUserRecord, Depends(api_user)]) -> list[Any]:
    """Every round with its progress."""
    return list(all_rounds(engine_of(request)))
