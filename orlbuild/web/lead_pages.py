"""``/rounds``: the rounds, opened and closed by a lead (auditors see them).

Opening runs the planner on a build (:func:`orlbuild.services.rounds.open_round`);
closing seals the judgments into pairwise batches
(:func:`orlbuild.services.rounds.close_round`), recorded as the lead's.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from orlbuild.services.rounds import all_rounds, close_round, open_round
from orlbuild.services.web_users import allowed
from orlbuild.web.pages import render
from orlbuild.web.sessions import Session, auditor_user, checked_csrf, engine_of, page_session
from orlbuild.web.sessions import lead_user as _lead

__all__ = ["router"]

router = APIRouter()


@router.get("/rounds", response_class=HTMLResponse, dependencies=[Depends(auditor_user)])
def rounds_page(
    request: Request, session: Annotated[Session, Depends(page_session)]
) -> HTMLResponse:
    """Every round with its progress; a lead's forms to open and close them."""
    return render(
        request,
        "rounds.html",
        session=session,
        rounds=all_rounds(engine_of(request)),
        lead=allowed(session.user, "lead"),
    )


@router.post("/rounds/open", dependencies=[Depends(_lead)])
def open_page(
    request: Request,
    session: Annotated[Session, Depends(checked_csrf)],
    build: Annotated[str, Form()],
    budget: Annotated[int, Form()],
    per_pair: Annotated[int, Form()] = 1,
) -> Response:
    """Open a round of the planner's pairs of a build."""
    open_round(engine_of(request), build, budget=budget, per_pair=per_pair, by=session.user.name)
    return RedirectResponse("/rounds", status_code=303)


@router.post("/rounds/{round_id}/close", dependencies=[Depends(_lead)])
def close_page(
    request: Request, round_id: int, session: Annotated[Session, Depends(checked_csrf)]
) -> Response:
    """Close a round and seal its judgments into pairwise batches."""
    close_round(engine_of(request), round_id, by=session.user.name)
    return RedirectResponse("/rounds", status_code=303)
