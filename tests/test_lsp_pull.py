"""Pull diagnostics, for a client that can pull and be asked to pull again (issue 3).

The capability sets of the other LSP tests cannot be told to re-pull after a change on disk,
so the server pushes to them; here VS Code's set gains `textDocument.diagnostic` and
`workspace.diagnostics.refreshSupport`: the server must then answer `textDocument/diagnostic`,
send `workspace/diagnostic/refresh` after disk changes, and never push. Settings come from
`initializationOptions` in this test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from rutter_core.store import open_store
from rutter_core.workspaces.service import list_workspaces
from tests.conftest import write_tree
from tests.lsp_client import (
    capabilities,
    effective,
    folder,
    open_text,
    registered,
    span,
    start,
    stop,
    uri,
    wait_until,
    with_pull_diagnostics,
    within,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="function"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


async def test_pull_diagnostics_and_initialization_options(tmp_path: Path) -> None:
    root = (tmp_path / "pulled").resolve()
    write_tree(root, {"AGENTS.md": "root\n", "CLAUDE.md": f"key {TOKEN}\n", "a.go": "package a\n"})
    url = f"sqlite:///{tmp_path / 'from-options.db'}"
    home = tmp_path / "home"
    client = await start(
        home,
        with_pull_diagnostics(capabilities("visual_studio_code")),
        [folder(root)],
        initialization_options={"rutter": {"databaseUrl": url, "logLevel": "debug"}},
    )
    try:
        result = client.initialize_result
        assert result is not None
        provider = result.capabilities.diagnostic_provider
        assert isinstance(provider, types.DiagnosticOptions)
        assert provider.identifier == "rutter"
        assert provider.inter_file_dependencies is True

        claude = open_text(client, root / "CLAUDE.md")
        source = open_text(client, root / "a.go")
        assert (await effective(client, source))["workspace_id"] == "pulled"
        # The store named by initializationOptions is used, not $RUTTER_HOME's.
        with open_store(url) as store:
            assert [ws.root for ws in list_workspaces(store)] == [str(root)]
        assert not (home / "rutter.db").exists() or registered(home) == []

        async def pull(doc_uri: str) -> list[types.Diagnostic]:
            report = await within(
                client.text_document_diagnostic_async(
                    types.DocumentDiagnosticParams(
                        text_document=types.TextDocumentIdentifier(uri=doc_uri)
                    )
                )
            )
            assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
            return list(report.items)

        [secret] = await pull(claude)
        assert secret.code == "secret"
        assert span(secret) == (0, 4, 0, 4 + len(TOKEN))
        assert await pull(source) == []

        refreshes = client.diagnostic_refresh_count
        (root / "CLAUDE.md").write_bytes(b"\x00")
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(uri=uri(root / "CLAUDE.md"), type=types.FileChangeType.Changed)
                ]
            )
        )
        await wait_until(
            lambda: client.diagnostic_refresh_count > refreshes,
            what="workspace/diagnostic/refresh",
        )
        codes = [item.code for item in await pull(claude)]
        assert "nul_byte" in codes
        # Pull clients are never pushed to: nothing is reported twice.
        assert client.diagnostics == {}
    finally:
        await stop(client)
