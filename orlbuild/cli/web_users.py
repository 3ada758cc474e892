"""``orlbuild users add|list|disable|link|token``: who may log in to ``orlbuild serve``."""

from __future__ import annotations

from typing import Annotated

import typer

from orlbuild.cli.options import FormatOption
from orlbuild.cli.render import Columns, emit
from orlbuild.cli.state import opened_store
from orlbuild.vocabulary import OutputFormat

__all__ = ["register"]

users_app = typer.Typer(
    help="Add, list and disable the users of `orlbuild serve`, and make their login links.",
    no_args_is_help=True,
)

NameArgument = Annotated[str, typer.Argument(metavar="NAME", help="The user's name.")]
BaseUrlOption = Annotated[
    str,
    typer.Option(
        "--base-url",
        envvar="ORLBUILD_BASE_URL",
        help="Where the server is reached (the reverse proxy's https:// address for a team).",
    ),
]
HoursOption = Annotated[float, typer.Option("--hours", help="The link works this many hours.")]


def _print_link(url: str, expires: object) -> None:
    typer.echo(url)
    typer.echo(f"one-time login link, valid until {expires:%Y-%m-%d %H:%M} UTC", err=True)


@users_app.command("add")
def add_command(
    ctx: typer.Context,
    name: NameArgument,
    role: Annotated[
        str, typer.Option("--role", help="annotator (judges), auditor (also audits) or lead.")
    ],
    base_url: BaseUrlOption = "http://127.0.0.1:8000",
    hours: HoursOption = 24.0,
) -> None:
    """Add a user with a role and print their one-time login link."""
    from orlbuild.services.web_users import add_user

    with opened_store(ctx, writes=True) as engine:
        link = add_user(engine, name, role, base_url=base_url, hours=hours)
    _print_link(link.url, link.expires_at)


@users_app.command("link")
def link_command(
    ctx: typer.Context,
    name: NameArgument,
    base_url: BaseUrlOption = "http://127.0.0.1:8000",
    hours: HoursOption = 24.0,
) -> None:
    """Print a new one-time login link for a user."""
    from orlbuild.services.web_users import login_link

    with opened_store(ctx, writes=True) as engine:
        link = login_link(engine, name, base_url=base_url, hours=hours)
    _print_link(link.url, link.expires_at)


@users_app.command("token")
def token_command(ctx: typer.Context, name: NameArgument) -> None:
    """Print a new API token (`Authorization: Bearer`) for a user; the old one stops."""
    from orlbuild.services.web_users import api_token

    with opened_store(ctx, writes=True) as engine:
        typer.echo(api_token(engine, name))


@users_app.command("disable")
def disable_command(
    ctx: typer.Context,
    name: NameArgument,
    enable: Annotated[bool, typer.Option("--enable", help="Enable the user again.")] = False,
) -> None:
    """Disable a user: their session, login links and API token are refused."""
    from orlbuild.services.web_users import disable_user

    with opened_store(ctx, writes=True) as engine:
        user = disable_user(engine, name, disabled=not enable)
    typer.echo(f"{'enabled' if enable else 'disabled'} {user.name}")


@users_app.command("list")
def list_command(ctx: typer.Context, fmt: FormatOption = OutputFormat.table) -> None:
    """List the users: name, role, disabled, API token, created when and by whom."""
    from orlbuild.services.web_users import list_users

    with opened_store(ctx) as engine:
        users = list_users(engine)
    emit(
        fmt,
        frame=Columns(
            {
                "name": [u.name for u in users],
                "role": [u.role for u in users],
                "disabled": [u.disabled for u in users],
                "api_token": [u.has_api_token for u in users],
                "created_at": [f"{u.created_at:%Y-%m-%d %H:%M:%S}" for u in users],
                "created_by": [u.created_by for u in users],
            }
        ),
        title="Web users",
    )


def register(app: typer.Typer) -> None:
    """Add the ``users`` sub-commands to the root application."""
    app.add_typer(users_app, name="users")
