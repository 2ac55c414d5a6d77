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

from rutter_core.app.assembly import AssemblyOperations, InstructionsOrAssemblyParams, ReportParams
from rutter_core.app.continuity import CheckpointParams, ContinuityOperations
from rutter_core.app.history import HistoryOperations, HistoryReadParams, HistorySearchParams
from rutter_core.app.instructions import Snapshot
from rutter_core.app.memory import ListMemoriesParams, MemoryOperations
from rutter_core.app.models import Params
from rutter_core.app.pins import OwnProposalsParams, PinOperations, ProposePinParams
from rutter_core.app.profiles import ProfileOperations
from rutter_core.app.receipts import ReceiptOperations, ReceiptReadParams
from rutter_core.kernel.errors import UsageError

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

ACTOR: Final = "mcp"
"""Who every change made through the MCP server is recorded as (never taken from arguments)."""


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    summary: str
    """One line for the server's instructions, which name every tool."""
    description: str
    params: type[Params]
    read_only: bool
    """Annotated `readOnlyHint`: a tool that appends anything (a checkpoint, a proposal, a row
    of a run's audit) is not read-only, and not idempotent."""
    call: Callable[[Rutter, Any], Any]
    answers: tuple[Callable[..., Any], ...]
    """The app operations whose result the tool answers with (more than one where the answer
    depends on the arguments): the output schema is generated from their result models."""
    defaults: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    def result(self) -> Any:
        """The result model (a union of them) of the tool's operations, read off their
        signatures."""
        import typing

        results = tuple(typing.get_type_hints(operation)["return"] for operation in self.answers)
        return results[0] if len(results) == 1 else typing.Union[results]  # noqa: UP007

    def output_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's structured content, as pydantic dumps the result (an
        object at the top, as MCP asks of an output schema, also when the result is a union)."""
        from pydantic import TypeAdapter

        schema: dict[str, Any] = TypeAdapter(self.result()).json_schema(mode="serialization")
        return schema if schema.get("type") == "object" else {"type": "object", **schema}


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
        answer = rutter.profiles.effective_or_view(params.effective())
        bound = params.content_bound()
        if bound is None or not isinstance(answer, Snapshot):
            return answer  # an agent's view carries no bodies
        return answer.with_bodies_cut(bound)
    return rutter.assembly.assemble(params.assemble(), actor=ACTOR)


TOOLS: Final[tuple[Tool, ...]] = (
    Tool(
        "effective_instructions",
        "Effective project instructions",
        "which instruction files apply to a file and why (with run_id: what a run's agent "
        "is given)",
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
        "run's audit (IDs and digests, never texts); nothing else changes. So the tool is not "
        "read-only: with run_id each call appends to the audit.",
        InstructionsOrAssemblyParams,
        False,
        _instructions_or_assembly,
        (ProfileOperations.effective_or_view, AssemblyOperations.assemble),
        _in_own_directory,
    ),
    Tool(
        "context_pin_propose",
        "Propose a pin",
        "propose a requirement to pin for a thread; the person answers it",
        "Propose a requirement to keep pinned for every later run of a thread (give thread_id, "
        "or run_id for its thread, or both when the run is the thread's: a run of another "
        "thread is refused as thread_run_mismatch). The exact text is stored (secrets "
        "redacted) and waits for the person to answer: pin it, discuss it without pinning, "
        "or reply in their own words. A proposal never pins by itself. Returns the proposal "
        "and its prop_ ID; context_pin_proposals tells how it was answered.",
        ProposePinParams,
        False,
        lambda rutter, params: rutter.pins.propose(params, actor=ACTOR),
        (PinOperations.propose,),
    ),
    Tool(
        "context_pin_proposals",
        "Your proposals and their answers",
        "the proposals you made for a thread and how each was answered (read-only)",
        "The pins you proposed (context_pin_propose) for a thread, oldest first, each with its "
        "status (pending or answered) and, once answered, the person's choice (pin: pinned as "
        "shown; discuss: not pinned, maybe with a reply; custom: their own words, pinned only "
        "when pin_id is set), reply and pin_id. Give thread_id, or run_id for its thread, or "
        "both when the run is the thread's; status: only pending or only answered. Lists only "
        "proposals made through this server (proposed_by mcp). Read only.",
        OwnProposalsParams,
        True,
        lambda rutter, params: rutter.pins.own_proposals(params, actor=ACTOR),
        (PinOperations.own_proposals,),
    ),
    Tool(
        "checkpoint_create",
        "Create a checkpoint",
        "append a checkpoint of a run",
        "Append an immutable checkpoint of a run: recent messages, references to the active "
        "memories (never their bodies), the pinned instruction fingerprint and the git identity. "
        "It carries no approvals or grants.",
        CheckpointParams,
        False,
        lambda rutter, params: rutter.continuity.checkpoint(params, actor=ACTOR),
        (ContinuityOperations.checkpoint,),
    ),
    Tool(
        "context_report",
        "Report what you followed",
        "report which sources of an assembled context you followed",
        "After working with an assembled context (effective_instructions with run_id), report "
        "once which of the sources it delivered you followed and which you did not, by their "
        "IDs (an instruction's path, a pin_ or mem_ ID): assembly_id, followed, ignored. It is "
        "recorded in the run's audit as your claim (reported_by mcp), apart from what was "
        "configured and what was delivered; it changes nothing else.",
        ReportParams,
        False,
        lambda rutter, params: rutter.assembly.report(params, actor=ACTOR),
        (AssemblyOperations.report,),
    ),
    Tool(
        "memory_list",
        "List memories",
        "the person's explicit memories (read-only)",
        "The user's and a workspace's explicit memories (active ones unless all=true). Read "
        "only: memories are written by the person, never through this server.",
        ListMemoriesParams,
        True,
        lambda rutter, params: rutter.memory.list(params),
        (MemoryOperations.list,),
    ),
    Tool(
        "history_search",
        "Search history",
        "search memories and a run's history (read-only)",
        "Search, as a case-insensitive substring (Chinese, Japanese and code identifiers "
        "match), the active unexpired memories of the user and the workspace, and with run_id "
        "the notes, messages, tool receipts, summaries and checkpoints of the run's lineage. "
        "Memories first, then newest first; at most 50 hits a page, next_cursor for the next "
        "one (same query, scopes, run and workspace). Each hit has a handle for history_read.",
        HistorySearchParams,
        True,
        lambda rutter, params: rutter.history.search(params),
        (HistoryOperations.search,),
    ),
    Tool(
        "history_read",
        "Read a history hit",
        "read a search hit's text by its handle (read-only)",
        "Read a hit's text by its handle, one page of 4000 characters at a time (page from 1; "
        "pages says how many). Every page is re-checked: a changed source is a conflict, a "
        "deleted, disabled, expired or invisible one is gone and returns no text: search again.",
        HistoryReadParams,
        True,
        lambda rutter, params: rutter.history.read(params),
        (HistoryOperations.read,),
    ),
    Tool(
        "receipt_read",
        "Read a tool receipt",
        "read the whole tool result a receipt in your context stands for (read-only)",
        "Read the whole tool result a receipt (rcpt_...) in your assembled context stands for, "
        "one page of 4000 characters at a time (page from 1; pages says how many). Every page "
        "is re-checked within the receipt's run: one no longer in its reach returns no text.",
        ReceiptReadParams,
        True,
        lambda rutter, params: rutter.receipts.read(params),
        (ReceiptOperations.read,),
    ),
)

TOOLS_BY_NAME: Final = {tool.name: tool for tool in TOOLS}


def sent_texts_of(name: str, arguments: dict[str, Any] | None) -> set[str]:
    """What no error may repeat: every string of the arguments' values, and the keys and the
    tool name that are not nameable (`nameable_key`; the others an error may name)."""
    from rutter_core.app.models import nameable_key
    from rutter_core.kernel.echo import sent_texts

    given = arguments or {}
    sent = sent_texts(list(given.values()))
    sent |= {key for key in given if not nameable_key(key)}
    if not nameable_key(name):
        sent.add(name)
    return sent


def run_tool(rutter: Rutter, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The tool's JSON document; a `RutterError` for every failure the caller can fix."""
    from pydantic import ValidationError

    from rutter_core.app.models import invalid_params, nameable_key
    from rutter_core.kernel.numbers import number_out_of_range, numbers_in_range

    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise UsageError(
            "unknown_tool",
            f"no tool {name!r}: rutter's tools are {', '.join(TOOLS_BY_NAME)}"
            if nameable_key(name)
            else f"no such tool: rutter's tools are {', '.join(TOOLS_BY_NAME)}",
            details={"tools": list(TOOLS_BY_NAME)},
        )
    if not numbers_in_range(arguments):  # before the store sees one it cannot hold
        raise number_out_of_range()
    given = dict(arguments or {})
    if tool.defaults is not None:
        given = tool.defaults(given)
    try:
        params = tool.params.model_validate(given)
    except ValidationError as error:
        raise invalid_params(error) from None
    result = tool.call(rutter, params)
    document: dict[str, Any] = result.to_json()
    return document
