"""`rutter store init|check`: an administrator prepares a store for its people, and anyone
checks what state it is in (docs/team.md)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from rutter_cli.common import JsonFlag, emit, settings_of

if TYPE_CHECKING:
    from rich.console import Console

    from rutter_core.store.admin import StoreCheck

STORE_HELP = "Prepare a store for its people (init) and check its state (check)."

store_app = typer.Typer(help=STORE_HELP, no_args_is_help=True)

GroupOption = Annotated[
    str,
    typer.Option(
        "--group",
        metavar="ROLE",
        help="The members' group role (PostgreSQL; default rutter_member).",
    ),
]


@store_app.command("init")
def store_init(
    ctx: typer.Context, group: GroupOption = "rutter_member", as_json: JsonFlag = False
) -> None:
    """Create or update the schema, and on PostgreSQL the pg_trgm extension, the members' group
    role and its grants (row-level security comes with the schema). Idempotent."""
    from rutter_core.app.admin import InitStoreParams
    from rutter_core.app.facade import open_rutter

    rutter = open_rutter(settings_of(ctx).database_url, os.environ)
    try:
        done = rutter.admin.init(InitStoreParams(group=group))
    finally:
        rutter.store.close()

    def for_people(console: Console) -> None:
        console.print(f"Store {done.store} ({done.engine}) is at schema {done.schema_version}.")
        if done.group is None:
            console.print("A SQLite store is one person's: no roles to prepare.")
            return
        state = "created" if done.group_created else "already there"
        console.print(f"Group role {done.group}: {state}; granted:")
        for grant in done.granted:
            console.print(f"  {grant}")
        console.print(
            f"Row-level security keeps these tables' owned rows to their person: "
            f"{', '.join(done.row_security)}."
        )
        console.print(f"Add a person: CREATE ROLE name LOGIN; GRANT {done.group} TO name;")

    emit(done, as_json=as_json, for_people=for_people)


def _print_check(found: StoreCheck, console: Console) -> None:
    schema = found.schema_state
    console.print(f"Store {found.store} ({found.engine}): {'ok' if found.ok else 'problems'}")
    at = "none" if schema.version is None else str(schema.version)
    console.print(f"  schema: {at} (this rutter: {schema.code_version})")
    if found.text is not None:
        ctype = "" if found.text.lc_ctype is None else f", LC_CTYPE {found.text.lc_ctype}"
        fit = "suits" if found.text.suits_cjk else "does not suit"
        console.print(f"  text: {found.text.encoding}{ctype} ({fit} CJK search)")
    for name, present in (found.extensions or {}).items():
        console.print(f"  extension {name}: {'present' if present else 'missing'}")
    if found.row_security is not None:
        secured = [t for t in found.row_security if t.enabled and t.forced and t.policies]
        console.print(f"  row-level security: {len(secured)} of {len(found.row_security)} tables")
    if found.role is not None:
        role = found.role
        member = (
            ""
            if role.group is None
            else (f", {'member' if role.member_of_group else 'not a member'} of {role.group}")
        )
        console.print(f"  role: {role.name}{member}")
    for problem in found.problems:
        console.print(f"  problem {problem.code}: {problem.message}")
    for warning in found.warnings:
        console.print(f"  warning {warning.code}: {warning.message}")


@store_app.command("check")
def store_check(
    ctx: typer.Context, group: GroupOption = "rutter_member", as_json: JsonFlag = False
) -> None:
    """Say the store's state without changing it: engine, schema version against this rutter's,
    extensions, text settings, row-level security, the connecting role. Exits non-zero when
    something is wrong (store_check_failed, each problem with its code)."""
    from rutter_cli.errors import report
    from rutter_core.app.admin import CheckStoreParams
    from rutter_core.app.facade import open_rutter
    from rutter_core.kernel.errors import StoreError

    rutter = open_rutter(settings_of(ctx).database_url, os.environ, create=False, migrate=False)
    try:
        found = rutter.admin.check(CheckStoreParams(group=group))
    finally:
        rutter.store.close()
    emit(found, as_json=as_json, for_people=lambda console: _print_check(found, console))
    if found.ok:
        return
    codes = [problem.code for problem in found.problems]
    error = StoreError(
        "store_check_failed",
        f"the store is not ready: {', '.join(codes)}",
        details={"problems": codes},
        hint=None,
    )
    raise typer.Exit(report(error, as_json=False))
