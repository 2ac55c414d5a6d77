"""What the custom requests of every feature share: their params as one JSON object, the store
once the server is ready, and store work on the disk worker with typed failures turned into
JSON-RPC errors (`rutter_lsp.errors`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from rutter_core.errors import RutterError, UsageError
from rutter_core.store import Store
from rutter_lsp.errors import jsonrpc_error
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from pygls.exceptions import JsonRpcException

    from rutter_lsp.server import RutterServer

T = TypeVar("T")


def invalid_params(message: str) -> JsonRpcException:
    return jsonrpc_error(UsageError("invalid_params", message))


def object_params(value: Any) -> dict[str, Any]:
    """The one object of a request's params or of a command's arguments (`[{...}]`)."""
    data = plain(value)
    if isinstance(data, list):
        if not data:
            return {}
        if len(data) != 1:
            raise invalid_params("expected one JSON object as the command's argument")
        data = data[0]
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise invalid_params("expected a JSON object")
    return data


def store_unavailable() -> RutterError:
    return RutterError(
        "store_unavailable",
        "the rutter store could not be opened; see the server log and check "
        "rutter.databaseUrl / RUTTER_DATABASE_URL / RUTTER_HOME",
    )


async def ready_store(server: RutterServer) -> Store:
    """The store, once `initialized` has opened it (a JSON-RPC error when it could not)."""
    await server.ready.wait()
    if server.store is None:
        raise jsonrpc_error(store_unavailable())
    return server.store


async def on_worker(server: RutterServer, fn: Callable[[], T]) -> T:
    """`fn` on the disk worker (store work stays off the event loop); typed failures become
    JSON-RPC errors."""
    try:
        return await server.worker.run(fn)
    except RutterError as error:
        raise jsonrpc_error(error) from error
