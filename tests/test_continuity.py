"""A thread's messages and notes (issue 13, docs/reference/continuity.md), through the app facade on
a real store: every bound, every error code, redaction, provenance, idempotent external IDs,
versioned notes, and concurrent writers in separate processes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.continuity import (
    AddMessageParams,
    AddNoteParams,
    ContinuityOperations,
    EditNoteParams,
    ListMessagesParams,
    ListNotesParams,
    SupersedeNoteParams,
)
from rutter_core.app.facade import Rutter
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.kernel.errors import (
    ConflictError,
    NotFoundError,
    RejectedError,
    RutterError,
    UsageError,
)
from rutter_core.store import Store
from tests.conftest import write_tree
from tests.testing import acting_person, sqlite_file

# The tests whose store is the `store` fixture run on SQLite and on PostgreSQL,
# but those that read or write the SQLite file itself (`sqlite_only`).
pytestmark = pytest.mark.both_dialects

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
AWS = "AKIA" + "Q3ZJ7WLD5MRT2XKF"  # not AWS's documented EXAMPLE key, which is no secret
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA1Zx0l3l2Ylm8R4mOa8Zc1K8sV0l5Q2lq9Nn3vH2q0aYv6s8h\n"
    "-----END RSA PRIVATE KEY-----"
)
SENTINEL = "sentinel-user-text-7f3a"
"""Written into refused text: no error may echo it."""
UNKNOWN_THREAD = "thr_01M8Y3HJTQYDNPR8CJ56SS1T0B"
UNKNOWN_NOTE = "note_01M8Y3HJTQYDNPR8CJ56SS1T0B"


@pytest.fixture
def rutter(store: Store, workspace_root: Path) -> Rutter:
    write_tree(workspace_root, {"AGENTS.md": "rules\n"})
    facade = Rutter(store)
    facade.workspaces.register(
        RegisterWorkspaceParams(workspace_id="demo", root=str(workspace_root), cwd="/")
    )
    return facade


@pytest.fixture
def ops(rutter: Rutter) -> ContinuityOperations:
    return rutter.continuity


@pytest.fixture
def thread(rutter: Rutter) -> str:
    created = rutter.runs.create(CreateRunParams(goal="g", workspace_id="demo"), actor="cli")
    return created.thread_id


def add(ops: ContinuityOperations, thread: str, text: str = "hello", **fields: Any) -> Any:
    source = fields.pop("source", "cli")
    params = AddMessageParams(
        thread_id=thread, role=fields.pop("role", "user"), text=text, **fields
    )
    return ops.add_message(params, source=source)


def refused(error: type[RutterError], code: str, call: Any) -> RutterError:
    with pytest.raises(error) as raised:
        call()
    found = raised.value
    assert found.code == code, found
    document = json.dumps(found.to_json())
    assert SENTINEL not in document, document
    return found


def db_text(store: Store) -> str:
    path = sqlite_file(store)
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT text FROM messages UNION ALL SELECT text FROM notes").fetchall()
    finally:
        conn.close()
    return "\n".join(str(text) for (text,) in rows)


# -- messages -----------------------------------------------------------------------------------


def test_messages_are_stored_in_order_with_their_provenance(
    ops: ContinuityOperations, thread: str, rutter: Rutter
) -> None:
    first = add(ops, thread, "first", role="user")
    second = add(ops, thread, "second", role="assistant", source="lsp")
    third = add(ops, thread, "third", role="tool", source="import:claude-code", external_id="t-1")
    fourth = add(ops, thread, "fourth", role="system", source="mcp")
    assert [m.seq for m in (first, second, third, fourth)] == [1, 2, 3, 4]
    assert first.message_id.startswith("msg_")
    assert len(first.message_id) == 30
    assert (third.source, third.external_id, third.created) == ("import:claude-code", "t-1", True)
    listed = ops.messages(ListMessagesParams(thread_id=thread))
    assert [m.text for m in listed.messages] == ["first", "second", "third", "fourth"]
    assert [m.role for m in listed.messages] == ["user", "assistant", "tool", "system"]
    assert listed.messages[1].model_dump() == {
        k: v for k, v in second.model_dump().items() if k != "created"
    }
    assert listed.has_more is False
    assert set(first.to_json()) == {
        "message_id", "thread_id", "seq", "role", "source", "source_person", "external_id", "text",
        "redacted", "created_at", "injected", "created",
    }  # fmt: skip
    assert {m.source_person for m in listed.messages} == {acting_person(rutter.store)}


@pytest.mark.sqlite_only
def test_secrets_in_messages_are_redacted_before_they_are_stored(
    ops: ContinuityOperations, thread: str, store: Store
) -> None:
    text = f"token {GITHUB}\naws {AWS}\n{PRIVATE_KEY}\npassword=hunter2hunter2 done\r\nend"
    added = add(ops, thread, text)
    assert added.redacted is True
    for secret in (GITHUB, AWS, "MIIEowIBAAKCAQEA", "hunter2hunter2"):
        assert secret not in added.text
        assert secret not in db_text(store)
    for marker in ("[REDACTED:github_token]", "[REDACTED:aws_access_key]",
                   "[REDACTED:private_key]", "[REDACTED:secret_assignment]"):  # fmt: skip
        assert marker in added.text
    assert added.text.endswith("done\nend")  # CRLF stored as LF
    plain = add(ops, thread, "fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b")
    assert plain.redacted is False  # a commit SHA is not a secret


@pytest.mark.parametrize("role", ["User", "bot", "", "user ", "model"])
def test_unknown_roles_are_rejected(ops: ContinuityOperations, thread: str, role: str) -> None:
    error = refused(RejectedError, "invalid_role", lambda: add(ops, thread, SENTINEL, role=role))
    assert error.details["allowed"] == ["user", "assistant", "tool", "system"]


def test_message_text_is_bounded_at_64_kib(ops: ContinuityOperations, thread: str) -> None:
    exactly = "é" * (32 * 1024)  # 65,536 bytes
    assert add(ops, thread, exactly).text == exactly
    error = refused(
        RejectedError, "text_too_large", lambda: add(ops, thread, exactly + SENTINEL[:1])
    )
    assert error.details == {"field": "text", "bytes": 65537, "max_bytes": 65536}
    # Short enough as sent, too long once each secret is a marker: refused, not cut.
    grown = ("password=hunter2x\n" * 4000)[: 64 * 1024]
    error = refused(RejectedError, "text_too_large", lambda: add(ops, thread, grown))
    assert "once its secrets are replaced" in error.message
    assert ops.messages(ListMessagesParams(thread_id=thread)).messages[-1].text == exactly


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t ",
        f"{SENTINEL}\x00",
        f"{SENTINEL}\x1b[31m",
        f"{SENTINEL}\x07",
        "\ud800" + SENTINEL,
    ],
)
def test_blank_or_binary_text_is_rejected(
    ops: ContinuityOperations, thread: str, text: str
) -> None:
    refused(RejectedError, "invalid_text", lambda: add(ops, thread, text))
    assert ops.messages(ListMessagesParams(thread_id=thread)).messages == ()


def test_unknown_threads_are_not_found(ops: ContinuityOperations) -> None:
    for thread_id in (UNKNOWN_THREAD, "thr_x", "", SENTINEL):
        error = refused(NotFoundError, "thread_not_found", lambda t=thread_id: add(ops, t))
        assert error.hint is not None
        assert error.hint.fix == "find_thread"
        refused(
            NotFoundError,
            "thread_not_found",
            lambda t=thread_id: ops.messages(ListMessagesParams(thread_id=t)),
        )
        refused(
            NotFoundError,
            "thread_not_found",
            lambda t=thread_id: ops.add_note(
                AddNoteParams(thread_id=t, kind="fact", text="x"), actor="cli"
            ),
        )
        refused(
            NotFoundError,
            "thread_not_found",
            lambda t=thread_id: ops.notes(ListNotesParams(thread_id=t)),
        )


@pytest.mark.sqlite_only
def test_an_archived_thread_takes_nothing_but_can_be_read(
    ops: ContinuityOperations, thread: str, store: Store
) -> None:
    add(ops, thread, "before")
    with store.write() as conn:
        conn.exec_driver_sql(
            "UPDATE threads SET status = 'archived' WHERE thread_id = ?", (thread,)
        )
    refused(RejectedError, "thread_archived", lambda: add(ops, thread, SENTINEL))
    refused(
        RejectedError,
        "thread_archived",
        lambda: ops.add_note(AddNoteParams(thread_id=thread, kind="fact", text="x"), actor="cli"),
    )
    assert [m.text for m in ops.messages(ListMessagesParams(thread_id=thread)).messages] == [
        "before"
    ]


def test_external_ids_make_adding_again_idempotent(ops: ContinuityOperations, thread: str) -> None:
    first = add(ops, thread, f"key {GITHUB}", external_id="uuid-1", source="import:codex")
    again = add(ops, thread, f"key {GITHUB}", external_id="uuid-1", source="import:codex")
    assert again.created is False
    assert again.model_dump(exclude={"created"}) == first.model_dump(exclude={"created"})
    # The same external ID from another source, or in no source's namespace, is another message.
    other = add(ops, thread, f"key {GITHUB}", external_id="uuid-1", source="import:claude-code")
    assert other.created is True
    assert add(ops, thread, "no id").created is True
    assert add(ops, thread, "no id").created is True  # messages without one never collide
    error = refused(
        ConflictError,
        "conflict",
        lambda: add(ops, thread, SENTINEL, external_id="uuid-1", source="import:codex"),
    )
    assert error.details["message_id"] == first.message_id
    refused(
        ConflictError,
        "conflict",
        lambda: add(
            ops, thread, f"key {GITHUB}", role="assistant", external_id="uuid-1",
            source="import:codex",
        ),
    )  # fmt: skip
    assert len(ops.messages(ListMessagesParams(thread_id=thread)).messages) == 4


@pytest.mark.parametrize(
    "external_id",
    ["", " padded", "padded ", "a\nb", "tab\there", "x" * 257, GITHUB, "\u202eabc"],
)
def test_malformed_external_ids_are_rejected(
    ops: ContinuityOperations, thread: str, external_id: str
) -> None:
    refused(RejectedError, "invalid_external_id", lambda: add(ops, thread, external_id=external_id))


@pytest.mark.parametrize("source", ["", "CLI", "import:", "import:Bad", "http_control", "model"])
def test_sources_are_the_surfaces_or_an_importer(
    ops: ContinuityOperations, thread: str, source: str
) -> None:
    refused(RejectedError, "invalid_source", lambda: add(ops, thread, source=source))


def test_params_refuse_a_client_chosen_source() -> None:
    with pytest.raises(ValueError, match="source"):
        AddMessageParams.model_validate(
            {"thread_id": UNKNOWN_THREAD, "role": "user", "text": "x", "source": "mcp"}
        )


def test_listing_pages_back_from_the_most_recent(ops: ContinuityOperations, thread: str) -> None:
    for number in range(1, 8):
        add(ops, thread, f"m{number}")
    page = ops.messages(ListMessagesParams(thread_id=thread, limit=3))
    assert [m.seq for m in page.messages] == [5, 6, 7]
    assert page.has_more is True
    page = ops.messages(ListMessagesParams(thread_id=thread, limit=3, before_seq=5))
    assert [m.seq for m in page.messages] == [2, 3, 4]
    page = ops.messages(ListMessagesParams(thread_id=thread, limit=3, before_seq=2))
    assert ([m.seq for m in page.messages], page.has_more) == ([1], False)
    for limit in (0, 501):
        refused(
            UsageError,
            "invalid_limit",
            lambda n=limit: ops.messages(ListMessagesParams(thread_id=thread, limit=n)),
        )
    refused(
        UsageError,
        "invalid_position",
        lambda: ops.messages(ListMessagesParams(thread_id=thread, before_seq=0)),
    )


WRITER = """
import sys
from rutter_core.app.continuity import AddMessageParams
from rutter_core.app.facade import Rutter
from rutter_core.store import open_store

url, thread, name = sys.argv[1:4]
with open_store(url) as store:
    ops = Rutter(store).continuity
    for number in range(25):
        params = AddMessageParams(thread_id=thread, role="user", text=f"{name}{number % 20}",
                                  external_id=f"{name}-{number % 20}")
        ops.add_message(params, source="import:race")
"""


def test_concurrent_writers_get_one_line_of_positions(
    ops: ContinuityOperations, thread: str, store: Store
) -> None:
    """Two processes append at once: positions 1..n without a gap or a repeat, and every
    external ID (each process re-adds five of its own) stored once."""
    url = store.engine.url.render_as_string(hide_password=False)
    workers = [
        subprocess.Popen([sys.executable, "-c", WRITER, url, thread, name]) for name in ("a", "b")
    ]
    assert [worker.wait(timeout=120) for worker in workers] == [0, 0]
    listed = ops.messages(ListMessagesParams(thread_id=thread, limit=500)).messages
    assert [m.seq for m in listed] == list(range(1, 41))
    assert sorted(m.external_id or "" for m in listed) == sorted(
        f"{name}-{number}" for name in ("a", "b") for number in range(20)
    )


# -- notes --------------------------------------------------------------------------------------


def note(ops: ContinuityOperations, thread: str, kind: str = "decision", text: str = "x") -> Any:
    return ops.add_note(AddNoteParams(thread_id=thread, kind=kind, text=text), actor="cli")


def test_notes_are_added_edited_and_listed(ops: ContinuityOperations, thread: str) -> None:
    added = note(ops, thread, "decision", "use sqlite")
    assert (added.version, added.status, added.created_by) == (1, "active", "cli")
    assert added.note_id.startswith("note_")
    assert len(added.note_id) == 31
    edited = ops.edit_note(
        EditNoteParams(note_id=added.note_id, version=1, text="use SQLite in WAL mode"),
        actor="lsp",
    )
    assert (edited.version, edited.text, edited.updated_by, edited.created_by) == (
        2, "use SQLite in WAL mode", "lsp", "cli",
    )  # fmt: skip
    same = ops.edit_note(
        EditNoteParams(note_id=added.note_id, version=2, text="use SQLite in WAL mode"),
        actor="cli",
    )
    assert same == edited  # nothing changed, nothing written
    fact = note(ops, thread, "fact", f"the key is {GITHUB}")
    assert fact.redacted is True
    assert GITHUB not in fact.text
    summary = note(ops, thread, "summary", "so far")
    listed = ops.notes(ListNotesParams(thread_id=thread))
    assert [n.note_id for n in listed.notes] == [added.note_id, fact.note_id, summary.note_id]


def test_a_stale_version_is_a_conflict_that_names_the_current_one(
    ops: ContinuityOperations, thread: str
) -> None:
    added = note(ops, thread)
    ops.edit_note(EditNoteParams(note_id=added.note_id, version=1, text="y"), actor="cli")
    error = refused(
        ConflictError,
        "conflict",
        lambda: ops.edit_note(
            EditNoteParams(note_id=added.note_id, version=1, text=SENTINEL), actor="cli"
        ),
    )
    assert (error.details["expected_version"], error.details["current_version"]) == (1, 2)
    assert error.hint is not None
    assert error.hint.to_json() == {
        "fix": "reread_note", "note_id": added.note_id, "thread_id": thread, "version": 2,
    }  # fmt: skip
    refused(
        ConflictError,
        "conflict",
        lambda: ops.supersede_note(
            SupersedeNoteParams(note_id=added.note_id, version=3), actor="cli"
        ),
    )


def test_superseding_is_final_and_may_name_a_replacement(
    ops: ContinuityOperations, thread: str
) -> None:
    decision = note(ops, thread, "decision", "use tabs")
    result = ops.supersede_note(
        SupersedeNoteParams(note_id=decision.note_id, version=1, text="use spaces"), actor="cli"
    )
    assert result.replacement is not None
    assert (result.replacement.kind, result.replacement.status, result.replacement.version) == (
        "decision", "active", 1,
    )  # fmt: skip
    assert (result.note.status, result.note.version, result.note.superseded_by) == (
        "superseded", 2, result.replacement.note_id,
    )  # fmt: skip
    for call in (
        lambda: ops.edit_note(
            EditNoteParams(note_id=decision.note_id, version=2, text=SENTINEL), actor="cli"
        ),
        lambda: ops.supersede_note(
            SupersedeNoteParams(note_id=decision.note_id, version=2), actor="cli"
        ),
    ):
        refused(RejectedError, "note_superseded", call)
    plain = note(ops, thread, "fact", "obsolete")
    alone = ops.supersede_note(SupersedeNoteParams(note_id=plain.note_id, version=1), actor="cli")
    assert (alone.note.status, alone.note.superseded_by, alone.replacement) == (
        "superseded", None, None,
    )  # fmt: skip
    active = ops.notes(ListNotesParams(thread_id=thread)).notes
    assert [n.text for n in active] == ["use spaces"]
    every = ops.notes(ListNotesParams(thread_id=thread, all=True)).notes
    assert [n.text for n in every] == ["use tabs", "use spaces", "obsolete"]


def test_note_errors(ops: ContinuityOperations, thread: str) -> None:
    for kind in ("Decision", "todo", ""):
        refused(RejectedError, "invalid_kind", lambda k=kind: note(ops, thread, k, SENTINEL))
    refused(
        RejectedError, "text_too_large", lambda: note(ops, thread, "fact", "x" * (16 * 1024 + 1))
    )
    assert note(ops, thread, "fact", "x" * (16 * 1024)).version == 1
    refused(RejectedError, "invalid_text", lambda: note(ops, thread, "fact", " \n "))
    for note_id in (UNKNOWN_NOTE, "note_", SENTINEL):
        refused(
            NotFoundError,
            "note_not_found",
            lambda n=note_id: ops.edit_note(
                EditNoteParams(note_id=n, version=1, text="x"), actor="cli"
            ),
        )
    added = note(ops, thread)
    for version in (0, -1):
        refused(
            UsageError,
            "invalid_version",
            lambda v=version: ops.edit_note(
                EditNoteParams(note_id=added.note_id, version=v, text="y"), actor="cli"
            ),
        )
    refused(
        RejectedError,
        "actor_not_allowed",
        lambda: ops.add_note(
            AddNoteParams(thread_id=thread, kind="fact", text="x"),
            actor="model",  # type: ignore[arg-type]
        ),
    )
