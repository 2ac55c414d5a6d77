"""Claude Code's session transcript (`~/.claude/projects/<project>/<session>.jsonl`), one JSON
line at a time, mapped to neutral entries.

What is encoded, and where it was learned (read 2026-12-03 with the search tool: Claude Code's
transcripts are not a published format, so this follows public readers of them: the JSON
Schema `claude-code/v2.1.1/session.schema.json` of oneryalcin/agent-schemas, validated by its
author against 52,057 lines of CLI 2.0.76-2.1.1, and the format notes of
microsoft/amplifier `ai_working/claude_code_logging` and jwhenry28/claude-code-visualizer):

- Each line is an object with `type`. `user`, `assistant` and `system` lines carry `uuid`,
  `parentUuid`, `sessionId`, `timestamp` (ISO 8601, `Z`), `cwd`, `isSidechain`; `user` and
  `assistant` lines a `message` `{role, content}` whose content is a string or a list of
  blocks: `text` `{text}`, `image` `{source: {type: base64, media_type, data}}`, `thinking`
  `{thinking, signature}` (also `redacted_thinking`), `tool_use` `{id, name, input}`,
  `tool_result` `{tool_use_id, content: string | [text | image blocks], is_error?}`.
  An assistant reply is often written as several lines, one content block each, each with its
  own `uuid`. A user line holding a `tool_result` may repeat the result, structured, in
  `toolUseResult`: it is not read (the block is the text the model was given). `user` lines
  may be `isMeta` (text the harness injected) or `isCompactSummary` (the summary that continues
  a compacted conversation); `system` lines have a `subtype` (`compact_boundary`,
  `local_command`, `api_error`, ...) and a `content` string.
- `summary` lines `{summary, leafUuid}` name a conversation (no `uuid`, no time).
- Other types (`file-history-snapshot`, `queue-operation`, `progress`, ...) are not messages;
  only message lines name the session. Some of them (`progress`, `attachment`) have a `uuid`
  and `parentUuid` and are links of the tree below.
- The transcript is a tree, not a list (read 2026-12-05 from anthropics/claude-code issues
  #62301 and #55347 and public readers of the format: backnotprop/plannotator PR 1141,
  gmuxapp/gmux PR 438): every record names the one it follows in `parentUuid`. A rewind writes
  nothing of its own: the next message names an earlier one as its parent and what followed
  that one stays in the file, abandoned. On resume Claude Code takes the leaf written last and
  walks `parentUuid` back to the root; that path is the conversation. A `compact_boundary`
  system record has `parentUuid: null` and names the record before it in
  `logicalParentUuid`. Records the person did not write are marked: `isMeta`,
  `isCompactSummary`, and assistant messages whose `model` is `<synthetic>` (an API error,
  "No response requested."); the person's own lines may still carry text the harness wrapped
  or added: `<command-name>` / `<command-message>` / `<command-args>` (a slash command),
  `<local-command-stdout>` (its output), `<bash-input>` / `<bash-stdout>` (a `!` command),
  `[Request interrupted by user]`, `<task-notification>`, `<system-reminder>`, and the prompt
  that asks the model for a compaction summary.

The mapping (each decision is the importer's, not the agent's):

- The conversation is the path from the newest leaf back to the root (a leaf: a user or
  assistant record of the main conversation, not `isMeta`, that no other such record follows;
  the newest: the latest time, then the latest line; records that cannot end a conversation,
  such as `progress`, never do, even written later), across compaction
  boundaries through `logicalParentUuid`; messages off that path (an abandoned branch) are
  left out and counted (`abandoned`). A parent the file does not hold ends the path. This is
  decided over everything read (`conversation`), not line by line.
- user text and images -> one `user` message; images become `[image omitted]`, never bytes.
  Text the harness inserted is a `system` message that names its kind (`injected`, see
  `continuity.model.Injected`): a text block (or a `<system-reminder>` inside one) recognised
  by its marker, every text of an `isMeta` record (`meta`), the summary that continues a
  compacted conversation (`compaction_summary`, headed `[compaction summary]`).
- assistant text -> `assistant`; each `tool_use` -> an `assistant` message
  `[tool call NAME ID]` + the input as JSON; each `tool_result` -> a `tool` message
  `[tool result ID]` (`[tool result ID error]` when `is_error`) + its text.
- `thinking` blocks are left out (`reasoning`): they can hold what the model considered and
  discarded, secrets read along the way included, and are not part of what was said.
- Sidechain lines (`isSidechain: true`, a sub-agent's own conversation, written inline by older
  versions) are left out of a main transcript (`sidechain`): the sub-agent's answer reaches the
  main conversation as its Task tool's result, which is imported; interleaving the sub-agent's
  turns would break the thread's order. A sub-agent's own file (`<session>/subagents/
  agent-<agentId>.jsonl`: every line a sidechain with `agentId`, the main session's
  `sessionId`; learned from sonnes/chitragupt `docs/specs/004-subagents.md`) is imported whole,
  as the session `<sessionId>/agent-<agentId>`: a thread of its own.
- `system` lines with text -> `system` (`event`, or the kind its text shows); a `<synthetic>`
  assistant message -> `system` (`event`); `summary` lines -> `system` `[session summary]`
  (`session_title`).
- External IDs: the line's `uuid` for its first message, `uuid#2`, `uuid#3` ... for the next
  ones of the same line; `summary:<leafUuid>` for a summary.
"""

from __future__ import annotations

import re
from typing import Any, Final

from rutter_core.continuity.model import Injected, Role
from rutter_core.continuity.transcripts.fields import (
    as_json_text,
    identifier,
    instant,
    joined,
)
from rutter_core.continuity.transcripts.records import (
    IMAGE_PLACEHOLDER,
    Entry,
    LineOutcome,
    OmitReason,
    TreeNode,
    skipped,
)

_MESSAGE_TYPES: Final = ("user", "assistant", "system")
_BLOCK_NAME: Final = re.compile(r"[a-z][a-z0-9_]{0,39}")
_MARKERS: Final[tuple[tuple[str, Injected], ...]] = (
    ("[Request interrupted by user", "interruption"),
    ("<command-name>", "command"),
    ("<command-message>", "command"),
    ("<command-args>", "command"),
    ("<bash-input>", "command"),
    ("<local-command-stdout>", "command_output"),
    ("<local-command-stderr>", "command_output"),
    ("<bash-stdout>", "command_output"),
    ("<bash-stderr>", "command_output"),
    ("<task-notification>", "notification"),
    ("<system-reminder>", "reminder"),
    ("<local-command-caveat>", "meta"),
    ("Caveat: The messages below were generated by the user while running local commands",
     "meta"),
    ("Your task is to create a detailed summary of the conversation so far", "compaction_prompt"),
    ("This session is being continued from a previous conversation", "compaction_summary"),
)  # fmt: skip
"""How Claude Code marks the text it inserts in a user line, by the text's beginning."""
_REMINDER: Final = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)

Said = tuple[Role, str, Injected | None]


_MARKER: Final = re.compile(r"\s*(" + "|".join(re.escape(marker) for marker, _ in _MARKERS) + ")")
_KIND_OF_MARKER: Final[dict[str, Injected]] = dict(_MARKERS)


def harness_kind(text: str) -> Injected | None:
    """The kind of harness text this is, by its marker; None for the person's own words."""
    found = _MARKER.match(text)
    return None if found is None else _KIND_OF_MARKER[found[1]]


class Parser:
    """One transcript's parser. Whether the file is a sub-agent's own transcript is decided by
    its first message line: a sidechain carrying an `agentId` (newer versions write each
    sub-agent to `<session>/subagents/agent-<id>.jsonl`, every line so marked). There every line
    is imported and the session is `<sessionId>/agent-<agentId>` (its own thread, never the main
    conversation's); in a main transcript sidechain lines are left out."""

    def __init__(self) -> None:
        self._subagent: bool | None = None

    def __call__(self, record: dict[str, Any], line: int) -> LineOutcome:
        kind = record.get("type")
        if kind == "summary":
            return _summary(record, line)
        if kind not in _MESSAGE_TYPES:
            return LineOutcome(omitted=("metadata",), node=self._link(record, line))
        uuid = identifier(record.get("uuid"))
        session_id = identifier(record.get("sessionId"))
        if uuid is None or session_id is None:
            return skipped("unexpected_shape")
        sidechain = record.get("isSidechain") is True
        agent = identifier(record.get("agentId"))
        if self._subagent is None:
            self._subagent = sidechain and agent is not None
        if self._subagent:
            if agent is None:
                return skipped("unexpected_shape")
            session_id = f"{session_id}/agent-{agent}"
        elif sidechain:
            return LineOutcome(omitted=("sidechain",), session_id=session_id)
        cwd = record.get("cwd") if isinstance(record.get("cwd"), str) else None
        node = _node(record, line, uuid, leaf=kind != "system" and record.get("isMeta") is not True)
        return _message_line(record, line, kind, node, session_id, cwd)

    def _link(self, record: dict[str, Any], line: int) -> TreeNode | None:
        """A record that is no message but a link of the tree (`progress`, `attachment`):
        later messages may name it as their parent."""
        uuid = identifier(record.get("uuid"))
        if uuid is None or (record.get("isSidechain") is True and not self._subagent):
            return None
        return _node(record, line, uuid, leaf=False)


def parse_line(record: dict[str, Any], line: int) -> LineOutcome:
    """One line of a main transcript, on its own (a fresh `Parser`)."""
    return Parser()(record, line)


def _node(record: dict[str, Any], line: int, uuid: str, *, leaf: bool) -> TreeNode:
    parent = identifier(record.get("parentUuid")) or identifier(record.get("logicalParentUuid"))
    order = (instant(record.get("timestamp")), line)
    return TreeNode(uuid, parent, "parentUuid" in record, order, leaf)


def _message_line(
    record: dict[str, Any], line: int, kind: str, node: TreeNode, session_id: str, cwd: str | None
) -> LineOutcome:
    uuid = node.uuid
    exact = node.order[0]
    when = f"{exact[:19]}Z" if exact else None  # `fields.timestamp`, from the time read once
    if kind == "system":
        content = record.get("content")
        if isinstance(content, str) and content.strip():
            injected = harness_kind(content) or "event"
            entry = Entry(line, uuid, "system", content, when, injected=injected)
            return LineOutcome(entries=(entry,), session_id=session_id, cwd=cwd, node=node)
        return LineOutcome(omitted=("metadata",), session_id=session_id, cwd=cwd, node=node)
    message = record.get("message")
    if not isinstance(message, dict):
        return skipped("unexpected_shape")
    speaker: Role = "assistant" if kind == "assistant" else "user"
    whole: Injected | None = None
    if kind == "user" and record.get("isCompactSummary") is True:
        whole = "compaction_summary"
    elif kind == "user" and record.get("isMeta") is True:
        whole = "meta"
    elif kind == "assistant" and message.get("model") == "<synthetic>":
        whole = "event"
    parts = _parts(message.get("content"), speaker, whole)
    if parts is None:
        return skipped("unexpected_shape")
    said, omitted = parts
    if whole == "compaction_summary":
        said = [
            (role, f"[compaction summary]\n{text}", injected)
            if injected == "compaction_summary" else (role, text, injected)
            for role, text, injected in said
        ]  # fmt: skip
    entries = tuple(
        Entry(line, uuid if index == 0 else f"{uuid}#{index + 1}", role, text, when,
              injected=injected)
        for index, (role, text, injected) in enumerate(said)
    )  # fmt: skip
    if not entries and not omitted:
        omitted = ["empty"]
    return LineOutcome(
        entries=entries, omitted=tuple(omitted), session_id=session_id, cwd=cwd, node=node
    )


def _summary(record: dict[str, Any], line: int) -> LineOutcome:
    text = record.get("summary")
    leaf = identifier(record.get("leafUuid"))
    if not isinstance(text, str) or leaf is None:
        return skipped("unexpected_shape")
    if not text.strip():
        return LineOutcome(omitted=("empty",))
    return LineOutcome(entries=(Entry(line, f"summary:{leaf}", "system",
                                      f"[session summary]\n{text}", None,
                                      injected="session_title"),))  # fmt: skip


def _parts(
    content: object, speaker: Role, whole: Injected | None
) -> tuple[list[Said], list[OmitReason]] | None:
    """The messages a content (string or blocks) maps to, in order, and what it leaves out;
    None when it is neither. `whole`: the kind of harness text the whole record is, if it is
    one (its text blocks are then `system` messages of that kind, unless a marker says more)."""
    if isinstance(content, str):
        content = [content]
    if not isinstance(content, list):
        return None
    said: list[Said] = []
    omitted: list[OmitReason] = []
    pending: list[str] = []

    def flush() -> None:
        text = joined(pending)
        if text.strip():
            if whole is not None:
                said.append(("system", text, whole))
            else:
                said.append((speaker, text, None))
        pending.clear()

    def text_of(text: str) -> None:
        if speaker != "user":
            pending.append(text)
            return
        for piece, injected in _split_harness_text(text):
            if injected is None:
                pending.append(piece)
            else:
                flush()
                said.append(("system", piece, injected))

    for block in content:
        if isinstance(block, str):
            text_of(block)
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str):
                text_of(text)
        elif kind == "image":
            pending.append(IMAGE_PLACEHOLDER)
        elif kind in ("thinking", "redacted_thinking"):
            omitted.append("reasoning")
        elif kind == "tool_use":
            flush()
            said.append(("assistant", _tool_call(block), None))
        elif kind == "tool_result":
            flush()
            said.append(("tool", _tool_result(block), None))
        else:
            pending.append(_omitted_block(kind))
    flush()
    return said, omitted


def _split_harness_text(text: str) -> list[tuple[str, Injected | None]]:
    """A user text block as the person's words and the harness's text around them: a block that
    starts with a marker is the harness's whole; `<system-reminder>` blocks added to the
    person's words are cut out of them."""
    kind = harness_kind(text)
    if (kind is not None and kind != "reminder") or "</system-reminder>" not in text:
        return [(text, kind)]
    pieces: list[tuple[str, Injected | None]] = []
    start = 0
    for found in _REMINDER.finditer(text):
        before = text[start : found.start()]
        if before.strip():
            pieces.append((before.strip("\n"), None))
        pieces.append((found.group(0), "reminder"))
        start = found.end()
    rest = text[start:]
    if rest.strip():
        pieces.append((rest.strip("\n") if start else rest, harness_kind(rest)))
    return pieces


def _tool_call(block: dict[str, Any]) -> str:
    name = identifier(block.get("name")) or "tool"
    call = identifier(block.get("id"))
    head = f"[tool call {name} {call}]" if call else f"[tool call {name}]"
    body = as_json_text(block.get("input", {}))
    return f"{head}\n{body}" if body else head


def _tool_result(block: dict[str, Any]) -> str:
    call = identifier(block.get("tool_use_id"))
    head = f"[tool result {call}" if call else "[tool result"
    head += " error]" if block.get("is_error") is True else "]"
    body = tool_output_text(block.get("content"))
    return f"{head}\n{body}" if body.strip() else head


def tool_output_text(content: object) -> str:
    """A tool result's content (a string, or text and image blocks) as text."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for item in content:
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict):
            kind = item.get("type")
            if kind == "text" and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif kind == "image":
                parts.append(IMAGE_PLACEHOLDER)
            else:
                parts.append(_omitted_block(kind))
    return joined(parts)


def _omitted_block(kind: object) -> str:
    if isinstance(kind, str) and _BLOCK_NAME.fullmatch(kind):
        return f"[{kind} omitted]"
    return "[content omitted]"


__all__ = ["Parser", "harness_kind", "parse_line", "tool_output_text"]
