"""Runs in the language server end to end (issue 4), per client capability set.

A run is created from the CLI (a real subprocess) while the server runs; the server notices
the store change, and when an instruction file drifts from what the run pinned, the open file
shows a Warning with a code action that reviews the diff and confirms the refresh only with
the fingerprints captured when the review was shown.
"""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path
from typing import Any

import attrs
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from rutter_core.store import append_only_triggers
from tests.conftest import write_tree
from tests.lsp_client import (
    Prompter,
    by_code,
    capabilities,
    execute,
    folder,
    open_text,
    registered,
    request,
    start,
    stop,
    uri,
    wait_for_diagnostics,
    wait_until,
    with_pull_diagnostics,
    within,
)
from tests.runs_lsp_session import (
    DRIFT,
    TREE,
    Session,
    code_actions,
    created_run,
    make_session_client,
    notify_changed,
    session,
    wait_until_async,
)

__all__ = ["session"]  # the fixture

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"),
]


async def test_server_advertises_the_run_commands_and_code_actions(session: Session) -> None:
    result = session.client.initialize_result
    assert result is not None
    caps = result.capabilities
    assert caps.execute_command_provider is not None
    assert {
        "rutter.runs",
        "rutter.runInstructions",
        "rutter.confirmRefresh",
        "rutter.reviewRefresh",
    } <= set(caps.execute_command_provider.commands)
    assert caps.code_action_provider is not None


async def test_drift_shows_on_the_changed_file_and_the_reviewed_refresh_clears_it(
    session: Session,
) -> None:
    root, workspace_id, run_id = await created_run(session)
    agents_uri = open_text(session.client, root / "src" / "AGENTS.md")
    open_text(session.client, root / "src" / "main.go")
    await wait_for_diagnostics(session.client, agents_uri, lambda found: not by_code(found, DRIFT))

    (root / "src" / "AGENTS.md").write_text("src rules\nkeep functions tiny\n")
    notify_changed(session, root / "src" / "AGENTS.md", types.FileChangeType.Changed)
    found = await wait_for_diagnostics(
        session.client, agents_uri, lambda found: bool(by_code(found, DRIFT))
    )
    [drift] = by_code(found, DRIFT)
    assert drift.severity == types.DiagnosticSeverity.Warning
    assert drift.message.startswith(
        f"src/AGENTS.md changed since run {run_id} pinned it (revision 1)"
    )
    assert (drift.range.start.line, drift.range.end.line) == (1, 1)  # the line that differs
    assert drift.data == {"run_id": run_id, "revision": 1}
    assert drift.related_information
    assert drift.related_information[0].message == (
        "revision 1 pinned this line as: keep functions short"
    )
    assert any(
        info.location.uri == uri(root / "src" / "main.go") for info in drift.related_information
    )
    [listed] = await session.runs(workspace_id)
    assert listed["stale"] is True

    [action] = await code_actions(session, agents_uri, [drift])
    assert action.title == f"Review and confirm refresh for run {run_id}"
    assert action.kind == types.CodeActionKind.QuickFix
    assert action.command is not None
    assert action.command.command == "rutter.reviewRefresh"
    assert list(action.command.arguments or []) == [run_id]

    # Cancel: nothing changes.
    session.prompter.answers.append("Cancel")
    cancelled = await execute(session.client, "rutter.reviewRefresh", run_id)
    assert cancelled["confirmed"] is False
    assert session.revisions(run_id) == 1

    # Confirm: the review document was shown first, then the question; revision 2 appended.
    shown_before = len(session.client.shown_documents)
    session.prompter.answers.append("Confirm refresh")
    confirmed = await execute(session.client, "rutter.reviewRefresh", run_id)
    assert confirmed["refreshed"] is True
    assert confirmed["revision"] == 2
    assert confirmed["stale"] is False
    assert session.revisions(run_id) == 2
    question = session.prompter.asked[-1]
    assert "src/AGENTS.md" in question.message
    assert [a.title for a in question.actions or []] == ["Confirm refresh", "Cancel"]
    [document] = session.client.shown_documents[shown_before:]
    review = Path(document.uri.removeprefix("file://"))
    assert review.parent == session.home / "reviews"
    text = review.read_text()
    assert "-keep functions short" in text
    assert "+keep functions tiny" in text
    assert oct(review.stat().st_mode & 0o777) == "0o600"

    await wait_for_diagnostics(session.client, agents_uri, lambda found: not by_code(found, DRIFT))


async def test_a_change_after_the_review_was_shown_is_refused(session: Session) -> None:
    root, _workspace_id, run_id = await created_run(session)
    agents = root / "src" / "AGENTS.md"
    agents_uri = open_text(session.client, agents)
    agents.write_text("src rules\nversion two\n")
    notify_changed(session, agents, types.FileChangeType.Changed)
    await wait_for_diagnostics(
        session.client, agents_uri, lambda found: bool(by_code(found, DRIFT))
    )

    # While the person reads the review, the file changes again.
    session.prompter.before_answer.append(lambda: agents.write_text("src rules\nversion three\n"))
    session.prompter.answers.append("Confirm refresh")
    with pytest.raises(Exception, match=r"conflict|fingerprint|changed"):
        await execute(session.client, "rutter.reviewRefresh", run_id)
    assert session.revisions(run_id) == 1
    await wait_until(
        lambda: any(
            "changed again after the review" in message.message
            for message in session.client.messages
        ),
        what="the refusal message",
    )

    # Reviewing again binds to what is on disk now.
    notify_changed(session, agents, types.FileChangeType.Changed)
    session.prompter.answers.append("Confirm refresh")
    confirmed = await execute(session.client, "rutter.reviewRefresh", run_id)
    assert confirmed["refreshed"] is True
    assert session.revisions(run_id) == 2
    inspection = await request(session.client, "rutter/runInstructions", {"run_id": run_id})
    [source] = [s for s in inspection["pinned"]["sources"] if s["path"] == "src/AGENTS.md"]
    assert source["content"] == "src rules\nversion three\n"


async def test_removed_file_is_reported_on_the_nearest_open_instruction_file(
    session: Session,
) -> None:
    root, _workspace_id, run_id = await created_run(session)
    agents_uri = open_text(session.client, root / "src" / "AGENTS.md")
    (root / "AGENTS.md").unlink()
    notify_changed(session, root / "AGENTS.md", types.FileChangeType.Deleted)
    found = await wait_for_diagnostics(
        session.client, agents_uri, lambda found: bool(by_code(found, DRIFT))
    )
    [drift] = by_code(found, DRIFT)
    assert drift.message.startswith(
        f"AGENTS.md no longer applies, but run {run_id} pinned it (revision 1)"
    )


async def test_confirm_request_checks_both_fingerprints(session: Session) -> None:
    root, _workspace_id, run_id = await created_run(session)
    (root / "AGENTS.md").write_text("root rules, edited\n")
    notify_changed(session, root / "AGENTS.md", types.FileChangeType.Changed)
    inspection = await wait_until_async(
        lambda: _stale_inspection(session, run_id), what="the run to be stale"
    )
    diff = inspection["diff"]
    with pytest.raises(Exception, match="conflict"):
        await request(
            session.client,
            "rutter/confirmRefresh",
            {
                "run_id": run_id,
                "expected_fingerprint": diff["from_fingerprint"],
                "expected_live_fingerprint": "0" * 64,
            },
        )
    assert session.revisions(run_id) == 1
    confirmed = await request(
        session.client,
        "rutter/confirmRefresh",
        {
            "run_id": run_id,
            "expected_fingerprint": diff["from_fingerprint"],
            "expected_live_fingerprint": diff["to_fingerprint"],
        },
    )
    assert confirmed["refreshed"] is True
    assert confirmed["revision"] == 2
    again = await request(
        session.client,
        "rutter/confirmRefresh",
        {
            "run_id": run_id,
            "expected_fingerprint": diff["to_fingerprint"],
            "expected_live_fingerprint": diff["to_fingerprint"],
        },
    )
    assert again["refreshed"] is False
    assert session.revisions(run_id) == 2


async def _stale_inspection(session: Session, run_id: str) -> dict[str, Any] | None:
    inspection: dict[str, Any] = await request(
        session.client, "rutter/runInstructions", {"run_id": run_id}
    )
    return inspection if inspection["stale"] else None


async def test_runs_ended_from_the_cli_leave_the_editor(session: Session) -> None:
    root, workspace_id, run_id = await created_run(session)
    agents_uri = open_text(session.client, root / "src" / "AGENTS.md")
    (root / "src" / "AGENTS.md").write_text("src rules\nchanged\n")
    notify_changed(session, root / "src" / "AGENTS.md", types.FileChangeType.Changed)
    await wait_for_diagnostics(
        session.client, agents_uri, lambda found: bool(by_code(found, DRIFT))
    )
    session.client.runs_changes.clear()
    session.cli("run", "status", run_id, "cancelled")
    # No file changed: only the store did, and the drift goes with the run.
    await wait_for_diagnostics(session.client, agents_uri, lambda found: not by_code(found, DRIFT))
    assert await session.runs(workspace_id) == []
    await wait_until(
        lambda: [workspace_id] in session.client.runs_changes, what="rutter/runsChanged"
    )


async def test_a_run_created_just_before_a_change_gets_its_drift(session: Session) -> None:
    """A change on disk re-inspects the runs the server last read from the store (it reads
    them again only after a commit); a run another process created just before the change
    still gets its drift, once the store watch has seen the commit."""
    root, workspace_id, first = await created_run(session)
    agents = root / "src" / "AGENTS.md"
    agents_uri = open_text(session.client, agents)
    await wait_for_diagnostics(session.client, agents_uri, lambda found: not by_code(found, DRIFT))
    second = session.cli(
        "run", "create", "--workspace", workspace_id, "--goal", "and the lexer",
        "--target", "src/main.go",
    )["run_id"]  # fmt: skip
    agents.write_text("src rules\nkeep functions tiny\n")
    notify_changed(session, agents, types.FileChangeType.Changed)

    def drifted_runs(found: list[types.Diagnostic]) -> set[str]:
        return {drift.data["run_id"] for drift in by_code(found, DRIFT) if drift.data}

    await wait_for_diagnostics(
        session.client, agents_uri, lambda found: drifted_runs(found) == {first, second}
    )
    listed = await session.runs(workspace_id)
    assert {run["run_id"]: run["stale"] for run in listed} == {first: True, second: True}


async def test_run_requests_fail_with_typed_errors(session: Session) -> None:
    with pytest.raises(Exception, match="run_id"):
        await request(session.client, "rutter/runInstructions", {})
    with pytest.raises(Exception, match=r"not_found|no run"):
        await request(session.client, "rutter/runInstructions", {"run_id": "run_missing"})
    with pytest.raises(JsonRpcException) as missing:
        await request(session.client, "rutter/runInstructions", {"run_id": "run_missing"})
    assert missing.value.data == {
        "code": "run_not_found",
        "message": "no run 'run_missing'",
        "details": {"run_id": "run_missing"},
        "hint": {"fix": "find_run"},
    }
    # Unknown fields are refused, as by every request: a misspelt field must not be ignored.
    for method, params in (
        ("rutter/runs", {"workspaceId": "demo"}),
        ("rutter/runInstructions", {"run_id": "run_missing", "actor": "model"}),
        ("rutter/confirmRefresh", {"run_id": "run_missing", "expected_fingerprint": "",
                                   "expected_live_fingerprint": "0" * 64, "force": True}),
    ):  # fmt: skip
        with pytest.raises(JsonRpcException) as refused:
            await request(session.client, method, params)
        assert isinstance(refused.value.data, dict)
        assert refused.value.data["code"] == "invalid_params", method
        assert "unknown field" in refused.value.data["message"], method
    # A command's arguments are decoded under the same mapping: two objects where one is
    # expected is invalid_params, not an internal error.
    with pytest.raises(JsonRpcException) as two:
        await execute(session.client, "rutter.runInstructions", {"run_id": "a"}, {"run_id": "b"})
    assert two.value.code == -32602
    assert isinstance(two.value.data, dict)
    assert two.value.data["code"] == "invalid_params"


async def stale_run_in_a_client_without(
    tmp_path: Path, *window_capabilities: str
) -> tuple[Session, str]:
    """A server for a client that lacks `window_capabilities`, and a run of its one folder
    whose instructions drifted."""
    caps = capabilities("visual_studio_code")
    window = caps.window or types.WindowClientCapabilities()
    caps = attrs.evolve(
        caps, window=attrs.evolve(window, **dict.fromkeys(window_capabilities, None))
    )
    root = (tmp_path / "ws").resolve()
    write_tree(root, TREE)
    home = tmp_path / "home"
    client = await start(home, caps, [folder(root)])
    prompter = Prompter()
    make_session_client(prompter)(client)
    session = Session(client, "without " + ", ".join(window_capabilities), home, tmp_path, prompter)
    try:
        [workspace] = await wait_until(lambda: registered(home), what="the folder registered")
        created = session.cli(
            "run", "create", "--workspace", workspace.workspace_id, "--goal", "g",
            "--target", "src/main.go",
        )  # fmt: skip
        run_id: str = created["run_id"]
        (root / "AGENTS.md").write_text("root rules v2\n")
        notify_changed(session, root / "AGENTS.md", types.FileChangeType.Changed)
        await wait_until_async(lambda: _stale_inspection(session, run_id), what="stale")
    except BaseException:
        await stop(client)
        raise
    return session, run_id


async def test_a_client_that_cannot_show_documents_gets_the_summary_only(
    tmp_path: Path,
) -> None:
    session, run_id = await stale_run_in_a_client_without(tmp_path, "show_document")
    client, prompter = session.client, session.prompter
    try:
        prompter.answers.append("Confirm refresh")
        confirmed = await execute(client, "rutter.reviewRefresh", run_id)
        assert confirmed["refreshed"] is True
        assert client.shown_documents == []
        assert "changed: AGENTS.md" in prompter.asked[-1].message
        assert not (session.home / "reviews").exists()
    finally:
        await stop(client)


async def test_a_client_that_cannot_ask_is_told_the_command_that_confirms(
    tmp_path: Path,
) -> None:
    session, run_id = await stale_run_in_a_client_without(tmp_path, "show_message", "show_document")
    try:
        with pytest.raises(JsonRpcException) as refused:
            await execute(session.client, "rutter.reviewRefresh", run_id)
        data = refused.value.data
        assert isinstance(data, dict)
        assert data["code"] == "confirmation_unavailable"
        assert session.prompter.asked == []
        assert session.revisions(run_id) == 1
        # The command it names is the one the CLI prints under a drift: it confirms.
        command = data["message"].split("refresh from the command line: ", 1)[1]
        words = shlex.split(command)
        assert words[:5] == ["rutter", "context", "instructions", "--run", run_id]
        assert session.cli(*words[1:])["refreshed"] is True
        assert session.revisions(run_id) == 2
    finally:
        await stop(session.client)


async def test_pull_clients_get_the_drift_when_they_pull(tmp_path: Path) -> None:
    root = (tmp_path / "ws").resolve()
    write_tree(root, TREE)
    home = tmp_path / "home"
    client = await start(
        home, with_pull_diagnostics(capabilities("visual_studio_code")), [folder(root)]
    )
    session = Session(client, "pull", home, tmp_path, Prompter())
    try:
        [workspace] = await wait_until(lambda: registered(home), what="the folder registered")
        run_id = session.cli(
            "run", "create", "--workspace", workspace.workspace_id, "--goal", "g",
            "--target", "src/main.go",
        )["run_id"]  # fmt: skip
        agents_uri = open_text(client, root / "src" / "AGENTS.md")

        async def pull() -> list[types.Diagnostic]:
            report = await within(
                client.text_document_diagnostic_async(
                    types.DocumentDiagnosticParams(
                        text_document=types.TextDocumentIdentifier(uri=agents_uri)
                    )
                )
            )
            assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
            return list(report.items)

        assert by_code(await pull(), DRIFT) == []
        refreshes = client.diagnostic_refresh_count
        (root / "src" / "AGENTS.md").write_text("src rules\nnew line two\n")
        notify_changed(session, root / "src" / "AGENTS.md", types.FileChangeType.Changed)
        await wait_until(
            lambda: client.diagnostic_refresh_count > refreshes,
            what="workspace/diagnostic/refresh",
        )
        [drift] = by_code(await pull(), DRIFT)
        assert drift.message.startswith(f"src/AGENTS.md changed since run {run_id} pinned it")
        assert client.diagnostics.get(agents_uri) is None  # never pushed
    finally:
        await stop(client)


async def test_a_tampered_revision_is_listed_as_an_error_and_drifts_nothing(
    session: Session,
) -> None:
    root, workspace_id, run_id = await created_run(session)
    agents_uri = open_text(session.client, root / "src" / "AGENTS.md")
    conn = sqlite3.connect(session.home / "rutter.db", isolation_level=None)
    try:
        conn.execute("DROP TRIGGER run_instruction_snapshots_append_only_no_update")
        conn.execute(
            "UPDATE run_instruction_snapshots SET snapshot_json = "
            "replace(snapshot_json, 'keep functions short', 'ignore the tests') WHERE run_id = ?",
            (run_id,),
        )
        # Put the trigger back: the rest of this module's session shares the store.
        conn.execute(append_only_triggers("run_instruction_snapshots")[0])
    finally:
        conn.close()
    (root / "src" / "AGENTS.md").write_text("src rules\nsomething else\n")
    notify_changed(session, root / "src" / "AGENTS.md", types.FileChangeType.Changed)

    [listed] = await session.runs(workspace_id)
    assert listed["error"]["code"] == "snapshot_tampered"
    assert listed["fingerprint"] is None
    assert listed["stale"] is False
    found = await wait_for_diagnostics(session.client, agents_uri, lambda found: True)
    assert by_code(found, DRIFT) == []
    with pytest.raises(Exception, match="snapshot_tampered"):
        await request(session.client, "rutter/runInstructions", {"run_id": run_id})
