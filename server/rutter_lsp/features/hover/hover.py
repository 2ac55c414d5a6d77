"""Hover in an instruction file or the ignore file: what it is, whether it is delivered, why,
which open documents it reaches, and its conflicts (Markdown)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from lsprotocol import types

from rutter_core.discovery.ignore import IGNORE_FILE
from rutter_lsp.index.analysis import FileStatus
from rutter_lsp.presentation import headline, status_for

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

MAX_LISTED: Final = 10


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def _rel(server: RutterServer, uri: str) -> str:
    located = server.session.locate_uri(uri)
    return located.rel if located is not None else uri


def _listing(items: list[str]) -> str:
    shown = ", ".join(_code(item) for item in items[:MAX_LISTED])
    more = len(items) - MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def render(server: RutterServer, status: FileStatus, line: int | None = None) -> str:
    file = status.file
    if file.kind == "ignore_file":
        return _render_ignore(status, line)
    lines = [f"**rutter** · {_code(file.rel)} — **{headline(status)}**", ""]
    source = status.source
    precedence = source.precedence if source is not None else file.precedence
    depth = f"depth {file.depth}"
    lines.append(f"- kind: {_code(file.kind)}")
    lines.append(f"- scope: {_code(file.level)} ({depth})")
    if precedence is None:
        lines.append("- precedence: after the level's other sources, by path (rules)")
    elif source is not None:
        lines.append(
            f"- precedence: {precedence} (ordinal {source.ordinal} of {len(status.stack)})"
        )
    else:
        lines.append(f"- precedence: {precedence} if it were delivered")
    if source is not None and source.link_target is not None:
        how = "a git link stub (core.symlinks=false) naming" if source.link_stub else "a link to"
        lines.append(f"- {how} {_code(source.link_target)}: its content is what is delivered here")
    if source is not None:
        lines.append(f"- why: {source.why_effective}")
        uris = list(status.applies_to)
        if uris:
            paths = sorted(_rel(server, uri) for uri in uris)
            lines.append(f"- applies to {len(uris)} open file(s): {_listing(paths)}")
        else:
            lines.append("- applies to 0 open files")
        if source.redactions:
            kinds = ", ".join(f"{item.kind} x{item.count}" for item in source.redactions)
            lines.append(f"- redacted before any agent sees it: {kinds}")
    entry = status.ignored
    if status.state == "superseded" and entry is not None:
        lines.append(
            f"- superseded by {_code(entry.superseded_by or '')}: a non-blank "
            "AGENTS.override.md replaces AGENTS.md at its level"
        )
    if status.state == "ignored" and entry is not None:
        lines.append(
            f"- ignored by {_code(f'{IGNORE_FILE}:{entry.line}')} (pattern "
            f"{_code(entry.pattern or '')})"
        )
    if status.state == "blank_override":
        lines.append("- blank: the level falls back to AGENTS.md")
    if status.state == "alias" and entry is not None:
        how = "a git link stub naming" if entry.link_stub else "a link to"
        lines.append(
            f"- alias: {how} {_code(entry.alias_of or '')}, which is already a source here, "
            "so it delivers nothing again"
        )
    if status.error is not None:
        lines.append(f"- fails closed ({_code(status.error.code)}): {status.error.message}")
    if status.blocking is not None and status.blocking.path != file.rel:
        blocker = status.blocking
        lines.append(
            f"- discovery of {_code(file.level)} fails closed at {_code(blocker.path or '.')} "
            f"({_code(blocker.code)}): {blocker.message}"
        )
    if status.conflicts:
        lines.append("- conflicts:")
        for conflict in status.conflicts:
            if conflict.lower_precedence_path == file.rel:
                lines.append(
                    f"  - {_code(conflict.role)}: {_code(conflict.higher_precedence_path)} is "
                    "nearer to its targets and wins where they conflict"
                )
            else:
                lines.append(
                    f"  - {_code(conflict.role)}: overrides "
                    f"{_code(conflict.lower_precedence_path)} where they conflict"
                )
    if status.state == "not_read":
        lines.append("- not read by discovery (not saved yet?)")
    return "\n".join(lines)


def _render_ignore(status: FileStatus, line: int | None) -> str:
    lines = [
        f"**rutter** · {_code(IGNORE_FILE)} — **{headline(status)}**",
        "",
        "- control file (gitignore syntax, read at the workspace root only): excludes "
        "instruction files from discovery",
    ]
    if status.error is not None:
        lines.append(f"- fails closed ({_code(status.error.code)}): {status.error.message}")
    entries = list(status.ignored_by_file)
    if line is not None:
        here = [entry for entry in entries if entry.line == line + 1]
        if here:
            lines.append(f"- line {line + 1} ({_code(here[0].pattern or '')}) ignores:")
            lines.extend(f"  - {_code(entry.path)}" for entry in here)
    if entries:
        lines.append("- ignored files seen by discovery of the open documents:")
        lines.extend(
            f"  - {_code(entry.path)} by line {entry.line} ({_code(entry.pattern or '')})"
            for entry in entries[:MAX_LISTED]
        )
        if len(entries) > MAX_LISTED:
            lines.append(f"  - and {len(entries) - MAX_LISTED} more")
    else:
        lines.append("- no ignored file seen yet by discovery of the open documents")
    return "\n".join(lines)


def register(server: RutterServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(params: types.HoverParams) -> types.Hover | None:
        status = await status_for(server, params.text_document.uri)
        if status is None:
            return None
        text = render(server, status, params.position.line)
        kind = types.MarkupKind.Markdown if server.markdown else types.MarkupKind.PlainText
        return types.Hover(contents=types.MarkupContent(kind=kind, value=text))
