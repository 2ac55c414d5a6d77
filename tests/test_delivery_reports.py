"""Delivery reports (docs/reference/runs.md): a person's report that a run's delivery was checked
and passed or failed. Through the real CLI (in process) and a real `rutter http` process over a
real store: the document, its bounds and typed refusals, redaction, append-only rows, removal
with the workspace, and the completion record a passed report makes for experience candidates
(`delivery_report`), taken back by a later failed one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rutter_core.app.facade import Rutter
from rutter_core.app.runs import ReportDeliveryParams
from rutter_core.kernel.errors import ConflictError, RejectedError
from rutter_core.store import Store, open_store
from tests.http_server import ServedRun, served_run
from tests.testing import Cli, acting_person, git, refused, write_tree

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
REPORT_KEYS = [
    "report_id", "run_id", "thread_id", "result", "summary", "summary_redacted", "references",
    "created_by", "created_by_person", "created_at",
]  # fmt: skip


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    root = tmp_path / "repo"
    write_tree(root, {"AGENTS.md": "root rules\n", "src/parser.py": "x = 1\n"})
    git(root, "init", "-q")
    cli = Cli(tmp_path / "home", root)
    cli.json("workspace", "register", "demo", str(root))
    return cli


def _run(cli: Cli) -> dict[str, Any]:
    run: dict[str, Any] = cli.json(
        "run", "create", "--goal", "ship the parser", "--workspace", "demo"
    )
    return run


def _decision(cli: Cli, thread_id: str, text: str) -> None:
    cli.json(
        "session", "note", "add", thread_id, "--kind", "decision", "--text", text,
        "--reference", "src/parser.py",
    )  # fmt: skip


def _completions(cli: Cli) -> dict[str, str]:
    """Each pending candidate's text -> its completion kind."""
    listed = cli.json("context", "memory", "candidates", "--workspace", "demo")
    return {item["content"]: item["completion"]["kind"] for item in listed["items"]}


def _report(cli: Cli, run_id: str, result: str, summary: str = "tests pass", *more: str) -> Any:
    return cli.json("run", "report", run_id, "--result", result, "--summary", summary, *more)


def test_report_document_and_listing(cli: Cli) -> None:
    run = _run(cli)
    report = _report(
        cli, run["run_id"], "passed", "all 41 parser tests pass",
        "--reference", "src/parser.py", "--reference", "https://ci.example.com/builds/7",
    )  # fmt: skip
    assert list(report) == REPORT_KEYS
    assert report["created_by_person"] == acting_person(cli.store_url)
    assert report["report_id"].startswith("dlv_")
    assert len(report["report_id"]) == 30
    assert (report["run_id"], report["thread_id"]) == (run["run_id"], run["thread_id"])
    assert (report["result"], report["summary"], report["summary_redacted"]) == (
        "passed", "all 41 parser tests pass", False,
    )  # fmt: skip
    assert report["references"] == ["https://ci.example.com/builds/7", "src/parser.py"]
    assert report["created_by"] == "cli"

    failed = _report(cli, run["run_id"], "failed", "the fuzz test crashes")
    listed = cli.json("run", "reports", run["run_id"])
    assert listed == {"run_id": run["run_id"], "reports": [report, failed]}

    people = cli("run", "reports", run["run_id"])
    assert people.returncode == 0
    assert report["report_id"] in people.stdout
    assert "the fuzz test crashes" in people.stdout
    empty = cli("run", "reports", _run(cli)["run_id"])
    assert "No delivery reports" in empty.stdout
    # The run itself is unchanged by a report.
    assert cli.json("run", "show", run["run_id"])["status"] == "created"


def test_refusals_are_typed_and_echo_nothing(cli: Cli) -> None:
    run_id = _run(cli)["run_id"]
    bad = cli("run", "report", run_id, "--result", "shipped-it", "--summary", "x", "--json")
    assert bad.returncode == 3, bad.stdout
    assert "invalid_result" in bad.stdout
    assert "shipped-it" not in bad.stdout + bad.stderr
    hidden = cli("run", "report", run_id, "--result", "passed", "--summary", "ok\u202eevil")
    assert hidden.returncode == 3
    assert "control_character" in hidden.stderr
    assert "evil" not in hidden.stdout + hidden.stderr
    blank = cli("run", "report", run_id, "--result", "passed", "--summary", "  \n ", "--json")
    assert blank.returncode == 3
    assert "invalid_text" in blank.stdout
    long = cli("run", "report", run_id, "--result", "passed", "--summary", "é" * 2049, "--json")
    assert long.returncode == 3
    assert "too_large" in long.stdout
    missing = cli("run", "report", "run_01JZZZZZZZZZZZZZZZZZZZZZZZ", "--result", "passed",
                  "--summary", "x", "--json")  # fmt: skip
    assert missing.returncode == 5
    assert "run_not_found" in missing.stdout
    split = cli("run", "report", run_id, "--result", "passed", "--summary", "x",
                "--reference", "two\nlines", "--json")  # fmt: skip
    assert split.returncode == 3
    assert "invalid_reference" in split.stdout
    assert cli.json("run", "reports", run_id)["reports"] == []


def test_secret_in_summary_is_stored_redacted(cli: Cli) -> None:
    run_id = _run(cli)["run_id"]
    report = _report(cli, run_id, "passed", f"deployed with token {GITHUB}")
    assert report["summary_redacted"] is True
    assert GITHUB not in report["summary"]
    store_file = cli.home / "rutter.db"
    raw = b"".join(path.read_bytes() for path in store_file.parent.glob("rutter.db*"))
    assert GITHUB.encode() not in raw


def test_only_operator_surfaces_report(store: Store) -> None:
    params = ReportDeliveryParams(run_id="run_01JZZZZZZZZZZZZZZZZZZZZZZZ", result="passed",
                                  summary="x")  # fmt: skip
    error = refused(RejectedError, "actor_not_allowed",
                    lambda: Rutter(store).runs.report(params, actor="mcp"))  # type: ignore[arg-type]  # fmt: skip
    assert "mcp" not in error.message


def test_a_passed_report_is_a_completion_record_until_a_failed_one(cli: Cli) -> None:
    run = _run(cli)
    _decision(cli, run["thread_id"], "parse dates as UTC")
    assert _completions(cli) == {}  # a created run, no report: no completion record
    _report(cli, run["run_id"], "failed", "two tests fail")
    assert _completions(cli) == {}
    _report(cli, run["run_id"], "passed", "fixed; all pass")
    assert _completions(cli) == {"parse dates as UTC": "delivery_report"}
    item = cli.json("context", "memory", "candidates", "--workspace", "demo")["items"][0]
    assert "delivery report" in item["confidence_note"]
    _report(cli, run["run_id"], "failed", "a regression after all")
    assert _completions(cli) == {}
    # A paused run with a passed report has a completion record: the report is about the
    # delivery, not the run's state.
    cli.json("run", "status", run["run_id"], "running")
    cli.json("run", "status", run["run_id"], "paused")
    _report(cli, run["run_id"], "passed", "checked again")
    assert _completions(cli) == {"parse dates as UTC": "delivery_report"}
    # A completed run is the stronger record, whatever its reports say.
    cli.json("run", "status", run["run_id"], "running")
    _report(cli, run["run_id"], "failed", "flaky")
    cli.json("run", "status", run["run_id"], "completed")
    assert _completions(cli) == {"parse dates as UTC": "run_completed"}


def test_confirming_a_report_backed_candidate_saves_the_memory(cli: Cli) -> None:
    run = _run(cli)
    _decision(cli, run["thread_id"], "parse dates as UTC")
    _report(cli, run["run_id"], "passed", "all pass")
    item = cli.json("context", "memory", "candidates", "--workspace", "demo")["items"][0]
    done = cli.json(
        "context", "memory", "candidate", "confirm", item["candidate_id"],
        "--version", "1", "--fingerprint", item["fingerprint"], "--source-version", "1",
    )  # fmt: skip
    assert done["candidate"]["completion"]["kind"] == "delivery_report"
    assert done["memory"]["content"] == "parse dates as UTC"


@pytest.mark.both_dialects
def test_reports_are_append_only_and_go_with_their_workspace(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_tree(root, {"AGENTS.md": "root rules\n"})
    git(root, "init", "-q")
    from rutter_core.app.runs import CreateRunParams, ListDeliveryReportsParams
    from rutter_core.app.workspaces import RegisterWorkspaceParams, RemoveWorkspaceParams

    rutter = Rutter(store)
    register = RegisterWorkspaceParams(workspace_id="demo", root=str(root), cwd="/")
    rutter.workspaces.register(register)
    run = rutter.runs.create(CreateRunParams(goal="g", workspace_id="demo"), actor="cli")
    params = ReportDeliveryParams(run_id=run.run_id, result="passed", summary="ok")
    report = rutter.runs.report(params, actor="cli")
    for statement in (
        "UPDATE delivery_reports SET result = 'failed'",
        "DELETE FROM delivery_reports",
    ):
        with pytest.raises(ConflictError), store.write() as conn:
            conn.exec_driver_sql(statement)
    listed = rutter.runs.reports(ListDeliveryReportsParams(run_id=run.run_id))
    assert [found.report_id for found in listed.reports] == [report.report_id]

    rutter.workspaces.remove(RemoveWorkspaceParams(workspace_id="demo", cascade=True))
    with store.read() as conn:
        left = conn.exec_driver_sql("SELECT count(*) FROM delivery_reports").scalar_one()
    assert left == 0


# -- HTTP ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedRun]:
    with served_run(tmp_path_factory.mktemp("http-reports"), {"AGENTS.md": "root rules\n"}) as env:
        yield env


def test_http_control_reports_read_lists(served: ServedRun) -> None:
    path = f"runs/{served.run['run_id']}/delivery-reports"
    body = {"result": "passed", "summary": "green", "references": ["src/parser.py"]}
    by_reader = served.server.request("POST", path, body, token=served.server.read)
    assert by_reader.status == 403
    bad = served.server.control_call("POST", path, {**body, "result": "maybe"})
    assert (bad.status, bad.code) == (422, "invalid_result")
    assert "maybe" not in bad.text
    made = served.server.control_call("POST", path, body)
    assert made.status == 201, made.text
    assert (made.json["created_by"], made.json["result"]) == ("http_control", "passed")
    listed = served.server.get(path)
    assert (listed.status, listed.json["reports"]) == (200, [made.json])
    missing = served.server.get("runs/run_01JZZZZZZZZZZZZZZZZZZZZZZZ/delivery-reports")
    assert (missing.status, missing.code) == (404, "run_not_found")
    paths = served.server.get("openapi.json").json["paths"]
    assert "/api/v1/runs/{run_id}/delivery-reports" in paths


def test_store_file_opened_again_reads_the_same(cli: Cli) -> None:
    """A report written by one process is read by another (the CLI as a real process)."""
    run_id = _run(cli)["run_id"]
    made = _report(cli, run_id, "passed", "ok")
    listed = cli.subprocess("run", "reports", run_id, "--json")
    assert listed.returncode == 0, listed.stderr
    assert made["report_id"] in listed.stdout
    with open_store(f"sqlite:///{cli.home / 'rutter.db'}") as store, store.read() as conn:
        count = conn.exec_driver_sql("SELECT count(*) FROM delivery_reports").scalar_one()
    assert count == 1
