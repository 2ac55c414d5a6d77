"""`rutter history search|read`: search memories and the thread content of a run's lineage,
and read a hit's text in pages (contract section 12).

A thin surface over the app facade (`rutter.history`): options become the operation's params
and each command prints one JSON document (`--json`) or text for people.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from rutter_cli.common import JsonFlag, cli_app, make_console, print_json
from rutter_core.app.history import HistoryReadParams, HistorySearchParams

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
    with cli_app(ctx) as rutter:
        found = rutter.history.search(params)
    if as_json:
        print_json(found.to_json())
        return
    console = make_console()
    console.print(
        _searched(workspace_id, run_id, scopes or []), style="dim", highlight=False,
        soft_wrap=True,
    )  # fmt: skip
    if not found.hits:
        console.print("No hits." if run_id is not None else _NO_HITS_WITHOUT_RUN, soft_wrap=True)
    for number, hit in enumerate(found.hits, start=1):
        console.print(
            f"{number}. [bold]{hit.source_kind}[/bold] {hit.source_id} v{hit.version}: "
            f"{escape(hit.snippet)}",
            soft_wrap=True,
        )
        console.print(f"   read it: rutter history read {hit.handle}", soft_wrap=True)
    if found.next_cursor is not None:
        console.print(f"More: --cursor {found.next_cursor}", soft_wrap=True)


_NO_HITS_WITHOUT_RUN = (
    "No hits in memories. Without --run only memories are searched; --run RUN also searches "
    "the run's notes, messages, receipts, summaries and checkpoints."
)


def _searched(workspace_id: str | None, run_id: str | None, scopes: list[str]) -> str:
    """The scope a search covered, said before its hits: what was searched is a fact of the
    answer (an empty answer from memories alone reads differently from one over a run)."""
    if run_id is not None:
        where = f"your memories, the run's workspace's, and the threads of run {run_id}'s lineage"
    elif workspace_id is not None:
        where = f"your memories and workspace {workspace_id}'s (no run: no thread content)"
    else:
        where = "your memories only (no --workspace, no --run)"
    kinds = f" ({', '.join(scopes)} only)" if scopes else ""
    return f"Searched {where}{kinds}."


@history_app.command("read")
def history_read(
    ctx: typer.Context,
    handle: Annotated[str, typer.Argument(metavar="HANDLE", help="A hit's handle.")],
    page: Annotated[int, typer.Option("--page", metavar="N", help="The page, from 1.")] = 1,
    as_json: JsonFlag = False,
) -> None:
    """Read page N of the text HANDLE names, re-checked: changed is exit 4, gone exit 5."""
    with cli_app(ctx) as rutter:
        read = rutter.history.read(HistoryReadParams(handle=handle, page=page))
    if as_json:
        print_json(read.to_json())
        return
    console = make_console()
    console.print(escape(read.text), soft_wrap=True)
    console.print(f"(page {read.page} of {read.pages})", style="dim")
