"""Logging in from a one-time link, and out.

``GET /login/TOKEN`` only shows a button: a mail client or a link scanner
that fetches the link does not use it up. The button's ``POST`` uses the
link once and sets the session cookie, then sends the browser on to
``/judge``, so the token leaves the address bar (and the pages are served with
``Referrer-Policy: no-referrer``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from orlbuild.services.web_users import log_in
from orlbuild.web.pages import render
from orlbuild.web.sessions import (
    COOKIE,
    SESSION_DAYS,
    Session,
    checked_csrf,
    engine_of,
    session_cookie,
)

__all__ = ["router"]

router = APIRouter()


@router.get("/login/{token}", response_class=HTMLResponse)
def login_page(request: Request, token: str) -> HTMLResponse:
    """The page of a login link: one button that logs in."""
    return render(request, "login.html", token=token)


@router.post("/login")
def login(request: Request, token: Annotated[str, Form()]) -> Response:
    """Use the link's token once; set the session cookie; go to ``/judge``."""
    user = log_in(engine_of(request), token)
    response = RedirectResponse("/judge", status_code=303)
    response.set_cookie(
        COOKIE,
        session_cookie(request, user.id),
        max_age=SESSION_DAYS * 86400,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


@router.post("/logout")
def logout(session: Annotated[Session, Depends(checked_csrf)]) -> Response:
    """Forget the session cookie."""
    response = RedirectResponse("/logged-out", status_code=303)
    response.delete_cookie(COOKIE)
    return response


@router.get("/logged-out", response_class=HTMLResponse)
def logged_out(request: Request) -> HTMLResponse:
    """Said after logging out."""
    return render(request, "message.html", title="Logged out", message="You are logged out.")
