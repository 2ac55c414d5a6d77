"""Editing a large single-line document (a minified bundle) with the language server.

Per keystroke (one incremental `textDocument/didChange` inserting one character near the end
of the line), median over `--edits` edits, each handled in process through the protocol's own
`handle_message` (JSON already parsed and structured, as the transport hands it over):

- baseline: a plain pygls `LanguageServer`, which applies every edit to the stored text (what
  rutter did before it kept only instruction files' text);
- rutter: the rutter server's protocol, where a document that is not an instruction file keeps
  no text and its edits only bump the version.

Goal: a keystroke in such a document costs no more than in a small one, under 1 ms whatever the
document's size. No timing is asserted anywhere: this prints numbers.

Usage: python benchmarks/lsp_big_document.py [--megabytes 5] [--edits 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

URI = "file:///w/dist/bundle.min.js"


class _Discard:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def _message(protocol: Any, method: str, params: Any, msg_id: int | None = None) -> Any:
    data: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        data["id"] = msg_id
    return protocol.structure_message(data)


async def measure(server: LanguageServer, size: int, edits: int) -> list[float]:
    protocol = server.protocol
    protocol.set_writer(_Discard())
    protocol.handle_message(
        _message(protocol, "initialize", {"processId": None, "capabilities": {}}, 1)
    )
    session = getattr(server, "session", None)
    if session is not None:
        session.ready.set()  # no folders are served: the document handlers only look it up
    item = {"uri": URI, "languageId": "javascript", "version": 1, "text": "a" * size}
    protocol.handle_message(_message(protocol, "textDocument/didOpen", {"textDocument": item}))
    where = {"line": 0, "character": size - 10}
    times = []
    for version in range(2, edits + 2):
        change = {
            "textDocument": {"uri": URI, "version": version},
            "contentChanges": [{"range": {"start": where, "end": where}, "text": "x"}],
        }
        message = _message(protocol, "textDocument/didChange", change)
        started = time.perf_counter()
        protocol.handle_message(message)
        times.append(time.perf_counter() - started)
        await asyncio.sleep(0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=5.0)
    parser.add_argument("--edits", type=int, default=20)
    args = parser.parse_args()
    size = int(args.megabytes * 1_000_000)
    os.environ["RUTTER_HOME"] = tempfile.mkdtemp(prefix="rutter-bench-")
    from rutter_lsp.setup import create_server

    plain = LanguageServer(
        "baseline", "0", text_document_sync_kind=types.TextDocumentSyncKind.Incremental
    )
    baseline = statistics.median(asyncio.run(measure(plain, size, args.edits)))
    rutter = statistics.median(asyncio.run(measure(create_server(), size, args.edits)))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load}")
    print(f"{args.megabytes:g} MB single-line document, median of {args.edits} keystrokes")
    print(f"  pygls applies the edit (baseline): {baseline * 1000:10.3f} ms")
    print(
        f"  rutter keeps no text:              {rutter * 1000:10.3f} ms"
        f"  ({baseline / max(rutter, 1e-9):,.0f}x less; goal < 1 ms)"
    )


if __name__ == "__main__":
    main()
