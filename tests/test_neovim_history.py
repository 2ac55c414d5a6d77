"""`:RutterHistory` in real headless Neovim 0.11 against the real server (issue 16).

The history corpus is made through the CLI as real processes (a workspace, a run, a message
with Chinese text three pages long, a note, a user and a project memory), plus 25 short
messages through the app in-process so the picker has a second page. One
scenario (tests/neovim/history.lua) asks for the query, pages the picker with "more…", reads
the long hit page by page, sees a hit changed (conflict) and one disabled (gone) by the CLI as
errors without text, a refused query, and a buffer in no served workspace.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from rutter_core.app.continuity import AddMessageParams
from rutter_core.app.facade import Rutter
from rutter_core.store import open_store
from tests.conftest import write_tree
from tests.neovim_client import run_nvim
from tests.testing import Cli

LONG_LINE = "长文本 line\n"
LONG = "不可恢复 LONG-MARK\n" + LONG_LINE * 1000  # 10,016 characters: three pages of 4,000


def test_history_picker_pages_reader_conflict_gone(tmp_path: Path) -> None:
    root = (tmp_path / "proj").resolve()
    write_tree(root, {"AGENTS.md": "rules\n", "svc/main.go": "package main\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    cli = Cli(tmp_path / "rutter-home", root)
    cli.json("workspace", "register", "proj", str(root))
    run = cli.json("run", "create", "--workspace", "proj", "--goal", "g")
    thread = run["thread_id"]
    long = cli.json("session", "message", "add", thread, "--role", "user", "--text", LONG)
    # The filler that makes a second page, in-process (one CLI process each costs seconds).
    with open_store(f"sqlite:///{tmp_path / 'rutter-home' / 'rutter.db'}") as store:
        for n in range(25):
            Rutter(store).continuity.add_message(
                AddMessageParams(thread_id=thread, role="user", text=f"删除后不可恢复的 step {n}"),
                source="cli",
            )
    note = cli.json("session", "note", "add", thread, "--kind", "fact", "--text", "不可恢复 note")
    memory = cli.json("context", "memory", "create", "--scope", "project", "--workspace", "proj",
                      "--title", "T", "--content", "project 不可恢复 memory")  # fmt: skip
    user = cli.json("context", "memory", "create", "--scope", "user",
                    "--title", "U", "--content", "user 不可恢复 memory")  # fmt: skip

    results = run_nvim(
        tmp_path,
        "history",
        root,
        {"RUTTER_NVIM_NOTE": note["note_id"], "RUTTER_NVIM_MEMORY": memory["id"]},
    )

    # The query was asked; page 1 (20 hits and "more…"), then every hit so far (29).
    assert results["prompts"][0] == "History search: "
    first, second = results["pickers"]
    prompt = f'rutter history "不可恢复" (run {run["run_id"]}): '
    assert (first["prompt"], first["kind"]) == (prompt, "rutter_history")
    assert len(first["items"]) == 21
    assert first["items"][-1] == "more…"
    assert len(second["items"]) == 29
    assert "more…" not in second["items"]
    assert second["items"][:20] == first["items"][:20]
    assert [s["hits"] for s in results["searches"]] == [20, 9]
    assert results["searches"][0]["run_id"] == run["run_id"]
    assert results["searches"][1]["more"] is None
    # One line per hit: source kind, ID, version, the snippet on one line.
    kinds = [item.split()[0] for item in second["items"]]
    assert kinds.count("memory") == 2
    assert kinds.count("note") == 1
    assert kinds.count("message") == 26
    assert f"memory     {memory['id']} v1  T project 不可恢复 memory" in second["items"]
    assert f"note       {note['note_id']} v1  不可恢复 note" in second["items"]
    [long_label] = [item for item in second["items"] if "LONG-MARK" in item]
    assert long_label.startswith(f"message    {long['message_id']} v1  不可恢复 LONG-MARK 长文本")
    assert long_label.endswith("…")
    assert all("\n" not in item for item in second["items"])

    # The reader: a read-only scratch split, page by page, the page in the window bar.
    page1 = results["page1"]
    assert page1["name"] == f"rutter://history/message/{long['message_id']}"
    assert (page1["buftype"], page1["modifiable"]) == ("nofile", False)
    assert (page1["swapfile"], page1["bufhidden"]) == (False, "wipe")  # never on disk
    assert results["reader_win_is_split"] is True
    assert page1["pages"] == 3
    assert "\n".join(page1["lines"]) == LONG[:4000]
    assert page1["winbar"] == (
        f" rutter history · message {long['message_id']} v1 · page 1 of 3 · ]p next · "
        "[p previous · q close "
    )
    assert "\n".join(results["page2"]["lines"]) == LONG[4000:8000]
    assert "\n".join(results["page3"]["lines"]) == LONG[8000:]
    assert "page 3 of 3" in results["page3"]["winbar"]
    assert results["past_end"] == 3
    assert "rutter: no page 4: this hit has 3 pages" in results["messages"]
    assert results["back"]["reader"]["page"] == 2
    assert "\n".join(results["back"]["lines"]) == LONG[4000:8000]

    [from_reader] = results["from_reader"]
    assert from_reader["prompt"] == f'rutter history "step 3" (run {run["run_id"]}): '
    assert [item.split()[-1] for item in from_reader["items"]] == ["3"]

    # Conflict: the note was edited by the CLI; `R` shows the error and none of its text.
    assert results["note"]["lines"] == ["不可恢复 note"]
    assert results["note_edit"]["code"] == 0, results["note_edit"]["stderr"]
    assert results["conflict_event"]["code"] == "conflict"
    conflict = results["conflict"]
    assert conflict["lines"][0].startswith(f"cannot read this hit: note {note['note_id']} changed")
    assert conflict["lines"][0].endswith("[conflict]")
    assert "不可恢复" not in "\n".join(conflict["lines"])
    assert "changed by the CLI" not in "\n".join(conflict["lines"])
    assert (
        conflict["winbar"] == f" rutter history · note {note['note_id']} v1 · conflict · q close "
    )
    assert conflict["reader"]["error"]["code"] == "conflict"

    # Gone: the memory was disabled; no text.
    assert results["memory"]["lines"] == ["T", "project 不可恢复 memory"]
    assert results["memory_disable"]["code"] == 0, results["memory_disable"]["stderr"]
    assert results["gone_event"]["code"] == "gone"
    gone = results["gone"]
    assert gone["lines"][0].startswith("cannot read this hit: the source this handle names is gone")
    assert gone["lines"][0].endswith("[gone]")
    assert (
        gone["lines"][2] == "No text is shown. Search again (:RutterHistory) for what is there now."
    )
    assert "project" not in "\n".join(gone["lines"])
    assert "不可恢复" not in "\n".join(gone["lines"])

    # A refused query: its typed error, no picker, the query not echoed.
    refused = results["refused"]
    assert refused["pickers"] == 0
    assert refused["error"].startswith("no history search: a history query is 1-256 characters")
    assert refused["error"].endswith("[invalid_query]")
    assert "xxxx" not in refused["error"]
    assert results["no_hit_pickers"] == 0
    # (information is cut to the command line's width)
    assert 'rutter: no history hit for "no-such-text-anywhere" in run run_' in results["messages"]
    assert results["empty_query_events"] == 0
    assert "rutter: no search: a history search needs a query" in results["messages"]

    # No served workspace: the user's memories only, and the prompt says so.
    [picker] = results["no_workspace"]
    assert picker["prompt"] == (
        'rutter history "不可恢复" (your user memories only: this buffer is in no served '
        "workspace): "
    )
    assert picker["items"] == [f"memory     {user['id']} v1  U user 不可恢复 memory"]
    event = results["no_workspace_event"]
    assert event.get("workspace_id") is None
    assert event.get("run_id") is None
