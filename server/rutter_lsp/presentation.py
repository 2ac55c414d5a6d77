"""What more than one feature shows of an instruction file: its status from an up-to-date index,
its one-line headline (hover and code lens), and the command the code lens runs (answered by the
instructions feature).

Features never import each other; what two of them present alike lives here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from rutter_core.discovery.ignore import IGNORE_FILE
from rutter_lsp.index.analysis import FileStatus, file_status

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

COMMAND_SHOW_APPLICABLE_FILES: Final = "rutter.showApplicableFiles"
"""The code lens's command: lists the open files an instruction file applies to."""


async def status_for(server: RutterServer, uri: str) -> FileStatus | None:
    """The status of the instruction file at `uri`, from an up-to-date index."""
    session = server.session
    await session.ready.wait()
    doc = session.open_doc(uri)
    if doc is None or doc.instruction is None:
        return None
    await server.refresher.wait_idle()
    return await session.worker.run(
        file_status, doc.folder, doc.instruction, session.index, session.reader
    )


def headline(status: FileStatus) -> str:
    """One line: the file and its state (the hover's title, the code lens's text)."""
    entry = status.ignored
    if status.state == "effective":
        return "effective" + _link_note(status)
    if status.state == "alias" and entry is not None:
        return f"alias of {entry.alias_of}: not delivered twice"
    if status.state == "superseded" and entry is not None:
        return f"superseded by {entry.superseded_by}"
    if status.state == "ignored" and entry is not None:
        return f"ignored by {IGNORE_FILE}:{entry.line}"
    if status.state == "blank_override":
        return "blank override: skipped, AGENTS.md is used"
    if status.state == "failed" and status.error is not None:
        return f"fails closed: {status.error.code}"
    if status.state == "blocked" and status.blocking is not None:
        where = status.blocking.path or "."
        return f"not delivered: discovery fails closed at {where} ({status.blocking.code})"
    if status.state == "control":
        return "control file: never delivered"
    return "not read by discovery"


def _link_note(status: FileStatus) -> str:
    """` · link to X` for a delivered link (docs/reference/discovery.md), else nothing."""
    source = status.source
    if source is None or source.link_target is None:
        return ""
    return f" · {'git link stub' if source.link_stub else 'link'} to {source.link_target}"
