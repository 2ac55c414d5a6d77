"""Open, edited, saved and closed documents.

Opening or closing any document changes which open files each instruction file reaches (the
code lens and hover counts): the index is rebuilt, coalesced, discovering only the
directories it did not hold yet (changes on disk arrive as their own events and are applied
there). Edits of an instruction file's buffer only change that buffer's diagnostics; discovery
keeps reading the disk. Saving an instruction file counts as a change on disk, for clients
that do not watch files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from rutter_lsp.features.documents import watching

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer


def register(server: RutterServer) -> None:
    session = server.session

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(params: types.DidOpenTextDocumentParams) -> None:
        await session.ready.wait()
        doc = session.open_doc(params.text_document.uri)
        if doc is None:
            return
        server.refresher.request(docs=True, diagnostics=[doc.uri] if doc.diagnosed else ())

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(params: types.DidChangeTextDocumentParams) -> None:
        await session.ready.wait()
        doc = session.open_doc(params.text_document.uri)
        if doc is not None and doc.diagnosed:
            server.refresher.request(diagnostics=[doc.uri])

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(params: types.DidSaveTextDocumentParams) -> None:
        await session.ready.wait()
        doc = session.open_doc(params.text_document.uri)
        if doc is not None and doc.agent_file and doc.instruction is None:
            # Not discovery's file: no index change, but agents' views of others may change.
            server.refresher.request(all_diagnostics=True)
        elif doc is not None:  # an instruction file, or maybe an agent's settings file
            saved = [(params.text_document.uri, types.FileChangeType.Changed)]
            if watching.changed(server, saved):
                await watching.follow_settings(server)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(params: types.DidCloseTextDocumentParams) -> None:
        server.refresher.clear(params.text_document.uri)
        if session.locate_uri(params.text_document.uri) is not None:
            server.refresher.request(docs=True)
