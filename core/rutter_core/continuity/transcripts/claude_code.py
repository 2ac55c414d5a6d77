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
  own `uuid`. `user` lines may be `isMeta` (text the harness injected) or `isCompactSummary`
  (the summary that continues a compacted conversation); `system` lines have a `subtype`
  (`compact_boundary`, `local_command`, `api_error`, ...) and a `content` string.
- `summary` lines `{summary, leafUuid}` name a conversation (no `uuid`, no time).
- Other types (`file-history-snapshot`, `queue-operation`, ...) are not messages; only message
  lines name the session.

The mapping (each decision is the importer's, not the agent's):

- user text and images -> one `user` message (`isMeta` and compaction summaries -> `system`,
  the latter headed `[compaction summary]`); images become `[image omitted]`, never bytes.
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
- `system` lines with text -> `system`; `summary` lines -> `system` `[session summary]`.
- External IDs: the line's `uuid` for its first message, `uuid#2`, `uuid#3` ... for the next
  ones of the same line; `summary:<leafUuid>` for a summary.
"""

from __future__ import annotations

import re
from typing import Any, Final

from rutter_core.continuity.model import Role
from rutter_core.continuity.transcripts.fields import as_json_text, identifier, joined, timestamp
from rutter_core.continuity.transcripts.records import (
    IMAGE_PLACEHOLDER,
    Entry,
    LineOutcome,
    OmitReason,
    skipped,
)

_MESSAGE_TYPES: Final = ("user", "assistant", "system")
_BLOCK_NAME: Final = re.compile(r"[a-z][a-z0-9_]{0,39}")


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
            return LineOutcome(omitted=("metadata",))
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
        return _message_line(record, line, kind, uuid, session_id, cwd)


def parse_line(record: dict[str, Any], line: int) -> LineOutcome:
    """One line of a main transcript, on its own (a fresh `Parser`)."""
    return Parser()(record, line)


def _message_line(
    record: dict[str, Any], line: int, kind: str, uuid: str, session_id: str, cwd: str | None
) -> LineOutcome:
    when = timestamp(record.get("timestamp"))
    if kind == "system":
        content = record.get("content")
        if isinstance(content, str) and content.strip():
            entry = Entry(line, uuid, "system", content, when)
            return LineOutcome(entries=(entry,), session_id=session_id, cwd=cwd)
        return LineOutcome(omitted=("metadata",), session_id=session_id, cwd=cwd)
    message = record.get("message")
    if not isinstance(message, dict):
        return skipped("unexpected_shape")
    speaker: Role = "assistant" if kind == "assistant" else "user"
    header = ""
    if kind == "user" and record.get("isCompactSummary") is True:
        speaker, header = "system", "[compaction summary]\n"
    elif kind == "user" and record.get("isMeta") is True:
        speaker = "system"
    parts = _parts(message.get("content"), speaker)
    if parts is None:
        return skipped("unexpected_shape")
    said, omitted = parts
    if header and said and said[0][0] == "system":
        said[0] = ("system", header + said[0][1])
    entries = tuple(
        Entry(line, uuid if index == 0 else f"{uuid}#{index + 1}", role, text, when)
        for index, (role, text) in enumerate(said)
    )
    if not entries and not omitted:
        omitted = ["empty"]
    return LineOutcome(entries=entries, omitted=tuple(omitted), session_id=session_id, cwd=cwd)


def _summary(record: dict[str, Any], line: int) -> LineOutcome:
    text = record.get("summary")
    leaf = identifier(record.get("leafUuid"))
    if not isinstance(text, str) or leaf is None:
        return skipped("unexpected_shape")
    if not text.strip():
        return LineOutcome(omitted=("empty",))
    return LineOutcome(entries=(Entry(line, f"summary:{leaf}", "system",
                                      f"[session summary]\n{text}", None),))  # fmt: skip


def _parts(
    content: object, speaker: Role
) -> tuple[list[tuple[Role, str]], list[OmitReason]] | None:
    """The messages a content (string or blocks) maps to, in order, and what it leaves out;
    None when it is neither."""
    if isinstance(content, str):
        return ([(speaker, content)] if content.strip() else []), []
    if not isinstance(content, list):
        return None
    said: list[tuple[Role, str]] = []
    omitted: list[OmitReason] = []
    pending: list[str] = []

    def flush() -> None:
        text = joined(pending)
        if text.strip():
            said.append((speaker, text))
        pending.clear()

    for block in content:
        if isinstance(block, str):
            pending.append(block)
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str):
                pending.append(text)
        elif kind == "image":
            pending.append(IMAGE_PLACEHOLDER)
        elif kind in ("thinking", "redacted_thinking"):
            omitted.append("reasoning")
        elif kind == "tool_use":
            flush()
            said.append(("assistant", _tool_call(block)))
        elif kind == "tool_result":
            flush()
            said.append(("tool", _tool_result(block)))
        else:
            pending.append(_omitted_block(kind))
    flush()
    return said, omitted


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


__all__ = ["Parser", "parse_line", "tool_output_text"]
