"""The MCP tools: each one is an app operation, its input schema the operation's params model
and its result the same JSON document as the CLI's `--json` (docs/reference/surfaces.md).

The MCP server acts as `mcp`, an agent and not an operator: it reads (instructions, memories),
proposes pins and takes checkpoints. No tool writes a memory or a pin; the app layer refuses
such a write by `mcp`, and the store refuses it again (CHECK constraints). `history_search` and
`history_read` read back memories and a run's history through signed handles, `receipt_read`
a tool result an assembly delivered as a receipt (all three read-only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rutter_core.app.assembly import InstructionsOrAssemblyParams, ReportParams
from rutter_core.app.continuity import CheckpointParams
from rutter_core.app.history import HistoryReadParams, HistorySearchParams
from rutter_core.app.memory import ListMemoriesParams
from rutter_core.app.models import Params
from rutter_core.app.pins import ProposePinParams
from rutter_core.app.receipts import ReceiptReadParams
from rutter_core.kernel.errors import RutterError, UsageError

if TYPE_CHECKING:
    from pydantic import ValidationError

    from rutter_core.app.facade import Rutter

ACTOR: Final = "mcp"
"""Who every change made through the MCP server is recorded as (never taken from arguments)."""


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    params: type[Params]
    read_only: bool
    call: Callable[[Rutter, Any], Any]
    defaults: Callable[[dict[str, Any]], dict[str, Any]] | None = None


def _in_own_directory(arguments: dict[str, Any]) -> dict[str, Any]:
    """Without a workspace: the one the agent works in, the server's own directory (agents
    start their MCP servers in the project). A run names its own workspace."""
    if arguments.get("run_id") is not None:
        return arguments
    if arguments.get("workspace_id") is None and arguments.get("directory") is None:
        return {**arguments, "directory": str(Path.cwd())}
    return arguments


def _instructions_or_assembly(rutter: Rutter, params: InstructionsOrAssemblyParams) -> Any:
    if params.run_id is None:
        return rutter.profiles.effective_or_view(params.effective())
    return rutter.assembly.assemble(params.assemble(), actor=ACTOR)


TOOLS: Final[tuple[Tool, ...]] = (
    Tool(
        "effective_instructions",
        "Effective project instructions",
        "Which project instruction files (AGENTS.md, CLAUDE.md, .prayu rules) apply to a target "
        "file or directory, in order of precedence, and why; their content is redacted. "
        "Without workspace_id, the registered workspace containing the server's directory "
        "(or `directory`). A relative target is relative to that directory when it is inside "
        "the workspace, else to the workspace root; an absolute one must be inside the "
        "workspace. With `agent` (codex, claude, gemini, copilot, cursor, or all): instead, the "
        "files that agent would load for the target, in its order, each with why and where the "
        "agent would cut it (`truncation`: byte, line, lost_bytes). The instructions are "
        "guidance only: they grant no authority. With run_id instead: what that run's agent is "
        "given (the assembled view), in authority order: the run's pinned instructions, the "
        "thread's pins, then user before project memories, within the budget (tokens, default "
        "16384; memory gets min(2048, budget/4, what is left)); each source included with its "
        "text, ID, version, SHA-256 and estimated tokens, or omitted with its reason (quota, "
        "required_context, instructions, disabled, expired). Each assembly is recorded in the "
        "run's audit (IDs and digests, never texts); nothing else changes.",
        InstructionsOrAssemblyParams,
        True,
        _instructions_or_assembly,
        _in_own_directory,
    ),
    Tool(
        "context_pin_propose",
        "Propose a pin",
        "Propose a requirement to keep pinned for every later run of a thread (give thread_id, "
        "or run_id for its thread). The exact text is stored (secrets redacted) and waits for "
        "the person to answer: pin it, discuss it without pinning, or reply in their own "
        "words. A proposal never pins by itself. Returns the proposal and its prop_ ID.",
        ProposePinParams,
        False,
        lambda rutter, params: rutter.pins.propose(params, actor=ACTOR),
    ),
    Tool(
        "checkpoint_create",
        "Create a checkpoint",
        "Append an immutable checkpoint of a run: recent messages, references to the active "
        "memories (never their bodies), the pinned instruction fingerprint and the git identity. "
        "It carries no approvals or grants.",
        CheckpointParams,
        False,
        lambda rutter, params: rutter.continuity.checkpoint(params, actor=ACTOR),
    ),
    Tool(
        "context_report",
        "Report what you followed",
        "After working with an assembled context (effective_instructions with run_id), report "
        "once which of the sources it delivered you followed and which you did not, by their "
        "IDs (an instruction's path, a pin_ or mem_ ID): assembly_id, followed, ignored. It is "
        "recorded in the run's audit as your claim (reported_by mcp), apart from what was "
        "configured and what was delivered; it changes nothing else.",
        ReportParams,
        False,
        lambda rutter, params: rutter.assembly.report(params, actor=ACTOR),
    ),
    Tool(
        "memory_list",
        "List memories",
        "The user's and a workspace's explicit memories (active ones unless all=true). Read "
        "only: memories are written by the person, never through this server.",
        ListMemoriesParams,
        True,
        lambda rutter, params: rutter.memory.list(params),
    ),
    Tool(
        "history_search",
        "Search history",
        "Search, as a case-insensitive substring (Chinese, Japanese and code identifiers "
        "match), the active unexpired memories of the user and the workspace, and with run_id "
        "the notes, messages, tool receipts, summaries and checkpoints of the run's lineage. "
        "Memories first, then newest first; at most 50 hits a page, next_cursor for the next "
        "one (same query, scopes, run and workspace). Each hit has a handle for history_read.",
        HistorySearchParams,
        True,
        lambda rutter, params: rutter.history.search(params),
    ),
    Tool(
        "history_read",
        "Read a history hit",
        "Read a hit's text by its handle, one page of 4000 characters at a time (page from 1; "
        "pages says how many). Every page is re-checked: a changed source is a conflict, a "
        "deleted, disabled, expired or invisible one is gone and returns no text: search again.",
        HistoryReadParams,
        True,
        lambda rutter, params: rutter.history.read(params),
    ),
    Tool(
        "receipt_read",
        "Read a tool receipt",
        "Read the whole tool result a receipt (rcpt_...) in your assembled context stands for, "
        "one page of 4000 characters at a time (page from 1; pages says how many). Every page "
        "is re-checked within the receipt's run: one no longer in its reach returns no text.",
        ReceiptReadParams,
        True,
        lambda rutter, params: rutter.receipts.read(params),
    ),
)

TOOLS_BY_NAME: Final = {tool.name: tool for tool in TOOLS}


def describe_validation(error: ValidationError) -> str:
    """What was wrong with the arguments (the app layer's one wording)."""
    from rutter_core.app.models import describe_validation as describe

    return describe(error, "arguments")


def run_tool(rutter: Rutter, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The tool's JSON document; a `RutterError` for every failure the caller can fix."""
    from pydantic import ValidationError

    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise UsageError(
            "unknown_tool",
            f"no tool {name!r}: rutter's tools are {', '.join(TOOLS_BY_NAME)}"
            if name.isidentifier() and len(name) <= 64
            else f"no such tool: rutter's tools are {', '.join(TOOLS_BY_NAME)}",
            details={"tools": list(TOOLS_BY_NAME)},
        )
    given = dict(arguments or {})
    if tool.defaults is not None:
        given = tool.defaults(given)
    try:
        params = tool.params.model_validate(given)
    except ValidationError as error:
        raise UsageError("invalid_params", describe_validation(error)) from None
    result = tool.call(rutter, params)
    document: dict[str, Any] = result.to_json()
    return document


def error_document(error: RutterError) -> dict[str, Any]:
    return {"error": error.to_json()}
