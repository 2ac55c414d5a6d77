"""`rutter http`: serve the HTTP API, and make, list and revoke its bearer tokens.

`rutter http --bind HOST:PORT` imports the server (`rutter_http`, FastAPI and uvicorn) only
when it runs; `rutter http token ...` never does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit, settings_of
from rutter_core.app.tokens import CreateTokenParams, ListTokensParams, RevokeTokenParams

if TYPE_CHECKING:
    from rich.console import Console

HTTP_HELP = "Serve the HTTP API (/api/v1) and manage its bearer tokens."

http_app = typer.Typer(help=HTTP_HELP, invoke_without_command=True)
token_app = typer.Typer(help="Bearer tokens: read (GET routes) or control (every route).")
http_app.add_typer(token_app, name="token", no_args_is_help=True)


@http_app.callback()
def http_serve(
    ctx: typer.Context,
    bind: Annotated[
        str,
        typer.Option(
            "--bind", metavar="HOST:PORT", help="Where to listen (default 127.0.0.1:8787)."
        ),
    ] = "127.0.0.1:8787",
    tls_cert: Annotated[
        str | None, typer.Option("--tls-cert", metavar="PEM", help="TLS certificate file.")
    ] = None,
    tls_key: Annotated[
        str | None, typer.Option("--tls-key", metavar="PEM", help="TLS private key file.")
    ] = None,
    allow_non_loopback: Annotated[
        bool,
        typer.Option(
            "--allow-non-loopback",
            help="Listen off loopback without TLS (only behind a TLS-terminating proxy).",
        ),
    ] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            metavar="NAME",
            help="Also serve requests whose Host header is NAME (repeatable; e.g. a proxy's "
            "name). By default only the bound address, and localhost on loopback.",
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            metavar="N",
            help="Serve with N processes sharing the address and the store (e.g. one per core).",
        ),
    ] = 1,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a failure to start as one JSON document.")
    ] = False,
) -> None:
    """Serve /api/v1 until interrupted (loopback only, unless TLS or --allow-non-loopback)."""
    if ctx.invoked_subcommand is not None:
        return
    from rutter_http.serve import serve

    raise SystemExit(
        serve(
            bind,
            database_url=settings_of(ctx).database_url,
            tls_cert=tls_cert,
            tls_key=tls_key,
            allow_non_loopback=allow_non_loopback,
            allow_hosts=allow_host or (),
            workers=workers,
        )
    )


@token_app.command("create")
def token_create(
    ctx: typer.Context,
    scope: Annotated[str, typer.Option("--scope", metavar="read|control", help="What it may do.")],
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            metavar="NAME",
            help="The person its requests act for (a PostgreSQL role; default: you).",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Make a bearer token for a person; its secret is printed this once and stored only as a
    hash."""
    with cli_app(ctx) as rutter:
        created = rutter.tokens.create(CreateTokenParams(scope=scope, user=user), actor=ACTOR)

    def for_people(console: Console) -> None:
        console.print(
            f"Created {created.scope} token {created.token_id} for {created.owner}. Its secret, "
            f"shown only now:\n{created.secret}"
        )

    emit(created, as_json=as_json, for_people=for_people)


@token_app.command("list")
def token_list(
    ctx: typer.Context,
    include_revoked: Annotated[bool, typer.Option("--all", help="Include revoked tokens.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """List bearer tokens (never their secrets)."""
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.tokens.list(ListTokensParams(all=include_revoked))

    def for_people(console: Console) -> None:
        if not found.items:
            console.print("No HTTP tokens.")
        for token in found.items:
            state = "valid" if token.revoked_at is None else f"revoked {token.revoked_at}"
            owner = token.owner or "-"
            console.print(
                f"{token.token_id}  {token.scope:<7}  {owner}  created {token.created_at}  {state}"
            )

    emit(found, as_json=as_json, for_people=for_people)


@token_app.command("revoke")
def token_revoke(
    ctx: typer.Context,
    token_id: Annotated[str, typer.Argument(metavar="ID", help="The token's ID (tok_...).")],
    as_json: JsonFlag = False,
) -> None:
    """Revoke a bearer token: it authenticates nothing from now on."""
    with cli_app(ctx) as rutter:
        revoked = rutter.tokens.revoke(RevokeTokenParams(token_id=token_id))

    def for_people(console: Console) -> None:
        console.print(f"Revoked token {revoked.token_id} ({revoked.scope}).")

    emit(revoked, as_json=as_json, for_people=for_people)
