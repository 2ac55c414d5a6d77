"""Runs and pinned instruction snapshots (docs/reference/runs.md), against a real store and tree."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError

from rutter_core.app.facade import Rutter
from rutter_core.app.workspaces import RemoveWorkspaceParams
from rutter_core.discovery.fingerprint import canonical_json
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import Snapshot
from rutter_core.kernel.errors import (
    ConflictError,
    DiscoveryError,
    Hint,
    NotFoundError,
    RejectedError,
    StoreError,
)
from rutter_core.runs.service import (
    ALLOWED_TRANSITIONS,
    MAX_GOAL_CHARS,
    RUN_STATUSES,
    TERMINAL_STATUSES,
    CreatedRun,
    RunInspection,
    RunStatus,
    confirm_refresh,
    create_run,
    diff_snapshots,
    get_run,
    get_verified_run,
    import_run,
    inspect_run,
    latest_revision,
    list_runs,
    read_revision,
    set_run_status,
)
from rutter_core.store import Store, open_store
from rutter_core.workspaces.service import register_workspace
from tests.conftest import write_tree
from tests.testing import THIS_MACHINE, acting_person

TREE: dict[str, str | bytes] = {
    "AGENTS.md": "root rules\n",
    "src/AGENTS.md": "src rules\n",
    ".prayu/rules/a.md": "rule a\n",
    ".prayu/rules/b.md": "rule b\n",
}
RUN_TABLES = ("missions", "threads", "sessions", "runs", "continuity_nodes",
              "run_instruction_snapshots")  # fmt: skip

# The tests whose store is the `store` fixture run on SQLite and on PostgreSQL, but those that
# read or write the SQLite file itself (`sqlite_only`).
pytestmark = pytest.mark.both_dialects


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "rutter.db"


@pytest.fixture
def store_url(store_dialect: str, db_path: Path, request: pytest.FixtureRequest) -> str:
    if store_dialect == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{db_path}"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with open_store(store_url) as opened:
        yield opened


@pytest.fixture
def demo(store: Store, workspace_root: Path) -> Path:
    write_tree(workspace_root, TREE)
    register_workspace(store, "demo", workspace_root, cwd=workspace_root, machine=THIS_MACHINE)
    return workspace_root


def fresh() -> FileReader:
    """A reader with empty caches: each inspection sees the disk as it is now."""
    return FileReader()


def new_run(store: Store, **options: Any) -> CreatedRun:
    arguments: dict[str, Any] = {"workspace_id": "demo", "goal": "fix the parser",
                                 "reader": fresh(), "actor": "cli", **options}  # fmt: skip
    return create_run(store, **arguments)


def raw(db_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(db_path, timeout=5, isolation_level=None)


def counts(db_path: Path) -> dict[str, int]:
    conn = raw(db_path)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in RUN_TABLES}
    finally:
        conn.close()


def revisions(db_path: Path, run_id: str) -> list[tuple[int, str, str | None, str]]:
    conn = raw(db_path)
    try:
        rows = conn.execute(
            "SELECT revision, fingerprint, replaces_fingerprint, confirmed_by "
            "FROM run_instruction_snapshots WHERE run_id = ? ORDER BY revision",
            (run_id,),
        ).fetchall()
    finally:
        conn.close()
    return [(int(r), str(f), None if p is None else str(p), str(b)) for r, f, p, b in rows]


def confirm(store: Store, inspection: RunInspection, **options: Any) -> tuple[RunInspection, bool]:
    live = inspection.live_fingerprint
    assert live is not None
    arguments: dict[str, Any] = {
        "reader": fresh(),
        "expected_fingerprint": inspection.pinned_fingerprint,
        "expected_live_fingerprint": live,
        "actor": "lsp",
        **options,
    }
    return confirm_refresh(store, inspection.run_id, **arguments)


# --- create ------------------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_create_makes_every_record_in_one_go(store: Store, demo: Path, db_path: Path) -> None:
    created = new_run(store, target="src/main.go", mode="auto", profile="careful")
    assert set(created.to_json()) == {"run_id", "mission_id", "session_id", "thread_id",
                                      "root_node_id", "revision", "fingerprint"}  # fmt: skip
    assert created.revision == 1
    assert created.run_id.startswith("run_")
    assert created.mission_id.startswith("msn_")
    assert created.session_id.startswith("ses_")
    assert created.thread_id.startswith("thr_")
    assert created.root_node_id.startswith("node_")
    assert counts(db_path) == dict.fromkeys(RUN_TABLES, 1)

    run = get_run(store, created.run_id)
    assert run.to_json() == {
        "run_id": created.run_id,
        "mission_id": created.mission_id,
        "session_id": created.session_id,
        "thread_id": created.thread_id,
        "workspace_id": "demo",
        "goal": "fix the parser",
        "profile": "careful",
        "mode": "auto",
        "target_path": "src/main.go",
        "status": "created",
        "revision": 1,
        "fingerprint": created.fingerprint,
        "created_by": "cli",
        "created_by_person": acting_person(store),
        "updated_by": "cli",
        "updated_by_person": acting_person(store),
        "created_at": run.created_at,
        "updated_at": run.created_at,
    }
    pinned = latest_revision(store, created.run_id)
    assert pinned is not None
    assert pinned.revision == 1
    assert pinned.replaces_fingerprint is None
    assert pinned.confirmed_by == "cli"
    assert pinned.snapshot.fingerprint == created.fingerprint
    assert [s.path for s in pinned.snapshot.sources] == [
        "AGENTS.md", ".prayu/rules/a.md", ".prayu/rules/b.md", "src/AGENTS.md"
    ]  # fmt: skip

    conn = raw(db_path)
    try:
        node = conn.execute(
            "SELECT run_id, session_id, thread_id, parent_node_id, kind, created_by "
            "FROM continuity_nodes"
        ).fetchone()
    finally:
        conn.close()
    assert node == (created.run_id, created.session_id, created.thread_id, None, "root", "cli")


@pytest.mark.sqlite_only
def test_stored_snapshot_is_the_full_canonical_snapshot(
    store: Store, demo: Path, db_path: Path
) -> None:
    created = new_run(store)
    conn = raw(db_path)
    try:
        [text] = conn.execute("SELECT snapshot_json FROM run_instruction_snapshots").fetchone()
    finally:
        conn.close()
    # Everything, content included, in RFC 8785 form: a function of the snapshot alone.
    assert text == canonical_json(created.snapshot.to_json()).decode("utf-8")
    assert Snapshot.model_validate_json(text).sources[0].content == "root rules\n"


def test_continuing_a_thread(store: Store, demo: Path, tmp_path: Path) -> None:
    first = new_run(store)
    second = new_run(store, thread_id=first.thread_id)
    assert second.thread_id == first.thread_id
    assert second.session_id != first.session_id
    assert second.mission_id != first.mission_id

    with pytest.raises(NotFoundError) as missing:
        new_run(store, thread_id="thr_01J00000000000000000000000")
    assert missing.value.code == "thread_not_found"
    assert missing.value.hint == Hint("start_or_find_thread")

    other = tmp_path / "other"
    other.mkdir()
    register_workspace(store, "other", other, cwd=tmp_path, machine=THIS_MACHINE)
    with pytest.raises(RejectedError) as foreign:
        new_run(store, workspace_id="other", thread_id=first.thread_id)
    assert foreign.value.code == "thread_in_other_workspace"

    with store.write() as conn:
        conn.exec_driver_sql("UPDATE threads SET status = 'archived'")
    with pytest.raises(RejectedError) as archived:
        new_run(store, thread_id=first.thread_id)
    assert archived.value.code == "thread_archived"


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"goal": "   "}, "invalid_goal"),
        ({"goal": "x" * (MAX_GOAL_CHARS + 1)}, "invalid_goal"),
        ({"goal": "fix\x1b[31m the parser"}, "control_character"),
        ({"goal": "fix \u202ethe parser"}, "control_character"),
        ({"goal": "use token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"}, "secret_in_goal"),
        ({"mode": "yolo"}, "invalid_mode"),
        ({"profile": "Has Spaces"}, "invalid_profile"),
        ({"actor": "model"}, "actor_not_allowed"),
        ({"target": "../outside"}, "invalid_target"),
        ({"target": "/etc/passwd"}, "invalid_target"),
    ],
)
def test_invalid_input_is_rejected_and_creates_nothing(
    store: Store, demo: Path, db_path: Path, options: dict[str, Any], code: str
) -> None:
    with pytest.raises(RejectedError) as info:
        new_run(store, **options)
    assert info.value.code == code
    assert counts(db_path) == dict.fromkeys(RUN_TABLES, 0)


def test_goal_is_stripped_and_may_span_lines(store: Store, demo: Path) -> None:
    created = new_run(store, goal="  fix the parser\n\tthen the lexer \n")
    assert get_run(store, created.run_id).goal == "fix the parser\n\tthen the lexer"


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("files", "code"),
    [
        ({"CLAUDE.md": ""}, "empty_source"),
        ({".prayu/instructions.ignore": "../x\n"}, "invalid_ignore"),
    ],
)
def test_discovery_failing_closed_creates_nothing(
    store: Store, demo: Path, db_path: Path, files: dict[str, str | bytes], code: str
) -> None:
    write_tree(demo, files)
    with pytest.raises(DiscoveryError) as info:
        new_run(store)
    assert info.value.code == code
    assert counts(db_path) == dict.fromkeys(RUN_TABLES, 0)


@pytest.mark.sqlite_only
def test_symlinked_instruction_file_creates_nothing(
    store: Store, demo: Path, db_path: Path, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere.md").write_text("x\n")
    (demo / "CLAUDE.md").symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(DiscoveryError) as info:
        new_run(store)
    assert info.value.code == "symlink"
    assert counts(db_path) == dict.fromkeys(RUN_TABLES, 0)


@pytest.mark.sqlite_only
def test_a_constraint_firing_on_the_last_insert_leaves_nothing_half_written(
    store: Store, demo: Path, db_path: Path
) -> None:
    """Mission, thread, session, run and root node are inserted before revision 1: when that
    last insert fails, every one of them is rolled back with it."""
    conn = raw(db_path)
    try:
        conn.execute(
            "CREATE TRIGGER refuse_revisions BEFORE INSERT ON run_instruction_snapshots "
            "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
        )
    finally:
        conn.close()
    with pytest.raises(ConflictError) as refused:
        new_run(store)
    assert isinstance(refused.value.__cause__, IntegrityError)
    assert "refused by the test" in str(refused.value.__cause__)
    assert counts(db_path) == dict.fromkeys(RUN_TABLES, 0)


@pytest.mark.sqlite_only
def test_unknown_workspace_and_missing_target_directory(
    store: Store, demo: Path, db_path: Path
) -> None:
    with pytest.raises(NotFoundError) as unknown:
        new_run(store, workspace_id="ghost")
    assert unknown.value.code == "not_registered"
    with pytest.raises(NotFoundError) as missing:
        new_run(store, target="no/such/dir/file.go")
    assert missing.value.code == "not_found"
    assert counts(db_path) == dict.fromkeys(RUN_TABLES, 0)


# --- get / list ---------------------------------------------------------------------------------


def test_get_unknown_run(store: Store) -> None:
    with pytest.raises(NotFoundError) as info:
        get_run(store, "run_missing")
    assert info.value.code == "run_not_found"
    assert info.value.details == {"run_id": "run_missing"}
    assert info.value.hint == Hint("find_run")
    assert "rutter" not in info.value.message  # no command line: each surface words the hint


def test_list_filters_and_order(store: Store, demo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    register_workspace(store, "other", other, cwd=tmp_path, machine=THIS_MACHINE)
    first = new_run(store)
    second = new_run(store, workspace_id="other")
    third = new_run(store)
    set_run_status(store, third.run_id, "cancelled", actor="cli")
    assert [r.run_id for r in list_runs(store)] == [first.run_id, second.run_id, third.run_id]
    assert [r.run_id for r in list_runs(store, active_only=True)] == [first.run_id, second.run_id]
    assert [r.run_id for r in list_runs(store, workspace_id="demo")] == [first.run_id, third.run_id]
    assert [r.run_id for r in list_runs(store, workspace_id="demo", active_only=True)] == [
        first.run_id
    ]
    assert list_runs(store, workspace_id="ghost") == []


# --- status ------------------------------------------------------------------------------------


def _run_in(store: Store, status: str) -> str:
    """A run brought to `status` along allowed transitions."""
    run_id = new_run(store).run_id
    path = {"created": [], "running": ["running"], "paused": ["running", "paused"],
            "completed": ["running", "completed"], "failed": ["failed"],
            "cancelled": ["cancelled"]}[status]  # fmt: skip
    for step in path:
        set_run_status(store, run_id, step, actor="cli")
    assert get_run(store, run_id).status == status
    return run_id


@pytest.mark.parametrize("start", RUN_STATUSES)
@pytest.mark.parametrize("goal", [s for s in RUN_STATUSES if s != "created"])
def test_transition_table(store: Store, demo: Path, start: RunStatus, goal: RunStatus) -> None:
    run_id = _run_in(store, start)
    before = get_run(store, run_id)
    if goal == start:
        assert set_run_status(store, run_id, goal, actor="lsp") == before  # a harmless retry
    elif start in TERMINAL_STATUSES:
        with pytest.raises(RejectedError) as info:
            set_run_status(store, run_id, goal, actor="lsp")
        assert info.value.code == "run_terminal"
        assert get_run(store, run_id) == before
    elif goal in ALLOWED_TRANSITIONS[start]:
        after = set_run_status(store, run_id, goal, actor="lsp")
        assert after.status == goal
        assert after.updated_by == "lsp"
    else:
        with pytest.raises(RejectedError) as info:
            set_run_status(store, run_id, goal, actor="lsp")
        assert info.value.code == "invalid_transition"
        assert info.value.details["from"] == start
        assert get_run(store, run_id) == before


def test_transition_table_shape() -> None:
    assert set(ALLOWED_TRANSITIONS) == set(RUN_STATUSES)
    assert {"completed", "failed", "cancelled"} == TERMINAL_STATUSES
    for status in TERMINAL_STATUSES:
        assert ALLOWED_TRANSITIONS[status] == frozenset()
    assert all("created" not in targets for targets in ALLOWED_TRANSITIONS.values())


@pytest.mark.parametrize("status", ["created", "done", "RUNNING", ""])
def test_invalid_status_values(store: Store, demo: Path, status: str) -> None:
    run_id = new_run(store).run_id
    with pytest.raises(RejectedError) as info:
        set_run_status(store, run_id, status, actor="cli")
    assert info.value.code == "invalid_status"


def test_status_of_unknown_run_and_unknown_actor(store: Store, demo: Path) -> None:
    with pytest.raises(NotFoundError):
        set_run_status(store, "run_missing", "running", actor="cli")
    run_id = new_run(store).run_id
    with pytest.raises(RejectedError) as info:
        set_run_status(store, run_id, "running", actor="tool")
    assert info.value.code == "actor_not_allowed"


@pytest.mark.sqlite_only
def test_ending_a_run_closes_its_mission_and_session(
    store: Store, demo: Path, db_path: Path
) -> None:
    created = new_run(store)
    set_run_status(store, created.run_id, "running", actor="cli")
    conn = raw(db_path)
    try:
        query = "SELECT (SELECT status FROM missions), (SELECT status FROM sessions), " \
                "(SELECT status FROM threads)"  # fmt: skip
        assert conn.execute(query).fetchone() == ("active", "active", "active")
        set_run_status(store, created.run_id, "completed", actor="cli")
        assert conn.execute(query).fetchone() == ("closed", "closed", "active")
    finally:
        conn.close()


# --- inspect -----------------------------------------------------------------------------------


def test_fresh_run_is_not_stale(store: Store, demo: Path) -> None:
    created = new_run(store)
    inspection = inspect_run(store, created.run_id, reader=fresh())
    body = inspection.to_json()
    assert set(body) == {"run_id", "revision", "pinned", "live", "stale", "diff"}
    assert body["revision"] == 1
    assert body["stale"] is False
    assert body["pinned"]["fingerprint"] == created.fingerprint
    assert body["live"]["fingerprint"] == created.fingerprint
    assert body["diff"] == {
        "from_fingerprint": created.fingerprint,
        "to_fingerprint": created.fingerprint,
        "added": [],
        "removed": [],
        "changed": [],
        "order_changed": False,
        "ignored_changed": False,
        "requires_confirmation": False,
    }


def test_a_listed_run_is_read_with_its_drift_not_before_it(store: Store, demo: Path) -> None:
    """An editor's run list reads the active runs, then each run's drift: a refresh committed
    in between lists the run as the drift's read found it (revision 2, current), never the old
    revision beside the new one's drift."""
    from rutter_core.app.runs import ActiveRunsParams

    created = new_run(store, target="src/main.go")
    app = Rutter(store, fresh())
    [(before, local)] = app.runs.active(ActiveRunsParams(), served={"demo"})
    assert before.revision == 1
    write_tree(demo, {"AGENTS.md": "root rules, edited\n"})
    confirm(store, inspect_run(store, created.run_id, reader=fresh()))

    listed = app.runs.listed(before, local).to_json()
    assert listed["revision"] == 2
    assert listed["fingerprint"] == listed["live_fingerprint"]
    assert listed["stale"] is False


def test_drift_added_removed_changed(store: Store, demo: Path) -> None:
    created = new_run(store, target="src/main.go")
    write_tree(demo, {"AGENTS.md": "root rules, edited\n", "CLAUDE.md": "claude\n"})
    (demo / ".prayu/rules/b.md").unlink()
    inspection = inspect_run(store, created.run_id, reader=fresh())
    assert inspection.stale is True
    diff = inspection.to_json()["diff"]
    assert diff["added"] == ["CLAUDE.md"]
    assert diff["removed"] == [".prayu/rules/b.md"]
    assert diff["changed"] == ["AGENTS.md"]  # not src/AGENTS.md, whose ordinal merely moved
    assert diff["order_changed"] is False
    assert diff["ignored_changed"] is False
    assert diff["requires_confirmation"] is True
    assert diff["from_fingerprint"] == created.fingerprint
    assert diff["to_fingerprint"] == inspection.live_fingerprint != created.fingerprint
    assert inspection.diff.changed_fields["AGENTS.md"] == ("bytes", "content_sha256")
    # The pinned snapshot is untouched: the run keeps what it started with.
    assert inspection.pinned is not None
    assert inspection.pinned.snapshot.sources[0].content == "root rules\n"


def test_drift_through_override_and_ignore(store: Store, demo: Path) -> None:
    created = new_run(store)
    write_tree(demo, {"AGENTS.override.md": "override\n",
                      ".prayu/instructions.ignore": ".prayu/rules/a.md\n"})  # fmt: skip
    inspection = inspect_run(store, created.run_id, reader=fresh())
    diff = inspection.diff
    assert diff.added == ("AGENTS.override.md",)
    assert diff.removed == ("AGENTS.md", ".prayu/rules/a.md")
    assert diff.ignored_changed is True
    assert diff.changed == ()


def test_redaction_change_is_a_change(store: Store, demo: Path) -> None:
    created = new_run(store)
    write_tree(demo, {"AGENTS.md": "root rules\npassword=hunter2hunter2\n"})
    inspection = inspect_run(store, created.run_id, reader=fresh())
    assert inspection.diff.changed == ("AGENTS.md",)
    assert {"redacted", "redactions"} <= set(inspection.diff.changed_fields["AGENTS.md"])


def test_order_change_of_common_sources(store: Store, demo: Path) -> None:
    pinned = new_run(store).snapshot
    reordered = pinned.model_copy(update={"sources": list(reversed(pinned.sources))})
    diff = diff_snapshots(pinned, reordered)
    assert diff.order_changed is True
    assert diff.added == diff.removed == diff.changed == ()
    assert diff_snapshots(pinned, pinned).order_changed is False


def test_every_fingerprint_change_is_explained(store: Store, demo: Path) -> None:
    """Whatever the edit, a stale run's diff names at least one difference."""
    created = new_run(store, target="src/x.go")
    edits: list[dict[str, str | bytes]] = [
        {"src/AGENTS.md": "src rules, edited\n"},
        {".prayu/rules/0.md": "first rule\n"},
        {"src/.claude/CLAUDE.md": "claude dir\n"},
        {"src/AGENTS.override.md": "   \n"},  # a blank override: listed as ignored
        {"AGENTS.md": "root rules\r\n"},  # same content after newline normalization, other bytes
    ]
    for edit in edits:
        write_tree(demo, edit)
        inspection = inspect_run(store, created.run_id, reader=fresh())
        diff = inspection.diff
        explained = (diff.added or diff.removed or diff.changed or diff.order_changed
                     or diff.ignored_changed)  # fmt: skip
        assert inspection.stale, edit
        assert explained, edit


@pytest.mark.sqlite_only
def test_live_failing_closed_keeps_the_pinned_snapshot(
    store: Store, demo: Path, tmp_path: Path, db_path: Path
) -> None:
    created = new_run(store)
    (tmp_path / "elsewhere.md").write_text("x\n")
    (demo / "AGENTS.md").unlink()
    (demo / "AGENTS.md").symlink_to(tmp_path / "elsewhere.md")
    inspection = inspect_run(store, created.run_id, reader=fresh())
    body = inspection.to_json()
    error = body["live"]["error"]
    assert body["live"] == {"error": {"code": "symlink", "message": error["message"],
                                      "path": "AGENTS.md"}}  # fmt: skip
    assert body["stale"] is False
    assert body["diff"]["requires_confirmation"] is False
    assert body["diff"] == {  # nothing to compare: no path is reported as removed
        "from_fingerprint": created.fingerprint,
        "to_fingerprint": None,
        "added": [],
        "removed": [],
        "changed": [],
        "order_changed": False,
        "ignored_changed": False,
        "requires_confirmation": False,
    }
    assert body["pinned"]["fingerprint"] == created.fingerprint
    assert body["revision"] == 1

    # Nothing can be confirmed against a live snapshot that does not exist.
    with pytest.raises(ConflictError) as info:
        confirm_refresh(store, created.run_id, reader=fresh(),
                        expected_fingerprint=created.fingerprint,
                        expected_live_fingerprint="0" * 64, actor="cli")  # fmt: skip
    assert info.value.details["live_fingerprint"] is None
    assert info.value.details["live_error"]["code"] == "symlink"
    assert [r for r, *_ in revisions(db_path, created.run_id)] == [1]


def test_inspect_unknown_run(store: Store) -> None:
    with pytest.raises(NotFoundError):
        inspect_run(store, "run_missing", reader=fresh())


# --- confirm -----------------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_confirm_appends_the_next_revision(store: Store, demo: Path, db_path: Path) -> None:
    created = new_run(store)
    write_tree(demo, {"CLAUDE.md": "new\n"})
    reviewed = inspect_run(store, created.run_id, reader=fresh())
    after, refreshed = confirm(store, reviewed)
    assert refreshed is True
    assert after.revision == 2
    assert after.stale is False
    assert after.to_json()["pinned"]["fingerprint"] == reviewed.live_fingerprint
    assert after.diff.requires_confirmation is False
    assert revisions(db_path, created.run_id) == [
        (1, created.fingerprint, None, "cli"),
        (2, str(reviewed.live_fingerprint), created.fingerprint, "lsp"),
    ]
    run = get_run(store, created.run_id)
    assert (run.revision, run.fingerprint, run.updated_by) == (2, reviewed.live_fingerprint, "lsp")
    second = read_revision(store, created.run_id, 2)
    assert second.replaces_fingerprint == created.fingerprint
    assert [s.path for s in second.snapshot.sources][:2] == ["AGENTS.md", "CLAUDE.md"]
    assert read_revision(store, created.run_id, 1).fingerprint == created.fingerprint

    # A second confirmation of the same review is now stale itself.
    with pytest.raises(ConflictError) as info:
        confirm(store, reviewed)
    assert info.value.code == "conflict"
    assert info.value.details == {
        "run_id": created.run_id,
        "current_fingerprint": reviewed.live_fingerprint,
        "live_fingerprint": reviewed.live_fingerprint,
    }
    assert len(revisions(db_path, created.run_id)) == 2


@pytest.mark.sqlite_only
def test_confirm_refuses_when_the_disk_changed_after_review(
    store: Store, demo: Path, db_path: Path
) -> None:
    created = new_run(store)
    write_tree(demo, {"CLAUDE.md": "reviewed\n"})
    reviewed = inspect_run(store, created.run_id, reader=fresh())
    write_tree(demo, {"CLAUDE.md": "changed again\n"})
    with pytest.raises(ConflictError) as info:
        confirm(store, reviewed)
    now = inspect_run(store, created.run_id, reader=fresh())
    assert info.value.details["current_fingerprint"] == created.fingerprint
    assert info.value.details["live_fingerprint"] == now.live_fingerprint
    assert now.live_fingerprint != reviewed.live_fingerprint
    assert "changed again" in info.value.message
    assert info.value.hint == Hint("review_run_again", {"run_id": created.run_id})
    assert [r for r, *_ in revisions(db_path, created.run_id)] == [1]


@pytest.mark.sqlite_only
def test_confirm_when_not_stale_appends_nothing(store: Store, demo: Path, db_path: Path) -> None:
    created = new_run(store)
    reviewed = inspect_run(store, created.run_id, reader=fresh())
    after, refreshed = confirm(store, reviewed)
    assert refreshed is False
    assert after.revision == 1
    assert after.stale is False
    assert [r for r, *_ in revisions(db_path, created.run_id)] == [1]


@pytest.mark.sqlite_only
def test_confirm_on_terminal_run_is_rejected(store: Store, demo: Path, db_path: Path) -> None:
    created = new_run(store)
    write_tree(demo, {"CLAUDE.md": "new\n"})
    reviewed = inspect_run(store, created.run_id, reader=fresh())
    set_run_status(store, created.run_id, "cancelled", actor="cli")
    with pytest.raises(RejectedError) as info:
        confirm(store, reviewed)
    assert info.value.code == "run_terminal"
    assert [r for r, *_ in revisions(db_path, created.run_id)] == [1]
    # Still inspectable, read-only.
    assert inspect_run(store, created.run_id, reader=fresh()).stale is True


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"expected_fingerprint": "abc"}, "invalid_fingerprint"),
        ({"expected_live_fingerprint": "A" * 64}, "invalid_fingerprint"),
        ({"actor": "system"}, "actor_not_allowed"),
    ],
)
def test_confirm_input_is_validated(
    store: Store, demo: Path, options: dict[str, Any], code: str
) -> None:
    created = new_run(store)
    write_tree(demo, {"CLAUDE.md": "new\n"})
    reviewed = inspect_run(store, created.run_id, reader=fresh())
    with pytest.raises(RejectedError) as info:
        confirm(store, reviewed, **options)
    assert info.value.code == code
    if code == "invalid_fingerprint":
        assert info.value.hint == Hint("copy_fingerprints", {"run_id": created.run_id})


# --- runs without a revision (imported / legacy) -------------------------------------------------


@pytest.mark.sqlite_only
@pytest.mark.parametrize("no_revision", ["", None])
def test_run_without_revision_inspects_read_only_and_first_confirm_pins_revision_1(
    store: Store, demo: Path, db_path: Path, no_revision: str | None
) -> None:
    run = import_run(store, workspace_id="demo", goal="legacy", actor="cli", target="src")
    assert (run.revision, run.fingerprint, run.target_path) == (None, None, "src")
    assert latest_revision(store, run.run_id) is None
    assert get_verified_run(store, run.run_id) == run
    assert counts(db_path)["continuity_nodes"] == 1

    inspection = inspect_run(store, run.run_id, reader=fresh())
    body = inspection.to_json()
    assert body["revision"] is None
    assert body["pinned"] is None
    assert body["stale"] is True
    assert body["diff"]["from_fingerprint"] is None
    assert isinstance(inspection.live, Snapshot)
    assert body["diff"]["added"] == [source.path for source in inspection.live.sources]
    assert body["diff"]["requires_confirmation"] is True
    assert revisions(db_path, run.run_id) == []  # inspecting wrote nothing

    with pytest.raises(ConflictError) as info:
        confirm(store, inspection, expected_fingerprint="f" * 64)
    assert info.value.details["current_fingerprint"] is None

    after, refreshed = confirm(store, inspection, expected_fingerprint=no_revision)
    assert refreshed is True
    assert after.revision == 1
    assert revisions(db_path, run.run_id) == [(1, str(inspection.live_fingerprint), None, "lsp")]


def test_run_without_revision_and_failing_discovery(
    store: Store, demo: Path, tmp_path: Path
) -> None:
    run = import_run(store, workspace_id="demo", goal="legacy", actor="cli")
    write_tree(demo, {"CLAUDE.md": ""})
    body = inspect_run(store, run.run_id, reader=fresh()).to_json()
    assert body["pinned"] is None
    assert body["live"]["error"]["code"] == "empty_source"
    assert body["stale"] is False
    assert body["diff"]["requires_confirmation"] is False
    assert body["diff"]["from_fingerprint"] is body["diff"]["to_fingerprint"] is None
    assert body["diff"]["added"] == []


def test_read_revision_that_does_not_exist(store: Store, demo: Path) -> None:
    created = new_run(store)
    with pytest.raises(NotFoundError) as info:
        read_revision(store, created.run_id, 2)
    assert info.value.code == "revision_not_found"
    assert info.value.details["latest"] == 1


# --- append-only and tamper evidence --------------------------------------------------------------


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE run_instruction_snapshots SET confirmed_by = 'lsp'",
        "UPDATE run_instruction_snapshots SET snapshot_json = '{}' WHERE revision = 1",
        "DELETE FROM run_instruction_snapshots WHERE revision = 1",
        "DELETE FROM run_instruction_snapshots",
        "UPDATE continuity_nodes SET kind = 'checkpoint'",
        "DELETE FROM continuity_nodes",
    ],
)
def test_ledger_rows_cannot_be_updated_or_deleted(
    store: Store, demo: Path, db_path: Path, statement: str
) -> None:
    created = new_run(store)
    with pytest.raises(ConflictError) as refused, store.write() as conn:
        conn.exec_driver_sql(statement)
    assert "append-only table" in str(refused.value.__cause__)
    other = raw(db_path)  # another process, no rutter code at all
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only table"):
            other.execute(statement)
    finally:
        other.close()
    assert read_revision(store, created.run_id, 1).fingerprint == created.fingerprint
    assert counts(db_path)["continuity_nodes"] == 1


def test_revision_numbers_are_unique_per_run(store: Store, demo: Path) -> None:
    created = new_run(store)
    with pytest.raises(ConflictError), store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO run_instruction_snapshots SELECT run_id, revision, snapshot_json, "
            "fingerprint, confirmed_by, confirmed_at, replaces_fingerprint, confirmed_by_person "
            "FROM run_instruction_snapshots"
        )
    assert latest_revision(store, created.run_id) is not None


@pytest.mark.sqlite_only
def test_store_refuses_non_operator_actors_even_through_sql(store: Store, demo: Path) -> None:
    created = new_run(store)
    with pytest.raises(StoreError) as refused, store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO run_instruction_snapshots SELECT run_id, 2, snapshot_json, "
            "fingerprint, 'model', confirmed_at, fingerprint, NULL FROM run_instruction_snapshots"
        )
    assert "CHECK" in str(refused.value.__cause__)
    with pytest.raises(StoreError) as refused, store.write() as conn:
        conn.exec_driver_sql("UPDATE runs SET updated_by = 'tool'")
    assert "CHECK" in str(refused.value.__cause__)
    assert get_run(store, created.run_id).updated_by == "cli"


def _tamper(db_path: Path, statement: str, *params: Any) -> None:
    """Edit a revision the way an attacker with file access would: triggers dropped first."""
    conn = raw(db_path)
    try:
        conn.execute("DROP TRIGGER run_instruction_snapshots_append_only_no_update")
        conn.execute(statement, params)
    finally:
        conn.close()


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("statement", "params"),
    [
        pytest.param(
            "UPDATE run_instruction_snapshots "
            "SET snapshot_json = replace(snapshot_json, 'root rules', 'evil rules')",
            (),
            id="content",
        ),
        pytest.param(
            "UPDATE run_instruction_snapshots SET fingerprint = ?", ("e" * 64,), id="fingerprint"
        ),
        pytest.param(
            "UPDATE run_instruction_snapshots SET snapshot_json = 'not json'", (), id="not-json"
        ),
        pytest.param(
            "UPDATE run_instruction_snapshots SET snapshot_json = "
            'replace(snapshot_json, \'"kind":"agents"\', \'"kind":"claude"\')',
            (),
            id="fingerprinted-field",
        ),
        # JSON escapes that decode to a lone surrogate: valid JSON, but no UTF-8 text.
        pytest.param(
            "UPDATE run_instruction_snapshots "
            "SET snapshot_json = replace(snapshot_json, 'root rules', '\\ud800')",
            (),
            id="content-surrogate",
        ),
        pytest.param(
            "UPDATE run_instruction_snapshots "
            'SET snapshot_json = replace(snapshot_json, \'"path":"AGENTS.md"\', '
            '\'"path":"\\udc80"\')',
            (),
            id="path-surrogate",
        ),
        pytest.param(
            "UPDATE run_instruction_snapshots SET snapshot_json = ?",
            ("[" * 100_000 + "]" * 100_000,),
            id="deeply-nested",
        ),
    ],
)
def test_tampered_revision_is_refused_on_read(
    store: Store, demo: Path, db_path: Path, statement: str, params: tuple[str, ...]
) -> None:
    created = new_run(store)
    _tamper(db_path, statement, *params)
    readers = (
        lambda: read_revision(store, created.run_id, 1),
        lambda: latest_revision(store, created.run_id),
        lambda: get_verified_run(store, created.run_id),
        lambda: inspect_run(store, created.run_id, reader=fresh()),
        lambda: confirm_refresh(store, created.run_id, reader=fresh(),
                                expected_fingerprint=created.fingerprint,
                                expected_live_fingerprint=created.fingerprint, actor="cli"),
    )  # fmt: skip
    for read in readers:
        with pytest.raises(StoreError) as info:
            read()
        assert info.value.code == "snapshot_tampered"
        assert info.value.details["run_id"] == created.run_id
        assert info.value.details["revision"] == 1
        assert created.run_id in info.value.message
        assert "revision 1" in info.value.message
    assert [r for r, *_ in revisions(db_path, created.run_id)] == [1]


@pytest.mark.sqlite_only
def test_tampering_content_and_its_digest_changes_the_fingerprint(
    store: Store, demo: Path, db_path: Path
) -> None:
    created = new_run(store)
    pinned = latest_revision(store, created.run_id)
    assert pinned is not None
    source = pinned.snapshot.sources[0]
    forged = hashlib.sha256(b"evil rules\n").hexdigest()
    _tamper(
        db_path,
        "UPDATE run_instruction_snapshots SET snapshot_json = "
        "replace(replace(snapshot_json, 'root rules', 'evil rules'), ?, ?)",
        source.content_sha256,
        forged,
    )
    with pytest.raises(StoreError) as info:
        read_revision(store, created.run_id, 1)
    assert info.value.details["reason"] == "the snapshot does not hash to its fingerprint"


# --- workspaces ----------------------------------------------------------------------------------


def test_workspace_with_runs_cannot_be_removed(store: Store, demo: Path) -> None:
    new_run(store)
    new_run(store)
    with pytest.raises(ConflictError) as info:
        Rutter(store).workspaces.remove(RemoveWorkspaceParams(workspace_id="demo"))
    assert info.value.details == {
        "workspace_id": "demo", "runs": 2, "sessions": 2, "project_memories": 0, "threads": 0
    }  # fmt: skip
    assert "still has 2 runs and 2 sessions" in info.value.message
