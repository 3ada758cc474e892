"""The application of ``orlbuild serve``: routes, refusals, security headers.

:func:`create_app` joins the routers (one per area: login, judging, rounds,
the API) on one store engine. A refused request gets its status and a short
page (or JSON for ``/api``): 401 without a session or token, 403 for a role
without the right or a form without its CSRF token, 404 for a judgment that
is not the user's, 400 for a bad answer. No page, log line or error names
the database: a failure of the store is logged and shown without its URL
(docs/judging-in-the-browser.md, "Running it for a team").
"""

from __future__ import annotations

import logging
import re
import secrets
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from itsdangerous import URLSafeTimedSerializer
from starlette.exceptions import HTTPException as StarletteHTTPException

from orlbuild.errors import OrlbuildError, StoreError
from orlbuild.services.web_users import AccessRefused
from orlbuild.web import api, judge_pages, lead_pages, login_pages
from orlbuild.web.pages import STATIC, render
from orlbuild.web.sessions import Forbidden

if TYPE_CHECKING:
    from orlbuild.services.databases import Engine

__all__ = ["SECRET_ENV_VAR", "create_app", "scrub"]

#: Environment variable with the secret that signs session cookies (random if unset:
#: sessions then end when the server restarts).
SECRET_ENV_VAR = "ORLBUILD_WEB_SECRET"

_LOG = logging.getLogger("orlbuild.web")

#: Headers of every answer: no framing, no referrer (a login link's token stays out of
#: other sites' logs), scripts and styles only from the server itself.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def scrub(text: str, engine: Engine) -> str:
    """``text`` without the database's URL, host, name or password."""
    url = engine.url
    secrets_of_url = [
        url.render_as_string(hide_password=False),
        url.render_as_string(hide_password=True),
        url.password or "",
        url.database or "",
    ]
    for secret in sorted(filter(None, map(str, secrets_of_url)), key=len, reverse=True):
        text = text.replace(secret, "…")
    return re.sub(r"\w+(\+\w+)?://\S+", "…", text)


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _refusal(request: Request, status: int, message: str) -> Response:
    if _wants_json(request):
        return JSONResponse({"detail": message}, status_code=status)
    return render(request, "message.html", status, title="Refused", message=message)


def create_app(engine: Engine, *, secret: str | None = None) -> FastAPI:
    """The web application on ``engine``.

    Parameters
    ----------
    engine
        A store at the newest schema (:func:`orlbuild.services.databases.open_database`).
    secret
        The key that signs session cookies; a random one when ``None``.
    """
    app = FastAPI(title="orlbuild", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.engine = engine
    app.state.signer = URLSafeTimedSerializer(secret or secrets.token_urlsafe(32), "session")
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for module in (login_pages, judge_pages, lead_pages, api):
        app.include_router(module.router)

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.exception_handler(AccessRefused)
    async def refused(request: Request, exc: AccessRefused) -> Response:
        return _refusal(request, 403 if isinstance(exc, Forbidden) else 401, str(exc))

    @app.exception_handler(OrlbuildError)
    async def bad_request(request: Request, exc: OrlbuildError) -> Response:
        message = scrub(str(exc), engine)
        if isinstance(exc, StoreError) and exc.__cause__ is not None:
            _LOG.error("the store failed: %s", message)
            return _refusal(request, 503, "the store is unavailable; see the server's log")
        if isinstance(exc, StoreError) and "no such assignment" in message:
            return _refusal(request, 404, message)
        return _refusal(request, 400, message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _refusal(request, exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def failure(request: Request, exc: Exception) -> Response:
        _LOG.error("request failed: %s", scrub(f"{type(exc).__name__}: {exc}", engine))
        return _refusal(request, 500, "the server failed; see its log")

    return app
