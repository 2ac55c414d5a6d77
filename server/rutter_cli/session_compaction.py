"""`rutter session compact`, `rutter session compaction resolve` and `rutter session receipt
read`: compacting a thread, and paging back a tool result an assembly delivered as a receipt.

A thin surface over the app facade (`rutter.compaction`). Without `--json` the first line
printed (on stdout) is `operation key: KEY`, printed before the summarizer is called, so a
person whose terminal closes mid-call still has the key to ask again or to resolve with.
`--summarizer` and `--summarizer-command` also come from `RUTTER_SUMMARIZER` and
`RUTTER_SUMMARIZER_COMMAND`; the command is split like a shell would split words, and run
without one. The model summarizers' settings (`--summarizer-base-url`, `--summarizer-model`,
`--summarizer-key-env`) fall back to `RUTTER_SUMMARIZER_OPENAI_*` / `RUTTER_SUMMARIZER_ANTHROPIC_*`
in the app layer, which every surface shares.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from rutter_cli.common import ACTOR, JsonFlag, cli_app, emit
from rutter_core.app.compaction import Compaction, CompactParams, ResolveCompactionParams
from rutter_core.app.receipts import ReceiptReadParams
from rutter_core.kernel.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

compaction_app = typer.Typer(
    help="Compactions awaiting verification: resolve them.", no_args_is_help=True
)

SummarizerCommand = Annotated[
    str | None,
    typer.Option(
        "--summarizer-command",
        envvar="RUTTER_SUMMARIZER_COMMAND",
        metavar="'PROGRAM ARG...'",
        help="With --summarizer command: the program (prompt on stdin, summary on stdout), "
        "split into words without a shell.",
    ),
]
SummarizerTimeout = Annotated[
    int,
    typer.Option(
        "--summarizer-timeout",
        metavar="SECONDS",
        help="With --summarizer command, openai or anthropic: how long it may take (1-3600).",
    ),
]
SummarizerBaseUrl = Annotated[
    str | None,
    typer.Option(
        "--summarizer-base-url",
        metavar="URL",
        help="With --summarizer openai|anthropic: the endpoint (default "
        "RUTTER_SUMMARIZER_OPENAI_BASE_URL / _ANTHROPIC_BASE_URL, else the vendor's).",
    ),
]
SummarizerModel = Annotated[
    str | None,
    typer.Option(
        "--summarizer-model",
        metavar="MODEL",
        help="With --summarizer openai|anthropic: the model (default "
        "RUTTER_SUMMARIZER_OPENAI_MODEL / _ANTHROPIC_MODEL).",
    ),
]
SummarizerKeyEnv = Annotated[
    str | None,
    typer.Option(
        "--summarizer-key-env",
        metavar="NAME",
        help="With --summarizer openai|anthropic: the NAME of the environment variable holding "
        "the key (default OPENAI_API_KEY / ANTHROPIC_API_KEY; '' sends none).",
    ),
]


def _argv(command: str | None) -> tuple[str, ...]:
    if command is None:
        return ()
    try:
        return tuple(shlex.split(command))
    except ValueError:
        raise UsageError(
            "invalid_summarizer_command",
            "the summarizer command cannot be split into words (an unclosed quote?)",
            details={"field": "summarizer_command"},
        ) from None


def _announce(as_json: bool) -> Callable[[str], None]:
    def announce(key: str) -> None:
        if not as_json:
            sys.stdout.write(f"operation key: {key}\n")
            sys.stdout.flush()

    return announce


def _render(found: Compaction) -> None:
    lines = [
        f"compaction {found.compaction_id} of {found.thread_id}: {found.status}",
        f"summarizer: {found.summarizer}; {found.compacted_message_count} older messages "
        f"summarized ({found.unread_message_count} not read), "
        f"{len(found.kept_message_ids)} newest kept verbatim",
    ]
    if found.summary is not None:
        lines += [f"summary ({found.summary.tokens} tokens):", found.summary.text]
    sys.stdout.write("\n".join(lines) + "\n")


def compact(
    ctx: typer.Context,
    thread_id: Annotated[str, typer.Argument(metavar="THREAD", help="The thread (thr_...).")],
    focus: Annotated[
        str | None,
        typer.Option("--focus", metavar="TEXT", help="What the summary should keep in view."),
    ] = None,
    summarizer: Annotated[
        str,
        typer.Option(
            "--summarizer",
            envvar="RUTTER_SUMMARIZER",
            metavar="extractive|command|openai|anthropic",
            help="Who writes the summary: extractive (no model, the default), command (a "
            "program), openai (an OpenAI-compatible endpoint) or anthropic (the Messages API).",
        ),
    ] = "extractive",
    summarizer_command: SummarizerCommand = None,
    summarizer_timeout: SummarizerTimeout = 120,
    summarizer_base_url: SummarizerBaseUrl = None,
    summarizer_model: SummarizerModel = None,
    summarizer_key_env: SummarizerKeyEnv = None,
    input_tokens: Annotated[
        int,
        typer.Option(
            "--input-tokens",
            metavar="TOKENS",
            help="The summarizer's input window; older messages beyond it are not read.",
        ),
    ] = 24_000,
    operation_key: Annotated[
        str | None,
        typer.Option(
            "--operation-key",
            metavar="KEY",
            help="The same key again answers the stored result, never calling twice.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Summarize THREAD's older messages, keeping the newest 4 verbatim (nothing is deleted)."""
    params = CompactParams.model_validate(
        {
            "thread_id": thread_id,
            "focus": focus,
            "summarizer": summarizer,
            "summarizer_command": _argv(summarizer_command) if summarizer == "command" else (),
            "summarizer_timeout": summarizer_timeout,
            "summarizer_base_url": summarizer_base_url,
            "summarizer_model": summarizer_model,
            "summarizer_key_env": summarizer_key_env,
            "input_tokens": input_tokens,
            "operation_key": operation_key,
        }
    )
    with cli_app(ctx) as rutter:
        found = rutter.compaction.compact(params, actor=ACTOR, announce=_announce(as_json))
    emit(found, as_json=as_json, for_people=lambda _console: _render(found))


@compaction_app.command("resolve")
def resolve(
    ctx: typer.Context,
    operation_key: Annotated[
        str, typer.Argument(metavar="KEY", help="The pending compaction's operation key.")
    ],
    abandon: Annotated[
        bool, typer.Option("--abandon", help="Give it up: the thread can be compacted again.")
    ] = False,
    retry: Annotated[
        bool, typer.Option("--retry", help="Call the summarizer again on the same messages.")
    ] = False,
    summarizer_command: SummarizerCommand = None,
    summarizer_timeout: SummarizerTimeout = 120,
    summarizer_base_url: SummarizerBaseUrl = None,
    summarizer_model: SummarizerModel = None,
    summarizer_key_env: SummarizerKeyEnv = None,
    as_json: JsonFlag = False,
) -> None:
    """Resolve a compaction whose result is unknown (its process stopped mid-call)."""
    if abandon == retry:
        raise UsageError(
            "choose_one_action",
            "give exactly one of the two actions: abandon or retry",
            details={"field": "action"},
        )
    params = ResolveCompactionParams(
        operation_key=operation_key,
        action="abandon" if abandon else "retry",
        summarizer_command=_argv(summarizer_command),
        summarizer_timeout=summarizer_timeout,
        summarizer_base_url=summarizer_base_url,
        summarizer_model=summarizer_model,
        summarizer_key_env=summarizer_key_env,
    )
    with cli_app(ctx) as rutter:
        found = rutter.compaction.resolve(params, actor=ACTOR, announce=_announce(as_json))
    emit(found, as_json=as_json, for_people=lambda _console: _render(found))


receipt_app = typer.Typer(help="Read a tool receipt an assembly delivered.", no_args_is_help=True)


@receipt_app.command("read")
def receipt_read(
    ctx: typer.Context,
    receipt_id: Annotated[
        str, typer.Argument(metavar="RECEIPT", help="The receipt's ID (rcpt_...).")
    ],
    page: Annotated[int, typer.Option("--page", metavar="N", help="The page, from 1.")] = 1,
    as_json: JsonFlag = False,
) -> None:
    """Page the tool result RECEIPT names back, re-checked within its run's reach."""
    with cli_app(ctx, read_only=True) as rutter:
        found = rutter.receipts.read(ReceiptReadParams(receipt_id=receipt_id, page=page))

    def for_people(_console: Console) -> None:
        sys.stdout.write(f"receipt {found.receipt_id}, page {found.page} of {found.pages}\n")
        sys.stdout.write(found.text + ("" if found.text.endswith("\n") else "\n"))

    emit(found, as_json=as_json, for_people=for_people)


def register(group: typer.Typer) -> None:
    """Add the commands to the `rutter session` group."""
    group.command("compact")(compact)
    group.add_typer(compaction_app, name="compaction")
    group.add_typer(receipt_app, name="receipt")
