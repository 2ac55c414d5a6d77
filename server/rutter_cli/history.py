"""`rutter history search|read`: search memories and the thread content of a run's lineage,
and read a hit's text in pages (docs/reference/history.md).

A thin surface over the app facade (`rutter.history`): options become the operation's params
and each command prints one JSON document (`--json`) or text for people.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from rutter_cli.common import JsonFlag, cli_app, emit
from rutter_core.app.history import HistoryReadParams, HistorySearchParams

if TYPE_CHECKING:
    from rich.console import Console

history_app = typer.Typer(
    help="Search memories and a run's history (notes, messages, receipts, summaries, "
    "checkpoints), and read a hit in pages.",
    no_args_is_help=True,
)


@history_app.command("search")
def history_search(
    ctx: typer.Context,
    query: Annotated[
        str,
        typer.Argument(
            metavar="QUERY",
            help="Text to find as a substring, case-insensitive (1-256 characters).",
        ),
    ],
    workspace_id: Annotated[
        str | None,
        typer.Option("--workspace", metavar="ID", help="Search this workspace's memories."),
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run",
            metavar="RUN",
            help="Search the run's lineage (its thread and the threads it was forked or "
            "resumed from) and its workspace's memories.",
        ),
    ] = None,
    scopes: Annotated[
        list[str] | None,
        typer.Option(
            "--scope",
            metavar="S",
            help="memory, note, message, receipt, summary or checkpoint (repeat; default all).",
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", metavar="N", help="Hits per page (1-50).")] = 20,
    cursor: Annotated[
        str | None,
        typer.Option("--cursor", metavar="C", help="next_cursor of the previous page."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Search for QUERY; each hit carries a handle for `rutter history read`."""
    params = HistorySearchParams.model_validate(
        {
            "query": query,
            "workspace_id": workspace_id,
            "run_id": run_id,
            "scopes": scopes or None,
            "limit": limit,
            "cursor": cursor,
        }
    )
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.history.search(params)

    def for_people(console: Console) -> None:
        searched = searched_where(run_id, workspace_id, scopes or [])
        if not found.hits:
            console.print(f"No hits in {searched}.", highlight=False)
            if run_id is None:
                console.print(
                    "Without --run only memories are searched: give --run RUN to search that run's "
                    "notes, messages, receipts, summaries and checkpoints too"
                    + ("" if workspace_id else ", or --workspace ID for a workspace's memories")
                    + ".",
                    highlight=False,
                )
        else:
            count = len(found.hits)
            more = " (more: see below)" if found.next_cursor is not None else ""
            console.print(
                f"{count} hit{'s' if count != 1 else ''} in {searched}{more}:", highlight=False
            )
        for number, hit in enumerate(found.hits, 1):
            where = "" if hit.thread_id is None else f" in thread {hit.thread_id}"
            when = "" if hit.recorded_at is None else f", {hit.recorded_at}"
            console.print(
                f"{number:>2}. [bold]{hit.source_kind}[/bold] {hit.source_id} "
                f"v{hit.version}{when}{where}",
                soft_wrap=True,
            )
            console.print(f"    {escape(hit.snippet)}", soft_wrap=True, highlight=False)
            console.print(f"    read: rutter history read {hit.handle}", soft_wrap=True)
        if found.next_cursor is not None:
            console.print(f"More: --cursor {found.next_cursor}", soft_wrap=True)

    emit(found, as_json=as_json, for_people=for_people)


def searched_where(run_id: str | None, workspace_id: str | None, scopes: list[str]) -> str:
    """What a search looked in, for people: an empty answer from memories alone reads
    differently from one over a run."""
    kinds = f" ({', '.join(scopes)} only)" if scopes else ""
    if run_id is not None:
        where = f"run {run_id}'s lineage (its threads and those it came from) and its memories"
    elif workspace_id is not None:
        where = f"the memories of workspace {workspace_id} and your user memories"
    else:
        where = "your user memories"
    return where + kinds


@history_app.command("read")
def history_read(
    ctx: typer.Context,
    handle: Annotated[str, typer.Argument(metavar="HANDLE", help="A hit's handle.")],
    page: Annotated[int, typer.Option("--page", metavar="N", help="The page, from 1.")] = 1,
    as_json: JsonFlag = False,
) -> None:
    """Read page N of the text HANDLE names, re-checked: changed is exit 4, gone exit 5."""
    with cli_app(ctx, read_only=True) as rutter:
        read = rutter.history.read(HistoryReadParams(handle=handle, page=page))

    def for_people(console: Console) -> None:
        console.print(escape(read.text), soft_wrap=True)
        console.print(f"(page {read.page} of {read.pages})", style="dim")

    emit(read, as_json=as_json, for_people=for_people)
