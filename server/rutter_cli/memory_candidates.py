"""`rutter context memory candidates` and `... candidate show|confirm|ignore`: experience
candidates from the command line.

A thin surface over the app facade (`rutter.candidates`): options become the operation's params,
the actor is this surface's own ("cli"), and the answer is printed as one JSON document
(`--json`) or for people (`rutter_cli.render_candidates`). Without `--workspace`, the workspace
is the registered one containing the current directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit
from rutter_cli.render_candidates import render_candidate, render_candidates, render_confirmed
from rutter_core.app.candidates import (
    ConfirmCandidateParams,
    GetCandidateParams,
    IgnoreCandidateParams,
    ListCandidatesParams,
)
from rutter_core.app.facade import Rutter
from rutter_core.app.workspaces import InferWorkspaceParams

if TYPE_CHECKING:
    from rich.console import Console

candidate_app = typer.Typer(
    help="Review one experience candidate: show it, confirm it into project memory, or ignore it.",
    no_args_is_help=True,
)

CandidateId = Annotated[
    str, typer.Argument(metavar="ID", help="The candidate's ID (cand_..., as listed).")
]
Version = Annotated[
    int,
    typer.Option(
        "--version", help="The candidate's version as shown; a stale version fails with exit 4."
    ),
]
WorkspaceOption = Annotated[
    str | None,
    typer.Option(
        "--workspace",
        help="The workspace (default: the registered workspace containing the current directory).",
    ),
]
CandidateWorkspace = Annotated[
    str | None,
    typer.Option("--workspace", help="When given, the candidate must belong to this workspace."),
]


def _workspace(rutter: Rutter, workspace_id: str | None) -> str:
    if workspace_id is not None:
        return workspace_id
    return rutter.workspaces.infer(InferWorkspaceParams(directory=str(Path.cwd()))).workspace_id


def memory_candidates(
    ctx: typer.Context, workspace_id: WorkspaceOption = None, as_json: JsonFlag = False
) -> None:
    """List the workspace's experience candidates: referenced decisions and summaries of work
    that has a completion record, waiting for a person to confirm or ignore them."""
    with cli_app(ctx, read_only=True) as rutter:
        params = ListCandidatesParams(workspace_id=_workspace(rutter, workspace_id))
        found = rutter.candidates.list(params)
    emit(found, as_json=as_json, for_people=lambda console: render_candidates(console, found))


@candidate_app.command("show")
def candidate_show(
    ctx: typer.Context,
    candidate_id: CandidateId,
    workspace_id: CandidateWorkspace = None,
    as_json: JsonFlag = False,
) -> None:
    """Show one candidate: the exact text it would save, or, once resolved, its review."""
    with cli_app(ctx, read_only=True) as rutter:
        params = GetCandidateParams(id=candidate_id, workspace_id=workspace_id)
        candidate = rutter.candidates.get(params)
    emit(
        candidate,
        as_json=as_json,
        for_people=lambda console: render_candidate(console, candidate),
    )


@candidate_app.command("confirm")
def candidate_confirm(
    ctx: typer.Context,
    candidate_id: CandidateId,
    version: Version,
    fingerprint: Annotated[
        str, typer.Option("--fingerprint", help="The candidate's fingerprint as shown.")
    ],
    source_version: Annotated[
        int,
        typer.Option(
            "--source-version",
            help="The source note's version as shown; a note changed since fails with exit 4.",
        ),
    ],
    workspace_id: CandidateWorkspace = None,
    redact_sensitive: Annotated[
        bool,
        typer.Option(
            "--redact-sensitive",
            help="Save text in which secrets were found with each secret replaced by "
            "[REDACTED:<kind>] instead of refusing it.",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Save the candidate as project memory (you confirm by running this) and resolve it."""
    params = ConfirmCandidateParams(
        id=candidate_id,
        workspace_id=workspace_id,
        version=version,
        fingerprint=fingerprint,
        source_version=source_version,
        confirm=True,
        redact_sensitive=redact_sensitive,
    )
    with cli_app(ctx) as rutter:
        confirmed = rutter.candidates.confirm(params, actor=ACTOR)
    emit(
        confirmed,
        as_json=as_json,
        for_people=lambda console: render_confirmed(console, confirmed),
    )


@candidate_app.command("ignore")
def candidate_ignore(
    ctx: typer.Context,
    candidate_id: CandidateId,
    version: Version,
    workspace_id: CandidateWorkspace = None,
    as_json: JsonFlag = False,
) -> None:
    """Resolve the candidate without saving anything."""
    params = IgnoreCandidateParams(id=candidate_id, workspace_id=workspace_id, version=version)
    with cli_app(ctx) as rutter:
        ignored = rutter.candidates.ignore(params, actor=ACTOR)

    def for_people(console: Console) -> None:
        render_candidate(console, ignored, note=f"Ignored candidate {ignored.candidate_id}")

    emit(ignored, as_json=as_json, for_people=for_people)
