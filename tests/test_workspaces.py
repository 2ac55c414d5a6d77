"""Workspace registry rules (contract section 4)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rutter_core.kernel.errors import (
    ConflictError,
    ErrorCategory,
    NotFoundError,
    RejectedError,
    UsageError,
)
from rutter_core.store import Store, open_store
from rutter_core.workspaces.service import (
    Workspace,
    find_workspace_by_root,
    get_workspace,
    infer_workspace,
    list_workspaces,
    register_workspace,
    remove_workspace,
)


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


def realpath(path: Path) -> str:
    return os.path.realpath(path)


# --- register ---------------------------------------------------------------------------------


def test_register_new_workspace(store: Store, projects: Path) -> None:
    workspace, created = register_workspace(store, "app", projects / "app", cwd=projects)
    assert created is True
    assert workspace.workspace_id == "app"
    assert workspace.root == realpath(projects / "app")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", workspace.created_at)
    assert workspace.to_json() == {
        "workspace_id": "app",
        "root": workspace.root,
        "created_at": workspace.created_at,
    }
    assert get_workspace(store, "app") == workspace


def test_register_is_idempotent_for_same_id_and_root(store: Store, projects: Path) -> None:
    first, created = register_workspace(store, "app", projects / "app", cwd=projects)
    again, created_again = register_workspace(store, "app", "app", cwd=projects)
    assert created is True
    assert created_again is False
    assert again == first
    assert list_workspaces(store) == [first]


def test_relative_root_is_taken_from_cwd(store: Store, projects: Path) -> None:
    workspace, _ = register_workspace(store, "api", "app/services/../services/api", cwd=projects)
    assert workspace.root == realpath(projects / "app" / "services" / "api")
    dot, _ = register_workspace(store, "lib", ".", cwd=projects / "lib")
    assert dot.root == realpath(projects / "lib")


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs symlinks")
def test_symlinked_root_is_stored_resolved(store: Store, projects: Path, tmp_path: Path) -> None:
    link = tmp_path / "link-to-app"
    link.symlink_to(projects / "app", target_is_directory=True)
    workspace, _ = register_workspace(store, "app", link, cwd=tmp_path)
    assert workspace.root == realpath(projects / "app")
    assert workspace.root != str(link)
    # The same directory through its real path is the same registration.
    same, created = register_workspace(store, "app", projects / "app", cwd=tmp_path)
    assert (same, created) == (workspace, False)


@pytest.mark.parametrize(
    "workspace_id",
    ["", "App", "-app", ".app", "_app", "a" * 65, "a b", "a/b", "ä", "app\n"],
)
def test_invalid_workspace_id_is_rejected(store: Store, projects: Path, workspace_id: str) -> None:
    with pytest.raises(RejectedError) as info:
        register_workspace(store, workspace_id, projects / "app", cwd=projects)
    assert info.value.code == "invalid_workspace_id"
    assert info.value.category is ErrorCategory.REJECTED
    assert list_workspaces(store) == []


@pytest.mark.parametrize("workspace_id", ["a", "0", "a" * 64, "my-app.v2_x", "9lives"])
def test_valid_workspace_ids(store: Store, projects: Path, workspace_id: str) -> None:
    workspace, created = register_workspace(store, workspace_id, projects / "app", cwd=projects)
    assert created
    assert workspace.workspace_id == workspace_id


def test_missing_root_is_not_found(store: Store, projects: Path) -> None:
    with pytest.raises(NotFoundError) as info:
        register_workspace(store, "ghost", "ghost", cwd=projects)
    assert info.value.code == "not_found"
    assert info.value.path == str(projects / "ghost")
    assert list_workspaces(store) == []


def test_file_root_is_rejected(store: Store, projects: Path) -> None:
    (projects / "file.txt").write_text("not a directory")
    with pytest.raises(RejectedError) as info:
        register_workspace(store, "file", projects / "file.txt", cwd=projects)
    assert info.value.code == "invalid_root"


@pytest.mark.parametrize("root", ["", "bad\0root"])
def test_unusable_root_strings_are_rejected(store: Store, projects: Path, root: str) -> None:
    with pytest.raises(RejectedError) as info:
        register_workspace(store, "x", root, cwd=projects)
    assert info.value.code == "invalid_root"


def test_same_id_other_root_is_a_conflict(store: Store, projects: Path) -> None:
    first, _ = register_workspace(store, "app", projects / "app", cwd=projects)
    with pytest.raises(ConflictError) as info:
        register_workspace(store, "app", projects / "lib", cwd=projects)
    assert info.value.code == "conflict"
    assert first.root in info.value.message
    assert list_workspaces(store) == [first]


def test_other_id_same_root_is_a_conflict(store: Store, projects: Path) -> None:
    first, _ = register_workspace(store, "app", projects / "app", cwd=projects)
    with pytest.raises(ConflictError) as info:
        register_workspace(store, "app2", projects / "app", cwd=projects)
    assert info.value.code == "conflict"
    assert "'app'" in info.value.message
    assert list_workspaces(store) == [first]


# --- list / get / find / remove ---------------------------------------------------------------


def test_list_is_sorted_by_id(store: Store, projects: Path) -> None:
    register_workspace(store, "zeta", projects / "lib", cwd=projects)
    register_workspace(store, "alpha", projects / "app", cwd=projects)
    register_workspace(store, "mid", projects / "app" / "services", cwd=projects)
    assert [w.workspace_id for w in list_workspaces(store)] == ["alpha", "mid", "zeta"]


def test_get_unknown_workspace(store: Store) -> None:
    with pytest.raises(NotFoundError) as info:
        get_workspace(store, "nope")
    assert info.value.code == "not_registered"
    assert "rutter workspace register nope ROOT" in info.value.message


def test_find_by_root(store: Store, projects: Path) -> None:
    workspace, _ = register_workspace(store, "app", projects / "app", cwd=projects)
    assert find_workspace_by_root(store, "app", cwd=projects) == workspace
    assert find_workspace_by_root(store, projects / "lib", cwd=projects) is None


def test_remove_workspace(store: Store, projects: Path) -> None:
    workspace, _ = register_workspace(store, "app", projects / "app", cwd=projects)
    assert remove_workspace(store, "app") == workspace
    assert list_workspaces(store) == []
    with pytest.raises(NotFoundError) as info:
        remove_workspace(store, "app")
    assert info.value.code == "not_registered"
    # The root is free again, under any ID.
    _, created = register_workspace(store, "renamed", projects / "app", cwd=projects)
    assert created


def test_remove_referenced_workspace_is_a_conflict(store: Store, projects: Path) -> None:
    register_workspace(store, "app", projects / "app", cwd=projects)
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
    outer, _ = register_workspace(store, "app", projects / "app", cwd=projects)
    inner, _ = register_workspace(store, "api", projects / "app/services/api", cwd=projects)
    assert infer_workspace(store, projects / "app/services/api") == inner
    (projects / "app/services/api/internal").mkdir()
    assert infer_workspace(store, projects / "app/services/api/internal") == inner
    assert infer_workspace(store, projects / "app/services") == outer
    assert infer_workspace(store, projects / "app") == outer


def test_infer_compares_whole_path_components(store: Store, projects: Path) -> None:
    register_workspace(store, "app", projects / "app", cwd=projects)
    (projects / "app-other").mkdir()
    with pytest.raises(UsageError):
        infer_workspace(store, projects / "app-other")


@pytest.mark.skipif(os.name == "nt", reason="needs symlinks")
def test_infer_resolves_symlinked_cwd(store: Store, projects: Path, tmp_path: Path) -> None:
    workspace, _ = register_workspace(store, "app", projects / "app", cwd=projects)
    link = tmp_path / "shortcut"
    link.symlink_to(projects / "app" / "services", target_is_directory=True)
    assert infer_workspace(store, link) == workspace


def test_infer_outside_every_workspace_is_a_usage_error(store: Store, projects: Path) -> None:
    register_workspace(store, "app", projects / "app", cwd=projects)
    with pytest.raises(UsageError) as info:
        infer_workspace(store, projects / "lib")
    assert info.value.code == "workspace_required"
    assert info.value.category is ErrorCategory.USAGE
    assert realpath(projects / "lib") in info.value.message
    assert "--workspace" in info.value.message
    assert "rutter workspace register ID ROOT" in info.value.message


def test_workspace_is_frozen() -> None:
    workspace = Workspace("a", "/a", "2026-01-01T00:00:00Z")
    with pytest.raises(AttributeError):
        workspace.root = "/b"  # type: ignore[misc]
