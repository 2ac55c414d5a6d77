"""Every audit and actor field records who (docs/team.md, "People"), on both engines: beside the
surface (`cli`, `mcp`, ...) each record names the person its transaction acted for (the
PostgreSQL role the store is opened as; on SQLite the operating-system user). Every write path
that stores an actor fills its `*_person` column (migration 21 lists them all), the results
carry it, the CLI's plain output shows it, and rows written before migration 21 read back with
a null person, shown as unknown. Two people on one PostgreSQL store, and an HTTP bearer made for
a person: tests/test_store_people_postgres.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.continuity import AddMessageParams
from rutter_core.app.facade import Rutter
from rutter_core.app.pins import ProposePinParams
from rutter_core.app.runs import InspectRunParams
from rutter_core.store import MIGRATIONS, open_store
from rutter_core.store.migrations.m0021_record_people import RECORDED
from tests.http_server import served_run
from tests.testing import Cli, acting_person, git, raw_rows, write_tree

pytestmark = pytest.mark.both_dialects

CODEX = Path(__file__).parent / "fixtures" / "transcripts" / "codex-rollout.jsonl"
BEFORE_RECORDING = tuple(m for m in MIGRATIONS if m.version < 21)
"""The migrations of a store from before every record named its person (migration 21)."""
T0 = "2026-01-01T00:00:00Z"


@pytest.fixture
def cli(tmp_path: Path, store_url: str) -> Cli:
    root = tmp_path / "repo"
    write_tree(root, {"AGENTS.md": "root rules\n", "src/parser.py": "x = 1\n"})
    git(root, "init", "-q")
    made = Cli(tmp_path / "home", root, database_url=store_url)
    made.json("workspace", "register", "demo", str(root))
    return made


def _every_record(cli: Cli) -> dict[str, Any]:
    """One of every record that names an actor, each made the way a person or an agent makes
    it: the CLI, and the app facade for what an agent does through MCP."""
    run = cli.json("run", "create", "--goal", "ship the parser", "--workspace", "demo")
    thread, run_id = run["thread_id"], run["run_id"]
    made: dict[str, Any] = {"run": run}
    with open_store(cli.store_url) as store:
        app = Rutter(store)
        for n in range(1, 9):
            app.continuity.add_message(
                AddMessageParams(thread_id=thread, role="user" if n % 2 else "assistant",
                                 text=f"step {n} of the parser work"),
                source="cli",
            )  # fmt: skip
        proposal = app.pins.propose(
            ProposePinParams(run_id=run_id, text="Keep the public API stable."), actor="mcp"
        )
    made["note"] = cli.json(
        "session", "note", "add", thread, "--kind", "decision", "--text",
        "use the streaming parser", "--reference", "src/parser.py",
    )  # fmt: skip
    made["note"] = cli.json(
        "session", "note", "edit", made["note"]["note_id"], "--version", "1", "--text",
        "use the streaming parser everywhere",
    )  # fmt: skip
    pin = cli.json("context", "pin", "add", thread, "--text", "never push to main")
    made["pin"] = cli.json(
        "context", "pin", "edit", pin["pin_id"], "--version", "1", "--text", "never push"
    )
    made["answered"] = cli.json("context", "pin", "answer", proposal.proposal_id, "pin")
    made["checkpoint"] = cli.json(
        "session", "checkpoint", run_id, "--title", "shipped", "--delivery"
    )
    made["report"] = cli.json(
        "run", "report", run_id, "--result", "passed", "--summary", "all parser tests pass"
    )
    made["compaction"] = cli.json("session", "compact", thread)
    assembly = cli.json("context", "assemble", "--run", run_id, "--budget", "400")
    made["assembly_report"] = cli.json(
        "context", "report", assembly["assembly_id"], "--followed", "AGENTS.md"
    )
    candidates = cli.json("context", "memory", "candidates", "--workspace", "demo")["items"]
    item = candidates[0]
    made["candidate"] = cli.json(
        "context", "memory", "candidate", "confirm", item["candidate_id"], "--version", "1",
        "--fingerprint", item["fingerprint"],
        "--source-version", str(item["source"]["note_version"]),
    )["candidate"]  # fmt: skip
    made["fork"] = cli.json(
        "session", "fork", made["checkpoint"]["node_id"], "--goal", "try another parser",
        "--operation-key", "fork-once",
    )  # fmt: skip
    made["import"] = cli.json("session", "import", "codex", str(CODEX), "--workspace", "demo")
    made["audit"] = cli.json("context", "audit", run_id)
    return made


def test_every_record_names_the_person_beside_the_surface(cli: Cli) -> None:
    person = acting_person(cli.store_url)
    made = _every_record(cli)
    run = cli.json("run", "show", made["run"]["run_id"])
    assert (run["created_by"], run["created_by_person"]) == ("cli", person)
    assert run["updated_by_person"] == person
    note = made["note"]
    assert (note["created_by_person"], note["updated_by_person"]) == (person, person)
    pin = made["pin"]
    assert (pin["created_by_person"], pin["updated_by_person"]) == (person, person)
    proposal = made["answered"]["proposal"]
    assert (proposal["proposed_by"], proposal["proposed_by_person"]) == ("mcp", person)
    assert (proposal["answered_by"], proposal["answered_by_person"]) == ("cli", person)
    assert made["answered"]["pin"]["created_by_person"] == person
    assert made["checkpoint"]["created_by_person"] == person
    assert made["report"]["created_by_person"] == person
    assert made["compaction"]["created_by_person"] == person
    assert made["assembly_report"]["reported_by_person"] == person
    audited = made["audit"]["assemblies"][0]
    assert audited["created_by_person"] == person
    assert audited["followed"]["reported_by_person"] == person
    assert made["candidate"]["review"]["by_person"] == person
    listed = cli.json("session", "messages", made["run"]["thread_id"])["messages"]
    assert {(m["source"], m["source_person"]) for m in listed} == {("cli", person)}
    imported = cli.json("session", "messages", made["import"]["thread_id"])["messages"]
    assert {m["source_person"] for m in imported} == {person}
    # Read back, not only as answered.
    thread = made["run"]["thread_id"]
    pins = cli.json("context", "pin", "list", thread)["pins"]
    assert [p["updated_by_person"] for p in pins] == [person, person]  # added, and answered
    reports = cli.json("run", "reports", made["run"]["run_id"])["reports"]
    assert [r["created_by_person"] for r in reports] == [person]
    shown = cli.json("session", "show", made["checkpoint"]["node_id"])
    assert shown["created_by_person"] == person
    threads = cli.json("session", "threads", "--workspace", "demo")["items"]
    assert {t["created_by_person"] for t in threads} == {person}
    with open_store(cli.store_url) as store:
        inspected = Rutter(store).runs.inspect(InspectRunParams(run_id=made["run"]["run_id"]))
    assert inspected.pinned is not None
    assert (inspected.pinned.confirmed_by, inspected.pinned.confirmed_by_person) == ("cli", person)

    # Every column migration 21 added holds that person on every row, whatever wrote it.
    for table, column in RECORDED:
        values = raw_rows(cli.store_url, f"SELECT DISTINCT {column} FROM {table}")
        assert values == [(person,)], (table, column)

    # The plain output shows the person beside the surface where it shows the surface.
    shown_run = cli("run", "show", made["run"]["run_id"]).stdout
    assert f"by {person} via cli" in shown_run
    listed = cli("context", "pin", "list", thread).stdout
    assert f"{person} via cli" in " ".join(listed.split())
    node = cli("session", "show", made["checkpoint"]["node_id"]).stdout
    assert f"by {person} via cli" in node


def _old_records(url: str) -> dict[str, str]:
    """A store at migration 19 holding a run (its mission, thread, session, root node), a
    message, a note, a pin, an answered proposal and a delivery report, written as rutter wrote
    them then: no person anywhere."""
    ids = {
        prefix: f"{prefix}_01M8Y3HJTQYDNPR8CJ56SS1T0B"
        for prefix in ("msn", "thr", "ses", "run", "node", "note", "pin", "prop", "dlv", "msg")
    }
    with open_store(url, migrations=BEFORE_RECORDING):
        pass
    for statement in (
        f"INSERT INTO projects (project_id, source, created_at) VALUES ('local:demo', 'local', "
        f"'{T0}')",
        f"INSERT INTO workspaces (workspace_id, root, created_at, project_id) VALUES ('demo', "
        f"'/srv/demo', '{T0}', 'local:demo')",
        f"INSERT INTO missions (mission_id, workspace_id, goal, status, created_by, created_at, "
        f"updated_at) VALUES ('{ids['msn']}', 'demo', 'old goal', 'active', 'cli', '{T0}', "
        f"'{T0}')",
        f"INSERT INTO threads (thread_id, workspace_id, status, created_by, created_at, "
        f"updated_at) VALUES ('{ids['thr']}', 'demo', 'active', 'cli', '{T0}', '{T0}')",
        f"INSERT INTO sessions (session_id, workspace_id, thread_id, status, created_by, "
        f"created_at, updated_at) VALUES ('{ids['ses']}', 'demo', '{ids['thr']}', 'active', "
        f"'cli', '{T0}', '{T0}')",
        f"INSERT INTO runs (run_id, workspace_id, mission_id, session_id, thread_id, profile, "
        f"mode, target_path, status, created_by, updated_by, created_at, updated_at) VALUES "
        f"('{ids['run']}', 'demo', '{ids['msn']}', '{ids['ses']}', '{ids['thr']}', NULL, 'ask', "
        f"'.', 'running', 'cli', 'lsp', '{T0}', '{T0}')",
        f"INSERT INTO continuity_nodes (node_id, run_id, session_id, thread_id, parent_node_id, "
        f"kind, created_by, created_at) VALUES ('{ids['node']}', '{ids['run']}', "
        f"'{ids['ses']}', '{ids['thr']}', NULL, 'root', 'cli', '{T0}')",
        f"INSERT INTO notes (note_id, thread_id, kind, text, redacted, status, superseded_by, "
        f"version, created_by, updated_by, created_at, updated_at, references_json) VALUES "
        f"('{ids['note']}', '{ids['thr']}', 'decision', 'old decision', 0, 'active', NULL, 1, "
        f"'cli', 'cli', '{T0}', '{T0}', '[]')",
        f"INSERT INTO pin_proposals (proposal_id, thread_id, workspace_id, run_id, text, "
        f"redacted, proposed_by, status, choice, reply, reply_redacted, pin_id, answered_by, "
        f"created_at, answered_at) VALUES ('{ids['prop']}', '{ids['thr']}', 'demo', "
        f"'{ids['run']}', 'old rule', 0, 'mcp', 'answered', 'pin', NULL, 0, '{ids['pin']}', "
        f"'cli', '{T0}', '{T0}')",
        f"INSERT INTO pins (pin_id, thread_id, text, redacted, proposal_id, version, created_by, "
        f"updated_by, created_at, updated_at) VALUES ('{ids['pin']}', '{ids['thr']}', "
        f"'old rule', 0, '{ids['prop']}', 1, 'cli', 'cli', '{T0}', '{T0}')",
        f"INSERT INTO messages (message_id, thread_id, seq, role, text, redacted, source, "
        f"external_id, created_at) VALUES ('{ids['msg']}', '{ids['thr']}', 1, 'user', 'old words', "
        f"0, 'cli', NULL, '{T0}')",
        f"INSERT INTO delivery_reports (report_id, run_id, result, summary, summary_redacted, "
        f"references_json, created_by, created_at) VALUES ('{ids['dlv']}', '{ids['run']}', "
        f"'passed', 'old report', 0, '[]', 'cli', '{T0}')",
    ):
        raw_rows(url, statement)
    return ids


def test_records_from_before_read_back_with_no_person(store_url: str, tmp_path: Path) -> None:
    ids = _old_records(store_url)
    cli = Cli(tmp_path / "home", tmp_path, database_url=store_url)
    run = cli.json("run", "show", ids["run"])  # opening the store applies migration 21
    assert (run["created_by"], run["created_by_person"]) == ("cli", None)
    assert (run["updated_by"], run["updated_by_person"]) == ("lsp", None)
    notes = cli.json("session", "notes", ids["thr"])["notes"]
    assert [(n["created_by_person"], n["updated_by_person"]) for n in notes] == [(None, None)]
    pins = cli.json("context", "pin", "list", ids["thr"])["pins"]
    assert [(p["created_by_person"], p["updated_by_person"]) for p in pins] == [(None, None)]
    proposals = cli.json("context", "pin", "proposals", "--all")["proposals"]
    assert [(p["proposed_by_person"], p["answered_by_person"]) for p in proposals] == [(None, None)]
    reports = cli.json("run", "reports", ids["run"])["reports"]
    assert [r["created_by_person"] for r in reports] == [None]
    threads = cli.json("session", "threads", "--workspace", "demo")["items"]
    assert [t["created_by_person"] for t in threads] == [None]
    listed = cli.json("session", "messages", ids["thr"])["messages"]
    assert [(m["source"], m["source_person"]) for m in listed] == [("cli", None)]
    shown = cli("run", "show", ids["run"]).stdout
    assert "by cli, person unknown" in shown
    assert "by lsp, person unknown" in shown

    # A change now names its person; what it does not change stays unknown.
    person = acting_person(store_url)
    edited = cli.json("context", "pin", "edit", ids["pin"], "--version", "1", "--text", "new")
    assert (edited["created_by_person"], edited["updated_by_person"]) == (None, person)
    note = cli.json("session", "note", "edit", ids["note"], "--version", "1", "--text", "new")
    assert (note["created_by_person"], note["updated_by_person"]) == (None, person)
    rows = raw_rows(
        store_url,
        "SELECT created_by_person, updated_by_person FROM pins WHERE pin_id = ?",
        ids["pin"],
    )
    assert rows == [(None, person)]


def test_an_http_request_records_its_bearers_person(store_url: str, tmp_path: Path) -> None:
    """A bearer acts for its person (on SQLite the store's one person, the operating-system
    user): what a request writes names that person beside `http_control`."""
    tree = {"AGENTS.md": "root rules\n"}
    with served_run(tmp_path, tree, database_url=store_url) as served:
        server, run = served.server, served.run
        owner = served.cli.json("http", "token", "list")["items"][0]["owner"]
        pin = server.control_call("POST", f"threads/{run['thread_id']}/pins", {"text": "kept"})
        report = server.control_call(
            "POST", f"runs/{run['run_id']}/delivery-reports",
            {"result": "passed", "summary": "checked by hand"},
        )  # fmt: skip
    assert owner == acting_person(store_url)
    assert (pin.status, report.status) == (201, 201), (pin.text, report.text)
    assert (pin.json["created_by"], pin.json["created_by_person"]) == ("http_control", owner)
    assert (report.json["created_by"], report.json["created_by_person"]) == ("http_control", owner)
    rows = raw_rows(
        store_url, "SELECT created_by_person FROM pins WHERE pin_id = ?", pin.json["pin_id"]
    )
    assert rows == [(owner,)]
