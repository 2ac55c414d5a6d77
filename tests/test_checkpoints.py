"""Checkpoints (issue 13, docs/reference/continuity.md) through the app facade on a real store, real
files and real git repositories: the snapshot holds exactly what section 10 lists, bounded and
redacted, fingerprinted without its time; nodes chain below the run's root; every read
verifies the node (a tampered one is `snapshot_tampered`, never served); a checkpoint racing a
memory delete in another process references the memory consistently or not at all, and never
holds a body."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from rutter_core.app.continuity import (
    AddMessageParams,
    AddNoteParams,
    CheckpointParams,
    ContinuityNode,
    EditNoteParams,
    ShowNodeParams,
    SupersedeNoteParams,
)
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams, DeleteMemoryParams, SetMemoryStatusParams
from rutter_core.app.runs import ConfirmRefreshParams, CreateRunParams, InspectRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.kernel.errors import NotFoundError, RejectedError
from rutter_core.runs.service import import_run
from rutter_core.store import Store
from tests.conftest import write_tree
from tests.testing import SteppedClock, git, refused, sqlite_file

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
SNAPSHOT_KEYS = {
    "protocol_version", "fingerprint", "created_at", "workspace_id", "mission_id", "run_id",
    "session_id", "thread_id", "mode", "title", "summary", "redacted", "compaction_summary",
    "messages", "memory", "instructions", "project_configuration", "git", "git_reason",
    "inherits", "authority",
}  # fmt: skip
NODE_KEYS = {"protocol_version", "node_id", "parent_node_id", "kind", "run_id", "session_id",
             "thread_id", "title", "created_by", "created_by_person", "created_at",
             "snapshot"}  # fmt: skip


@dataclass
class Setup:
    rutter: Rutter
    store: Store
    root: Path
    run_id: str
    thread_id: str
    root_node_id: str

    def checkpoint(self, title: str = "Parser reviewed", summary: str | None = None) -> Any:
        return self.rutter.continuity.checkpoint(
            CheckpointParams(run_id=self.run_id, title=title, summary=summary), actor="cli"
        )

    def say(self, text: str, **fields: Any) -> Any:
        source = fields.pop("source", "cli")
        params = AddMessageParams(
            thread_id=self.thread_id, role=fields.pop("role", "user"), text=text, **fields
        )
        return self.rutter.continuity.add_message(params, source=source)

    def note(self, kind: str, text: str) -> Any:
        params = AddNoteParams(thread_id=self.thread_id, kind=kind, text=text)
        return self.rutter.continuity.add_note(params, actor="cli")

    def remember(self, scope: str, content: str, workspace_id: str | None = None) -> Any:
        params = CreateMemoryParams(
            scope=scope, workspace_id=workspace_id, title=content[:20], content=content
        )
        return self.rutter.memory.create(params, actor="cli")

    def nodes(self) -> int:
        with self.store.read() as conn:
            return int(conn.exec_driver_sql("SELECT count(*) FROM continuity_nodes").scalar_one())


@pytest.fixture
def setup(store: Store, workspace_root: Path) -> Setup:
    write_tree(workspace_root, {"AGENTS.md": "root rules\n", "src/AGENTS.md": "src rules\n"})
    git(workspace_root, "init", "-q", "-b", "main")
    git(workspace_root, "add", ".")
    git(workspace_root, "commit", "-q", "-m", "first")
    rutter = Rutter(store)
    rutter.workspaces.register(
        RegisterWorkspaceParams(workspace_id="demo", root=str(workspace_root), cwd="/")
    )
    created = rutter.runs.create(
        CreateRunParams(goal="review", workspace_id="demo", target="src", mode="auto"),
        actor="cli",
    )
    return Setup(
        rutter, store, workspace_root, created.run_id, created.thread_id, created.root_node_id
    )


def snapshot_of(node: ContinuityNode) -> dict[str, Any]:
    assert node.snapshot is not None
    document: dict[str, Any] = node.snapshot.to_json()
    return document


# -- what a snapshot holds ----------------------------------------------------------------------


def test_the_snapshot_holds_what_section_10_lists(setup: Setup, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    setup.rutter.workspaces.register(
        RegisterWorkspaceParams(workspace_id="other", root=str(other), cwd="/")
    )
    user = setup.remember("user", "I prefer small commits (user body)")
    project = setup.remember("project", "Run make test first (project body)", "demo")
    elsewhere = setup.remember("project", "Other workspace body", "other")
    disabled = setup.remember("project", "Disabled body", "demo")
    setup.rutter.memory.set_status(
        SetMemoryStatusParams(id=disabled.memory_id, version=1, status="disabled"), actor="cli"
    )
    expired = setup.remember("project", "Expired body", "demo")
    with setup.store.write() as conn:
        conn.exec_driver_sql(
            "UPDATE memories SET retention_until = '2000-01-01T00:00:00Z' WHERE memory_id = ?",
            (expired.memory_id,),
        )
    said = setup.say(f"use {GITHUB} to push", source="import:codex", external_id="c-1")
    summary = setup.note("summary", "parser reviewed; tests next")

    node = setup.checkpoint("Parser reviewed", f"Ready, token {GITHUB}")
    document = snapshot_of(node)
    assert set(node.to_json()) == NODE_KEYS
    assert (node.kind, node.parent_node_id, node.created_by) == (
        "checkpoint", setup.root_node_id, "cli",
    )  # fmt: skip
    assert set(document) == SNAPSHOT_KEYS
    assert document["protocol_version"] == "continuity_snapshot.v1"
    run = setup.rutter.runs.inspect(InspectRunParams(run_id=setup.run_id)).run
    assert (document["run_id"], document["session_id"], document["thread_id"]) == (
        run.run_id, run.session_id, run.thread_id,
    )  # fmt: skip
    assert (document["workspace_id"], document["mission_id"], document["mode"]) == (
        "demo", run.mission_id, "auto",
    )  # fmt: skip
    # Title and summary are redacted; the flag says so.
    assert document["title"] == "Parser reviewed"
    assert document["summary"] == "Ready, token [REDACTED:github_token]"
    assert document["redacted"] is True
    assert document["compaction_summary"] == {
        "source": "summary_note", "note_id": summary.note_id, "version": 1,
        "text": "parser reviewed; tests next", "redacted": False,
    }  # fmt: skip
    assert document["messages"] == {
        "total": 1,
        "items": [{
            "message_id": said.message_id, "seq": 1, "role": "user", "source": "import:codex",
            "external_id": "c-1", "text": "use [REDACTED:github_token] to push",
            "redacted": True, "text_truncated": False, "bytes": len(said.text.encode()),
        }],
    }  # fmt: skip
    # The active memories of the user and this workspace: user first, by ID; no body.
    assert document["memory"] == {
        "total_active": 2,
        "truncated": False,
        "references": [
            {"memory_id": m.memory_id, "version": m.version, "content_sha256": m.content_sha256}
            for m in (user, project)
        ],
    }
    text = json.dumps(node.to_json())
    for body in ("user body", "project body", "Other workspace", "Disabled body", "Expired body"):
        assert body not in text
    assert elsewhere.memory_id not in text
    assert GITHUB not in text
    assert document["instructions"] == {
        "run_id": setup.run_id, "revision": 1, "fingerprint": run.fingerprint,
        "target_path": "src",
    }  # fmt: skip
    assert document["project_configuration"] == {
        "basis": "live_instructions", "fingerprint": run.fingerprint, "matches_pinned": True,
        "reason": None,
    }  # fmt: skip
    assert document["git"] == {"branch": "main", "head": git(setup.root, "rev-parse", "HEAD")}
    assert document["git_reason"] is None
    assert document["inherits"] == [
        "workspace", "pinned_instructions", "compaction_summary", "messages", "memory_references",
    ]  # fmt: skip
    assert set(document["authority"].values()) == {False}
    assert len(document["authority"]) == 9


def test_the_fingerprint_is_the_jcs_sha256_without_the_time(
    setup: Setup, stepped_clock: SteppedClock
) -> None:
    setup.say("one")
    first = setup.checkpoint("same", "state")
    stepped_clock.advance()  # a later second: only created_at differs
    second = setup.checkpoint("same", "state")
    one, two = snapshot_of(first), snapshot_of(second)
    assert one["created_at"] != two["created_at"]
    assert one["fingerprint"] == two["fingerprint"]
    kept = {key: value for key, value in one.items() if key not in {"fingerprint", "created_at"}}
    assert one["fingerprint"] == hashlib.sha256(rfc8785.dumps(kept)).hexdigest()
    # Anything else that changes changes it.
    assert snapshot_of(setup.checkpoint("other", "state"))["fingerprint"] != one["fingerprint"]
    setup.say("two")
    assert snapshot_of(setup.checkpoint("same", "state"))["fingerprint"] != one["fingerprint"]


def test_checkpoints_chain_below_the_runs_root(setup: Setup) -> None:
    first = setup.checkpoint("one")
    second = setup.checkpoint("two")
    third = setup.checkpoint("three")
    assert first.parent_node_id == setup.root_node_id
    assert second.parent_node_id == first.node_id
    assert third.parent_node_id == second.node_id
    # A second run on the same thread has its own chain.
    other = setup.rutter.runs.create(
        CreateRunParams(goal="again", workspace_id="demo", thread_id=setup.thread_id),
        actor="lsp",
    )
    theirs = setup.rutter.continuity.checkpoint(
        CheckpointParams(run_id=other.run_id, title="theirs"), actor="lsp"
    )
    assert (theirs.parent_node_id, theirs.created_by) == (other.root_node_id, "lsp")
    assert setup.checkpoint("four").parent_node_id == third.node_id


def test_messages_are_the_last_20_each_cut_at_16_kib(setup: Setup) -> None:
    for number in range(1, 25):
        setup.say(f"message {number}")
    long = setup.say("é" * 10_000)  # 20,000 bytes
    document = snapshot_of(setup.checkpoint())
    items = document["messages"]["items"]
    assert document["messages"]["total"] == 25
    assert [item["seq"] for item in items] == list(range(6, 26))
    last = items[-1]
    assert (last["message_id"], last["text_truncated"], last["bytes"]) == (
        long.message_id, True, 20_000,
    )  # fmt: skip
    assert last["text"] == "é" * 8192
    assert all(not item["text_truncated"] for item in items[:-1])


def test_the_latest_summary_is_the_active_summary_note_changed_last(
    setup: Setup, stepped_clock: SteppedClock
) -> None:
    assert snapshot_of(setup.checkpoint())["compaction_summary"] is None
    older = setup.note("summary", "older")
    setup.note("decision", "not a summary")
    newer = setup.note("summary", "newer")
    assert snapshot_of(setup.checkpoint())["compaction_summary"]["note_id"] == newer.note_id
    stepped_clock.advance()
    edited = setup.rutter.continuity.edit_note(
        EditNoteParams(note_id=older.note_id, version=1, text="older, revised"), actor="cli"
    )
    summary = snapshot_of(setup.checkpoint())["compaction_summary"]
    assert (summary["note_id"], summary["version"], summary["text"]) == (
        older.note_id, 2, "older, revised",
    )  # fmt: skip
    setup.rutter.continuity.supersede_note(
        SupersedeNoteParams(note_id=edited.note_id, version=2), actor="cli"
    )
    assert snapshot_of(setup.checkpoint())["compaction_summary"]["note_id"] == newer.note_id


def test_at_most_200_memory_references_user_first(setup: Setup) -> None:
    users = [setup.remember("user", f"user {n}") for n in range(3)]
    projects = [setup.remember("project", f"project {n}", "demo") for n in range(202)]
    memory = snapshot_of(setup.checkpoint())["memory"]
    assert (memory["total_active"], memory["truncated"]) == (205, True)
    expected = sorted(m.memory_id for m in users) + sorted(m.memory_id for m in projects)[:197]
    assert [ref["memory_id"] for ref in memory["references"]] == expected


def test_instructions_and_configuration_follow_the_run_and_the_disk(setup: Setup) -> None:
    runs = setup.rutter.runs
    (setup.root / "src" / "AGENTS.md").write_text("src rules, changed\n", encoding="utf-8")
    drifted = snapshot_of(setup.checkpoint())
    pinned = drifted["instructions"]["fingerprint"]
    live = runs.inspect(InspectRunParams(run_id=setup.run_id)).live_fingerprint
    assert drifted["instructions"]["revision"] == 1
    assert drifted["project_configuration"]["fingerprint"] == live != pinned
    assert drifted["project_configuration"]["matches_pinned"] is False
    assert live is not None
    runs.confirm_refresh(
        ConfirmRefreshParams(
            run_id=setup.run_id, expected_fingerprint=pinned, expected_live_fingerprint=live
        ),
        actor="cli",
    )
    refreshed = snapshot_of(setup.checkpoint())
    assert (refreshed["instructions"]["revision"], refreshed["instructions"]["fingerprint"]) == (
        2, live,
    )  # fmt: skip
    assert refreshed["project_configuration"]["matches_pinned"] is True
    # Discovery failing closed: the configuration is null with its reason; still a checkpoint.
    target = setup.root / "src" / "AGENTS.md"
    target.unlink()
    target.symlink_to(setup.root.parent / "outside.md")  # out of the workspace: refused
    failing = snapshot_of(setup.checkpoint())["project_configuration"]
    assert failing == {
        "basis": "live_instructions", "fingerprint": None, "matches_pinned": False,
        "reason": "symlink",
    }  # fmt: skip


def test_git_identity_detached_and_absent(setup: Setup, tmp_path: Path) -> None:
    git(setup.root, "commit", "-q", "--allow-empty", "-m", "second")
    head = git(setup.root, "rev-parse", "HEAD")
    git(setup.root, "checkout", "-q", "--detach")
    detached = snapshot_of(setup.checkpoint())
    assert (detached["git"], detached["git_reason"]) == ({"branch": None, "head": head}, None)
    # A repository whose config would run programs (fsmonitor, hooks): nothing runs.
    marker = tmp_path / "ran"
    script = tmp_path / "hook.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    script.chmod(0o755)
    git(setup.root, "config", "core.fsmonitor", str(script))
    git(setup.root, "config", "core.hooksPath", str(tmp_path))
    setup.checkpoint()
    assert not marker.exists()
    # Not a repository.
    plain = tmp_path / "plain"
    write_tree(plain, {"AGENTS.md": "plain\n"})
    setup.rutter.workspaces.register(
        RegisterWorkspaceParams(workspace_id="plain", root=str(plain), cwd="/")
    )
    run = setup.rutter.runs.create(CreateRunParams(goal="g", workspace_id="plain"), actor="cli")
    node = setup.rutter.continuity.checkpoint(
        CheckpointParams(run_id=run.run_id, title="t"), actor="cli"
    )
    document = snapshot_of(node)
    assert (document["git"], document["git_reason"]) == (None, "not_a_git_work_tree")


def test_title_and_summary_are_checked_before_anything_is_read(setup: Setup) -> None:
    cases = [
        ("", None, "invalid_text"),
        ("two\nlines", None, "invalid_text"),
        ("x" * 257, None, "text_too_large"),
        ("ok", "s" * (16 * 1024 + 1), "text_too_large"),
        ("ok", " \n", "invalid_text"),
    ]
    for title, summary, code in cases:
        with pytest.raises(RejectedError) as raised:
            setup.checkpoint(title, summary)
        assert raised.value.code == code
    assert setup.nodes() == 1  # the root only
    titled = snapshot_of(setup.checkpoint(f"  key {GITHUB}  "))
    assert (titled["title"], titled["redacted"]) == ("key [REDACTED:github_token]", True)


def test_checkpoint_errors(setup: Setup) -> None:
    refused(
        NotFoundError,
        "run_not_found",
        lambda: setup.rutter.continuity.checkpoint(
            CheckpointParams(run_id="run_01M8Y3HJTQYDNPR8CJ56SS1T0B", title="t"), actor="cli"
        ),
    )
    imported = import_run(setup.store, workspace_id="demo", goal="imported", actor="cli")
    error = refused(
        RejectedError,
        "run_not_pinned",
        lambda: setup.rutter.continuity.checkpoint(
            CheckpointParams(run_id=imported.run_id, title="t"), actor="cli"
        ),
    )
    assert error.details == {"run_id": imported.run_id}
    refused(
        RejectedError,
        "actor_not_allowed",
        lambda: setup.rutter.continuity.checkpoint(
            CheckpointParams(run_id=setup.run_id, title="t"),
            actor="model",  # type: ignore[arg-type]
        ),
    )
    assert setup.nodes() == 2  # the two root nodes


# -- reading nodes ------------------------------------------------------------------------------


def test_reading_a_node_verifies_it(setup: Setup) -> None:
    node = setup.checkpoint("t", "s")
    ops = setup.rutter.continuity
    assert ops.node(ShowNodeParams(node_id=node.node_id)) == node
    root = ops.node(ShowNodeParams(node_id=setup.root_node_id))
    assert (root.kind, root.parent_node_id, root.title, root.snapshot) == ("root", None, None, None)
    for node_id in ("node_01M8Y3HJTQYDNPR8CJ56SS1T0B", "node_", "nonsense"):
        with pytest.raises(NotFoundError) as raised:
            ops.node(ShowNodeParams(node_id=node_id))
        assert raised.value.code == "not_found"


def tamper(store: Store, *statements: str) -> None:
    """Rewrite rows as someone with the file could: triggers dropped, plain sqlite3."""
    conn = sqlite3.connect(sqlite_file(store))
    try:
        for table in ("continuity_nodes", "continuity_snapshots"):
            for verb in ("update", "delete", "existing_key"):
                conn.execute(f"DROP TRIGGER IF EXISTS {table}_append_only_no_{verb}")
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


TAMPERING = {
    "a message's text": (
        "UPDATE continuity_snapshots SET snapshot_json = "
        'replace(snapshot_json, \'"text":"kept"\', \'"text":"planted"\')',
        "does not hash to its fingerprint",
    ),
    "both fingerprints": (
        "UPDATE continuity_snapshots SET fingerprint = '" + "0" * 64 + "', snapshot_json = "
        "replace(snapshot_json, substr(snapshot_json, instr(snapshot_json, '\"fingerprint\"'), "
        '80), \'"fingerprint":"' + "0" * 64 + "\"')",
        "does not hash to its fingerprint",
    ),
    "the row's fingerprint": (
        "UPDATE continuity_snapshots SET fingerprint = '" + "1" * 64 + "'",
        "names another fingerprint",
    ),
    "the row's title": (
        "UPDATE continuity_snapshots SET title = 'renamed'",
        "belongs to another node",
    ),
    "the node's run": (
        "UPDATE continuity_nodes SET session_id = (SELECT session_id FROM sessions "
        "ORDER BY session_id DESC LIMIT 1) WHERE kind = 'checkpoint'",
        "belongs to another node",
    ),
    "the snapshot's form": (
        "UPDATE continuity_snapshots SET snapshot_json = replace(snapshot_json, ',', ', ')",
        "canonical form",
    ),
    "a granted authority": (
        "UPDATE continuity_snapshots SET snapshot_json = "
        "replace(snapshot_json, '\"approvals\":false', '\"approvals\":true')",
        "not a valid snapshot",
    ),
    "the snapshot row": ("DELETE FROM continuity_snapshots", "snapshot is missing"),
    "the JSON": ("UPDATE continuity_snapshots SET snapshot_json = '{'", "not a valid snapshot"),
    "the node's kind": (
        "UPDATE continuity_nodes SET kind = 'branch' WHERE kind = 'checkpoint'",
        "not a checkpoint",
    ),
}


@pytest.mark.parametrize("what", sorted(TAMPERING))
def test_a_tampered_node_is_refused(setup: Setup, what: str) -> None:
    setup.say("kept")
    node = setup.checkpoint("t")
    # A second session, so that a node can be moved to one that is not its own.
    setup.rutter.runs.create(CreateRunParams(goal="other", workspace_id="demo"), actor="cli")
    statement, reason = TAMPERING[what]
    tamper(setup.store, statement)
    error = refused(
        RejectedError,
        "snapshot_tampered",
        lambda: setup.rutter.continuity.node(ShowNodeParams(node_id=node.node_id)),
    )
    assert reason in error.details["reason"]
    assert error.details["node_id"] == node.node_id
    assert "planted" not in json.dumps(error.to_json())


# -- racing a memory delete -----------------------------------------------------------------------

CHECKPOINTER = """
import sys
from rutter_core.app.continuity import CheckpointParams
from rutter_core.app.facade import Rutter
from rutter_core.kernel.errors import NotFoundError
from rutter_core.app.memory import GetMemoryParams
from rutter_core.store import open_store

url, run_id, memory_id = sys.argv[1:4]
after = 0
with open_store(url) as store:
    rutter = Rutter(store)
    for number in range(400):
        rutter.continuity.checkpoint(CheckpointParams(run_id=run_id, title="race"), actor="cli")
        try:
            rutter.memory.get(GetMemoryParams(id=memory_id))
        except NotFoundError:
            after += 1
            if after == 5:
                break
print(number + 1)
"""

DELETER = """
import sys, time
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import DeleteMemoryParams
from rutter_core.store import open_store

url, memory_id = sys.argv[1:3]
with open_store(url) as store:
    while True:
        with store.read() as conn:
            taken = conn.exec_driver_sql(
                "SELECT count(*) FROM continuity_nodes WHERE kind = 'checkpoint'"
            ).scalar_one()
        if taken >= 5:
            break
        time.sleep(0.005)
    Rutter(store).memory.delete(DeleteMemoryParams(id=memory_id, version=1), actor="cli")
"""


def test_a_checkpoint_racing_a_memory_delete_references_it_wholly_or_not_at_all(
    setup: Setup,
) -> None:
    kept = setup.remember("project", "kept memory body 5d1c", "demo")
    doomed = setup.remember("project", "doomed memory body 9e2b", "demo")
    url = setup.store.engine.url.render_as_string(hide_password=False)
    checkpointer = subprocess.Popen(
        [sys.executable, "-c", CHECKPOINTER, url, setup.run_id, doomed.memory_id],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    deleter = subprocess.Popen([sys.executable, "-c", DELETER, url, doomed.memory_id])
    out, _ = checkpointer.communicate(timeout=300)
    assert [checkpointer.returncode, deleter.wait(timeout=60)] == [0, 0]

    with setup.store.read() as conn:
        texts = [
            str(text)
            for (text,) in conn.exec_driver_sql(
                "SELECT s.snapshot_json FROM continuity_snapshots s JOIN continuity_nodes n "
                "USING (node_id) ORDER BY n.created_at, n.node_id"
            )
        ]
    assert len(texts) == int(out) >= 10
    doomed_ref = {
        "memory_id": doomed.memory_id, "version": 1, "content_sha256": doomed.content_sha256,
    }  # fmt: skip
    kept_ref = {"memory_id": kept.memory_id, "version": 1, "content_sha256": kept.content_sha256}
    seen = []
    for text in texts:
        assert "memory body" not in text  # no body, ever
        references = json.loads(text)["memory"]["references"]
        assert kept_ref in references
        mentions = [ref for ref in references if ref["memory_id"] == doomed.memory_id]
        assert mentions in ([], [doomed_ref])  # the reference as it was, or none
        seen.append(bool(mentions))
    # Before the delete every checkpoint has it, after it none does: one switch.
    assert seen[0] is True
    assert seen[-1] is False
    assert seen == sorted(seen, reverse=True)
    # Every node still reads (the deleted memory leaves the checkpoints intact).
    ops = setup.rutter.continuity
    with setup.store.read() as conn:
        ids = [str(i) for (i,) in conn.exec_driver_sql("SELECT node_id FROM continuity_snapshots")]
    for node_id in ids:
        assert ops.node(ShowNodeParams(node_id=node_id)).snapshot is not None
    with pytest.raises(NotFoundError):
        setup.rutter.memory.delete_preview(DeleteMemoryParams(id=doomed.memory_id, version=1))
