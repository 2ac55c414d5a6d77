"""Workspace registry rules (docs/reference/workspaces.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rutter_cli.errors import message_of
from rutter_core.app.facade import Rutter
from rutter_core.app.models import Params
from rutter_core.app.workspaces import (
    EnsureWorkspaceParams,
    InferWorkspaceParams,
    ListWorkspacesParams,
    MoveWorkspaceParams,
    RegisterWorkspaceParams,
    RemovedWorkspace,
    RemoveWorkspaceParams,
    ShowWorkspaceParams,
)
from rutter_core.kernel.errors import (
    ConflictError,
    ErrorCategory,
    Hint,
    NotFoundError,
    RejectedError,
    UsageError,
)
from rutter_core.store import Store, open_store
from rutter_core.workspaces import repo
from rutter_core.workspaces.model import Workspace
from rutter_core.workspaces.service import (
    find_workspace_by_root,
    get_workspace,
    infer_workspace,
    list_workspaces,
    register_workspace,
)
from tests.testing import THIS_MACHINE


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{tmp_path / 'rutter.db'}") as opened:
        yield opened


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    base = tmp_path / "projects"
    (base / "app" / "services" / "api").mkdir(parents=True)
    (base / "lib").mkdir()
    return base


NOTHING_DELETED = ("runs", "missions", "revisions", "sessions", "threads", "checkpoints", "nodes",
                   "messages", "notes", "pins", "pin_proposals", "transcript_imports",
                   "assemblies", "project_memories")  # fmt: skip


def realpath(path: Path) -> str:
    return os.path.realpath(path)


def remove_workspace(store: Store, workspace_id: str) -> RemovedWorkspace:
    """Removal goes through the application layer: it asks memory and runs first."""
    return Rutter(store).workspaces.remove(RemoveWorkspaceParams(workspace_id=workspace_id))


# --- register ---------------------------------------------------------------------------------


def test_register_new_workspace(store: Store, projects: Path) -> None:
    workspace, created = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    assert created is True
    assert workspace.workspace_id == "app"
    assert workspace.root == realpath(projects / "app")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", workspace.created_at)
    assert workspace.to_json() == {
        "workspace_id": "app",
        "root": workspace.root,
        "created_at": workspace.created_at,
        "project_id": "local:app",
        "project_source": "local",
        "machine_id": THIS_MACHINE,
    }
    assert get_workspace(store, "app") == workspace


def test_register_is_idempotent_for_same_id_and_root(store: Store, projects: Path) -> None:
    first, created = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    again, created_again = register_workspace(
        store, "app", "app", cwd=projects, machine=THIS_MACHINE
    )
    assert created is True
    assert created_again is False
    assert again == first
    assert list_workspaces(store) == [first]


def test_relative_root_is_taken_from_cwd(store: Store, projects: Path) -> None:
    workspace, _ = register_workspace(
        store, "api", "app/services/../services/api", cwd=projects, machine=THIS_MACHINE
    )
    assert workspace.root == realpath(projects / "app" / "services" / "api")
    dot, _ = register_workspace(store, "lib", ".", cwd=projects / "lib", machine=THIS_MACHINE)
    assert dot.root == realpath(projects / "lib")


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs symlinks")
def test_symlinked_root_is_stored_resolved(store: Store, projects: Path, tmp_path: Path) -> None:
    link = tmp_path / "link-to-app"
    link.symlink_to(projects / "app", target_is_directory=True)
    workspace, _ = register_workspace(store, "app", link, cwd=tmp_path, machine=THIS_MACHINE)
    assert workspace.root == realpath(projects / "app")
    assert workspace.root != str(link)
    # The same directory through its real path is the same registration.
    same, created = register_workspace(
        store, "app", projects / "app", cwd=tmp_path, machine=THIS_MACHINE
    )
    assert (same, created) == (workspace, False)


@pytest.mark.parametrize(
    "workspace_id",
    ["", "App", "-app", ".app", "_app", "a" * 65, "a b", "a/b", "ä", "app\n"],
)
def test_invalid_workspace_id_is_rejected(store: Store, projects: Path, workspace_id: str) -> None:
    with pytest.raises(RejectedError) as info:
        register_workspace(
            store, workspace_id, projects / "app", cwd=projects, machine=THIS_MACHINE
        )
    assert info.value.code == "invalid_workspace_id"
    assert info.value.category is ErrorCategory.REJECTED
    assert list_workspaces(store) == []


@pytest.mark.parametrize("workspace_id", ["a", "0", "a" * 64, "my-app.v2_x", "9lives"])
def test_valid_workspace_ids(store: Store, projects: Path, workspace_id: str) -> None:
    workspace, created = register_workspace(
        store, workspace_id, projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    assert created
    assert workspace.workspace_id == workspace_id


def test_missing_root_is_not_found(store: Store, projects: Path) -> None:
    with pytest.raises(NotFoundError) as info:
        register_workspace(store, "ghost", "ghost", cwd=projects, machine=THIS_MACHINE)
    assert info.value.code == "not_found"
    assert info.value.path == str(projects / "ghost")
    assert list_workspaces(store) == []


def test_file_root_is_rejected(store: Store, projects: Path) -> None:
    (projects / "file.txt").write_text("not a directory")
    with pytest.raises(RejectedError) as info:
        register_workspace(store, "file", projects / "file.txt", cwd=projects, machine=THIS_MACHINE)
    assert info.value.code == "invalid_root"


@pytest.mark.parametrize("root", ["", "bad\0root"])
def test_unusable_root_strings_are_rejected(store: Store, projects: Path, root: str) -> None:
    with pytest.raises(RejectedError) as info:
        register_workspace(store, "x", root, cwd=projects, machine=THIS_MACHINE)
    assert info.value.code == "invalid_root"


def test_same_id_other_root_is_a_conflict(store: Store, projects: Path) -> None:
    first, _ = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    with pytest.raises(ConflictError) as info:
        register_workspace(store, "app", projects / "lib", cwd=projects, machine=THIS_MACHINE)
    assert info.value.code == "conflict"
    assert first.root in info.value.message
    assert "rutter" not in info.value.message  # surface-neutral: the CLI words the hint
    assert info.value.hint == Hint("move_workspace_or_choose_another_id", {"workspace_id": "app"})
    assert message_of(info.value).endswith(
        "; if its directory moved, point it there with `rutter workspace move app NEWROOT`; "
        "otherwise choose another ID"
    )
    assert list_workspaces(store) == [first]


def test_other_id_same_root_is_a_conflict(store: Store, projects: Path) -> None:
    first, _ = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    with pytest.raises(ConflictError) as info:
        register_workspace(store, "app2", projects / "app", cwd=projects, machine=THIS_MACHINE)
    assert info.value.code == "conflict"
    assert "'app'" in info.value.message
    assert message_of(info.value).endswith(
        "; use that ID, or free the root with `rutter workspace remove app` (it says what "
        "belongs to it)"
    )
    assert list_workspaces(store) == [first]


# --- list / get / find / remove ---------------------------------------------------------------


def test_list_is_sorted_by_id(store: Store, projects: Path) -> None:
    register_workspace(store, "zeta", projects / "lib", cwd=projects, machine=THIS_MACHINE)
    register_workspace(store, "alpha", projects / "app", cwd=projects, machine=THIS_MACHINE)
    register_workspace(
        store, "mid", projects / "app" / "services", cwd=projects, machine=THIS_MACHINE
    )
    assert [w.workspace_id for w in list_workspaces(store)] == ["alpha", "mid", "zeta"]


def test_get_unknown_workspace(store: Store) -> None:
    with pytest.raises(NotFoundError) as info:
        get_workspace(store, "nope")
    assert info.value.code == "not_registered"
    assert info.value.message == "no workspace 'nope' is registered"
    assert info.value.hint == Hint("register_workspace", {"workspace_id": "nope"})
    assert info.value.to_json()["hint"] == {"fix": "register_workspace", "workspace_id": "nope"}
    assert message_of(info.value) == (
        "no workspace 'nope' is registered; register it with "
        "`rutter workspace register nope ROOT` (see `rutter workspace list`)"
    )


def test_find_by_root(store: Store, projects: Path) -> None:
    workspace, _ = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    assert find_workspace_by_root(store, "app", cwd=projects, machine=THIS_MACHINE) == workspace
    assert (
        find_workspace_by_root(store, projects / "lib", cwd=projects, machine=THIS_MACHINE) is None
    )


def test_remove_workspace(store: Store, projects: Path) -> None:
    workspace, _ = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    removed = remove_workspace(store, "app")
    assert removed.to_json() == {
        **workspace.to_json(),
        "removed": True,
        "cascade": False,
        "kept_for_project": False,
        "deleted": dict.fromkeys(NOTHING_DELETED, 0),
        "purged": True,
    }
    assert list_workspaces(store) == []
    with pytest.raises(NotFoundError) as info:
        remove_workspace(store, "app")
    assert info.value.code == "not_registered"
    # The root is free again, under any ID.
    _, created = register_workspace(
        store, "renamed", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    assert created


def test_remove_referenced_workspace_is_a_conflict(store: Store, projects: Path) -> None:
    register_workspace(store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE)
    with store.write() as conn:
        conn.exec_driver_sql(
            # A stand-in for a future table: the foreign key alone must refuse the removal.
            "CREATE TABLE future_records (record_id TEXT PRIMARY KEY, "
            "workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id))"
        )
        conn.exec_driver_sql("INSERT INTO future_records VALUES ('rec_1', 'app')")
    with pytest.raises(ConflictError) as info:
        remove_workspace(store, "app")
    assert info.value.code == "conflict"
    assert [w.workspace_id for w in list_workspaces(store)] == ["app"]


# --- infer ------------------------------------------------------------------------------------


def test_infer_picks_the_deepest_containing_root(store: Store, projects: Path) -> None:
    outer, _ = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    inner, _ = register_workspace(
        store, "api", projects / "app/services/api", cwd=projects, machine=THIS_MACHINE
    )
    assert infer_workspace(store, projects / "app/services/api", machine=THIS_MACHINE) == inner
    (projects / "app/services/api/internal").mkdir()
    assert (
        infer_workspace(store, projects / "app/services/api/internal", machine=THIS_MACHINE)
        == inner
    )
    assert infer_workspace(store, projects / "app/services", machine=THIS_MACHINE) == outer
    assert infer_workspace(store, projects / "app", machine=THIS_MACHINE) == outer


def test_infer_compares_whole_path_components(store: Store, projects: Path) -> None:
    register_workspace(store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE)
    (projects / "app-other").mkdir()
    with pytest.raises(UsageError):
        infer_workspace(store, projects / "app-other", machine=THIS_MACHINE)


@pytest.mark.skipif(os.name == "nt", reason="needs symlinks")
def test_infer_resolves_symlinked_cwd(store: Store, projects: Path, tmp_path: Path) -> None:
    workspace, _ = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    link = tmp_path / "shortcut"
    link.symlink_to(projects / "app" / "services", target_is_directory=True)
    assert infer_workspace(store, link, machine=THIS_MACHINE) == workspace


def test_infer_outside_every_workspace_is_a_usage_error(store: Store, projects: Path) -> None:
    register_workspace(store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE)
    with pytest.raises(UsageError) as info:
        infer_workspace(store, projects / "lib", machine=THIS_MACHINE)
    assert info.value.code == "workspace_required"
    assert info.value.category is ErrorCategory.USAGE
    assert realpath(projects / "lib") in info.value.message
    assert "--workspace" not in info.value.message
    assert info.value.hint == Hint("choose_workspace")
    assert message_of(info.value).endswith(
        "; pass --workspace ID (see `rutter workspace list`) or register one with "
        "`rutter workspace register ID ROOT`"
    )


def test_workspace_is_frozen_and_refuses_unknown_fields() -> None:
    workspace = Workspace(
        workspace_id="a",
        root="/a",
        created_at="2026-01-01T00:00:00Z",
        project_id="local:a",
        project_source="local",
    )
    with pytest.raises(ValidationError):
        workspace.root = "/b"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Workspace.model_validate({**workspace.to_json(), "owner": "x"})


def test_a_concurrent_insert_is_a_conflict_not_an_integrity_error(
    store: Store, projects: Path
) -> None:
    """What a writer without SQLite's lock meets: the row appeared after its check."""
    workspace, _ = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    with pytest.raises(repo.RegisteredConcurrently) as info, store.write() as conn:
        repo.add(conn, workspace)
    assert info.value.code == "conflict"
    assert info.value.details == {"workspace_id": "app", "root": workspace.root}


def test_register_checks_again_after_a_concurrent_insert(
    store: Store, projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other writer's row is invisible to the first check and refuses the insert: the
    second attempt sees it and answers as if it had been there all along."""
    first, _ = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    real_by_id = repo.by_id
    hidden = [True]

    def by_id_missing_once(conn: Any, workspace_id: str) -> Workspace | None:
        if hidden.pop() if hidden else False:
            return None
        return real_by_id(conn, workspace_id)

    monkeypatch.setattr(repo, "by_id", by_id_missing_once)
    monkeypatch.setattr(repo, "by_root", lambda conn, root, machine: None)
    again, created = register_workspace(
        store, "app", projects / "app", cwd=projects, machine=THIS_MACHINE
    )
    assert (again, created) == (first, False)
    assert hidden == []


# --- the application layer ----------------------------------------------------------------------


def test_operations_answer_the_documented_json(store: Store, projects: Path) -> None:
    operations = Rutter(store).workspaces
    registered = operations.register(
        RegisterWorkspaceParams(workspace_id="app", root="app", cwd=str(projects))
    )
    body = registered.to_json()
    assert list(body) == [
        "workspace_id", "root", "created_at", "project_id", "project_source", "machine_id",
        "created",
    ]  # fmt: skip
    assert body["root"] == realpath(projects / "app")
    assert body["created"] is True
    workspace = {k: v for k, v in body.items() if k != "created"}
    assert operations.list(ListWorkspacesParams()).to_json() == {
        "machine_id": THIS_MACHINE,
        "workspaces": [{**workspace, "machine": "this_machine"}],
    }
    assert operations.show(ShowWorkspaceParams(workspace_id="app")).to_json() == workspace
    inside = str(projects / "app" / "services")
    assert operations.infer(InferWorkspaceParams(directory=inside)).to_json() == workspace
    assert (
        operations.ensure(
            EnsureWorkspaceParams(root=str(projects / "app"), preferred_id="other")
        ).to_json()
        == workspace
    )
    removed = operations.remove(RemoveWorkspaceParams(workspace_id="app")).to_json()
    assert list(removed) == [
        "workspace_id", "root", "created_at", "project_id", "project_source", "machine_id",
        "removed", "cascade", "kept_for_project", "deleted", "purged",
    ]  # fmt: skip
    assert removed == {
        **workspace,
        "removed": True,
        "cascade": False,
        "kept_for_project": False,
        "deleted": dict.fromkeys(NOTHING_DELETED, 0),
        "purged": True,
    }


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (RegisterWorkspaceParams, {"workspace_id": "a", "root": "/", "cwd": "/", "force": True}),
        (ShowWorkspaceParams, {"workspace_id": "a", "workspace": "a"}),
        (RemoveWorkspaceParams, {"workspace_id": "a", "cascade": True, "force": True}),
        (MoveWorkspaceParams, {"workspace_id": "a", "root": "/", "cwd": "/", "force": True}),
        (ListWorkspacesParams, {"every": True}),
        (InferWorkspaceParams, {"directory": "/", "cwd": "/"}),
        (EnsureWorkspaceParams, {"root": "/", "preferred_id": "a", "id": "a"}),
    ],
)
def test_params_refuse_unknown_fields(model: type[Params], fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as info:
        model.model_validate(fields)
    assert [error["type"] for error in info.value.errors()] == ["extra_forbidden"]
