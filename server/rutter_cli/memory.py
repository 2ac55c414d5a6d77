"""`rutter context memory ...`: explicit user and project memory from the command line.

A thin surface over the app facade (`rutter.memory`): it turns options into the
operation's params, names itself as the actor ("cli", never taken from the command line), reads
`--content-file` with the core's fail-closed reader, and prints one JSON document (`--json`) or
tables (`rutter_cli.render_memory`). Project scope without `--workspace` uses the registered
workspace containing the current directory (docs/reference/workspaces.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit, print_json
from rutter_cli.render_memory import render_deleted, render_memory, render_memory_list
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import (
    DEFAULT_LIST_LIMIT,
    MAX_LIST_LIMIT,
    CreateMemoryParams,
    DeleteMemoryParams,
    EditMemoryParams,
    ExportMemoriesParams,
    GetMemoryParams,
    ListMemoriesParams,
    MemoryRecord,
    SetMemoryStatusParams,
    read_content_file,
)
from rutter_core.app.workspaces import InferWorkspaceParams
from rutter_core.kernel.errors import UsageError

"""Who this surface is; set here, never from an option."""

memory_app = typer.Typer(
    help="Explicit user and project memory: create, list, show, edit, enable/disable, export "
    "and delete (physically).",
    no_args_is_help=True,
)

MemoryId = Annotated[str, typer.Argument(metavar="ID", help="The memory's ID (mem_...).")]
Version = Annotated[
    int,
    typer.Option(
        "--version",
        help="The version you last saw (`show ID`); a stale version fails with exit 4.",
    ),
]
ScopeOption = Annotated[str, typer.Option("--scope", metavar="user|project", help="Memory scope.")]
WorkspaceOption = Annotated[
    str | None,
    typer.Option(
        "--workspace",
        help="Workspace ID of project memory (default: the registered workspace containing "
        "the current directory).",
    ),
]
AllFlag = Annotated[bool, typer.Option("--all", help="Include disabled and expired memories.")]
RedactFlag = Annotated[
    bool,
    typer.Option(
        "--redact-sensitive",
        help="Store text in which secrets were found with each secret replaced by "
        "[REDACTED:<kind>] instead of refusing it.",
    ),
]
References = Annotated[
    list[str] | None,
    typer.Option(
        "--reference",
        metavar="R",
        help="A path, URL or identifier the memory rests on (repeatable; at most 32).",
    ),
]
Retention = Annotated[
    str | None,
    typer.Option(
        "--retention",
        metavar="D",
        help="Keep until: a duration from now (720h, 30d, 1h30m) or an RFC 3339 time; at most "
        "ten years after creation.",
    ),
]


# -- helpers --------------------------------------------------------------------------------------


def _project_workspace(rutter: Rutter, scope: str | None, workspace_id: str | None) -> str | None:
    """The workspace project scope means: the one given, else the one around the cwd."""
    if scope == "project" and workspace_id is None:
        inferred = rutter.workspaces.infer(InferWorkspaceParams(directory=str(Path.cwd())))
        return inferred.workspace_id
    return workspace_id


def _show(record: MemoryRecord, *, as_json: bool, note: str | None = None) -> None:
    emit(
        record,
        as_json=as_json,
        for_people=lambda console: render_memory(console, record, note=note),
    )


# -- commands -------------------------------------------------------------------------------------


@memory_app.command("create")
def memory_create(
    ctx: typer.Context,
    scope: ScopeOption,
    title: Annotated[str, typer.Option("--title", help="One line, 1-256 bytes.")],
    content: Annotated[
        str | None, typer.Option("--content", help="The memory, 1 byte to 16 KiB.")
    ] = None,
    content_file: Annotated[
        str | None,
        typer.Option(
            "--content-file",
            metavar="F",
            help="Read the content from a regular UTF-8 file (not stdin, not a sensitive file).",
        ),
    ] = None,
    workspace_id: WorkspaceOption = None,
    references: References = None,
    retention: Retention = None,
    redact_sensitive: RedactFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Create a memory (version 1)."""
    if (content is None) == (content_file is None):
        raise UsageError(
            "content_required",
            "give the content with exactly one of --content C or --content-file F",
        )
    imported_from = None
    if content_file is not None:
        imported = read_content_file(content_file, cwd=Path.cwd())
        content, imported_from = imported.text, imported.source_ref
    assert content is not None
    with cli_app(ctx) as rutter:
        params = CreateMemoryParams(
            scope=scope,
            workspace_id=_project_workspace(rutter, scope, workspace_id),
            title=title,
            content=content,
            references=tuple(references or ()),
            retention=retention,
            redact_sensitive=redact_sensitive,
        )
        record = rutter.memory.create(params, actor=ACTOR, imported_from=imported_from)
    _show(record, as_json=as_json, note=f"Created memory {record.memory_id} (version 1)")


@memory_app.command("list")
def memory_list(
    ctx: typer.Context,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            metavar="user|project",
            help="Only this scope (default: every memory, or user plus --workspace's project "
            "memory when --workspace is given).",
        ),
    ] = None,
    workspace_id: WorkspaceOption = None,
    include_inactive: AllFlag = False,
    limit: Annotated[
        int,
        typer.Option(
            "--limit", help=f"At most this many, newest change first (1-{MAX_LIST_LIMIT})."
        ),
    ] = DEFAULT_LIST_LIMIT,
    as_json: JsonFlag = False,
) -> None:
    """List memories, newest change first; disabled and expired ones only with --all."""
    with cli_app(ctx, read_only=True) as rutter:
        params = ListMemoriesParams(
            scope=scope,
            workspace_id=_project_workspace(rutter, scope, workspace_id),
            all=include_inactive,
            limit=limit,
        )
        found = rutter.memory.list(params)
    emit(found, as_json=as_json, for_people=lambda console: render_memory_list(console, found))


@memory_app.command("show")
def memory_show(ctx: typer.Context, memory_id: MemoryId, as_json: JsonFlag = False) -> None:
    """Show one memory, whatever its status."""
    with cli_app(ctx, read_only=True) as rutter:
        record = rutter.memory.get(GetMemoryParams(id=memory_id))
    _show(record, as_json=as_json)


@memory_app.command("edit")
def memory_edit(
    ctx: typer.Context,
    memory_id: MemoryId,
    version: Version,
    title: Annotated[str | None, typer.Option("--title", help="New title.")] = None,
    content: Annotated[str | None, typer.Option("--content", help="New content.")] = None,
    references: References = None,
    clear_references: Annotated[
        bool, typer.Option("--clear-references", help="Remove every reference.")
    ] = False,
    retention: Annotated[
        str | None,
        typer.Option(
            "--retention",
            metavar="D",
            help="New retention: a duration from now, an RFC 3339 time, or `none` to keep the "
            "memory until it is deleted; at most ten years after creation.",
        ),
    ] = None,
    redact_sensitive: RedactFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Edit a memory at --version N; the result is version N+1. --reference replaces the list."""
    if clear_references and references:
        raise UsageError(
            "references_conflict", "give --reference R ... or --clear-references, not both"
        )
    new_references: tuple[str, ...] | None = None  # None: keep them
    if clear_references:
        new_references = ()
    elif references is not None:
        new_references = tuple(references)
    params = EditMemoryParams(
        id=memory_id,
        version=version,
        title=title,
        content=content,
        references=new_references,
        retention=retention,
        redact_sensitive=redact_sensitive,
    )
    with cli_app(ctx) as rutter:
        record = rutter.memory.edit(params, actor=ACTOR)
    note = f"Memory {record.memory_id} is now at version {record.version}"
    if record.purged is False:
        note += (
            "; the replaced text is still in the store's write-ahead log (another process "
            "held a read open) and leaves it at the next checkpoint"
        )
    _show(record, as_json=as_json, note=note)


def _set_status(
    ctx: typer.Context, memory_id: str, version: int, status: str, as_json: bool
) -> None:
    with cli_app(ctx) as rutter:
        params = SetMemoryStatusParams(id=memory_id, version=version, status=status)
        record = rutter.memory.set_status(params, actor=ACTOR)
    _show(
        record,
        as_json=as_json,
        note=f"Memory {record.memory_id} is {record.status} (version {record.version})",
    )


@memory_app.command("disable")
def memory_disable(
    ctx: typer.Context, memory_id: MemoryId, version: Version, as_json: JsonFlag = False
) -> None:
    """Disable a memory: it no longer enters any prompt; it is kept and can be enabled again."""
    _set_status(ctx, memory_id, version, "disabled", as_json)


@memory_app.command("enable")
def memory_enable(
    ctx: typer.Context, memory_id: MemoryId, version: Version, as_json: JsonFlag = False
) -> None:
    """Enable a disabled memory again."""
    _set_status(ctx, memory_id, version, "active", as_json)


@memory_app.command("export")
def memory_export(
    ctx: typer.Context,
    scope: ScopeOption,
    workspace_id: WorkspaceOption = None,
    include_inactive: AllFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Export one scope's memories as a context_memory_export.v1 JSON document (always JSON)."""
    with cli_app(ctx, read_only=True) as rutter:
        params = ExportMemoriesParams(
            scope=scope,
            workspace_id=_project_workspace(rutter, scope, workspace_id),
            all=include_inactive,
        )
        exported = rutter.memory.export(params)
    print_json(exported.to_json())


@memory_app.command("delete")
def memory_delete(
    ctx: typer.Context, memory_id: MemoryId, version: Version, as_json: JsonFlag = False
) -> None:
    """Delete a memory physically at --version N: it cannot be recovered afterwards."""
    with cli_app(ctx) as rutter:
        params = DeleteMemoryParams(id=memory_id, version=version)
        deleted = rutter.memory.delete(params, actor=ACTOR)
    emit(deleted, as_json=as_json, for_people=lambda console: render_deleted(console, deleted))


def _register_candidates() -> None:
    """`candidates` and `candidate ...`, from their own module (`rutter_cli.memory_candidates`)."""
    from rutter_cli.memory_candidates import candidate_app, memory_candidates

    memory_app.command("candidates")(memory_candidates)
    memory_app.add_typer(candidate_app, name="candidate")


_register_candidates()
