"""History search and read, context assembly, its audit and the followed report over HTTP
(issue 17 follow-up; docs/reference/history.md and docs/reference/assembly.md and
docs/reference/surfaces.md), against a real `rutter http` process on a real store: the CLI's
`--json` documents, a search → read round trip, the handle re-checked on every read (409 changed,
410 gone, no text), every 4xx with the error document and nothing the client sent repeated, and the
assembly needing the control bearer (it appends to the run's audit, recorded as `http_control`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.http_server import Answer, ServedRun, served_run

ECHO = "zq-echo-marker-91ab"
"""A client's text that no error may repeat."""


Env = ServedRun


# History search and reading differ most between engines (the full-text index): both.
pytestmark = pytest.mark.both_dialects


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, module_store_url: str) -> Iterator[Env]:
    with served_run(
        tmp_path_factory.mktemp("http-history"),
        {"AGENTS.md": "root rules\n", "src/a.go": "package a\n"},
        database_url=module_store_url,
    ) as served:
        yield served


def _search(env: Env, **query: Any) -> Answer:
    return env.server.get(f"history/search?{urlencode(query)}")


def _read(env: Env, handle: str, page: int = 1) -> Answer:
    return env.server.get(f"history/read?{urlencode({'handle': handle, 'page': page})}")


def _memory(env: Env, title: str, content: str) -> dict[str, Any]:
    made = env.server.control_call(
        "POST",
        "memories",
        {"scope": "project", "workspace_id": "demo", "title": title, "content": content},
    )
    assert made.status == 201, made.text
    document: dict[str, Any] = made.json
    return document


def _refused(answer: Answer, status: int, code: str, *sent: str) -> dict[str, Any]:
    assert answer.status == status, answer.text
    assert answer.code == code, answer.text
    for text in (ECHO, *sent):
        assert text not in answer.text
    error: dict[str, Any] = answer.json["error"]
    return error


# -- history


def test_search_then_read_round_trip_with_the_clis_documents(env: Env) -> None:
    memory = _memory(env, "parser", "keep parse_input_stream_http free of 删除后不可恢复的 state")
    found = _search(env, query="input_stream_http", workspace_id="demo")
    assert found.status == 200, found.text
    cli = env.cli.json("history", "search", "input_stream_http", "--workspace", "demo")
    assert found.json == cli
    [hit] = found.json["hits"]
    assert (hit["source_kind"], hit["source_id"], hit["version"]) == ("memory", memory["id"], 1)
    assert found.json["next_cursor"] is None
    cjk = _search(env, query="不可恢复", workspace_id="demo", scopes="memory")
    assert [h["source_id"] for h in cjk.json["hits"]] == [memory["id"]]

    page = _read(env, hit["handle"])
    assert page.status == 200, page.text
    assert page.json == env.cli.json("history", "read", hit["handle"])
    assert page.json["page"] == page.json["pages"] == 1
    assert "parse_input_stream_http" in page.json["text"]

    # the control bearer reads too
    control = env.server.get(
        f"history/read?{urlencode({'handle': hit['handle']})}", token=env.server.control
    )
    assert control.json == page.json


def test_a_runs_lineage_is_searched_with_a_comma_list_of_scopes(env: Env) -> None:
    run_id = env.run["run_id"]
    made = env.server.control_call(
        "POST",
        f"runs/{run_id}/continuity-checkpoints",
        {"title": "before the lineage marker", "summary": "lineagemarker-xy summary"},
    )
    assert made.status == 201, made.text
    both = _search(env, query="lineagemarker-xy", run_id=run_id, scopes="checkpoint,summary")
    assert both.status == 200, both.text
    assert both.json["hits"], both.text
    assert {h["source_kind"] for h in both.json["hits"]} <= {"checkpoint", "summary"}
    memories_only = _search(env, query="lineagemarker-xy", run_id=run_id, scopes="memory")
    assert memories_only.json == {"hits": [], "next_cursor": None}
    for hit in both.json["hits"]:
        assert "lineagemarker-xy" in _read(env, hit["handle"]).json["text"]


def test_pages_follow_the_cursor_without_repeats(env: Env) -> None:
    made = [_memory(env, f"paged {n}", f"pagedmarker-q{n}") for n in range(5)]
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(5):
        query: dict[str, Any] = {"query": "pagedmarker-q", "workspace_id": "demo", "limit": 2}
        if cursor:
            query["cursor"] = cursor
        answer = _search(env, **query)
        assert answer.status == 200, answer.text
        seen.extend(h["source_id"] for h in answer.json["hits"])
        cursor = answer.json["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(m["id"] for m in made)


def test_a_changed_source_is_409_and_a_deleted_or_disabled_one_410_without_text(
    env: Env,
) -> None:
    edited = _memory(env, "edited", "editmarker-k1 first text")
    gone = _memory(env, "gone", "gonemarker-k2 text")
    disabled = _memory(env, "disabled", "offmarker-k3 text")
    handles = {}
    for key, memory in (("edited", edited), ("gone", gone), ("disabled", disabled)):
        query = memory["content"].split()[0]
        [hit] = _search(env, query=query, workspace_id="demo", scopes="memory").json["hits"]
        assert hit["source_id"] == memory["id"]
        handles[key] = hit["handle"]
    changed = env.server.control_call(
        "PATCH", f"memories/{edited['id']}", {"expected_version": 1, "content": "edited again"}
    )
    assert changed.status == 200, changed.text
    deleted = env.server.request(
        "DELETE", f"memories/{gone['id']}", {"expected_version": 1}, token=env.server.control
    )
    assert deleted.status == 200, deleted.text
    off = env.server.control_call(
        "PATCH", f"memories/{disabled['id']}", {"expected_version": 1, "status": "disabled"}
    )
    assert off.status == 200, off.text

    conflict = _refused(_read(env, handles["edited"]), 409, "conflict", handles["edited"])
    assert "text" not in json.dumps(conflict.get("details", {}))
    for key in ("gone", "disabled"):
        answer = _read(env, handles[key])
        error = _refused(answer, 410, "gone", handles[key])
        assert "marker" not in answer.text
        assert error["hint"]["fix"] == "search_history_again"


def test_history_4xx(env: Env) -> None:
    server = env.server
    _memory(env, "forged", "a handle to forge: forge_me_http")
    [hit] = _search(env, query="forge_me_http", workspace_id="demo").json["hits"]
    forged = hit["handle"][:-4] + ("AAAA" if not hit["handle"].endswith("AAAA") else "BBBB")
    _refused(_read(env, forged), 400, "invalid_handle", forged)
    _refused(_read(env, ECHO), 400, "invalid_handle")
    _refused(_search(env, query="abc", cursor=ECHO), 400, "invalid_cursor")
    _refused(_search(env, query="abc", scopes=f"memory,{ECHO}"), 400, "invalid_scope")
    _refused(_search(env, query=ECHO, limit=0), 400, "invalid_limit")
    _refused(_search(env, workspace_id="demo"), 422, "invalid_params")
    _refused(_search(env, query="abc", limit="many"), 422, "invalid_params")
    _refused(_search(env, query="abc", **{ECHO: "1"}), 422, "invalid_params")
    _refused(
        server.get("history/search?query=abc&scopes=memory&scopes=note"),
        400,
        "duplicate_parameter",
    )
    _refused(
        _search(env, query="abc", run_id="run_01M8YKA0AYRGCADHJDMEXQK50K"), 404, "run_not_found"
    )
    _refused(_search(env, query="abc", workspace_id="nowhere-ws"), 404, "not_registered")
    _refused(_read(env, hit["handle"], page=7), 400, "page_out_of_range")
    _refused(server.request("GET", "history/search?query=abc"), 401, "unauthorized")
    _refused(
        server.request("POST", "history/search", {"query": "abc"}, token=server.control),
        405,
        "method_not_allowed",
    )


# -- context assembly, audit, report


def test_assemble_needs_control_is_audited_as_http_control_and_reported(env: Env) -> None:
    server = env.server
    run_id = env.run["run_id"]
    path = f"runs/{run_id}/context/assemble"
    _refused(server.request("POST", path, {}, token=server.read), 403, "forbidden")
    assembled = server.control_call("POST", path, {"budget": 4096})
    assert assembled.status == 200, assembled.text
    document = assembled.json
    assert document["protocol_version"] == "context_assembly.v1"
    assert document["created_by"] == "http_control"
    assert document["budget"]["background"] == 4096
    assert ("instruction", "AGENTS.md", "included") in [
        (e["kind"], e["id"], e["decision"]) for e in document["entries"]
    ]
    nulls = server.control_call("POST", path, {"budget": None})
    assert nulls.status == 200, nulls.text

    audit = server.get(f"runs/{run_id}/context/audit")
    assert audit.status == 200, audit.text
    assert audit.json == env.cli.json("context", "audit", run_id)
    assert [a["assembly_id"] for a in audit.json["assemblies"]][-1] == document["assembly_id"]
    limited = server.get(f"runs/{run_id}/context/audit?limit=1")
    assert [a["assembly_id"] for a in limited.json["assemblies"]] == [nulls.json["assembly_id"]]

    report_path = f"context/assemblies/{document['assembly_id']}/report"
    _refused(
        server.request("POST", report_path, {"followed": ["AGENTS.md"]}, token=server.read),
        403,
        "forbidden",
    )
    _refused(
        server.control_call("POST", report_path, {"followed": ["AGENTS.md"], "reported_by": "cli"}),
        422,
        "invalid_params",
    )
    report = server.control_call("POST", report_path, {"followed": ["AGENTS.md"]})
    assert report.status == 200, report.text
    assert (report.json["followed"], report.json["reported_by"]) == (["AGENTS.md"], "http_control")
    _refused(server.control_call("POST", report_path, {"ignored": ["AGENTS.md"]}), 409, "conflict")
    stored = [
        a
        for a in server.get(f"runs/{run_id}/context/audit").json["assemblies"]
        if a["assembly_id"] == document["assembly_id"]
    ]
    assert stored[0]["followed"] == report.json


def test_context_4xx(env: Env) -> None:
    server = env.server
    run_id = env.run["run_id"]
    missing = "run_01M8YKA0AYRGCADHJDMEXQK50K"
    path = f"runs/{run_id}/context/assemble"
    _refused(
        server.control_call("POST", f"runs/{missing}/context/assemble", {}), 404, "run_not_found"
    )
    _refused(server.control_call("POST", path, {"budget": 0}), 400, "invalid_budget")
    _refused(server.control_call("POST", path, {"budget": ECHO}), 422, "invalid_params")
    _refused(server.control_call("POST", path, {ECHO: None}), 422, "invalid_params")
    _refused(server.control_call("POST", path, {"actor": "cli"}), 422, "invalid_params")
    _refused(
        server.request("POST", path, raw=b'{"budget": 1, "budget": 2}', token=server.control),
        400,
        "invalid_json",
    )
    _refused(server.get(f"runs/{missing}/context/audit"), 404, "run_not_found")
    _refused(server.get(f"runs/{run_id}/context/audit?limit=0"), 400, "invalid_limit")
    _refused(
        server.control_call(
            "POST",
            "context/assemblies/asm_01M8YKA0AYRGCADHJDMEXQK50K/report",
            {"followed": ["AGENTS.md"]},
        ),
        404,
        "assembly_not_found",
    )
    _refused(
        server.control_call(
            "POST", f"context/assemblies/{ECHO}/report", {"followed": ["AGENTS.md"]}
        ),
        400,
        "invalid_assembly_id",
    )
