"""``/judge`` and ``/me``: an annotator judges the pairs of the open rounds and corrects
their own judgments (docs/judging-in-the-browser.md, "Judging").

Each page works as plain HTML forms; with HTMX the answer's response is the
next pair's fragment, swapped in without a page load. The keys (``1``/``←``,
``2``/``→``, ``0``, ``s``, ``u``) press the page's buttons (``static/judge.js``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from orlbuild.errors import OrlbuildError
from orlbuild.services.rounds import (
    LeaseRefused,
    my_judgments,
    next_pair,
    submit,
    undo,
)
from orlbuild.web.pages import is_htmx, render
from orlbuild.web.sessions import Session, checked_csrf, engine_of, page_session

__all__ = ["router"]

router = APIRouter()


@router.get("/")
def home(session: Annotated[Session, Depends(page_session)]) -> Response:
    """The judge page."""
    return RedirectResponse("/judge", status_code=303)


def _pair_page(
    request: Request, session: Session, *, note: str | None = None, pair: object = None
) -> HTMLResponse:
    """The judge page, or only its pair fragment for HTMX."""
    if pair is None:
        pair = next_pair(engine_of(request), session.user)
    name = "pair.html" if is_htmx(request) else "judge.html"
    return render(request, name, session=session, pair=pair, note=note)


@router.get("/judge", response_class=HTMLResponse)
def judge(request: Request, session: Annotated[Session, Depends(page_session)]) -> HTMLResponse:
    """The next pair to judge: the query, and the two items side by side."""
    return _pair_page(request, session)


def _answered(request: Request, session: Session, note: str | None) -> Response:
    """After an answer: the next pair's fragment (HTMX), else back to ``/judge``."""
    if is_htmx(request):
        return _pair_page(request, session, note=note)
    return RedirectResponse("/judge", status_code=303)


@router.post("/judge/answer")
def answer(
    request: Request,
    session: Annotated[Session, Depends(checked_csrf)],
    key: Annotated[str, Form()],
    choice: Annotated[str, Form()],
    reason: Annotated[str | None, Form()] = None,
) -> Response:
    """Record an answer to the pair of ``key`` (a retry of the same answer counts once)."""
    note = None
    try:
        submit(engine_of(request), session.user, key, choice, reason)
    except LeaseRefused as exc:
        note = str(exc)
    return _answered(request, session, note)


@router.post("/judge/undo")
def undo_last(request: Request, session: Annotated[Session, Depends(checked_csrf)]) -> Response:
    """Take back the newest judgment and show its pair again."""
    pair = undo(engine_of(request), session.user)
    if not is_htmx(request):
        return RedirectResponse("/judge", status_code=303)
    if pair is None:
        return _pair_page(request, session, note="nothing to undo")
    return _pair_page(request, session, pair=pair, note="judgment taken back: answer again")


@router.get("/me", response_class=HTMLResponse)
def me(request: Request, session: Annotated[Session, Depends(page_session)]) -> HTMLResponse:
    """The user's own judgments; those of open rounds can be corrected."""
    rows = my_judgments(engine_of(request), session.user)
    return render(request, "me.html", session=session, judgments=rows)


@router.post("/me/correct")
def correct(
    request: Request,
    session: Annotated[Session, Depends(checked_csrf)],
    key: Annotated[str, Form()],
    choice: Annotated[str, Form()],
    reason: Annotated[str | None, Form()] = None,
) -> Response:
    """Correct one of the user's own judgments while its round is open."""
    try:
        submit(engine_of(request), session.user, key, choice, reason)
    except LeaseRefused as exc:
        raise OrlbuildError(str(exc)) from None
    return RedirectResponse("/me", status_code=303)
