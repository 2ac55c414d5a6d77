"""One project, many machines (docs/team.md#machines): the machine's identity (a keyed hash of
the system's machine ID, `RUTTER_MACHINE_ID`, a per-user file), registrations unique per
machine and root (migration 20), an old row taken by the first machine that looks its root up,
and what goes across registrations (`session import --thread`, `context instructions --run
--workspace`)."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from rutter_core.app.facade import Rutter, machine_sources
from rutter_core.app.workspaces import (
    EnsureWorkspaceParams,
    FindWorkspaceParams,
    InferWorkspaceParams,
    ListWorkspacesParams,
    RegisterWorkspaceParams,
)
from rutter_core.discovery.fsread import FileReader
from rutter_core.kernel.errors import ConflictError, RejectedError, UsageError
from rutter_core.store import MIGRATIONS, Store, migration_checksum, open_store
from rutter_core.workspaces.machine import MachineSources, derive, is_machine_id, machine_id
from tests.testing import THIS_MACHINE, Cli, clone, run_cli

SYSTEM_ID = "4c4c4544003957108052b4c04f384d32"


def sources(
    tmp_path: Path,
    *,
    override: str | None = None,
    system: tuple[Path, ...] = (),
    fallback: Path | None = None,
) -> MachineSources:
    return MachineSources(
        override=override,
        fallback_file=fallback if fallback is not None else tmp_path / "home/.config/rutter/id",
        system_files=system,
    )


# -- the identity ------------------------------------------------------------------------------


def test_the_system_machine_id_is_never_used_raw(tmp_path: Path) -> None:
    etc = tmp_path / "machine-id"
    etc.write_text(SYSTEM_ID + "\n")
    found = machine_id(sources(tmp_path, system=(etc,)))
    assert is_machine_id(found)
    assert found == derive(SYSTEM_ID)
    assert SYSTEM_ID not in found
    assert found not in SYSTEM_ID
    # The same machine ID always gives the same identity; another gives another.
    assert machine_id(sources(tmp_path, system=(etc,))) == found
    etc.write_text("0" * 31 + "1\n")
    assert machine_id(sources(tmp_path, system=(etc,))) != found
    assert not (tmp_path / "home").exists()  # no fallback written


def test_an_absent_empty_or_uninitialised_file_falls_through(tmp_path: Path) -> None:
    empty, fresh, dbus = tmp_path / "empty", tmp_path / "fresh", tmp_path / "dbus"
    empty.write_text("")
    fresh.write_text("uninitialized\n")
    dbus.write_text(SYSTEM_ID)
    chain = (tmp_path / "missing", empty, fresh, dbus)
    assert machine_id(sources(tmp_path, system=chain)) == derive(SYSTEM_ID)


def test_a_link_to_the_system_file_is_followed(tmp_path: Path) -> None:
    etc = tmp_path / "etc-machine-id"
    etc.write_text(SYSTEM_ID + "\n")
    dbus = tmp_path / "dbus-machine-id"
    dbus.symlink_to(etc)  # as Debian links /var/lib/dbus/machine-id
    assert machine_id(sources(tmp_path, system=(dbus,))) == derive(SYSTEM_ID)


@pytest.mark.parametrize(
    "content", ["not a machine id\n", "4C4C4544003957108052B4C04F384D32", "x" * 300]
)
def test_a_system_file_that_holds_something_else_fails_closed(tmp_path: Path, content: str) -> None:
    etc = tmp_path / "machine-id"
    etc.write_text(content)
    dbus = tmp_path / "dbus"
    dbus.write_text(SYSTEM_ID)
    with pytest.raises(RejectedError) as info:
        machine_id(sources(tmp_path, system=(etc, dbus)))
    assert info.value.code == "machine_id_unusable"
    assert info.value.path == str(etc)
    assert content.strip()[:20] not in info.value.message


def test_an_unreadable_system_file_fails_closed(tmp_path: Path) -> None:
    """A file that exists but cannot be read never falls through to another identity."""
    etc = tmp_path / "machine-id"
    etc.mkdir()  # exists; reading it fails (whoever runs the tests, root included)
    dbus = tmp_path / "dbus"
    dbus.write_text(SYSTEM_ID)
    with pytest.raises(RejectedError) as info:
        machine_id(sources(tmp_path, system=(etc, dbus)))
    assert info.value.code == "machine_id_unusable"
    assert info.value.hint is not None
    assert info.value.hint.fix == "fix_machine_id"


def test_without_a_system_id_a_per_user_file_is_made_once(tmp_path: Path) -> None:
    fallback = tmp_path / "home" / ".config" / "rutter" / "machine-id"
    first = machine_id(sources(tmp_path, fallback=fallback))
    assert is_machine_id(first)
    secret = fallback.read_text()
    assert len(secret.strip()) == 32
    assert secret.strip() != first
    assert stat.S_IMODE(fallback.stat().st_mode) == 0o600
    assert stat.S_IMODE(fallback.parent.stat().st_mode) == 0o700
    assert machine_id(sources(tmp_path, fallback=fallback)) == first
    assert fallback.read_text() == secret
    assert [p.name for p in fallback.parent.iterdir()] == ["machine-id"]  # no temporary left


def test_processes_making_the_file_at_once_agree(tmp_path: Path) -> None:
    fallback = tmp_path / "home" / "machine-id"
    found: list[str] = []
    barrier = threading.Barrier(8)

    def make() -> None:
        barrier.wait()
        found.append(machine_id(sources(tmp_path, fallback=fallback)))

    workers = [threading.Thread(target=make) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(found) == 8
    assert len(set(found)) == 1


@pytest.mark.parametrize("kind", ["symlink", "directory", "garbage"])
def test_a_per_user_file_that_cannot_be_trusted_fails_closed(tmp_path: Path, kind: str) -> None:
    fallback = tmp_path / "home" / "machine-id"
    fallback.parent.mkdir()
    if kind == "symlink":
        real = tmp_path / "elsewhere"
        real.write_text("0123456789abcdef0123456789abcdef\n")
        fallback.symlink_to(real)
    elif kind == "directory":
        fallback.mkdir()
    else:
        fallback.write_text("not hex at all\n")
    with pytest.raises(RejectedError) as info:
        machine_id(sources(tmp_path, fallback=fallback))
    assert info.value.code == "machine_id_unusable"
    assert "not hex" not in info.value.message
    # Never replaced: the next start meets the same refusal.
    assert fallback.is_symlink() == (kind == "symlink")
    if kind == "garbage":
        assert fallback.read_text() == "not hex at all\n"


@pytest.mark.parametrize(
    "value", ["", "two words", "x" * 129, "naïve", "a/b", "sk-live\nsecret", "tab\there"]
)
def test_an_invalid_override_is_refused_without_repeating_it(tmp_path: Path, value: str) -> None:
    etc = tmp_path / "machine-id"
    etc.write_text(SYSTEM_ID)
    with pytest.raises(RejectedError) as info:
        machine_id(sources(tmp_path, override=value, system=(etc,)))
    assert info.value.code == "invalid_machine_id"
    document = str(info.value.to_json())
    assert value == "" or value not in document
    assert "RUTTER_MACHINE_ID" in info.value.message


def test_an_override_wins_and_is_hashed_too(tmp_path: Path) -> None:
    etc = tmp_path / "machine-id"
    etc.write_text(SYSTEM_ID)
    found = machine_id(sources(tmp_path, override="ci-runner-7", system=(etc,)))
    assert found == derive("ci-runner-7") != derive(SYSTEM_ID)
    assert "ci-runner" not in found


def test_the_sources_read_no_home_variable() -> None:
    """Codex starts MCP servers with a cleared environment: the identity must not move."""
    plain = machine_sources({})
    moved = machine_sources(
        {"HOME": "/elsewhere", "XDG_CONFIG_HOME": "/x", "RUTTER_HOME": "/y", "USER": "z"}
    )
    assert plain == moved
    assert plain.override is None
    assert machine_sources({"RUTTER_MACHINE_ID": "box"}).override == "box"


def test_an_invalid_override_fails_the_cli_without_echoing_it(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    cli = Cli(tmp_path / "home", root, {"RUTTER_MACHINE_ID": "my secret box"})
    done = cli("workspace", "register", "w", str(root))
    assert done.returncode == 3
    assert "invalid_machine_id" in done.stderr
    assert "my secret box" not in done.stderr + done.stdout


# -- registrations on a store ------------------------------------------------------------------


def on(store: Store, name: str) -> Rutter:
    """The facade as machine `name` (RUTTER_MACHINE_ID=name) sees the store."""
    return Rutter(store, FileReader(), MachineSources(override=name, fallback_file=None))


WIDGET = "git@github.com:acme/widget.git"


def widget_clone(path: Path, files: dict[str, str]) -> Path:
    """A clone of the acme widget repository at `path` with `files` committed."""
    return clone(path, WIDGET, files)


@pytest.mark.both_dialects
def test_two_machines_at_one_path_get_two_registrations_of_one_project(
    store: Store, tmp_path: Path
) -> None:
    shared = widget_clone(tmp_path / "workspace", {"AGENTS.md": "rules\n", "src/main.py": ""})
    ana, bo = on(store, "ana-laptop"), on(store, "bo-desktop")
    a = ana.workspaces.register(
        RegisterWorkspaceParams(workspace_id="widget-ana", root=str(shared), cwd=str(shared))
    )
    b = bo.workspaces.register(
        RegisterWorkspaceParams(workspace_id="widget-bo", root=str(shared), cwd=str(shared))
    )
    assert (a.created, b.created) == (True, True)
    assert a.root == b.root == str(shared.resolve())
    assert a.project_id == b.project_id == "github.com/acme/widget"
    assert (a.machine_id, b.machine_id) == (derive("ana-laptop"), derive("bo-desktop"))

    # Each machine resolves its own, by directory, root and folder.
    inside = str(shared / "src")
    assert ana.workspaces.infer(InferWorkspaceParams(directory=inside)).workspace_id == "widget-ana"
    assert bo.workspaces.infer(InferWorkspaceParams(directory=inside)).workspace_id == "widget-bo"
    found = bo.workspaces.find_by_root(FindWorkspaceParams(root=str(shared)))
    assert found is not None
    assert found.workspace_id == "widget-bo"
    again = ana.workspaces.ensure(EnsureWorkspaceParams(root=str(shared), preferred_id="x"))
    assert again.workspace_id == "widget-ana"
    # Registering the same pair again on one machine changes nothing.
    assert not bo.workspaces.register(
        RegisterWorkspaceParams(workspace_id="widget-bo", root=str(shared), cwd=str(shared))
    ).created

    # A third machine's editor opens the same folder: a registration of its own, under an ID
    # that neither of the others holds.
    cy = on(store, "cy-vm")
    third = cy.workspaces.ensure(EnsureWorkspaceParams(root=str(shared), preferred_id="widget-ana"))
    assert third.workspace_id == "widget-ana-2"
    assert third.machine_id == derive("cy-vm")
    # Another machine's ID is not taken over.
    with pytest.raises(ConflictError) as info:
        cy.workspaces.register(
            RegisterWorkspaceParams(workspace_id="widget-bo", root=str(shared), cwd=str(shared))
        )
    assert info.value.details == {"workspace_id": "widget-bo", "other_machine": True}
    assert info.value.hint is not None
    assert info.value.hint.fix == "choose_another_id"

    # The list marks whose each is.
    listed = bo.workspaces.list(ListWorkspacesParams()).to_json()
    assert listed["machine_id"] == derive("bo-desktop")
    assert [(w["workspace_id"], w["machine"]) for w in listed["workspaces"]] == [
        ("widget-ana", "other_machine"),
        ("widget-ana-2", "other_machine"),
        ("widget-bo", "this_machine"),
    ]


@pytest.mark.both_dialects
def test_a_machine_lists_its_projects_and_all_lists_every_registration(
    store: Store, tmp_path: Path
) -> None:
    widget = widget_clone(tmp_path / "widget", {})
    other = tmp_path / "other"
    other.mkdir()
    ana, bo = on(store, "ana"), on(store, "bo")
    ana.workspaces.register(
        RegisterWorkspaceParams(workspace_id="w-ana", root=str(widget), cwd=str(widget))
    )
    ana.workspaces.register(
        RegisterWorkspaceParams(workspace_id="ana-only", root=str(other), cwd=str(other))
    )
    assert bo.workspaces.list(ListWorkspacesParams()).workspaces == []
    bo.workspaces.register(
        RegisterWorkspaceParams(workspace_id="w-bo", root=str(widget), cwd=str(widget))
    )
    shown = bo.workspaces.list(ListWorkspacesParams())
    assert [w.workspace_id for w in shown.workspaces] == ["w-ana", "w-bo"]
    every = bo.workspaces.list(ListWorkspacesParams(all=True))
    assert [(w.workspace_id, w.machine) for w in every.workspaces] == [
        ("ana-only", "other_machine"),
        ("w-ana", "other_machine"),
        ("w-bo", "this_machine"),
    ]
    # Bo has no registration around Ana's other directory.
    with pytest.raises(UsageError) as info:
        bo.workspaces.infer(InferWorkspaceParams(directory=str(other)))
    assert info.value.code == "workspace_required"


def test_migration_20_keeps_its_checksums() -> None:
    """Released migrations never change: stores record these and refuse to open otherwise."""
    migration = MIGRATIONS[19]
    assert (migration.version, migration.name) == (20, "machines")
    assert migration_checksum(migration, "sqlite") == (
        "58c75d6f5ac51246a5a9cd7eb55a217c5a718909a568a05b6ee6a7549a005f22"
    )
    assert migration_checksum(migration, "postgresql") == (
        "8da8d76848ce9a144086b851f114762974761ec808ef3fb451338e1b7bb72378"
    )


@pytest.mark.both_dialects
def test_a_row_from_before_machines_is_taken_by_the_first_machine_that_resolves_it(
    store_url: str, tmp_path: Path
) -> None:
    old_root = widget_clone(tmp_path / "workspace", {"AGENTS.md": "rules\n"})
    with open_store(store_url, migrations=MIGRATIONS[:19]) as old, old.write() as conn:
        conn.execute(
            text(
                "INSERT INTO projects (project_id, source, created_at) "
                "VALUES ('github.com/acme/widget', 'remote', '2026-01-01T00:00:00Z')"
            )
        )
        conn.execute(
            text(
                "INSERT INTO workspaces (workspace_id, root, created_at, project_id) "
                "VALUES ('widget', :r, '2026-01-01T00:00:00Z', 'github.com/acme/widget')"
            ),
            {"r": str(old_root.resolve())},
        )
    with open_store(store_url) as store:
        ana, bo = on(store, "ana"), on(store, "bo")
        # Listing takes nothing.
        [before] = ana.workspaces.list(ListWorkspacesParams()).workspaces
        assert (before.machine_id, before.machine) == (None, "unclaimed")
        [same] = bo.workspaces.list(ListWorkspacesParams()).workspaces
        assert same.machine == "unclaimed"

        # Bo works in it first: it is Bo's from now on.
        taken = bo.workspaces.infer(InferWorkspaceParams(directory=str(old_root)))
        assert (taken.workspace_id, taken.machine_id) == ("widget", derive("bo"))
        with store.read() as conn:
            assert conn.execute(text("SELECT machine_id FROM workspaces")).scalar_one() == (
                derive("bo")
            )
        # Ana's machine has no registration of the project now: only `all` lists Bo's.
        assert ana.workspaces.list(ListWorkspacesParams()).workspaces == []
        [after] = ana.workspaces.list(ListWorkspacesParams(all=True)).workspaces
        assert after.machine == "other_machine"
        # Ana's machine sees no registration there any more and makes its own (same project).
        with pytest.raises(UsageError):
            ana.workspaces.infer(InferWorkspaceParams(directory=str(old_root)))
        made = ana.workspaces.ensure(
            EnsureWorkspaceParams(root=str(old_root), preferred_id="widget")
        )
        assert (made.workspace_id, made.project_id) == ("widget-2", "github.com/acme/widget")
        assert made.machine_id == derive("ana")


@pytest.mark.both_dialects
def test_register_and_move_take_an_old_row_too(store_url: str, tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    with open_store(store_url, migrations=MIGRATIONS[:19]) as old, old.write() as conn:
        for workspace_id, root in (("one", first), ("two", second)):
            conn.execute(
                text(
                    "INSERT INTO projects (project_id, source, created_at) "
                    "VALUES (:p, 'local', '2026-01-01T00:00:00Z')"
                ),
                {"p": f"local:{workspace_id}"},
            )
            conn.execute(
                text(
                    "INSERT INTO workspaces (workspace_id, root, created_at, project_id) "
                    "VALUES (:w, :r, '2026-01-01T00:00:00Z', :p)"
                ),
                {"w": workspace_id, "r": str(root), "p": f"local:{workspace_id}"},
            )
    with open_store(store_url) as store:
        ana = on(store, "ana")
        again = ana.workspaces.register(
            RegisterWorkspaceParams(workspace_id="one", root=str(first), cwd=str(tmp_path))
        )
        assert (again.created, again.machine_id) == (False, derive("ana"))
        # An old row at the root is this machine's to refuse: one root, one ID.
        with pytest.raises(ConflictError) as info:
            ana.workspaces.register(
                RegisterWorkspaceParams(workspace_id="dup", root=str(second), cwd=str(tmp_path))
            )
        assert info.value.details["workspace_id"] == "two"
        with store.read() as conn:
            rows = {
                str(row.workspace_id): row.machine_id
                for row in conn.execute(text("SELECT workspace_id, machine_id FROM workspaces"))
            }
        assert rows == {"one": derive("ana"), "two": None}


# -- across registrations ----------------------------------------------------------------------


@pytest.fixture
def two_machines(store_url: str, tmp_path: Path) -> tuple[Cli, Cli, Path]:
    """Ana's and Bo's command lines on one store, each with the project at the same path."""
    shared = widget_clone(tmp_path / "workspace", {"AGENTS.md": "rules v1\n", "src/main.py": ""})
    ana = Cli(tmp_path / "ana-home", shared, {"RUTTER_MACHINE_ID": "ana"}, database_url=store_url)
    bo = Cli(tmp_path / "bo-home", shared, {"RUTTER_MACHINE_ID": "bo"}, database_url=store_url)
    assert ana.json("workspace", "register", "widget-ana", str(shared))["created"] is True
    assert bo.json("workspace", "register", "widget-bo", str(shared))["created"] is True
    return ana, bo, shared


@pytest.mark.both_dialects
def test_a_checkpoint_made_on_one_machine_forks_on_the_other_with_drift_against_its_files(
    two_machines: tuple[Cli, Cli, Path],
) -> None:
    ana, bo, shared = two_machines
    # Without --workspace each machine uses its own registration (the current directory).
    run = ana.json("run", "create", "--goal", "parser", "--target", "src/main.py")
    assert ana.json("run", "show", run["run_id"])["workspace_id"] == "widget-ana"
    node = ana.json("session", "checkpoint", run["run_id"], "--title", "halfway")
    (shared / "AGENTS.md").write_text("rules v2\n")  # the files as Bo has them now
    forked = bo.json("session", "fork", node["node_id"], "--goal", "go on")
    assert bo.json("run", "show", forked["run_id"])["workspace_id"] == "widget-bo"
    inspected = bo.json("context", "instructions", "--run", forked["run_id"])
    assert inspected["stale"] is True
    original = ana.json("context", "instructions", "--run", run["run_id"])
    assert inspected["diff"]["from_fingerprint"] == original["diff"]["from_fingerprint"]
    listed = bo.json("workspace", "list")
    assert [(w["workspace_id"], w["machine"]) for w in listed["workspaces"]] == [
        ("widget-ana", "other_machine"),
        ("widget-bo", "this_machine"),
    ]
    table = bo("workspace", "list").stdout
    assert "this machine" in table
    assert "another machine" in table


@pytest.mark.both_dialects
def test_a_run_of_another_machine_is_read_against_this_machines_files(
    store_url: str, tmp_path: Path
) -> None:
    """Without --workspace, a run (or a node) made through another machine's registration is
    read against this machine's registration of the project: its root is not this machine's."""
    a = widget_clone(tmp_path / "ana" / "widget", {"AGENTS.md": "rules v1\n"})
    b = widget_clone(tmp_path / "bo" / "widget", {"AGENTS.md": "rules v2\n"})
    ana = Cli(tmp_path / "ana-home", a, {"RUTTER_MACHINE_ID": "ana"}, database_url=store_url)
    bo = Cli(tmp_path / "bo-home", b, {"RUTTER_MACHINE_ID": "bo"}, database_url=store_url)
    ana.json("workspace", "register", "widget-ana", str(a))
    bo.json("workspace", "register", "widget-bo", str(b))
    run = ana.json("run", "create", "--goal", "g")
    assert ana.json("context", "instructions", "--run", run["run_id"])["stale"] is False
    assert bo.json("context", "instructions", "--run", run["run_id"])["stale"] is True
    node = ana.json("session", "checkpoint", run["run_id"], "--title", "t")
    forked = bo.json("session", "fork", node["node_id"], "--goal", "on bo")
    assert bo.json("run", "show", forked["run_id"])["workspace_id"] == "widget-bo"
    # Ana's own registration, named, is refused on Bo's machine: its root is on Ana's.
    named = bo.json(
        "context", "instructions", "--run", run["run_id"], "--workspace", "widget-ana", code=2
    )
    assert named["error"]["code"] == "workspace_on_other_machine"
    assert named["error"]["details"]["this_machine_workspace_ids"] == ["widget-bo"]


@pytest.mark.both_dialects
def test_instructions_run_compares_with_another_registrations_files(
    store_url: str, tmp_path: Path
) -> None:
    a = widget_clone(tmp_path / "a", {"AGENTS.md": "rules v1\n", "src/main.py": ""})
    b = widget_clone(tmp_path / "b", {"AGENTS.md": "rules v2\n", "src/main.py": ""})
    c = tmp_path / "c"
    c.mkdir()
    cli = Cli(tmp_path / "home", tmp_path, database_url=store_url)
    cli.json("workspace", "register", "wa", str(a))
    cli.json("workspace", "register", "wb", str(b))
    cli.json("workspace", "register", "wc", str(c))
    run = cli.json("run", "create", "--goal", "g", "--workspace", "wa", "--target", "src/main.py")
    own = cli.json("context", "instructions", "--run", run["run_id"])
    assert own["stale"] is False
    there = cli.json("context", "instructions", "--run", run["run_id"], "--workspace", "wb")
    assert there["stale"] is True
    assert there["run_id"] == run["run_id"]
    people = cli("context", "instructions", "--run", run["run_id"], "--workspace", "wb")
    assert "Live: the files of workspace wb" in people.stdout
    assert "--workspace wb" in people.stdout  # the confirm command names it
    refused = cli.json(
        "context", "instructions", "--run", run["run_id"], "--workspace", "wc", code=2
    )
    assert refused["error"]["code"] == "run_not_in_project"
    unknown = cli.json(
        "context", "instructions", "--run", run["run_id"], "--workspace", "nope", code=5
    )
    assert unknown["error"]["code"] == "not_registered"
    # Confirming with --workspace pins wb's instructions.
    confirmed = cli.json(
        "context", "instructions", "--run", run["run_id"], "--workspace", "wb", "--confirm",
        "--expected-fingerprint", there["diff"]["from_fingerprint"],
        "--expected-live-fingerprint", there["diff"]["to_fingerprint"],
    )  # fmt: skip
    assert (confirmed["refreshed"], confirmed["revision"]) == (True, 2)
    assert confirmed["pinned"]["fingerprint"] == there["diff"]["to_fingerprint"]
    assert cli.json("context", "instructions", "--run", run["run_id"])["stale"] is True
    diff = cli.json("context", "instructions", "--run", run["run_id"], "--workspace", "wb",
                    "--diff")  # fmt: skip
    assert diff["stale"] is False


@pytest.mark.both_dialects
def test_import_into_a_thread_of_the_same_project_through_another_registration(
    two_machines: tuple[Cli, Cli, Path], tmp_path: Path
) -> None:
    ana, bo, _shared = two_machines
    run = ana.json("run", "create", "--goal", "g")
    transcript = Path(__file__).parent / "fixtures" / "transcripts" / "codex-rollout.jsonl"
    done = bo.json(
        "session", "import", "codex", str(transcript), "--thread", run["thread_id"],
        "--create-run",
    )  # fmt: skip
    assert (done["thread_id"], done["thread_created"]) == (run["thread_id"], False)
    assert done["workspace_id"] == "widget-bo"  # Bo's location of the project
    assert done["imported"] > 0
    continued = bo.json("run", "show", done["run_id"])
    assert continued["workspace_id"] == "widget-ana"  # the thread's newest run is Ana's
    # Naming the registration explicitly works too; another project's is refused, typed.
    again = bo.json(
        "session", "import", "codex", str(transcript), "--thread", run["thread_id"],
        "--workspace", "widget-bo",
    )  # fmt: skip
    assert (again["workspace_id"], again["imported"]) == ("widget-bo", 0)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bo.json("workspace", "register", "other", str(elsewhere))
    refused = bo.json(
        "session", "import", "codex", str(transcript), "--thread", run["thread_id"],
        "--workspace", "other", code=3,
    )  # fmt: skip
    assert refused["error"]["code"] == "thread_in_other_workspace"


def test_environment_variables_for_the_machine_are_only_rutters(tmp_path: Path) -> None:
    """`rutter connect` writes only the store's URL: an agent's cleared environment gives the
    same machine as the shell (no RUTTER_HOME, HOME or XDG variable is read for it)."""
    root = tmp_path / "w"
    root.mkdir()
    cli = Cli(tmp_path / "home", root)
    registered = cli.json("workspace", "register", "w", str(root))
    assert registered["machine_id"] == THIS_MACHINE
    bare = {k: v for k, v in cli.env().items() if k not in ("HOME", "XDG_CONFIG_HOME")}
    shown = run_cli(["workspace", "list", "--json"], cwd=root, env=bare)
    assert shown.returncode == 0, shown.stderr
    assert '"this_machine"' in shown.stdout
