"""`:RutterMemory` in real headless Neovim 0.11 against the real server (issue 5).

One scenario (tests/neovim/memory.lua) drives the float as a user would: the list, `a` and
`:w` to add, `e` and `:w` to edit, a conflicting edit made by the CLI meanwhile (shown, not
swallowed, and nothing lost), `d` to disable and enable, and `D` answered first "Cancel",
then "Delete permanently" through vim.ui.select. The store is checked here afterwards.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from rutter_core.memory.service import create_memory, get_memory, list_memories
from rutter_core.store import open_store
from rutter_core.workspaces.service import register_workspace
from tests.neovim_client import github_token, run_nvim, ws
from tests.testing import THIS_MACHINE

__all__ = ["ws"]  # the fixture: a private copy of the example monorepo


def test_memory_float_add_edit_conflict_disable_delete(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "rutter-home"
    marker = f"small-commits-{uuid.uuid4().hex}"
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        register_workspace(store, "monorepo", ws, cwd=ws, machine=THIS_MACHINE)
        user = create_memory(
            store, scope="user", title="Prefer small commits", content=marker, actor="cli"
        )
        project = create_memory(
            store,
            scope="project",
            workspace_id="monorepo",
            title="Run the parser fuzzers",
            content="before merging parser changes",
            actor="cli",
        )

    results = run_nvim(tmp_path, "memory", ws, {"RUTTER_NVIM_USER_MEMORY": user.memory_id})

    # The float: both memories of the buffer's scope, one row each, keys in the footer.
    lines = results["first_lines"]
    assert lines[0] == "rutter · user memory and project memory of workspace monorepo"
    assert lines[1] == "2 memories, newest change first"
    assert lines[3].split() == ["scope", "status", "v", "title"]
    rows = [line.split(None, 3) for line in lines[4:6]]
    assert sorted(rows) == [
        ["project:monorepo", "active", "1", "Run the parser fuzzers"],
        ["user", "active", "1", "Prefer small commits"],
    ]
    assert lines[-1].startswith("a add · A add user · e edit · d disable/enable · D delete")
    assert {item["id"] for item in results["first_list"]["items"]} == {
        user.memory_id,
        project.memory_id,
    }
    assert results["float_focused"] is True

    # `a`: a scratch buffer that writes to no file; `:w` created a project memory.
    assert results["new_draft"] == {
        "name": "rutter://memory/new-project",
        "buftype": "acwrite",
        "lines": ["", "", ""],  # title, the blank line, content
    }
    created = results["created"]
    memory_id = created["id"]
    assert (created["scope"], created["scope_id"]) == ("project", "monorepo")
    assert created["title"] == "Use table tests"
    assert created["content"] == "Prefer table-driven tests\nin Go."
    assert (created["created_by"], created["version"]) == ("lsp", 1)
    assert results["created_buffer"] == {
        "name": f"rutter://memory/{memory_id}",
        "modified": False,
    }

    # `e`: title, blank line, content; `:w` saved version 2.
    assert results["edit_lines"] == ["Use table tests", "", "Prefer table-driven tests", "in Go."]
    saved = results["saved"]
    assert saved.get("error") is None
    assert saved["version"] == 2
    assert saved["result"]["content"] == "Prefer table-driven tests in Go,\nwith t.Run per case."
    assert results["saved_modified"] is False

    # The CLI edited it meanwhile (version 3); the buffer's `:w` at version 2 is a conflict,
    # shown as an error, and the buffer keeps the unsaved text.
    assert results["cli"]["code"] == 0, results["cli"]["stderr"]
    conflict = results["conflict"]
    assert "is at version 3, not 2" in conflict["error"]
    assert "[conflict]" in conflict["error"]
    assert results["last_error"] == conflict["error"]
    assert "is at version 3, not 2" in results["messages"]
    assert "your text stays in this buffer" in results["messages"]
    assert results["conflict_modified"] is True
    assert results["conflict_draft_version"] == 2

    # `d` twice: disabled (listed, marked), then active again.
    assert (results["disabled"]["result"]["status"], results["disabled"]["version"]) == (
        "disabled",
        4,
    )
    [disabled_row] = [line for line in results["disabled_lines"] if "Use table tests" in line]
    assert disabled_row.split()[1:3] == ["disabled", "4"]
    assert (results["enabled"]["result"]["status"], results["enabled"]["version"]) == ("active", 5)

    # `D`: the server's question, through vim.ui.select; Cancel kept it, then it was deleted.
    asked = results["asked"]
    assert len(asked) == 2
    for question in asked:
        assert question["items"] == ["Delete permanently", "Cancel"]
        assert 'delete the user memory "Prefer small commits"' in question["prompt"]
        assert user.memory_id in question["prompt"]
    assert results["cancelled"]["result"] == {
        "id": user.memory_id,
        "version": 1,
        "deleted": False,
        "cancelled": True,
    }
    assert results["deleted"]["result"]["deleted"] is True
    assert results["deleted"]["result"]["recoverable"] is False
    assert user.memory_id not in results["final_ids"]
    assert set(results["final_ids"]) == {project.memory_id, memory_id}

    # The store: nothing lost (the CLI's title and Neovim's content), the deleted one gone.
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        final = get_memory(store, memory_id)
        remaining = {r.memory_id for r in list_memories(store, include_inactive=True).items}
    assert final.title == "Use table tests (changed elsewhere)"
    assert final.content == "Prefer table-driven tests in Go,\nwith t.Run per case."
    assert (final.version, final.status, final.updated_by) == (5, "active", "lsp")
    assert remaining == {project.memory_id, memory_id}
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{home / 'rutter.db'}{suffix}")
        if path.exists():
            assert marker.encode() not in path.read_bytes()


def test_a_secret_is_stored_only_redacted_and_only_when_chosen(tmp_path: Path, ws: Path) -> None:
    token = github_token()
    home = tmp_path / "rutter-home"
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        register_workspace(store, "monorepo", ws, cwd=ws, machine=THIS_MACHINE)

    results = run_nvim(tmp_path, "memory_secret", ws, {"RUTTER_NVIM_TOKEN": token})

    first, second = results["asked"]
    assert "github_token" in first["prompt"]
    assert first["items"] == ["Store with the secrets redacted", "Keep editing"]
    assert second["items"] == first["items"]
    assert "not saved: the text holds secrets" in results["kept"]["error"]
    assert results["kept_modified"] is True

    created = results["created"]["result"]
    assert created["redacted"] is True
    assert created["content"] == "deploy with [REDACTED:github_token] from the CI box"
    assert results["buffer_lines"] == [
        "Deploy token",
        "",
        "deploy with [REDACTED:github_token] from the CI box",
    ]
    assert token not in "\n".join(results["buffer_lines"])
    assert results["buffer_name"].endswith(created["id"])
    assert results["modified"] is False
    with open_store(f"sqlite:///{home / 'rutter.db'}") as store:
        [stored] = list_memories(store, include_inactive=True).items
    assert stored.memory_id == created["id"]
    assert token not in stored.content
