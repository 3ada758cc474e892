"""``orlbuild serve``: the judging pages of the open rounds, for one person or a team.

The web application (:mod:`orlbuild.web`, extra ``web``) is imported only
here, when the command runs, so the other commands start no slower.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from typing import Annotated

import typer

from orlbuild.cli.state import get_state

__all__ = ["register"]

_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or name (nothing else can reach it)."""
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _HideLoginTokens(logging.Filter):
    """Access-log lines show ``/login/…``, never a login link's token."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                "/login/…" if isinstance(a, str) and a.startswith("/login/") else a
                for a in record.args
            )
        return True


def serve_command(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port.")] = 8000,
    db: Annotated[
        str | None,
        typer.Option("--db", help="Database URL (default: the global --db).", show_default=False),
    ] = None,
    proxy_headers: Annotated[
        bool,
        typer.Option(
            "--proxy-headers",
            help="Trust X-Forwarded-Proto/For from a reverse proxy on the loopback (HTTPS).",
        ),
    ] = False,
) -> None:
    """Serve the judging pages of the open rounds to the team's browsers.

    Users log in from the one-time links of `orlbuild users add` or `users link`.
    Sessions are signed with $ORLBUILD_WEB_SECRET (random when unset: sessions then
    end when the server stops). Stop it with Ctrl-C.
    """
    try:
        import uvicorn

        from orlbuild.web.app import SECRET_ENV_VAR, create_app
    except ModuleNotFoundError as exc:
        typer.echo(f"Error: orlbuild serve needs {exc.name}: pip install 'orlbuild[web]'", err=True)
        raise typer.Exit(1) from None
    from orlbuild.services.databases import open_database

    url = db or get_state(ctx).db_url
    engine = open_database(url, upgrade_if_empty=False)
    if not is_loopback(host):
        typer.echo(
            f"Warning: listening on {host}, reachable from other machines, without TLS: put a "
            "reverse proxy that terminates HTTPS in front of it (see the page "
            "judging-in-the-browser.md of the docs), or use the default --host 127.0.0.1",
            err=True,
        )
    app = create_app(engine, secret=os.environ.get(SECRET_ENV_VAR) or None)
    logging.getLogger("uvicorn.access").addFilter(_HideLoginTokens())
    typer.echo(f"orlbuild serve: http://{host}:{port}/ (Ctrl-C stops it)", err=True)
    try:
        uvicorn.run(
            app,
            host=host,
            port=port,
            proxy_headers=proxy_headers,
            forwarded_allow_ips="127.0.0.1" if proxy_headers else None,
            log_level="info",
        )
    finally:
        engine.dispose()


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the root application."""
    app.command("serve")(serve_command)
