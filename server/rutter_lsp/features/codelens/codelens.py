"""Code lens on line 1 of every open instruction file: "applies to N open files", or why it
is not delivered. The lens runs `rutter.showApplicableFiles` with the file's URI."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from rutter_lsp.feature import LanguageFeature, RefreshRound
from rutter_lsp.presentation import COMMAND_SHOW_APPLICABLE_FILES, headline, status_for

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

_LINE_ONE = types.Range(start=types.Position(0, 0), end=types.Position(0, 0))


def register(server: RutterServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(params: types.CodeLensParams) -> list[types.CodeLens] | None:
        uri = params.text_document.uri
        status = await status_for(server, uri)
        if status is None or status.file.kind == "ignore_file":
            return None
        if status.state == "effective":
            count = len(status.applies_to)
            title = f"rutter: applies to {count} open file{'' if count == 1 else 's'}"
            if status.source is not None and status.source.link_target is not None:
                title += f" · link to {status.source.link_target}"
        else:
            title = f"rutter: {headline(status)}"
        command = types.Command(
            title=title,
            command=COMMAND_SHOW_APPLICABLE_FILES,
            arguments=[uri, list(status.applies_to)],
        )
        return [types.CodeLens(range=_LINE_ONE, command=command)]


class CodeLens(LanguageFeature):
    def setup(self) -> None:
        register(self.server)

    async def refreshed(self, round: RefreshRound) -> None:
        """A rebuilt index may change what a lens says: clients that can are asked to ask
        again (only when an instruction file is open, so has a lens)."""
        server = self.server
        lenses = any(doc.instruction is not None for doc in round.docs)
        if round.rebuilt and lenses and server.supports("workspace.code_lens.refresh_support"):
            server.send_request_quietly(types.WORKSPACE_CODE_LENS_REFRESH)
