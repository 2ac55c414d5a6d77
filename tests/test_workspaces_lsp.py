"""`ensure_workspace`: how the language server registers editor folders
(docs/reference/workspaces.md)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rutter_core.kernel.errors import NotFoundError, RejectedError
from rutter_core.kernel.ids import is_valid_workspace_id
from rutter_core.store import Store, open_store
from rutter_core.workspaces.service import (
    ensure_workspace,
    find_workspace_by_root,
    list_workspaces,
    register_workspace,
    workspace_id_from_name,
)
from tests.testing import THIS_MACHINE


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{tmp_path / 'rutter.db'}") as opened:
        yield opened


def make_dir(base: Path, *parts: str) -> Path:
    path = base.joinpath(*parts)
    path.mkdir(parents=True)
    return path.resolve()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("demo", "demo"),
        ("Demo", "demo"),
        ("My Project", "my-project"),
        ("my  project!!", "my-project"),
        ("rutter.core_v2-x", "rutter.core_v2-x"),
        ("..hidden", "hidden"),
        ("_private", "private"),
        ("-dash-", "dash"),
        ("Café Crème", "cafe-creme"),
        ("项目", "workspace"),
        ("", "workspace"),
        ("!!!", "workspace"),
        ("a" * 80, "a" * 64),
        ("x" * 63 + " y", "x" * 63),
    ],
)
def test_id_from_folder_name(name: str, expected: str) -> None:
    derived = workspace_id_from_name(name)
    assert derived == expected
    assert is_valid_workspace_id(derived)


def test_new_folder_is_registered_with_its_name(store: Store, tmp_path: Path) -> None:
    root = make_dir(tmp_path, "Demo")
    workspace = ensure_workspace(
        store, root, preferred_id="Demo", cwd=tmp_path, machine=THIS_MACHINE
    )
    assert workspace.workspace_id == "demo"
    assert workspace.root == str(root)
    assert list_workspaces(store) == [workspace]


def test_existing_registration_of_the_root_is_reused(store: Store, tmp_path: Path) -> None:
    root = make_dir(tmp_path, "demo")
    registered, _ = register_workspace(
        store, "chosen-by-operator", root, cwd=tmp_path, machine=THIS_MACHINE
    )
    assert (
        ensure_workspace(store, root, preferred_id="demo", cwd=tmp_path, machine=THIS_MACHINE)
        == registered
    )
    # Through a relative path and a symlink too: roots compare resolved.
    (tmp_path / "link").symlink_to(root)
    assert (
        ensure_workspace(store, "link", preferred_id="link", cwd=tmp_path, machine=THIS_MACHINE)
        == registered
    )
    assert len(list_workspaces(store)) == 1


def test_taken_ids_get_numeric_suffixes(store: Store, tmp_path: Path) -> None:
    first = make_dir(tmp_path, "a", "demo")
    second = make_dir(tmp_path, "b", "demo")
    third = make_dir(tmp_path, "c", "Demo")
    ids = [
        ensure_workspace(
            store, root, preferred_id=root.name, cwd=tmp_path, machine=THIS_MACHINE
        ).workspace_id
        for root in (first, second, third)
    ]
    assert ids == ["demo", "demo-2", "demo-3"]
    # Idempotent: asking again finds each root's own registration.
    again = [
        ensure_workspace(
            store, root, preferred_id="demo", cwd=tmp_path, machine=THIS_MACHINE
        ).workspace_id
        for root in (third, first, second)
    ]
    assert again == ["demo-3", "demo", "demo-2"]


def test_suffix_skips_ids_registered_by_the_operator(store: Store, tmp_path: Path) -> None:
    register_workspace(store, "demo", make_dir(tmp_path, "x"), cwd=tmp_path, machine=THIS_MACHINE)
    register_workspace(store, "demo-2", make_dir(tmp_path, "y"), cwd=tmp_path, machine=THIS_MACHINE)
    root = make_dir(tmp_path, "z", "demo")
    assert ensure_workspace(
        store, root, preferred_id="demo", cwd=tmp_path, machine=THIS_MACHINE
    ).workspace_id == ("demo-3")


def test_suffix_keeps_long_ids_within_64_characters(store: Store, tmp_path: Path) -> None:
    name = "n" * 70
    first = make_dir(tmp_path, "a", name)
    second = make_dir(tmp_path, "b", name)
    assert ensure_workspace(
        store, first, preferred_id=name, cwd=tmp_path, machine=THIS_MACHINE
    ).workspace_id == ("n" * 64)
    suffixed = ensure_workspace(
        store, second, preferred_id=name, cwd=tmp_path, machine=THIS_MACHINE
    ).workspace_id
    assert suffixed == "n" * 62 + "-2"
    assert is_valid_workspace_id(suffixed)


def test_missing_or_invalid_root(store: Store, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        ensure_workspace(
            store, tmp_path / "missing", preferred_id="m", cwd=tmp_path, machine=THIS_MACHINE
        )
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(RejectedError):
        ensure_workspace(store, file, preferred_id="f", cwd=tmp_path, machine=THIS_MACHINE)
    assert list_workspaces(store) == []


def test_concurrent_servers_register_a_root_once(tmp_path: Path) -> None:
    """Two language servers starting on the same folder end with one registration."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    root = make_dir(tmp_path, "shared")
    with open_store(url):
        pass  # migrate once up front
    results: list[str] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def register() -> None:
        try:
            with open_store(url) as own:
                barrier.wait()
                results.append(
                    ensure_workspace(
                        own, root, preferred_id="shared", cwd=tmp_path, machine=THIS_MACHINE
                    ).workspace_id
                )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=register) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert results == ["shared"] * 4
    with open_store(url) as check:
        found = find_workspace_by_root(check, root, cwd=tmp_path, machine=THIS_MACHINE)
        assert found is not None
        assert [ws.workspace_id for ws in list_workspaces(check)] == ["shared"]
