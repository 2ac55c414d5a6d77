"""Compaction, receipts and the overflow error over HTTP (issue 29), against a real `rutter
http` process on a real store: compacting needs the control bearer and answers the CLI's
document (the same operation key the same document), a request cannot name a program to run,
nor a model summarizer's endpoint, model or key variable (the server's own configuration is
used), a receipt pages back, and required context that does not fit is 422 `context_overflow`
with its figures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http_server import ServedRun, served_run
from tests.model_endpoints import SUMMARY, model_server

Env = ServedRun


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with served_run(
        tmp_path_factory.mktemp("http-compaction"), {"AGENTS.md": "root rules\n"}
    ) as served:
        yield served


def test_compact_read_a_receipt_and_overflow(env: Env) -> None:
    thread = env.run["thread_id"]
    output = "".join(f"line {n}\n" for n in range(900))
    for role, text in [
        ("user", "fix it"),
        ("tool", f"[tool result c-1]\n{output}"),
        ("assistant", "a"),
        ("user", "b"),
        ("assistant", "c"),
        ("user", "d"),
    ]:
        env.cli.json("session", "message", "add", thread, "--role", role, "--text", text)
    path = f"threads/{thread}/compactions"
    read_only = env.server.request("POST", path, {}, token=env.server.read)
    assert (read_only.status, read_only.code) == (403, "forbidden"), read_only.text
    named = env.server.control_call(
        "POST", path, {"summarizer": "command", "summarizer_command": ["sh", "-c", "id"]}
    )
    assert (named.status, named.code) == (422, "invalid_params"), named.text
    made = env.server.control_call("POST", path, {"operation_key": "http-1", "focus": "fix"})
    assert made.status == 201, made.text
    assert (made.json["status"], made.json["operation_key"]) == ("completed", "http-1")
    assert made.json["compacted_message_count"] == 2
    again = env.server.control_call("POST", path, {"operation_key": "http-1", "focus": "fix"})
    assert again.json == made.json
    no_command = env.server.control_call("POST", path, {"summarizer": "command"})
    assert (no_command.status, no_command.code) == (400, "summarizer_command_missing")

    receipt = f"rcpt_{made.json['kept_message_ids'][0]}"  # not a receipt: refused
    assert env.server.get(f"receipts/{receipt}").status == 400
    assembled = env.server.control_call("POST", f"runs/{env.run['run_id']}/context/assemble", {})
    assert assembled.status == 200, assembled.text
    kinds = [e["kind"] for e in assembled.json["entries"]]
    assert kinds == ["instruction", "summary", "message", "message", "message", "message"]
    assert made.json["summary"]["text"] == assembled.json["entries"][1]["text"]

    tight = env.server.control_call(
        "POST", f"runs/{env.run['run_id']}/context/assemble", {"budget": 5}
    )
    assert (tight.status, tight.code) == (422, "context_overflow"), tight.text
    details = tight.json["error"]["details"]
    assert details["budget"] == 5
    assert [r["kind"] for r in details["required"]] == ["instruction", "summary"]
    assert details["needed"] == sum(r["tokens"] for r in details["required"])


def test_a_receipt_pages_back_over_http(env: Env) -> None:
    run = env.cli.json("run", "create", "--workspace", "demo", "--goal", "receipts")
    output = "".join(f"entry {n}\n" for n in range(800))
    env.cli.json("session", "message", "add", run["thread_id"], "--role", "tool", "--text",
                 f"[tool result c-2]\n{output}")  # fmt: skip
    assembled = env.server.control_call("POST", f"runs/{run['run_id']}/context/assemble", {})
    [receipt] = [e["id"] for e in assembled.json["entries"] if e["kind"] == "receipt"]
    page = env.server.get(f"receipts/{receipt}?page=2")
    assert page.status == 200, page.text
    assert page.json == env.cli.json("session", "receipt", "read", receipt, "--page", "2")


def test_a_model_summarizer_is_the_servers_own(tmp_path: Path) -> None:
    with model_server() as endpoint:
        configured = {
            "RUTTER_SUMMARIZER_OPENAI_BASE_URL": endpoint.openai_url,
            "RUTTER_SUMMARIZER_OPENAI_MODEL": "served-model",
            "RUTTER_SUMMARIZER_OPENAI_KEY_ENV": "SERVED_MODEL_KEY",
            "SERVED_MODEL_KEY": "served-key-" + "0123456789",
        }
        with served_run(tmp_path, {"AGENTS.md": "rules\n"}, env=configured) as served:
            thread = served.run["thread_id"]
            for n in range(6):
                served.cli.json("session", "message", "add", thread, "--role", "user",
                                "--text", f"request {n}")  # fmt: skip
            path = f"threads/{thread}/compactions"
            for field in ("summarizer_base_url", "summarizer_model", "summarizer_key_env"):
                named = served.server.control_call(
                    "POST", path, {"summarizer": "openai", field: "HOME"}
                )
                assert (named.status, named.code) == (422, "invalid_params"), named.text
            assert endpoint.calls == 0
            body = {"summarizer": "openai", "operation_key": "http-model"}
            made = served.server.control_call("POST", path, body)
            assert made.status == 201, made.text
            assert (made.json["summarizer"], made.json["summary"]["text"]) == ("openai", SUMMARY)
            assert served.server.control_call("POST", path, body).json == made.json
            assert endpoint.calls == 1
            [received] = endpoint.requests
            assert received.body["model"] == "served-model"
            assert received.headers["authorization"] == "Bearer served-key-0123456789"
            endpoint.mode = "500"
            served.cli.json("session", "message", "add", thread, "--role", "user", "--text", "x")
            failed = served.server.control_call("POST", path, {"summarizer": "openai"})
            assert (failed.status, failed.code) == (502, "summarizer_failed"), failed.text
            assert failed.json["error"]["details"]["reason"] == "endpoint_error"
            assert "served-key" not in failed.text
