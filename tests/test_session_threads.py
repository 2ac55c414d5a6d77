"""`rutter session threads` (issue 32): the threads there are, newest activity first (an imported
message's activity is the agent's own time), each with a title a person recognises, its source
and its message count; and `rutter --version`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from rutter_core.app.continuity import AddMessageParams, ListThreadsParams
from rutter_core.app.facade import Rutter
from rutter_core.app.runs import CreateRunParams
from rutter_core.app.transcripts import ImportTranscriptParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.kernel.errors import NotFoundError
from rutter_core.store import Store
from tests.testing import Cli, acting_person

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


@pytest.fixture
def rutter(store: Store, tmp_path: Path) -> Rutter:
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        Rutter(store).workspaces.register(
            RegisterWorkspaceParams(workspace_id=name, root=str(tmp_path / name), cwd=str(tmp_path))
        )
    return Rutter(store)


def _import(rutter: Rutter, agent: str, name: str, workspace: str = "one") -> str:
    params = ImportTranscriptParams(agent=agent, path=str(FIXTURES / name), workspace_id=workspace)
    return rutter.transcripts.import_transcript(params, actor="cli").thread_id


def _say(rutter: Rutter, thread: str, role: str, text: str) -> None:
    rutter.continuity.add_message(
        AddMessageParams(thread_id=thread, role=role, text=text), source="cli"
    )


def test_threads_newest_activity_first_with_title_source_and_count(rutter: Rutter) -> None:
    claude = _import(rutter, "claude-code", "claude-code-rewind.jsonl")  # last at 2026-12-01T10:07
    codex = _import(rutter, "codex", "codex-rollback.jsonl")  # last at 2026-12-01T08:24
    quiet = rutter.runs.create(CreateRunParams(goal="g", workspace_id="one"), actor="cli")
    talked = rutter.runs.create(CreateRunParams(goal="g", workspace_id="one"), actor="cli")
    _say(rutter, talked.thread_id, "system", "not a title")
    long_line = "Refactor the importer " + "so that it reads every agent's format " * 4
    _say(rutter, talked.thread_id, "user", f"\n  {long_line}\nsecond line")
    elsewhere = rutter.runs.create(CreateRunParams(goal="g", workspace_id="two"), actor="cli")

    listed = rutter.continuity.threads(ListThreadsParams(workspace_id="one")).to_json()
    items = listed["items"]
    assert [item["thread_id"] for item in items] == [
        talked.thread_id, claude, codex, quiet.thread_id,
    ]  # fmt: skip
    person = acting_person(rutter.store)
    assert items[1:3] == [
        {"thread_id": claude, "title": "Index on users.email", "source": "import:claude-code",
         "created_by_person": person, "message_count": 20,
         "last_activity_at": "2026-12-01T10:07:00Z"},
        {"thread_id": codex, "title": "Add a users table", "source": "import:codex",
         "created_by_person": person, "message_count": 14,
         "last_activity_at": "2026-12-01T08:24:00Z"},
    ]  # fmt: skip
    title = items[0]["title"]
    assert (len(title), title[-1]) == (80, "…")
    assert long_line.startswith(title[:-1])
    assert (items[0]["source"], items[0]["message_count"]) == ("cli", 2)
    assert items[0]["last_activity_at"] > "2026-12-01T10:07:00Z"  # added now
    assert items[3] == {
        "thread_id": quiet.thread_id, "title": None, "source": "cli",
        "created_by_person": person, "message_count": 0, "last_activity_at": None,
    }  # fmt: skip
    everyone = rutter.continuity.threads(ListThreadsParams()).items
    in_one = {item["thread_id"] for item in items}
    assert {t.thread_id for t in everyone} == {*in_one, elsewhere.thread_id}
    two = rutter.continuity.threads(ListThreadsParams(workspace_id="two")).items
    assert [t.thread_id for t in two] == [elsewhere.thread_id]


def test_an_unknown_workspace_is_not_found(rutter: Rutter) -> None:
    with pytest.raises(NotFoundError) as missing:
        rutter.continuity.threads(ListThreadsParams(workspace_id="nope"))
    assert missing.value.code == "not_registered"


def test_session_threads_on_the_command_line(tmp_path: Path, workspace_root: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    cli.json("workspace", "register", "demo", str(workspace_root))
    assert cli.json("session", "threads") == {"items": []}
    empty = cli("session", "threads")
    assert (empty.returncode, "No threads yet" in empty.stdout) == (0, True)
    done = cli.json(
        "session", "import", "codex", str(FIXTURES / "codex-rollback.jsonl"), "--workspace", "demo"
    )
    assert cli.json("session", "threads", "--workspace", "demo") == {"items": [{
        "thread_id": done["thread_id"], "title": "Add a users table", "source": "import:codex",
        "created_by_person": acting_person(cli.store_url), "message_count": 14,
        "last_activity_at": "2026-12-01T08:24:00Z",
    }]}  # fmt: skip
    table = cli("session", "threads")
    assert table.returncode == 0
    [header, row] = table.stdout.splitlines()
    assert header.split() == ["last", "activity", "messages", "source", "thread", "title"]
    assert row.split() == [
        "2026-12-01T08:24:00Z", "14", "import:codex", done["thread_id"], "Add", "a", "users",
        "table",
    ]  # fmt: skip
    missing = cli.json("session", "threads", "--workspace", "nope", code=5)
    assert missing["error"]["code"] == "not_registered"


_VERSION_PROBE = """
import contextlib, io, json, sys
from rutter_cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["--version"])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def test_version_is_the_package_version_without_typer_or_the_store(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env["RUTTER_HOME"] = str(tmp_path / "home")
    ran = subprocess.run(
        [sys.executable, "-c", _VERSION_PROBE], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=120, check=True,
    )  # fmt: skip
    report = json.loads(ran.stdout)
    assert (report["code"], report["out"]) == (0, f"rutter {version('rutter')}\n")
    assert re.fullmatch(r"rutter \d+\.\d+\.\d+\n", report["out"])
    heavy = ("typer", "rich", "pydantic", "sqlalchemy", "rutter_core.store", "rutter_core.app")
    assert [m for m in report["modules"] if m.split(".")[0] in heavy or m in heavy] == []
    assert not (tmp_path / "home").exists()
    shell = Cli(tmp_path / "home", tmp_path)("--version")  # the installed entry point
    assert (shell.returncode, shell.stdout) == (0, report["out"])


def test_version_after_a_root_option_is_answered_by_the_command_tree(tmp_path: Path) -> None:
    cli = Cli(tmp_path / "home", tmp_path)
    done = cli("--database-url", f"sqlite:///{tmp_path / 'x.db'}", "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"rutter {version('rutter')}\n", "")
    assert not (tmp_path / "x.db").exists()
