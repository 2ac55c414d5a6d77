"""Diagnostics on instruction files and the ignore file (push and pull).

- Error: a fail-closed condition located on this file (`RutterError.path`), at the offending
  byte (`invalid_utf8`, `nul_byte`), on the offending line (`invalid_ignore`), else on line 0.
- Warning: each secret in the buffer, with its exact range; it is redacted before any agent
  sees it. Unsaved problems of the buffer (an empty source, an invalid ignore line) are
  Warnings too: agents read the disk, so they change nothing until saved.
- Information: the file is not delivered (superseded, blank override, ignored).
- Agent profiles (issue 20; the `agentDiagnostics` setting chooses the agents, `false` turns
  them off), on every file some agent reads: Warning where an agent loses text (`budget_cut`,
  `budget_dropped`, `too_large_skipped`, `import_too_deep`, `import_unreadable`,
  `glob_matches_nothing`, `too_many_imports`), Information where it passes a file over by its
  rules (`not_read`, `import_outside`, `excluded_agent`). `code` is the kind, the message
  names the agent. They cost one profile evaluation for the file's directory per agent that
  can say something about it, through the shared identity-cached reader with lookups shared
  by the round (`Memo`), and a glob check lists the project at most once per 30 s (bounded:
  20,000 files; see `rutter_core.profiles.listing`).

`compute` runs on the disk worker (it may read the file's first bytes for a position); the
feature module decides between push (`textDocument/publishDiagnostics`) and pull
(`textDocument/diagnostic`) from the client's capabilities, never both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Final

from lsprotocol import types

from rutter_core.app.profiles import Memo
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.ignore import IGNORE_FILE, IgnoreRules
from rutter_core.discovery.redaction import find_secrets
from rutter_core.kernel.errors import RutterError
from rutter_lsp.feature import LanguageFeature, RefreshRound
from rutter_lsp.index.analysis import (
    ErrorInfo,
    FileStatus,
    Index,
    OpenDoc,
    file_status,
    read_prefix,
)
from rutter_lsp.positions import TextPositions, byte_offset_range

if TYPE_CHECKING:
    from rutter_core.app.profiles import AgentName, Note
    from rutter_lsp.server import RutterServer

SOURCE: Final = "rutter"
SECRET_CODE: Final = "secret"
AGENT_WARNINGS: Final = frozenset(
    {"budget_cut", "budget_dropped", "too_large_skipped", "import_too_deep",
     "import_unreadable", "glob_matches_nothing", "too_many_imports"}
)  # fmt: skip
"""Agent-profile kinds where an agent loses text; every other kind is Information."""
DOCS_PER_CHUNK: Final = 64
"""Documents diagnosed per background job of a refresh round."""

AgentNotes = Callable[[str, str], "list[tuple[AgentName, Note]]"]
"""(workspace root, workspace-relative path) → each agent's notes about that file."""

_ZERO = types.Range(start=types.Position(0, 0), end=types.Position(0, 0))


def compute(status: FileStatus, buffer: str | None, encoding: str) -> list[types.Diagnostic]:
    """The diagnostics of one open instruction file, `buffer` being its unsaved content."""
    positions = TextPositions(buffer or "", encoding)
    found: list[types.Diagnostic] = []
    if status.error is not None:
        found.append(_error(status, status.error, positions))
    info = _not_delivered(status)
    if info is not None:
        found.append(
            types.Diagnostic(
                range=_first_line(positions),
                message=info[1],
                severity=types.DiagnosticSeverity.Information,
                code=info[0],
                source=SOURCE,
            )
        )
    if buffer is not None:
        found.extend(_buffer_problems(status, buffer, positions))
    return found


def _error(status: FileStatus, error: ErrorInfo, positions: TextPositions) -> types.Diagnostic:
    where = _first_line(positions)
    offset = error.detail("offset")
    line = error.detail("line")
    if error.code in ("invalid_utf8", "nul_byte") and isinstance(offset, int):
        raw = read_prefix(status.folder, status.file.rel, offset + 1)
        if raw is not None and len(raw) > offset:
            where = byte_offset_range(raw, offset, positions.encoding)
    elif error.code == "invalid_ignore" and isinstance(line, int) and line >= 1:
        where = positions.line_range(line - 1)
    return types.Diagnostic(
        range=where,
        message=f"{error.message} — discovery fails closed: no instructions are delivered "
        "for this directory and below",
        severity=types.DiagnosticSeverity.Error,
        code=error.code,
        source=SOURCE,
    )


def _not_delivered(status: FileStatus) -> tuple[str, str] | None:
    entry = status.ignored
    if status.state == "superseded" and entry is not None:
        return "superseded", (
            f"not delivered: superseded by {entry.superseded_by}, which replaces it at this level"
        )
    if status.state == "blank_override":
        return "blank_override", ("blank override: skipped, so this level falls back to AGENTS.md")
    if status.state == "ignored" and entry is not None:
        return "ignore_file", (
            f"not delivered: ignored by {IGNORE_FILE}:{entry.line} (`{entry.pattern}`)"
        )
    return None


def _buffer_problems(
    status: FileStatus, buffer: str, positions: TextPositions
) -> list[types.Diagnostic]:
    found: list[types.Diagnostic] = []
    file = status.file
    if file.kind == "ignore_file":
        try:
            IgnoreRules.parse(buffer.encode("utf-8", "surrogatepass"))
        except RutterError as error:
            line = error.details.get("line")
            disk = status.error
            same = disk is not None and disk.code == error.code and disk.detail("line") == line
            if not same:
                found.append(
                    types.Diagnostic(
                        range=positions.line_range(line - 1)
                        if isinstance(line, int) and line >= 1
                        else _first_line(positions),
                        message=f"{error.message} (unsaved: discovery fails closed once saved)",
                        severity=types.DiagnosticSeverity.Warning,
                        code=error.code,
                        source=SOURCE,
                    )
                )
        return found
    if not buffer.strip() and file.kind != "agents_override":
        disk_empty = status.error is not None and status.error.code == "empty_source"
        if not disk_empty:
            found.append(
                types.Diagnostic(
                    range=_first_line(positions),
                    message=f"{file.rel} is empty: once saved, discovery fails closed "
                    "(empty_source); write its instructions or delete it",
                    severity=types.DiagnosticSeverity.Warning,
                    code="empty_source",
                    source=SOURCE,
                )
            )
    for secret in find_secrets(buffer):
        found.append(
            types.Diagnostic(
                range=positions.range(secret.start, secret.end),
                message=f"this will be redacted before any agent sees it (kind {secret.kind}); "
                "remove the secret from the file",
                severity=types.DiagnosticSeverity.Warning,
                code=SECRET_CODE,
                source=SOURCE,
            )
        )
    return found


def _first_line(positions: TextPositions) -> types.Range:
    if positions.line_count == 0:
        return _ZERO
    return positions.line_range(0)


def for_document(
    doc: OpenDoc,
    buffer: str | None,
    index: Index,
    reader: FileReader,
    encoding: str,
    agents: AgentNotes | None = None,
) -> list[types.Diagnostic]:
    """Worker job: the diagnostics of one open document (none unless an instruction file or
    a file an agent reads)."""
    found: list[types.Diagnostic] = []
    if doc.instruction is not None:
        status = file_status(doc.folder, doc.instruction, index, reader)
        found = compute(status, buffer, encoding)
    if agents is not None and doc.diagnosed:
        positions = TextPositions(buffer or "", encoding)
        for _agent, note in agents(doc.folder.root, doc.rel):
            found.append(agent_diagnostic(note, positions))
    return found


def agent_diagnostic(note: Note, positions: TextPositions) -> types.Diagnostic:
    line = note.line
    where = (
        positions.line_range(line)
        if line is not None and 0 <= line < positions.line_count
        else _first_line(positions)
    )
    severity = (
        types.DiagnosticSeverity.Warning
        if note.code in AGENT_WARNINGS
        else types.DiagnosticSeverity.Information
    )
    return types.Diagnostic(
        range=where, message=note.message, severity=severity, code=note.code, source=SOURCE
    )


def agent_notes(server: RutterServer) -> AgentNotes | None:
    """The agent-profile check for this round, per the settings (None: off, or no store)."""
    agents = server.session.settings.agent_diagnostics
    rutter = server.session.app
    if not agents or rutter is None:
        return None
    # One memo per round: the files of one moment share their lookups (levels in common).
    return partial(rutter.profiles.diagnose, agents=agents, memo=Memo())


def _diagnose_chunk(
    jobs: Sequence[tuple[OpenDoc, str | None]],
    index: Index,
    reader: FileReader,
    encoding: str,
    agents: AgentNotes | None,
) -> list[tuple[str, list[types.Diagnostic]]]:
    return [
        (doc.uri, for_document(doc, buffer, index, reader, encoding, agents))
        for doc, buffer in jobs
    ]


class Diagnostics(LanguageFeature):
    def setup(self) -> None:
        register(self.server)

    async def refreshed(self, round: RefreshRound) -> None:
        """Push: publish the diagnostics that changed (and those `round.forced`); pull: ask
        the client to pull again."""
        server = self.server
        session = server.session
        changed = bool(round.changes)
        if server.pull_diagnostics:
            if round.all_diagnostics or changed or round.forced or round.agents:
                server.send_request_quietly(types.WORKSPACE_DIAGNOSTIC_REFRESH)
            return
        forced = round.diagnostics | round.forced
        everything = round.all_diagnostics or changed or round.agents
        targets = [
            doc for doc in round.docs
            if (doc.diagnosed or doc.uri in round.forced or server.added_diagnostics(doc.uri))
            and (everything or doc.uri in forced)
        ]  # fmt: skip
        encoding = server.position_encoding
        for start in range(0, len(targets), DOCS_PER_CHUNK):
            chunk = [
                (doc, server.buffer(doc.uri)) for doc in targets[start : start + DOCS_PER_CHUNK]
            ]
            results = await session.worker.run_background(
                _diagnose_chunk, chunk, session.index, session.reader, encoding,
                agent_notes(server),
            )  # fmt: skip
            for uri, own in results:
                if uri not in server.workspace.text_documents:
                    continue  # closed meanwhile
                found = own + server.added_diagnostics(uri)
                if uri in forced or session.published.get(uri) != found:
                    server.refresher.publish(uri, found)


def register(server: RutterServer) -> None:
    # Registered for every client, advertised only to pull clients (see RutterProtocol).
    session = server.session
    options = types.DiagnosticOptions(
        identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False
    )

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, options)
    async def pull(params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        await session.ready.wait()
        uri = params.text_document.uri
        doc = session.open_doc(uri)
        items: list[types.Diagnostic] = []
        if doc is not None:
            await server.refresher.wait_idle()
            if doc.diagnosed:
                items = await session.worker.run(
                    for_document, doc, server.buffer(uri), session.index, session.reader,
                    server.position_encoding, agent_notes(server),
                )  # fmt: skip
            items = items + server.added_diagnostics(uri)
        return types.RelatedFullDocumentDiagnosticReport(items=items)
