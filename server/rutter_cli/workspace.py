"""`rutter workspace …`: register, list, show and remove workspaces through the facade."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from rutter_cli.common import JsonFlag, cli_app, emit
from rutter_cli.render import render_removed_contents, render_workspaces
from rutter_core.app.workspaces import (
    ListWorkspacesParams,
    MoveWorkspaceParams,
    RegisterWorkspaceParams,
    RemoveWorkspaceParams,
    SetWorkspaceProjectParams,
    ShowWorkspaceParams,
)

if TYPE_CHECKING:
    from rich.console import Console

workspace_app = typer.Typer(
    help="Register, inspect, move and remove workspaces.", no_args_is_help=True
)


@workspace_app.command("register")
def workspace_register(
    ctx: typer.Context,
    workspace_id: Annotated[str, typer.Argument(metavar="ID", help="1-64 chars of [a-z0-9._-].")],
    root: Annotated[str, typer.Argument(metavar="ROOT", help="An existing directory.")],
    project: Annotated[
        str | None,
        typer.Option(
            "--project",
            metavar="NAME",
            help="The project this is a location of (default: the repository's origin remote, "
            "normalised; without one, a project of its own).",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Register ROOT as workspace ID (idempotent for the same ID and root). Registrations of
    one project (other paths, other machines on the same store) share its records."""
    params = RegisterWorkspaceParams(
        workspace_id=workspace_id, root=root, cwd=str(Path.cwd()), project=project
    )
    with cli_app(ctx) as rutter:
        registered = rutter.workspaces.register(params)

    def for_people(console: Console) -> None:
        verb = "Registered" if registered.created else "Already registered:"
        console.print(
            f"{verb} workspace {registered.workspace_id} at {escape(registered.root)} "
            f"(project {escape(registered.project_id)})"
        )

    emit(registered, as_json=as_json, for_people=for_people)


project_app = typer.Typer(help="The project a workspace is a location of.", no_args_is_help=True)
workspace_app.add_typer(project_app, name="project")


@project_app.command("set")
def workspace_project_set(
    ctx: typer.Context,
    workspace_id: Annotated[str, typer.Argument(metavar="ID")],
    name: Annotated[
        str | None, typer.Argument(metavar="[NAME]", help="The project's name.", show_default=False)
    ] = None,
    from_remote: Annotated[
        bool,
        typer.Option("--remote", help="Take the project from the repository's origin remote."),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Make workspace ID a location of project NAME (or, with --remote, of its origin remote's
    project; with neither, of a project of its own). Its records go with it."""
    params = SetWorkspaceProjectParams(
        workspace_id=workspace_id, project=name, from_remote=from_remote
    )
    with cli_app(ctx) as rutter:
        changed = rutter.workspaces.set_project(params)

    def for_people(console: Console) -> None:
        if not changed.changed:
            console.print(
                f"Workspace {changed.workspace_id} already is a location of "
                f"{escape(changed.project_id)}"
            )
            return
        console.print(
            f"Workspace {changed.workspace_id}: project {escape(changed.previous_project_id)} -> "
            f"{escape(changed.project_id)}"
        )

    emit(changed, as_json=as_json, for_people=for_people)


@workspace_app.command("list")
def workspace_list(
    ctx: typer.Context,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Every registration in the store, of every machine (default: this machine's, "
            "and other machines' locations of the same projects).",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """List registered workspaces, each marked with whose machine it is on."""
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.workspaces.list(ListWorkspacesParams(all=every))
    emit(
        found,
        as_json=as_json,
        for_people=lambda console: render_workspaces(console, found.workspaces),
    )


@workspace_app.command("show")
def workspace_show(
    ctx: typer.Context,
    workspace_id: Annotated[str, typer.Argument(metavar="ID")],
    as_json: JsonFlag = False,
) -> None:
    """Show one workspace."""
    with cli_app(ctx, read_only=True) as rutter:
        workspace = rutter.workspaces.show(ShowWorkspaceParams(workspace_id=workspace_id))
    emit(
        workspace,
        as_json=as_json,
        for_people=lambda console: render_workspaces(console, [workspace]),
    )


@workspace_app.command("move")
def workspace_move(
    ctx: typer.Context,
    workspace_id: Annotated[str, typer.Argument(metavar="ID")],
    new_root: Annotated[
        str, typer.Argument(metavar="NEWROOT", help="The workspace's directory now (existing).")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Point workspace ID at NEWROOT, where its directory moved or was cloned. Runs, memories
    and history keep the ID; each run shows its drift against NEWROOT as usual."""
    params = MoveWorkspaceParams(workspace_id=workspace_id, root=new_root, cwd=str(Path.cwd()))
    with cli_app(ctx) as rutter:
        moved = rutter.workspaces.move(params)

    def for_people(console: Console) -> None:
        if not moved.moved:
            console.print(f"Workspace {moved.workspace_id} is already at {escape(moved.root)}")
            return
        console.print(
            f"Moved workspace {moved.workspace_id}: {escape(moved.previous_root)} -> "
            f"{escape(moved.root)}"
        )

    emit(moved, as_json=as_json, for_people=for_people)


@workspace_app.command("remove")
def workspace_remove(
    ctx: typer.Context,
    workspace_id: Annotated[str, typer.Argument(metavar="ID")],
    cascade: Annotated[
        bool,
        typer.Option(
            "--cascade",
            help="Also delete every run, session, checkpoint, message, note, pinned revision and "
            "project memory of it (not recoverable).",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Remove a workspace registration (the directory itself is not touched). When its project
    has another registration, what was made through this one stays the project's; otherwise
    refused while runs, sessions or project memories belong to it, unless --cascade."""
    params = RemoveWorkspaceParams(workspace_id=workspace_id, cascade=cascade)
    with cli_app(ctx) as rutter:
        removed = rutter.workspaces.remove(params)

    def for_people(console: Console) -> None:
        console.print(f"Removed workspace {removed.workspace_id} ({escape(removed.root)})")
        if removed.kept_for_project:
            console.print(
                f"What was made through it stays with project {escape(removed.project_id)}, "
                "read through its other registrations."
            )
        if removed.cascade:
            console.print(render_removed_contents(removed.deleted))

    emit(removed, as_json=as_json, for_people=for_people)
