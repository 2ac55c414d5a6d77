"""A real local HTTP server speaking the two model protocols rutter's summarizers call: an
OpenAI-compatible `POST /v1/chat/completions` and Anthropic's `POST /v1/messages`.

It counts its calls, keeps each request as received (path, headers, JSON body), and answers
as `mode` says: `ok` (a summary), `401`, `429` (with `Retry-After: 7`), `500`, `sleep` (waits
until released or 30 s, longer than any test's timeout), `cut` (cut short: `finish_reason`
`length` / `stop_reason` `max_tokens`), `invalid_json`, `empty` (an empty reply), `gate` (waits
for `release()` then answers `ok`). Error bodies hold `BODY_MARKER`, which no rutter output may
ever echo.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Final

SUMMARY: Final = "They chose tabs; the parser is left."
BODY_MARKER: Final = "endpoint-body-marker-7f3a"
MODES: Final = ("ok", "401", "429", "500", "sleep", "cut", "invalid_json", "empty", "gate")


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ModelServer:
    """State shared with the handler threads."""

    mode: str = "ok"
    requests: list[Received] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def calls(self) -> int:
        with self.lock:
            return len(self.requests)

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def release(self) -> None:
        self.released.set()


def _openai_reply(text: str, finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }  # fmt: skip


def _anthropic_reply(text: str, stop: str) -> dict[str, Any]:
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": text[:12]}, {"type": "text", "text": text[12:]}]
        if text else [],
        "stop_reason": stop, "usage": {"input_tokens": 10, "output_tokens": 5},
    }  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    state: ClassVar[ModelServer]

    def log_message(self, format: str, *args: Any) -> None:  # the test's output stays clean
        return

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        state = self.state
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with state.lock:
            state.requests.append(
                Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            mode = state.mode
        anthropic = self.path == "/v1/messages"
        if self.path not in ("/v1/messages", "/v1/chat/completions"):
            self._send(404, json.dumps({"error": BODY_MARKER}).encode())
            return
        error = {"error": {"type": "error", "message": f"{BODY_MARKER} {mode}"}}
        if mode in ("401", "500"):
            self._send(int(mode), json.dumps(error).encode())
            return
        if mode == "429":
            self._send(429, json.dumps(error).encode(), {"retry-after": "7"})
            return
        if mode == "sleep":
            state.released.wait(30)
        if mode == "gate":
            state.released.wait(120)
        if mode == "invalid_json":
            self._send(200, f"<html>{BODY_MARKER}</html>".encode())
            return
        text = "" if mode == "empty" else SUMMARY
        if mode == "cut":
            text = f"They chose tabs and {BODY_MARKER}"
        if anthropic:
            reply = _anthropic_reply(text, "max_tokens" if mode == "cut" else "end_turn")
        else:
            reply = _openai_reply(text, "length" if mode == "cut" else "stop")
        with contextlib.suppress(OSError):  # the client gave up (its timeout)
            self._send(200, json.dumps(reply).encode())


@contextmanager
def model_server(mode: str = "ok") -> Iterator[ModelServer]:
    """A server on a free loopback port, stopped (and any sleeping answer released) after."""
    state = ModelServer(mode=mode)
    handler = type("Handler", (_Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.block_on_close = False
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="model-server", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
