"""The language server on links inside the workspace (docs/reference/discovery.md), once per client
capability set: hover and code lens on a link that is an alias (`CLAUDE.md -> AGENTS.md`), on one
that is a source with its `link_target` (`docs/CLAUDE.md -> CONTRIBUTING.md`), and on a git stub.
Real files, real links, a real server subprocess."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types

from tests.conftest import write_tree
from tests.lsp_client import (
    CLIENTS,
    RutterClient,
    capabilities,
    effective,
    folder,
    open_text,
    start,
    stop,
    uri,
    within,
)

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]

TREE: dict[str, str | bytes] = {
    "AGENTS.md": "root rules\n",
    "docs/CONTRIBUTING.md": "how to contribute\n",
    "docs/guide.go": "package docs\n",
    "stubs/NOTES.md": "stub notes\n",
    "stubs/CLAUDE.md": b"NOTES.md",
    "stubs/x.go": "package stubs\n",
}
OPEN = ["CLAUDE.md", "docs/CLAUDE.md", "stubs/CLAUDE.md", "docs/guide.go", "stubs/x.go"]


@dataclass
class Session:
    client: RutterClient
    root: Path
    docs: dict[str, str]


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    base = tmp_path_factory.mktemp(f"links-{request.param}")
    root = (base / "repo").resolve()
    write_tree(root, TREE)
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    (root / "docs" / "CLAUDE.md").symlink_to("CONTRIBUTING.md")
    client = await start(base / "home", capabilities(request.param), [folder(root, "repo")])
    docs = {rel: open_text(client, root / rel) for rel in OPEN}
    yield Session(client, root, docs)
    await stop(client)


async def hover_text(session: Session, rel: str) -> str:
    result = await within(
        session.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=session.docs[rel]),
                position=types.Position(line=0, character=0),
            )
        )
    )
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    return result.contents.value


async def lens_title(session: Session, rel: str) -> str:
    result = await within(
        session.client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=session.docs[rel]))
        )
    )
    assert result is not None
    [only] = result
    assert only.command is not None
    return only.command.title


async def test_snapshot_over_lsp_reports_link_and_alias(session: Session) -> None:
    found = await effective(session.client, uri(session.root / "docs" / "guide.go"))
    assert [source["path"] for source in found["sources"]] == ["AGENTS.md", "docs/CLAUDE.md"]
    assert found["sources"][1]["link_target"] == "docs/CONTRIBUTING.md"
    assert found["ignored"] == [{"path": "CLAUDE.md", "reason": "alias", "alias_of": "AGENTS.md"}]


async def test_hover_and_lens_on_an_alias(session: Session) -> None:
    text = await hover_text(session, "CLAUDE.md")
    assert "`CLAUDE.md` — **alias of AGENTS.md: not delivered twice**" in text
    assert "- alias: a link to `AGENTS.md`, which is already a source here" in text
    assert await lens_title(session, "CLAUDE.md") == (
        "rutter: alias of AGENTS.md: not delivered twice"
    )


async def test_hover_and_lens_on_a_linked_source(session: Session) -> None:
    text = await hover_text(session, "docs/CLAUDE.md")
    assert "`docs/CLAUDE.md` — **effective · link to docs/CONTRIBUTING.md**" in text
    assert "- a link to `docs/CONTRIBUTING.md`: its content is what is delivered here" in text
    assert "- applies to 1 open file(s): `docs/guide.go`" in text
    assert await lens_title(session, "docs/CLAUDE.md") == (
        "rutter: applies to 1 open file · link to docs/CONTRIBUTING.md"
    )


async def test_hover_on_a_git_stub(session: Session) -> None:
    text = await hover_text(session, "stubs/CLAUDE.md")
    assert "**effective · git link stub to stubs/NOTES.md**" in text
    assert "- a git link stub (core.symlinks=false) naming `stubs/NOTES.md`" in text
