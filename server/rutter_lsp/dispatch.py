"""The one dispatch of the custom requests (`rutter/*`) and their command twins, and the
registry of them (`METHODS`).

Every custom request is registered with `custom_request` or `worker_request`, a command alone
with `custom_command`: its params are decoded once into the operation's pydantic model (unknown
fields refused, as on every surface), the handler runs, and a typed failure is mapped once
(`rutter_lsp.errors.jsonrpc_error`): a JSON-RPC error whose `data` is the error document.
Handlers therefore raise `RutterError` and never build JSON-RPC errors.

Each method is registered with its lane (as ruff's server sorts its requests into those run on
the main loop and those run in the background): `Lane.WORKER` when it is one call of the app
facade, which `worker_request` runs on the disk worker once the store is open, so the handler
is a plain function that cannot touch the event loop's state; `Lane.LOOP` when the handler
itself awaits the client or the session (asks the person, reads the index, sends), handing its
store and disk work to the worker (`on_worker`), and a long wait on something outside the store
to a thread of its own (`on_thread`: a compaction's summarizer).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from rutter_core.kernel.errors import RutterError, UsageError
from rutter_lsp.errors import jsonrpc_error
from rutter_lsp.settings import plain

if TYPE_CHECKING:
    from pydantic import BaseModel

    from rutter_core.app.facade import Rutter
    from rutter_lsp.server import RutterServer

T = TypeVar("T")
P = TypeVar("P", bound="BaseModel")
ACTOR: Final = "lsp"
"""Who every change made from the editor is recorded as (never taken from params)."""

Handler = Callable[["RutterServer", P], Awaitable[Any]]
AppCall = Callable[["Rutter", P], Any]
"""A worker-lane handler: one call of the app facade with the decoded params; returns the
answer's JSON."""


class Lane(StrEnum):
    """Where a method's work runs."""

    LOOP = "event loop"
    """The handler awaits on the event loop (the client, the session, the index)."""
    WORKER = "disk worker"
    """The handler is one call of the app facade, run on the disk worker."""


@dataclass(frozen=True, slots=True)
class Method:
    """A registered custom method: a request (perhaps with a command twin) or a command."""

    name: str
    kind: Literal["request", "command"]
    params: type[BaseModel]
    lane: Lane
    command: str | None = None
    """A request's command twin (`workspace/executeCommand`)."""


METHODS: dict[str, Method] = {}
"""Every registered custom request and command (the same for every server), by name."""
REQUEST_MODELS: dict[str, type[BaseModel]] = {}
"""Each registered `rutter/*` request and the model its params are decoded into: the generated
reference (`tools/reference.py`) reads its schemas from here."""


def not_an_object(says: str) -> UsageError:
    """Params that are not the one JSON object a request takes (the app layer's one shape)."""
    from rutter_core.app.models import ParamsProblem, params_error

    return params_error([ParamsProblem(None, "object_type", says)])


def object_params(value: Any) -> dict[str, Any]:
    """The one object of a request's params or of a command's arguments (`[{...}]`)."""
    data = plain(value)
    if isinstance(data, list):
        if not data:
            return {}
        if len(data) != 1:
            raise not_an_object("expected one JSON object as the command's argument")
        data = data[0]
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise not_an_object("expected a JSON object")
    return data


def decode(model: type[P], raw: Any) -> P:
    """`raw` params (plain JSON, namedtuples or a command's argument list) as `model`."""
    from pydantic import ValidationError

    data = object_params(raw)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        from rutter_core.app.models import invalid_params

        raise invalid_params(error) from None


def store_unavailable() -> RutterError:
    return RutterError(
        "store_unavailable",
        "the rutter store could not be opened; see the server log and check "
        "rutter.databaseUrl / RUTTER_DATABASE_URL / RUTTER_HOME",
    )


async def ready_app(server: RutterServer) -> Rutter:
    """The app facade, once `initialized` has opened the store (`store_unavailable` when it
    could not)."""
    await server.session.ready.wait()
    app = server.session.app
    if app is None:
        raise store_unavailable()
    return app


async def on_worker(server: RutterServer, fn: Callable[[], T]) -> T:
    """`fn` on the disk worker: store and disk work stay off the event loop."""
    return await server.session.worker.run(fn)


async def on_thread(fn: Callable[[], T], *, name: str) -> T:
    """`fn` on a daemon thread of its own: for a call that may wait long on something outside
    the store (a summarizer), so neither the event loop nor the disk worker waits with it. `fn`
    must not touch the store or the session (their work stays on the worker)."""
    future: Future[T] = Future()

    def run() -> None:
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn())
            except BaseException as error:
                future.set_exception(error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await asyncio.wrap_future(future)


def _command_arguments(args: Sequence[Any]) -> Any:
    return [plain(arg) for arg in args]


def _answering(server: RutterServer, model: type[P], handler: Handler[P]) -> Callable[[Any], Any]:
    async def answer(raw: Any) -> Any:
        try:
            return await handler(server, decode(model, raw))
        except RutterError as error:
            raise jsonrpc_error(error) from error

    return answer


def _register_command(
    server: RutterServer,
    command: str,
    answer: Callable[[Any], Any],
    command_params: Callable[[Sequence[Any]], Any],
) -> None:
    # Command handlers take pygls' conventional `ls` first (the server, injected by name); the
    # client's arguments follow.
    @server.command(command)
    async def run_command(ls: Any, *args: Any) -> Any:
        try:
            params = command_params(args)
        except RutterError as error:  # e.g. several objects where one is expected
            raise jsonrpc_error(error) from error
        return await answer(params)


def custom_request(
    server: RutterServer,
    method: str,
    model: type[P],
    *,
    command: str | None = None,
    command_params: Callable[[Sequence[Any]], Any] = _command_arguments,
    lane: Lane = Lane.LOOP,
) -> Callable[[Handler[P]], Handler[P]]:
    """Register `handler` for the request `method` (and `workspace/executeCommand` `command`,
    whose arguments `command_params` turns into the request's params)."""

    def register(handler: Handler[P]) -> Handler[P]:
        answer = _answering(server, model, handler)
        REQUEST_MODELS[method] = model
        METHODS[method] = Method(method, "request", model, lane, command)

        @server.feature(method)
        async def request(params: Any) -> Any:
            return await answer(params)

        if command is not None:
            _register_command(server, command, answer, command_params)
        return handler

    return register


def custom_command(
    server: RutterServer,
    command: str,
    model: type[P],
    *,
    command_params: Callable[[Sequence[Any]], Any] = _command_arguments,
) -> Callable[[Handler[P]], Handler[P]]:
    """Register `handler` for the `workspace/executeCommand` `command` alone (a command with no
    request twin, such as a code lens's): decoded and mapped as `custom_request` does."""

    def register(handler: Handler[P]) -> Handler[P]:
        _register_command(server, command, _answering(server, model, handler), command_params)
        METHODS[command] = Method(command, "command", model, Lane.LOOP)
        return handler

    return register


def worker_request(
    server: RutterServer,
    method: str,
    model: type[P],
    *,
    command: str | None = None,
    command_params: Callable[[Sequence[Any]], Any] = _command_arguments,
) -> Callable[[AppCall[P]], AppCall[P]]:
    """Register `call` for the request `method` (and its command twin) on the worker lane: once
    the store is open, `call(app, params)` runs on the disk worker and its result is the
    answer."""

    def register(call: AppCall[P]) -> AppCall[P]:
        async def handler(server: RutterServer, params: P) -> Any:
            app = await ready_app(server)
            return await on_worker(server, lambda: call(app, params))

        custom_request(
            server, method, model, command=command, command_params=command_params,
            lane=Lane.WORKER,
        )(handler)  # fmt: skip
        return call

    return register
