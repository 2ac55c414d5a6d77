"""Codex's session rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`), one JSON
line at a time, mapped to neutral entries.

What is encoded, and where it was learned (read 2026-12-03 with the search tool, from the
openai/codex repository: `codex-rs/protocol/src/protocol.rs` (`RolloutLine`, `RolloutItem`,
`SessionMetaLine`, `CompactedItem`) and `codex-rs/protocol/src/models.rs` (`ResponseItem`,
`ContentItem`, `FunctionCallOutputPayload`), cross-checked with a parser-ready description of
tag rust-v0.128.0):

- Each line is `{"timestamp", "type", "payload"}`; `type` is `session_meta`, `response_item`,
  `compacted`, `turn_context` or `event_msg` (serde: tag `type`, content `payload`).
- `session_meta`: `{id, timestamp, cwd, originator, cli_version, source, ...}` once, first.
  `id` is the session (thread) ID. A resumed session appends to the same file.
- `response_item` payloads (tag `type`): `message` `{role, content: [input_text {text} |
  output_text {text} | input_image {image_url}]}`, `reasoning` `{summary, content?,
  encrypted_content}`, `function_call` `{name, arguments (a JSON string), call_id}`,
  `function_call_output` `{call_id, output}` (output: a string, a list of `input_text` /
  `input_image` items, or in older files `{content, success}`), `custom_tool_call`
  `{call_id, name, input}`, `custom_tool_call_output` `{call_id, output}`,
  `local_shell_call` `{call_id?, status, action}`, `web_search_call` `{action}`, and others
  (`compaction` with encrypted content, `ghost_snapshot`, ...). Items carry no ID on disk (the
  API's item IDs are not serialized).
- `compacted`: `{message, replacement_history?}`: the summary that replaces the history.
- `turn_context` (settings of a turn) and `event_msg` (events for the interface; their
  `user_message` / `agent_message` repeat what the response items hold) are not messages.
  One event changes the conversation: `thread_rolled_back` `{num_turns}` (`ThreadRolledBackEvent`
  in `codex-rs/protocol/src/protocol.rs`, read 2026-12-05) undoes the last `num_turns` turns
  the person started (see `conversation.CodexTurns`).
- `function_call` and `custom_tool_call` may carry a `namespace` (an MCP server's
  `mcp__<server>__`, a tool family such as `collaboration`): the tool's full name is the
  namespace and the name together (`ToolName::new(namespace, name)` in
  `codex-rs/core/src/tools/router.rs`).
- User-role messages that are context Codex inserted start with a marker
  (`codex-rs/core/src/contextual_user_message.rs`, matched case-insensitively):
  `# AGENTS.md instructions for `, `<environment_context>`, `<user_instructions>`,
  `<skill>`, `<user_shell_command>`, `<turn_aborted>`, `<subagent_notification>`; they are not
  turns the person started.
- Older rollouts (2025, before the envelope; described by Sinity/polylogue's
  `docs/providers/openai-codex.md`) start with `{id, timestamp, instructions?}` and hold bare
  response items without times, and `{"record_type": "state"}` lines: read the same way.

The mapping (the importer's decisions):

- `message`: `user` -> `user`, `assistant` -> `assistant`, `developer` / `system` -> `system`
  (`instructions`); a user message that is context Codex inserted -> `system` with its kind
  (`instructions`, `environment_context`, `skill`, `command`, `interruption`,
  `notification`). Images -> `[image omitted]`.
- `function_call`, `custom_tool_call`, `local_shell_call`, `web_search_call` -> `assistant`
  `[tool call NAME CALL_ID]` + the arguments (NAME with its namespace); `function_call_output`,
  `custom_tool_call_output` -> `tool` `[tool result CALL_ID]` + the output text.
- `compacted` -> `system` `[compaction summary]` + the message (`compaction_summary`).
- Turns rolled back are left out (`rolled_back`).
- `reasoning` is left out (`reasoning`), as Claude Code's thinking is; encrypted items,
  `turn_context`, `event_msg` and unknown items are not messages (`metadata`).
- External IDs: Codex writes none, and rollouts are append-only, so a message's ID is its line:
  `line:<n>`; the importer prefixes the session ID (`<session>/line:<n>`), so two rollouts in
  one thread never collide.
"""

from __future__ import annotations

from typing import Any, Final

from rutter_core.continuity.model import Injected, Role
from rutter_core.continuity.transcripts.claude_code import tool_output_text
from rutter_core.continuity.transcripts.fields import as_json_text, identifier, joined, timestamp
from rutter_core.continuity.transcripts.records import (
    IMAGE_PLACEHOLDER,
    Entry,
    LineOutcome,
    skipped,
)

_INJECTED_PREFIXES: Final[tuple[tuple[str, Injected], ...]] = (
    ("# agents.md instructions", "instructions"),
    ("<user_instructions>", "instructions"),
    ("<environment_context>", "environment_context"),
    ("<skill>", "skill"),
    ("<user_shell_command>", "command"),
    ("<turn_aborted>", "interruption"),
    ("<subagent_notification>", "notification"),
)
"""Markers of the context Codex puts in user-role messages (lowercase: matched ignoring case)."""
_ROLES: Final[dict[str, Role]] = {
    "user": "user",
    "assistant": "assistant",
    "developer": "system",
    "system": "system",
}
_CALLS: Final = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_OUTPUTS: Final = ("function_call_output", "custom_tool_call_output")


def parse_line(record: dict[str, Any], line: int) -> LineOutcome:
    if "payload" not in record:
        return _direct(record, line)
    kind = record.get("type")
    payload = record.get("payload")
    if not isinstance(kind, str) or not isinstance(payload, dict):
        return skipped("unexpected_shape")
    when = timestamp(record.get("timestamp"))
    local_id = f"line:{line}"
    if kind == "session_meta":
        session_id = identifier(payload.get("id"))
        if session_id is None:
            return skipped("unexpected_shape")
        cwd = payload.get("cwd")
        return LineOutcome(
            omitted=("metadata",),
            session_id=session_id,
            cwd=cwd if isinstance(cwd, str) else None,
        )
    if kind == "compacted":
        message = payload.get("message")
        if not isinstance(message, str):
            return skipped("unexpected_shape")
        if not message.strip():
            return LineOutcome(omitted=("empty",))
        text = f"[compaction summary]\n{message}"
        entry = Entry(line, local_id, "system", text, when, injected="compaction_summary")
        return LineOutcome(entries=(entry,))
    if kind == "event_msg" and payload.get("type") == "thread_rolled_back":
        turns = payload.get("num_turns")
        if isinstance(turns, bool) or not isinstance(turns, int) or turns < 0:
            return skipped("unexpected_shape")
        return LineOutcome(omitted=("metadata",), rollback=turns)
    if kind != "response_item":
        return LineOutcome(omitted=("metadata",))
    return _response_item(payload, line, local_id, when)


def _direct(record: dict[str, Any], line: int) -> LineOutcome:
    """The rollouts of 2025's Codex before the envelope: a first line `{id, timestamp,
    instructions?}`, then bare response items (no time of their own), and `{"record_type":
    "state"}` markers."""
    kind = record.get("type")
    if kind is None:
        session_id = identifier(record.get("id"))
        if record.get("record_type") == "state":
            return LineOutcome(omitted=("metadata",))
        if session_id is None or not isinstance(record.get("timestamp"), str):
            return skipped("unexpected_shape")
        return LineOutcome(omitted=("metadata",), session_id=session_id)
    if not isinstance(kind, str):
        return skipped("unexpected_shape")
    return _response_item(record, line, f"line:{line}", timestamp(record.get("timestamp")))


def _response_item(
    payload: dict[str, Any], line: int, local_id: str, when: str | None
) -> LineOutcome:
    item = payload.get("type")
    if item == "message":
        return _message(payload, line, local_id, when)
    if item == "reasoning":
        return LineOutcome(omitted=("reasoning",))
    if item in _CALLS:
        return LineOutcome(entries=(Entry(line, local_id, "assistant", _call(payload), when),))
    if item in _OUTPUTS:
        return LineOutcome(entries=(Entry(line, local_id, "tool", _output(payload), when),))
    return LineOutcome(omitted=("metadata",))


def _message(payload: dict[str, Any], line: int, local_id: str, when: str | None) -> LineOutcome:
    role = _ROLES.get(payload.get("role"))  # type: ignore[arg-type]
    content = payload.get("content")
    if role is None or not isinstance(content, list):
        return skipped("unexpected_shape")
    parts: list[str] = []
    for item in content:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in ("input_text", "output_text") and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif kind == "input_image":
            parts.append(IMAGE_PLACEHOLDER)
    text = joined(parts)
    if not text.strip():
        return LineOutcome(omitted=("empty",))
    injected: Injected | None = "instructions" if role == "system" else None
    if role == "user":
        injected = _context_kind(text)
        if injected is not None:
            role = "system"
    return LineOutcome(entries=(Entry(line, local_id, role, text, when, injected=injected),))


def _context_kind(text: str) -> Injected | None:
    start = text.lstrip()[:32].lower()
    for marker, kind in _INJECTED_PREFIXES:
        if start.startswith(marker):
            return kind
    return None


def _call(payload: dict[str, Any]) -> str:
    item = payload.get("type")
    name = identifier(payload.get("name")) or ("local_shell" if item == "local_shell_call"
                                               else "web_search" if item == "web_search_call"
                                               else "tool")  # fmt: skip
    namespace = identifier(payload.get("namespace"))
    if namespace is not None and item in ("function_call", "custom_tool_call"):
        name = _qualified(namespace, name)
    call = identifier(payload.get("call_id"))
    head = f"[tool call {name} {call}]" if call else f"[tool call {name}]"
    if item == "function_call":
        arguments = payload.get("arguments")
        body = arguments if isinstance(arguments, str) else as_json_text(arguments)
    elif item == "custom_tool_call":
        given = payload.get("input")
        body = given if isinstance(given, str) else as_json_text(given)
    else:
        action = payload.get("action")
        body = "" if action is None else as_json_text(action)
    return f"{head}\n{body}" if body and body.strip() else head


def _qualified(namespace: str, name: str) -> str:
    """A namespaced tool's full name: `mcp__server__` + `tool` is `mcp__server__tool`; a
    namespace without a separator of its own is joined with `.` (`collaboration.spawn_agent`);
    a name that already carries its namespace is kept."""
    if name.startswith(namespace):
        return name
    if namespace.endswith(("_", ".", "/", ":")):
        return f"{namespace}{name}"
    return f"{namespace}.{name}"


def _output(payload: dict[str, Any]) -> str:
    call = identifier(payload.get("call_id"))
    output = payload.get("output")
    failed = False
    if isinstance(output, dict):  # older files: {"content": ..., "success": false}
        failed = output.get("success") is False
        output = output.get("content")
    head = f"[tool result {call}" if call else "[tool result"
    head += " error]" if failed else "]"
    body = tool_output_text(_as_blocks(output))
    return f"{head}\n{body}" if body.strip() else head


def _as_blocks(output: object) -> object:
    """Codex's output items (`input_text`, `input_image`) as the text/image blocks
    `tool_output_text` reads."""
    if not isinstance(output, list):
        return output
    blocks: list[object] = []
    for item in output:
        if isinstance(item, dict) and item.get("type") == "input_text":
            blocks.append({"type": "text", "text": item.get("text")})
        elif isinstance(item, dict) and item.get("type") == "input_image":
            blocks.append({"type": "image"})
        else:
            blocks.append(item)
    return blocks


__all__ = ["parse_line"]
