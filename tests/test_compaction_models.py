"""The model summarizers (`openai`, `anthropic`) end to end: the CLI (in this process, and once as
a real `rutter` process) against a real local HTTP server speaking each protocol
(`tests.model_endpoints`). What a person relies on: the summary arrives, the same operation key
never calls the endpoint twice, every failure (refused key, rate limit, server error, timeout,
a reply cut short, an answer that is not the protocol's JSON, an empty reply, nothing
listening) is `summarizer_failed` with a hint and leaves the previous summary the latest, the
request holds no secret of the thread and the key only in its header, and neither the key nor
the prompt's text is stored or shown anywhere."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from rutter_core.app.continuity import AddMessageParams
from rutter_core.app.facade import Rutter, open_rutter
from rutter_core.continuity.compaction import repo
from rutter_core.discovery.fingerprint import text_sha256
from rutter_core.store.schema import compactions
from tests.model_endpoints import BODY_MARKER, SUMMARY, ModelServer, Received, model_server
from tests.testing import Cli, write_tree

GITHUB = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
KEY = "local-test-key-" + "4f8b2c9d0e1a"
KEY_VAR = "MODEL_TEST_KEY"


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with model_server() as served:
        yield served


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home", tmp_path, {KEY_VAR: KEY})


@pytest.fixture
def app(cli: Cli) -> Rutter:
    return open_rutter(None, {"RUTTER_HOME": str(cli.home)})


@pytest.fixture
def run(cli: Cli, app: Rutter, workspace_root: Path) -> dict[str, Any]:
    write_tree(workspace_root, {"AGENTS.md": "Use tabs.\n"})
    cli.json("workspace", "register", "demo", str(workspace_root))
    created: dict[str, Any] = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    seed(app, created["thread_id"], 8)
    return created


@pytest.fixture
def thread(run: dict[str, Any]) -> str:
    thread_id: str = run["thread_id"]
    return thread_id


def seed(app: Rutter, thread: str, count: int, *, start: int = 1) -> None:
    for n in range(start, start + count):
        role, text = [
            ("user", f"please fix parser bug {n}; my token is {GITHUB}"),
            ("assistant", f"[tool call pytest call-{n}]\n{{}}"),
            ("tool", f"[tool result call-{n - 1}]\n{n} passed"),
            ("assistant", f"fixed step {n}"),
        ][(n - 1) % 4]
        app.continuity.add_message(
            AddMessageParams(thread_id=thread, role=role, text=text), source="cli"
        )


def flags(server: ModelServer, kind: str, *extra: str) -> list[str]:
    url = server.openai_url if kind == "openai" else server.anthropic_url
    return ["--summarizer", kind, "--summarizer-base-url", url, "--summarizer-model",
            f"{kind}-test-model", "--summarizer-key-env", KEY_VAR, *extra]  # fmt: skip


def prompt_of(received: Received) -> str:
    [message] = received.body["messages"]
    assert message["role"] == "user"
    text: str = message["content"]
    return text


def stored(app: Rutter, key: str) -> repo.CompactionRow:
    with app.store.read() as conn:
        row = repo.find_by_key(conn, key)
    assert row is not None
    return row


def store_bytes(cli: Cli) -> bytes:
    return b"".join(path.read_bytes() for path in cli.home.rglob("rutter.db*"))


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_model_summarizes_once_per_key_and_sees_no_secret(
    cli: Cli, app: Rutter, thread: str, server: ModelServer, kind: str
) -> None:
    args = flags(server, kind, "--operation-key", f"op-{kind}", "--focus", f"token {GITHUB}")
    first = cli.json("session", "compact", thread, *args)
    assert (first["status"], first["summarizer"], first["operation_key"]) == (
        "completed", kind, f"op-{kind}",
    )  # fmt: skip
    assert first["summary"]["text"] == SUMMARY
    assert (first["compacted_message_count"], first["unread_message_count"]) == (4, 0)
    assert server.calls == 1
    [received] = server.requests
    # The protocol: path, headers, body; the key in its header and nowhere else.
    if kind == "openai":
        assert received.path == "/v1/chat/completions"
        assert received.headers["authorization"] == f"Bearer {KEY}"
        assert "x-api-key" not in received.headers
    else:
        assert received.path == "/v1/messages"
        assert received.headers["x-api-key"] == KEY
        assert received.headers["anthropic-version"] == "2023-06-01"
        assert "authorization" not in received.headers
    assert received.body["model"] == f"{kind}-test-model"
    assert 0 < received.body["max_tokens"] <= 8192
    sent = json.dumps(received.body)
    assert KEY not in sent
    prompt = prompt_of(received)
    assert "please fix parser bug 1" in prompt
    assert "[REDACTED:github_token]" in prompt
    assert GITHUB not in sent
    # The same key again: the stored answer, the endpoint not called again.
    assert cli.json("session", "compact", thread, *args) == first
    people = cli("session", "compact", thread, *args)
    assert people.stdout.splitlines()[0] == f"operation key: op-{kind}"
    assert server.calls == 1
    # The record: IDs and digests of what was sent, never its text or the key.
    row = stored(app, f"op-{kind}")
    assert row.summarizer == kind
    with app.store.read() as conn:  # the column itself names the model's kind (migration 19)
        column = conn.execute(
            select(compactions.c.summarizer).where(compactions.c.operation_key == f"op-{kind}")
        ).scalar_one()
    assert column == kind
    assert row.input["prompt_sha256"] == text_sha256(prompt)
    assert row.input["endpoint"] == {
        "kind": kind, "base_url": received_base(server, kind),
        "model": f"{kind}-test-model", "key_env": KEY_VAR,
    }  # fmt: skip
    record = json.dumps(row.input)
    assert "please fix parser bug" not in record
    assert "focus" not in record.replace("focus_sha256", "")
    assert KEY.encode() not in store_bytes(cli)
    assert b"please fix parser bug 1" in store_bytes(cli)  # the messages themselves, as before


def received_base(server: ModelServer, kind: str) -> str:
    return server.openai_url if kind == "openai" else server.anthropic_url


def test_settings_come_from_the_environment_in_a_real_process(
    tmp_path: Path, app: Rutter, thread: str, server: ModelServer
) -> None:
    configured = Cli(
        tmp_path / "home", tmp_path,
        {"RUTTER_SUMMARIZER": "anthropic",
         "RUTTER_SUMMARIZER_ANTHROPIC_BASE_URL": server.anthropic_url,
         "RUTTER_SUMMARIZER_ANTHROPIC_MODEL": "claude-test",
         "RUTTER_SUMMARIZER_ANTHROPIC_KEY_ENV": KEY_VAR, KEY_VAR: KEY},
    )  # fmt: skip
    done = configured.subprocess("session", "compact", thread, "--operation-key", "env-1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "operation key: env-1"
    assert "summarizer: anthropic" in done.stdout
    assert SUMMARY in done.stdout
    assert KEY not in done.stdout + done.stderr
    [received] = server.requests
    assert (received.body["model"], received.headers["x-api-key"]) == ("claude-test", KEY)
    again = configured.subprocess("session", "compact", thread, "--operation-key", "env-1")
    assert again.returncode == 0, again.stderr
    assert server.calls == 1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("mode", "reason", "fix"),
    [
        ("401", "unauthorized", "check_summarizer_key"),
        ("429", "rate_limited", "wait_for_summarizer"),
        ("500", "endpoint_error", "retry_summarizer_later"),
        ("sleep", "timeout", "raise_summarizer_timeout"),
        ("cut", "cut_short", "narrow_summarizer_input"),
        ("invalid_json", "invalid_reply", "check_summarizer_endpoint"),
        ("empty", "empty_output", "check_summarizer_output"),
    ],
)
def test_a_failing_endpoint_stores_nothing(
    cli: Cli, app: Rutter, run: dict[str, Any], server: ModelServer, kind: str, mode: str,
    reason: str, fix: str,
) -> None:  # fmt: skip
    thread = run["thread_id"]
    before = cli.json("session", "compact", thread)
    seed(app, thread, 3, start=9)
    server.mode = mode
    args = flags(server, kind, "--summarizer-timeout", "1", "--operation-key", "bad")
    failed = cli("session", "compact", thread, *args, "--json")
    assert failed.returncode == 1, failed.stderr
    error = json.loads(failed.stdout)["error"]
    assert (error["code"], error["details"]["reason"]) == ("summarizer_failed", reason)
    assert error["details"]["summarizer"] == kind
    assert error["hint"]["fix"] == fix
    if mode in ("401", "429", "500"):
        assert error["details"]["status"] == int(mode)
    if mode == "429":
        assert error["details"]["retry_after_seconds"] == 7
    if mode == "401":
        assert error["hint"]["key_env"] == KEY_VAR
    shown = failed.stdout + failed.stderr
    assert BODY_MARKER not in shown
    assert KEY not in shown
    assert server.calls == 1
    worded = cli("session", "compact", thread, *args)  # the stored outcome, worded for people
    assert worded.returncode == 1
    assert "stored outcome" in worded.stderr
    # Nothing half-written: the previous summary is still the thread's latest.
    checkpoint = cli.json("session", "checkpoint", run["run_id"], "--title", "after")
    assert checkpoint["snapshot"]["compaction_summary"]["text"] == before["summary"]["text"]
    assert stored(app, "bad").status == "failed"
    assert stored(app, "bad").summary_text is None
    # The same key answers the stored failure and never calls again.
    again = cli("session", "compact", thread, *args, "--json")
    assert again.returncode == 1
    assert json.loads(again.stdout)["error"]["details"]["stored_outcome"] is True
    assert server.calls == 1
    # The thread stays usable.
    server.mode = "ok"
    assert cli.json("session", "compact", thread, *flags(server, kind))["summary"]["text"] == (
        SUMMARY
    )


def test_a_hint_is_worded_for_people(cli: Cli, thread: str, server: ModelServer) -> None:
    server.mode = "401"
    failed = cli("session", "compact", thread, *flags(server, "openai"))
    assert failed.returncode == 1
    assert "rutter: error[summarizer_failed]" in failed.stderr
    assert f"check the key in {KEY_VAR}" in failed.stderr
    assert KEY not in failed.stderr
    assert BODY_MARKER not in failed.stderr


def test_nothing_listening_is_a_typed_failure(cli: Cli, thread: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    failed = cli("session", "compact", thread, "--summarizer", "openai", "--summarizer-base-url",
                 f"http://127.0.0.1:{port}/v1", "--summarizer-model", "m",
                 "--summarizer-key-env", KEY_VAR, "--json")  # fmt: skip
    assert failed.returncode == 1, failed.stderr
    error = json.loads(failed.stdout)["error"]
    assert (error["code"], error["details"]["reason"]) == ("summarizer_failed", "not_reachable")
    assert error["hint"] == {"fix": "check_summarizer_endpoint", "summarizer": "openai"}


def test_settings_are_checked_before_anything_is_stored_or_sent(
    cli: Cli, app: Rutter, thread: str, server: ModelServer
) -> None:
    base = ["--summarizer", "openai", "--summarizer-base-url", server.openai_url]
    cases: list[tuple[list[str], str]] = [
        ([*base, "--summarizer-key-env", KEY_VAR], "summarizer_model_missing"),
        ([*base, "--summarizer-model", "m", "--summarizer-key-env", "NOT_SET_ANYWHERE"],
         "summarizer_key_missing"),
        ([*base, "--summarizer-model", "m"], "summarizer_key_missing"),  # OPENAI_API_KEY
        ([*base, "--summarizer-model", "m", "--summarizer-key-env", KEY],
         "invalid_summarizer_key_env"),
        ([*base, "--summarizer-model", "two words", "--summarizer-key-env", KEY_VAR],
         "invalid_summarizer_model"),
        (["--summarizer", "anthropic", "--summarizer-base-url", "http://example.com",
          "--summarizer-model", "m", "--summarizer-key-env", KEY_VAR],
         "insecure_summarizer_endpoint"),
        (["--summarizer", "openai", "--summarizer-base-url", f"https://u:{KEY}@example.com/v1",
          "--summarizer-model", "m", "--summarizer-key-env", KEY_VAR],
         "invalid_summarizer_base_url"),
        (["--summarizer", "openai", "--summarizer-base-url", "ftp://example.com",
          "--summarizer-model", "m", "--summarizer-key-env", KEY_VAR],
         "invalid_summarizer_base_url"),
    ]  # fmt: skip
    for args, code in cases:
        result = cli("session", "compact", thread, *args, "--json")
        assert result.returncode == 2, (args, result.stderr)
        error = json.loads(result.stdout)["error"]
        assert error["code"] == code, args
        assert KEY not in result.stdout + result.stderr
        assert "hint" in error, args
    missing = cli("session", "compact", thread, *base, "--summarizer-model", "m",
                  "--summarizer-key-env", "NOT_SET_ANYWHERE")  # fmt: skip
    assert "NOT_SET_ANYWHERE" in missing.stderr  # the variable's name, to set it
    assert server.calls == 0
    with app.store.read() as conn:
        assert repo.latest_completed(conn, thread) is None
        assert repo.find_open(conn, thread) is None
    # An endpoint that needs no key: '' sends none.
    keyless = cli.json("session", "compact", thread, *base, "--summarizer-model", "m",
                       "--summarizer-key-env", "")  # fmt: skip
    assert keyless["summarizer"] == "openai"
    assert "authorization" not in server.requests[0].headers


def test_a_pending_model_compaction_is_retried_with_the_settings_again(
    cli: Cli, app: Rutter, thread: str, server: ModelServer
) -> None:
    # A compaction whose process died mid-call: stored `running` by an owner that is gone.
    from rutter_core.app.compaction import CompactParams, PendingCompaction
    from rutter_core.continuity.compaction import service

    begun = app.compaction.begin(
        CompactParams(thread_id=thread, summarizer="openai",
                      summarizer_base_url=server.openai_url, summarizer_model="m",
                      summarizer_key_env="", operation_key="died"),
        actor="cli",
    )  # fmt: skip
    assert isinstance(begun, PendingCompaction)
    service.mark_pending(app.store, begun.started)
    assert server.calls == 0
    forgot = cli("session", "compaction", "resolve", "died", "--retry", "--json")
    assert forgot.returncode == 2
    assert json.loads(forgot.stdout)["error"]["code"] == "summarizer_model_missing"
    assert stored(app, "died").status == "pending_verification"
    retried = cli.json("session", "compaction", "resolve", "died", "--retry",
                       "--summarizer-base-url", server.openai_url, "--summarizer-model", "m",
                       "--summarizer-key-env", KEY_VAR)  # fmt: skip
    assert (retried["status"], retried["summarizer"]) == ("completed", "openai")
    assert retried["summary"]["text"] == SUMMARY
    assert server.calls == 1
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
