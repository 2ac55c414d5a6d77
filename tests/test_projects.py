"""One project, many machines (docs/reference/workspaces.md#projects): a registration's project
identity (its origin remote normalised, `--project`, or local), the project's records read
through every registration of it, a checkpoint forked on another registration with drift
against that registration's files, and move and remove of one registration leaving the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from rutter_core.app.agent_sessions import SessionStartParams
from rutter_core.app.branches import ForkParams, RecentParams, ResumeParams, TreeParams
from rutter_core.app.candidates import ListCandidatesParams
from rutter_core.app.continuity import (
    AddNoteParams,
    CheckpointParams,
    ListThreadsParams,
    RevisionsParams,
)
from rutter_core.app.facade import Rutter
from rutter_core.app.history import HistorySearchParams
from rutter_core.app.memory import CreateMemoryParams, ListMemoriesParams
from rutter_core.app.pins import (
    AddPinParams,
    ListPinsParams,
    ListProposalsParams,
    ProposePinParams,
)
from rutter_core.app.runs import (
    CreateRunParams,
    InspectRunParams,
    ListDeliveryReportsParams,
    ListRunsParams,
    ReportDeliveryParams,
    SetRunStatusParams,
)
from rutter_core.app.workspaces import (
    MoveWorkspaceParams,
    RegisterWorkspaceParams,
    RemoveWorkspaceParams,
    SetWorkspaceProjectParams,
    ShowWorkspaceParams,
)
from rutter_core.discovery.fsread import FileReader
from rutter_core.kernel.errors import (
    ConflictError,
    NotFoundError,
    RejectedError,
    RutterError,
    UsageError,
)
from rutter_core.store import MIGRATIONS, Store, migration_checksum, open_store
from rutter_core.workspaces.project import named_project, normalize_remote
from tests.testing import Cli, clone

# -- the normalisation table --------------------------------------------------------------------

REMOTES = [
    ("git@github.com:acme/widget.git", "github.com/acme/widget"),
    ("git@github.com:acme/widget", "github.com/acme/widget"),
    ("git@GitHub.COM:acme/widget.git/", "github.com/acme/widget"),
    ("github.com:acme/widget.git", "github.com/acme/widget"),
    ("ssh://git@github.com/acme/widget.git", "github.com/acme/widget"),
    ("ssh://git@github.com:22/acme/widget.git", "github.com/acme/widget"),
    ("ssh://github.com/acme/widget", "github.com/acme/widget"),
    ("git+ssh://git@github.com/acme/widget.git", "github.com/acme/widget"),
    ("https://github.com/acme/widget.git", "github.com/acme/widget"),
    ("https://github.com/acme/widget", "github.com/acme/widget"),
    ("https://github.com/acme/widget/", "github.com/acme/widget"),
    ("HTTPS://GitHub.com/acme/widget.git", "github.com/acme/widget"),
    ("https://user@github.com/acme/widget.git", "github.com/acme/widget"),
    ("https://user:s3cret-token@github.com/acme/widget.git", "github.com/acme/widget"),
    ("https://x-access-token:ghp_abc123@github.com/acme/widget", "github.com/acme/widget"),
    ("https://github.com:443/acme/widget.git?ref=main#top", "github.com/acme/widget"),
    ("http://github.com//acme//widget.git", "github.com/acme/widget"),
    ("git://github.com/acme/widget.git", "github.com/acme/widget"),
    # The path keeps its case; a host's subgroups stay.
    ("git@gitlab.example.org:Team/Sub/Widget.git", "gitlab.example.org/Team/Sub/Widget"),
    ("https://gitlab.example.org/Team/Sub/Widget.git", "gitlab.example.org/Team/Sub/Widget"),
    ("ssh://git@gitlab.example.org:2222/Team/Sub/Widget.git", "gitlab.example.org/Team/Sub/Widget"),
    ("git@[::1]:acme/widget.git", "::1/acme/widget"),
]

NO_IDENTITY = [
    "/srv/git/widget.git",  # a local path names a place on one machine
    "../widget",
    "file:///srv/git/widget.git",
    "C:\\repos\\widget",
    "https://github.com/",  # no path
    "git@github.com:",
    "git@github.com:.git",
    "https://github.com/acme/../widget",
    "",
    "https://github.com/acme/wid get",
    "svn://example.org/widget",
]


@pytest.mark.parametrize(("url", "identity"), REMOTES)
def test_remote_forms_normalise_to_one_identity(url: str, identity: str) -> None:
    assert normalize_remote(url) == identity


@pytest.mark.parametrize("url", NO_IDENTITY)
def test_remotes_that_name_no_project(url: str) -> None:
    assert normalize_remote(url) is None


def test_named_projects() -> None:
    assert named_project("team-widget") == "team-widget"
    assert named_project("  acme/widget ") == "acme/widget"
    # A remote's form given as a name is normalised like the remote (so it joins it).
    assert named_project("git@github.com:acme/widget.git") == "github.com/acme/widget"
    assert named_project("https://u:p@github.com/acme/widget") == "github.com/acme/widget"
    for bad in ("", "two words", "local:mine", "user:token@host/x", "x" * 201, "café"):
        with pytest.raises(RejectedError) as info:
            named_project(bad)
        assert info.value.code == "invalid_project"
        assert bad.strip() == "" or bad not in info.value.message  # never echoed


# -- registrations on a store -------------------------------------------------------------------


@pytest.fixture
def app(store: Store) -> Rutter:
    return Rutter(store, FileReader())


def register(
    app: Rutter, workspace_id: str, root: Path, project: str | None = None
) -> dict[str, Any]:
    return app.workspaces.register(
        RegisterWorkspaceParams(
            workspace_id=workspace_id, root=str(root), cwd=str(root), project=project
        )
    ).to_json()


@pytest.fixture
def pair(app: Rutter, tmp_path: Path) -> tuple[Path, Path]:
    """Two clones of one repository at two paths (two machines on one store look the same):
    A's origin with credentials in it, B's in scp form. B's AGENTS.md says something else."""
    a = clone(
        tmp_path / "alice" / "widget",
        "https://ci-bot:tok3n-s3cret@GitHub.com/acme/widget.git",
        {"AGENTS.md": "rules v1\n", "src/main.py": ""},
    )
    b = clone(
        tmp_path / "bob" / "src" / "widget",
        "git@github.com:acme/widget.git",
        {"AGENTS.md": "rules v2\n", "src/main.py": ""},
    )
    register(app, "widget-a", a)
    register(app, "widget-b", b)
    return a, b


def raw_rows(store: Store) -> list[str]:
    """Every value of every row of the projects and workspaces tables, as the engine has it."""
    with store.read() as conn:
        return [
            str(value)
            for table in ("projects", "workspaces")
            for row in conn.execute(text(f"SELECT * FROM {table}"))
            for value in row
        ]


@pytest.mark.both_dialects
def test_two_clones_are_one_project_and_no_credential_is_stored(
    app: Rutter, store: Store, pair: tuple[Path, Path]
) -> None:
    shown = [
        app.workspaces.show(ShowWorkspaceParams(workspace_id=w)).to_json()
        for w in ("widget-a", "widget-b")
    ]
    assert [(s["project_id"], s["project_source"]) for s in shown] == [
        ("github.com/acme/widget", "remote")
    ] * 2
    rows = raw_rows(store)
    assert "github.com/acme/widget" in rows
    assert not [value for value in rows if "s3cret" in value or "ci-bot" in value]
    with store.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM projects")).scalar() == 1


@pytest.mark.both_dialects
def test_project_records_are_shared_by_both_registrations(
    app: Rutter, pair: tuple[Path, Path]
) -> None:
    memory = app.memory.create(
        CreateMemoryParams(
            scope="project", workspace_id="widget-a", title="Tests", content="run unit tests"
        ),
        actor="cli",
    )
    run = app.runs.create(
        CreateRunParams(workspace_id="widget-a", goal="fix the parser", target="src"),
        actor="cli",
    )
    app.pins.add(AddPinParams(thread_id=run.thread_id, text="keep the API"), actor="cli")
    proposal = app.pins.propose(
        ProposePinParams(run_id=run.run_id, text="no new deps"), actor="mcp"
    )
    app.continuity.add_note(
        AddNoteParams(
            thread_id=run.thread_id,
            kind="decision",
            text="parse lazily",
            references=("src/main.py",),
        ),
        actor="cli",
    )
    for status in ("running", "completed"):
        app.runs.set_status(SetRunStatusParams(run_id=run.run_id, status=status), actor="cli")

    # Through B, a colleague's registration: the same memory, runs, pins, proposals, threads,
    # candidates and history.
    for scope in ("project", None):
        listed = app.memory.list(ListMemoriesParams(scope=scope, workspace_id="widget-b"))
        assert [m.memory_id for m in listed.items] == [memory.memory_id]
    runs = app.runs.list(ListRunsParams(workspace_id="widget-b", all=True))
    assert [r.run_id for r in runs.runs] == [run.run_id]
    pins = app.pins.list(ListPinsParams(run_id=runs.runs[0].run_id))
    assert [p.text for p in pins.pins] == ["keep the API"]
    proposals = app.pins.proposals(ListProposalsParams(workspace_id="widget-b"))
    assert [p.proposal_id for p in proposals.proposals] == [proposal.proposal_id]
    threads = app.continuity.threads(ListThreadsParams(workspace_id="widget-b"))
    assert run.thread_id in [t.thread_id for t in threads.items]
    candidates = app.candidates.list(ListCandidatesParams(workspace_id="widget-b"))
    assert [c.workspace_id for c in candidates.items] == ["widget-a"]
    found = app.history.search(
        HistorySearchParams(query="unit tests", workspace_id="widget-b", scopes=["memory"])
    )
    assert [hit.source_id for hit in found.hits] == [memory.memory_id]
    # B's run continues the thread A's run started (the project's); another project's may not.
    continued = app.runs.create(
        CreateRunParams(workspace_id="widget-b", goal="go on", thread_id=run.thread_id),
        actor="cli",
    )
    assert continued.thread_id == run.thread_id
    app.workspaces.register(
        RegisterWorkspaceParams(workspace_id="else", root=str(pair[0].parent), cwd="/")
    )
    with pytest.raises(RejectedError) as info:
        app.runs.create(
            CreateRunParams(workspace_id="else", goal="no", thread_id=run.thread_id), actor="cli"
        )
    assert info.value.code == "thread_in_other_workspace"


@pytest.mark.both_dialects
def test_a_checkpoint_made_on_a_is_forked_on_b_with_drift_against_b_files(
    app: Rutter, pair: tuple[Path, Path], tmp_path: Path
) -> None:
    _a, _b = pair
    run = app.runs.create(
        CreateRunParams(workspace_id="widget-a", goal="fix the parser", target="src/main.py"),
        actor="cli",
    )
    node = app.continuity.checkpoint(
        CheckpointParams(run_id=run.run_id, title="before the refactor"), actor="cli"
    )
    pinned = app.runs.inspect(InspectRunParams(run_id=run.run_id))
    assert pinned.stale is False

    forked = app.branches.fork(
        ForkParams(node_id=node.node_id, goal="try on my machine", workspace_id="widget-b"),
        actor="cli",
    )
    assert forked.fingerprint == pinned.pinned_fingerprint  # the checkpoint's instructions
    on_b = app.runs.inspect(InspectRunParams(run_id=forked.run_id))
    assert on_b.run.workspace_id == "widget-b"
    assert on_b.stale is True  # B's AGENTS.md says "rules v2"
    assert on_b.diff.changed == ("AGENTS.md",)
    resumed = app.branches.resume(
        ResumeParams(node_id=node.node_id, workspace_id="widget-b"), actor="cli"
    )
    assert app.runs.inspect(InspectRunParams(run_id=resumed.run_id)).stale is True
    # Forked where it was made, nothing drifted.
    at_home = app.branches.fork(ForkParams(node_id=node.node_id, goal="again"), actor="cli")
    assert app.runs.inspect(InspectRunParams(run_id=at_home.run_id)).stale is False

    # The tree's markers: against each run's own files, or against B's when B asks.
    def marker(workspace_id: str | None) -> bool:
        tree = app.branches.tree(TreeParams(run_id=run.run_id, workspace_id=workspace_id))
        (checkpoint,) = [n for n in tree.nodes if n.node_id == node.node_id]
        assert checkpoint.drift is not None
        assert checkpoint.drift.instructions is not None
        return checkpoint.drift.instructions.changed

    assert marker(None) is False
    assert marker("widget-b") is True
    recent = app.branches.recent(RecentParams(workspace_id="widget-b"))
    assert node.node_id in [n.node_id for n in recent.items]
    # What an editor on B polls changes when a node is written through A.
    before = app.continuity.revisions(RevisionsParams(workspace_ids=("widget-b",))).revisions
    app.continuity.checkpoint(CheckpointParams(run_id=run.run_id, title="later"), actor="cli")
    after = app.continuity.revisions(RevisionsParams(workspace_ids=("widget-b",))).revisions
    assert before["widget-b"] != after["widget-b"]

    # Another project's registration cannot take it.
    other = clone(tmp_path / "other", "git@github.com:acme/other.git", {"AGENTS.md": "x\n"})
    register(app, "other", other)
    with pytest.raises(UsageError) as info:
        app.branches.fork(
            ForkParams(node_id=node.node_id, goal="no", workspace_id="other"), actor="cli"
        )
    assert info.value.code == "node_not_in_project"
    with pytest.raises(NotFoundError):
        app.branches.fork(
            ForkParams(node_id=node.node_id, goal="no", workspace_id="nope"), actor="cli"
        )


@pytest.mark.both_dialects
def test_project_overrides_the_remote_and_no_remote_is_local(
    app: Rutter, store: Store, tmp_path: Path
) -> None:
    remote = "git@github.com:acme/widget.git"
    named = register(app, "named", clone(tmp_path / "n", remote, {}), project="team-widget")
    assert (named["project_id"], named["project_source"]) == ("team-widget", "named")
    joined = register(
        app, "joined", clone(tmp_path / "j", None, {}), project="https://github.com/acme/widget"
    )
    assert (joined["project_id"], joined["project_source"]) == ("github.com/acme/widget", "named")

    lone1 = register(app, "lone1", clone(tmp_path / "l1", None, {}))
    plain = tmp_path / "plain"
    plain.mkdir()  # not a git work tree at all
    lone2 = register(app, "lone2", plain)
    local_path = register(app, "lone3", clone(tmp_path / "l3", str(tmp_path / "n"), {}))
    assert [(w["project_id"], w["project_source"]) for w in (lone1, lone2, local_path)] == [
        ("local:lone1", "local"),
        ("local:lone2", "local"),
        ("local:lone3", "local"),
    ]
    app.memory.create(
        CreateMemoryParams(scope="project", workspace_id="lone1", title="t", content="only 1"),
        actor="cli",
    )
    listed = app.memory.list(ListMemoriesParams(scope="project", workspace_id="lone2"))
    assert listed.items == ()

    # Registering again is idempotent; naming another project for it is a conflict.
    again = register(app, "named", tmp_path / "n")
    assert again["created"] is False
    assert again["project_id"] == "team-widget"
    with pytest.raises(ConflictError) as info:
        register(app, "named", tmp_path / "n", project="something-else")
    assert info.value.hint is not None
    assert info.value.hint.fix == "set_workspace_project"
    with pytest.raises(RejectedError):
        register(app, "bad", tmp_path / "plain", project="local:lone1")


@pytest.mark.both_dialects
def test_project_set_moves_a_registration_between_projects(
    app: Rutter, store: Store, tmp_path: Path
) -> None:
    register(app, "w", clone(tmp_path / "w", "git@github.com:acme/widget.git", {}), "mine")
    changed = app.workspaces.set_project(
        SetWorkspaceProjectParams(workspace_id="w", from_remote=True)
    )
    assert (changed.previous_project_id, changed.project_id, changed.changed) == (
        "mine",
        "github.com/acme/widget",
        True,
    )
    same = app.workspaces.set_project(SetWorkspaceProjectParams(workspace_id="w", from_remote=True))
    assert same.changed is False
    local = app.workspaces.set_project(SetWorkspaceProjectParams(workspace_id="w"))
    assert (local.project_id, local.project_source) == ("local:w", "local")
    with store.read() as conn:  # projects no registration names are forgotten
        kept = conn.execute(text("SELECT project_id FROM projects")).scalars().all()
    assert kept == ["local:w"]
    register(app, "plain", clone(tmp_path / "p", None, {}))
    with pytest.raises(NotFoundError) as info:
        app.workspaces.set_project(
            SetWorkspaceProjectParams(workspace_id="plain", from_remote=True)
        )
    assert info.value.code == "no_origin_remote"
    with pytest.raises(RejectedError):
        app.workspaces.set_project(
            SetWorkspaceProjectParams(workspace_id="w", project="x", from_remote=True)
        )


@pytest.mark.both_dialects
def test_move_and_remove_of_one_registration_leave_the_other(
    app: Rutter, store: Store, pair: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = pair
    memory = app.memory.create(
        CreateMemoryParams(scope="project", workspace_id="widget-a", title="t", content="shared"),
        actor="cli",
    )
    run = app.runs.create(CreateRunParams(workspace_id="widget-a", goal="g"), actor="cli")
    report = app.runs.report(
        ReportDeliveryParams(run_id=run.run_id, result="passed", summary="tests pass"),
        actor="cli",
    )

    # Move A: its project stays, B is untouched.
    moved_to = tmp_path / "alice" / "moved"
    a.rename(moved_to)
    moved = app.workspaces.move(
        MoveWorkspaceParams(workspace_id="widget-a", root=str(moved_to), cwd=str(tmp_path))
    )
    assert moved.project_id == "github.com/acme/widget"
    assert app.workspaces.show(ShowWorkspaceParams(workspace_id="widget-b")).root == str(b)

    # Remove A without --cascade: its records stay the project's, read through B.
    removed = app.workspaces.remove(RemoveWorkspaceParams(workspace_id="widget-a"))
    assert (removed.kept_for_project, removed.deleted.runs) == (True, 0)
    with pytest.raises(NotFoundError):
        app.workspaces.show(ShowWorkspaceParams(workspace_id="widget-a"))
    assert [w.workspace_id for w in app.workspaces.list().workspaces] == ["widget-b"]
    listed = app.memory.list(ListMemoriesParams(scope="project", workspace_id="widget-b"))
    assert [m.memory_id for m in listed.items] == [memory.memory_id]
    runs = app.runs.list(ListRunsParams(workspace_id="widget-b"))
    assert [r.run_id for r in runs.runs] == [run.run_id]
    # A delivery report is part of its run's record: kept with it.
    kept = app.runs.reports(ListDeliveryReportsParams(run_id=run.run_id))
    assert [r.report_id for r in kept.reports] == [report.report_id]
    node = app.continuity.checkpoint(CheckpointParams(run_id=run.run_id, title="c"), actor="cli")
    forked = app.branches.fork(
        ForkParams(node_id=node.node_id, goal="go on", workspace_id="widget-b"), actor="cli"
    )
    assert app.runs.inspect(InspectRunParams(run_id=forked.run_id)).run.workspace_id == "widget-b"
    tree = app.branches.tree(TreeParams(run_id=run.run_id))  # A's files are gone: B's stand in
    assert tree.workspace_id == "widget-a"

    # The ID comes back only for the same project; its old root is free.
    with pytest.raises(ConflictError):
        register(app, "widget-a", tmp_path / "alice" / "moved", project="another")
    again = register(app, "widget-a", moved_to)
    assert (again["created"], again["project_id"]) == (True, "github.com/acme/widget")
    app.workspaces.remove(RemoveWorkspaceParams(workspace_id="widget-a"))

    # B, the last location: refused while the project has records (A's counted), then cascade.
    with pytest.raises(ConflictError) as info:
        app.workspaces.remove(RemoveWorkspaceParams(workspace_id="widget-b"))
    assert info.value.details["project_memories"] == 1
    gone = app.workspaces.remove(RemoveWorkspaceParams(workspace_id="widget-b", cascade=True))
    assert gone.deleted.project_memories == 1
    assert gone.deleted.runs >= 2
    with store.read() as conn:
        for table in ("workspaces", "projects", "runs", "delivery_reports", "memories"):
            assert conn.execute(text(f"SELECT count(*) FROM {table}")).scalar() == 0


@pytest.mark.both_dialects
def test_removing_a_registration_without_records_deletes_it(
    app: Rutter, store: Store, pair: tuple[Path, Path]
) -> None:
    removed = app.workspaces.remove(RemoveWorkspaceParams(workspace_id="widget-b"))
    assert removed.kept_for_project is False
    with store.read() as conn:
        ids = conn.execute(text("SELECT workspace_id FROM workspaces")).scalars().all()
    assert ids == ["widget-a"]


@pytest.mark.both_dialects
def test_the_session_start_hook_works_through_the_registration_the_agent_runs_in(
    app: Rutter, pair: tuple[Path, Path], tmp_path: Path
) -> None:
    """One agent session, seen on both registrations: one thread (the project's), and a run of
    each registration (its discovery reads that registration's files)."""
    a, b = pair
    elsewhere = clone(tmp_path / "other", None, {"AGENTS.md": "other rules\n"})
    register(app, "other", elsewhere)

    def start(session: str, directory: Path) -> Any:
        params = SessionStartParams(
            agent="claude-code", session_id=session, directory=str(directory)
        )
        return app.agent_sessions.start(params, actor="cli")

    on_a = start("s-1", a / "src")
    assert (on_a.workspace_id, on_a.thread_created, on_a.run_created) == ("widget-a", True, True)
    on_b = start("s-1", b)
    assert (on_b.workspace_id, on_b.thread_id) == ("widget-b", on_a.thread_id)
    assert on_b.run_created
    assert on_b.run_id != on_a.run_id
    assert "rules v2" in "".join(entry.text or "" for entry in on_b.assembly.entries)
    # Back on A: A's run again, though B's is newer.
    again = start("s-1", a)
    assert (again.workspace_id, again.run_id, again.run_created) == (
        "widget-a", on_a.run_id, False,
    )  # fmt: skip
    # From a directory of another project, the thread's own registration answers.
    assert start("s-1", elsewhere).run_id == on_a.run_id
    # A new session in B is a thread of B's.
    assert start("s-2", b).thread_id != on_a.thread_id

    # A removed (kept for the project's records): from outside, the project's live location.
    app.workspaces.remove(RemoveWorkspaceParams(workspace_id="widget-a"))
    after = start("s-1", elsewhere)
    assert (after.workspace_id, after.run_id) == ("widget-b", on_b.run_id)
    with pytest.raises(UsageError) as info:
        start("s-3", a)  # A's directory is no registration's now
    assert info.value.code == "workspace_required"


def test_migration_16_keeps_its_checksums() -> None:
    """Released migrations never change: stores record these and refuse to open otherwise."""
    migration = MIGRATIONS[15]
    assert (migration.version, migration.name) == (16, "projects")
    assert migration_checksum(migration, "sqlite") == (
        "210f3e469c3db6b6c31cdba884bbc2c5aa27b53032abd3d28fb978ffa281b65b"
    )
    assert migration_checksum(migration, "postgresql") == (
        "ce60f509efca9294abccc1609046be038bf23799aecbaf482a6be511041c9c97"
    )


@pytest.mark.both_dialects
def test_migration_16_makes_every_workspace_its_own_local_project(
    store_url: str, tmp_path: Path
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    clone(a, "git@github.com:acme/widget.git", {})  # a remote is not read by the migration
    b.mkdir()
    with open_store(store_url, migrations=MIGRATIONS[:15]) as old, old.write() as conn:
        for workspace_id, root in (("a", a), ("b", b)):
            conn.execute(
                text(
                    "INSERT INTO workspaces (workspace_id, root, created_at) "
                    "VALUES (:w, :r, '2026-01-01T00:00:00Z')"
                ),
                {"w": workspace_id, "r": str(root)},
            )
    with open_store(store_url) as upgraded:
        app = Rutter(upgraded, FileReader())
        listed = app.workspaces.list().to_json()["workspaces"]
        assert [(w["workspace_id"], w["project_id"], w["project_source"]) for w in listed] == [
            ("a", "local:a", "local"),
            ("b", "local:b", "local"),
        ]
        with upgraded.read() as conn:
            rows = conn.execute(
                text("SELECT project_id, source, created_at FROM projects ORDER BY project_id")
            ).all()
        assert [tuple(r) for r in rows] == [
            ("local:a", "local", "2026-01-01T00:00:00Z"),
            ("local:b", "local", "2026-01-01T00:00:00Z"),
        ]
        joined = app.workspaces.set_project(
            SetWorkspaceProjectParams(workspace_id="a", from_remote=True)
        )
        assert joined.project_id == "github.com/acme/widget"


def test_errors_never_echo_a_credential(app: Rutter, tmp_path: Path) -> None:
    root = clone(tmp_path / "w", None, {})
    with pytest.raises(RutterError) as info:
        register(app, "w", root, project="https://u:hunter2@/x")
    assert "hunter2" not in str(info.value.to_json())


# -- the command line ---------------------------------------------------------------------------


def test_cli_registers_lists_sets_and_forks_across_registrations(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    a = clone(tmp_path / "a", "ssh://git@GitHub.com:22/acme/widget.git", {"AGENTS.md": "v1\n"})
    b = clone(tmp_path / "b", "https://bot:t0ken@github.com/acme/widget", {"AGENTS.md": "v2\n"})
    first = cli.json("workspace", "register", "wa", str(a))
    assert (first["project_id"], first["project_source"]) == ("github.com/acme/widget", "remote")
    said = cli("workspace", "register", "wb", str(b))
    assert said.returncode == 0
    assert said.stdout.strip() == f"Registered workspace wb at {b} (project github.com/acme/widget)"
    named = cli.json("workspace", "register", "wc", str(clone(tmp_path / "c", None, {})),
                     "--project", "team-widget")  # fmt: skip
    assert named["project_id"] == "team-widget"
    table = cli("workspace", "list").stdout
    assert "github.com/acme/widget (remote)" in table
    assert "team-widget (named)" in table
    assert "t0ken" not in table

    changed = cli.json("workspace", "project", "set", "wc", "--remote", code=5)
    assert changed["error"]["code"] == "no_origin_remote"
    changed = cli.json("workspace", "project", "set", "wc", "github.com/acme/widget")
    assert (changed["previous_project_id"], changed["changed"]) == ("team-widget", True)
    refused = cli("workspace", "project", "set", "wc", "user:hunter2@host/x")
    assert refused.returncode == 3
    assert "hunter2" not in refused.stderr

    run = cli.json("run", "create", "--goal", "g", "--workspace", "wa")
    node = cli.json("session", "checkpoint", run["run_id"], "--title", "t")
    forked = cli.json("session", "fork", node["node_id"], "--goal", "on b", "--workspace", "wb")
    inspected = cli.json("context", "instructions", "--run", forked["run_id"])
    assert inspected["stale"] is True
    tree = cli.json("session", "tree", run["run_id"], "--workspace", "wb")
    (marked,) = [n for n in tree["nodes"] if n["node_id"] == node["node_id"]]
    assert marked["drift"]["instructions"]["changed"] is True
    listed = cli.json("run", "list", "--workspace", "wc", "--all")
    assert {r["run_id"] for r in listed["runs"]} == {run["run_id"], forked["run_id"]}

    removed = cli("workspace", "remove", "wa")
    assert removed.returncode == 0
    assert "stays with project github.com/acme/widget" in removed.stdout
