"""`rutter mcp`: the Model Context Protocol over stdio (the official `mcp` SDK's low-level
server), serving `rutter_mcp.tools`.

Why the low-level `Server` and not the SDK's high-level `MCPServer` (mcp 2.x's FastMCP): the
high-level server validates a call's arguments itself, against a model it builds from a Python
function's signature, before the tool runs. That model ignores unknown arguments (an agent's
misspelt key would be dropped silently instead of refused by name), and a refusal's text is
pydantic's, which repeats the values sent; an unknown tool's error repeats its name; every
failure becomes a text-only error result, without the error document as structured content;
and `run_stdio_async` opens stdin itself, so the screened stdin could only be handed in through
a private attribute. Each of these breaks a rule of this server (refusals name the field and
the rule, never the value; typed error documents; screened input). What the high-level server
would add, this module does in a few lines: input schemas from the app's params models, output
schemas from the app operations' result models, and structured results. Cold start is no
reason either way: importing the SDK's low-level server imports its high-level one too.

Cold start matters (an agent starts the server with each session): the SDK and the app layer
are imported when the server starts, not when the `rutter` command line loads, and the store is
opened on the first tool call. Each result is the JSON document of the CLI's `--json`, as
structured content and as its text; a failure is a tool error (`isError`) carrying the error
document `{"error": {code, message, ...}}`, never an echo of what the client sent
(`rutter_core.kernel.echo`). What is read off stdin is screened first (`screen`): a message
nested too deep, or a line that is not JSON-RPC, is answered with a JSON-RPC error.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from typing import TYPE_CHECKING, Any, cast

from rutter_core.kernel.errors import RutterError
from rutter_core.kernel.version import rutter_version

if TYPE_CHECKING:
    import mcp_types

    from rutter_core.app.facade import Rutter

SERVER_NAME = "rutter"


class _Lazy:
    """The app facade over the store, opened on first use and kept for the session."""

    def __init__(self, database_url: str | None) -> None:
        self._database_url = database_url
        self._app: Rutter | None = None

    def app(self) -> Rutter:
        if self._app is None:
            from rutter_core.app.facade import open_rutter

            self._app = open_rutter(self._database_url, os.environ, pool="service")
        return self._app

    def close(self) -> None:
        if self._app is not None:
            self._app.store.close()
            self._app = None


def _text(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2)


def instructions() -> str:
    """What the client is told about the server at initialization: every tool by name."""
    from rutter_mcp.tools import TOOLS

    listed = "\n".join(f"- {tool.name}: {tool.summary}" for tool in TOOLS)
    return (
        "rutter tells which project instructions apply to a file and why, lists the person's "
        "explicit memories, takes checkpoints of a run, and lets you propose a requirement to "
        "pin; the person decides whether it is pinned, and you can read how they answered. "
        "Every tool answers with a JSON document (structured content, and the same as text); "
        f"a failure is a tool error with an error document. The tools:\n{listed}"
    )


def tool_list() -> list[mcp_types.Tool]:
    """The tools as `tools/list` announces them."""
    return list(_listed_tools())


@functools.cache
def _listed_tools() -> tuple[mcp_types.Tool, ...]:
    """Built once: generating the schemas takes tens of milliseconds, and they never change."""
    import mcp_types

    from rutter_mcp.tools import TOOLS

    return tuple(
        mcp_types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=tool.params.model_json_schema(),
            output_schema=tool.output_schema(),
            annotations=mcp_types.ToolAnnotations(
                title=tool.title,
                read_only_hint=tool.read_only,
                destructive_hint=None if tool.read_only else False,
                idempotent_hint=tool.read_only,
                open_world_hint=False,
            ),
        )
        for tool in TOOLS
    )


def call(lazy: _Lazy, name: str, arguments: dict[str, Any] | None) -> mcp_types.CallToolResult:
    import mcp_types

    from rutter_core.kernel.echo import without_echo
    from rutter_mcp.tools import run_tool, sent_texts_of

    try:
        document = run_tool(lazy.app(), name, arguments)
    except Exception as exc:  # typed for the client even when it is a bug
        if isinstance(exc, RutterError):
            error = exc
        else:
            traceback.print_exc(file=sys.stderr)  # stderr: the log, never the protocol
            error = RutterError("internal", f"unexpected failure: {type(exc).__name__}")
        failure = without_echo(error, sent_texts_of(name, arguments))
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=_text(failure))],
            structured_content=failure,
            is_error=True,
        )
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=_text(document))], structured_content=document
    )


def serve(*, database_url: str | None = None) -> int:
    """Serve one client over stdin/stdout until it disconnects; the exit code."""
    import anyio
    import mcp_types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    lazy = _Lazy(database_url)

    async def on_list_tools(
        _ctx: Any, _params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=tool_list())

    async def on_call_tool(
        _ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        return call(lazy, params.name, params.arguments)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=rutter_version() or "0",
        instructions=instructions(),
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )

    async def main() -> None:
        from rutter_mcp.screen import ScreenedLines, claimed_stdin

        with claimed_stdin() as stdin:
            lines = ScreenedLines(stdin)
            async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
                lines.answer_on(write_stream)
                await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 130
    finally:
        lazy.close()
    return 0
