"""`rutter session fork|resume|tree|compare`: branching a session from a node, its tree, and
comparing two nodes.

A thin surface over the app facade (`rutter.branches`): options become the operation's params,
the CLI is the actor ("cli", never taken from the command line), and each command prints one
JSON document (`--json`) or text for people (`rutter_cli.render_branches`). The commands join
the `rutter session` group (`register`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit
from rutter_cli.render_branches import render_branched, render_comparison, render_tree
from rutter_core.app.branches import CompareParams, ForkParams, ResumeParams, TreeParams

NodeId = Annotated[
    str,
    typer.Argument(
        metavar="NODE",
        help="A stored node's ID (node_...; see `rutter session tree`).",
    ),
]


OperationKey = Annotated[
    str | None,
    typer.Option(
        "--operation-key",
        metavar="KEY",
        help="The same key again answers the same run and never makes a second one.",
    ),
]


BranchWorkspace = Annotated[
    str | None,
    typer.Option(
        "--workspace",
        metavar="ID",
        help="Make the new run on this registration of NODE's project (another path or "
        "machine): its drift compares against these files. Default: NODE's own workspace.",
    ),
]


def fork(
    ctx: typer.Context,
    node_id: NodeId,
    goal: Annotated[str, typer.Option("--goal", help="What the new run should achieve.")],
    operation_key: OperationKey = None,
    workspace_id: BranchWorkspace = None,
    as_json: JsonFlag = False,
) -> None:
    """Start a new mission and run from NODE, pinned to the instructions NODE pins (pins are
    not inherited)."""
    params = ForkParams(
        node_id=node_id, goal=goal, operation_key=operation_key, workspace_id=workspace_id
    )
    with cli_app(ctx) as rutter:
        branched = rutter.branches.fork(params, actor=ACTOR)
    emit(branched, as_json=as_json, for_people=lambda console: render_branched(console, branched))


def resume(
    ctx: typer.Context,
    node_id: NodeId,
    operation_key: OperationKey = None,
    workspace_id: BranchWorkspace = None,
    as_json: JsonFlag = False,
) -> None:
    """Start a new run of NODE's mission from NODE, pinned to the instructions NODE pins."""
    params = ResumeParams(node_id=node_id, operation_key=operation_key, workspace_id=workspace_id)
    with cli_app(ctx) as rutter:
        branched = rutter.branches.resume(params, actor=ACTOR)
    emit(branched, as_json=as_json, for_people=lambda console: render_branched(console, branched))


def tree(
    ctx: typer.Context,
    subject: Annotated[
        str,
        typer.Argument(
            metavar="SESSION|RUN", help="A session's ID (ses_...) or a run's ID (run_...)."
        ),
    ],
    workspace_id: Annotated[
        str | None,
        typer.Option(
            "--workspace",
            metavar="ID",
            help="Compare against this registration's files (a location of the run's project "
            "on this machine). Default: each run's own workspace.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """The tree of continuity nodes SESSION or RUN belongs to, with drift markers of now."""
    if subject.startswith("ses_"):
        params = TreeParams(session_id=subject, workspace_id=workspace_id)
    else:
        params = TreeParams(run_id=subject, workspace_id=workspace_id)
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.branches.tree(params)
    emit(found, as_json=as_json, for_people=lambda console: render_tree(console, found))


def compare(
    ctx: typer.Context,
    node_a: Annotated[str, typer.Argument(metavar="NODE_A", help="The first node (A).")],
    node_b: Annotated[
        str, typer.Argument(metavar="NODE_B", help="The second node (B): changes are A to B.")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Compare two stored nodes: fingerprints, runs, instructions, git, memory, messages."""
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.branches.compare(CompareParams(node_a=node_a, node_b=node_b))
    emit(found, as_json=as_json, for_people=lambda console: render_comparison(console, found))


def register(group: typer.Typer) -> None:
    """Add the commands to the `rutter session` group."""
    group.command("fork")(fork)
    group.command("resume")(resume)
    group.command("tree")(tree)
    group.command("compare")(compare)
