"""The Jinja2 templates of the pages (escaped by default: no user text is marked safe)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

__all__ = ["STATIC", "is_htmx", "render"]

#: The folder of the static files (HTMX and its licence, the keyboard script, the styles).
STATIC = Path(__file__).parent / "static"

_TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")


def is_htmx(request: Request) -> bool:
    """Whether HTMX made the request (it then wants a fragment, not a page)."""
    return request.headers.get("HX-Request") == "true"


def render(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """The template ``name`` rendered with ``context`` (autoescaped)."""
    return _TEMPLATES.TemplateResponse(request, name, context, status_code=status_code)
