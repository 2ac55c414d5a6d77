"""The Starlette application: one endpoint per entry of `routes.ROUTES`, each doing, in order,
the bearer (401 none or unknown or revoked, 403 a read bearer on a mutation), the body (413
over 1 MiB, counted before it is all read; 400 not strict JSON), the fields (422 unknown or
mistyped, from the derived wire model), then the app call in a worker thread, whose typed
failures are mapped once (`errors.status_of`). Nothing a client sent is echoed in an error.
Before any of it, on every path, the `Host` header must name this server (`hosts`: 400). A
client that goes away before its body is complete is one line in the log.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route as StarletteRoute

from rutter_core.app.models import invalid_params
from rutter_core.kernel.echo import sent_texts, without_echo
from rutter_core.kernel.errors import RutterError
from rutter_http.errors import (
    HttpError,
    forbidden,
    host_not_allowed,
    status_of,
    unauthorized,
)
from rutter_http.hosts import HostRule
from rutter_http.openapi import openapi_document
from rutter_http.routes import PREFIX, ROUTES, Route
from rutter_http.strict import check_length, parse_object, read_body, well_formed_text
from rutter_http.wire import query_values

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from rutter_core.app.facade import Rutter

WORKERS: Final = 8
"""Operations running at once (each in a thread: the store and discovery block)."""

Endpoint = Callable[[Request], Coroutine[Any, Any, Response]]


def _json(document: Any, status: int = 200) -> Response:
    body = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(body, status_code=status, media_type="application/json")


def _failure(
    error: RutterError, headers: dict[str, str] | None = None, sent: set[str] | None = None
) -> Response:
    document = without_echo(error, sent or set())
    response = _json(document, status_of(error))
    if error.code == "unauthorized":
        response.headers["WWW-Authenticate"] = "Bearer"
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def _document(result: BaseModel) -> Any:
    to_json = getattr(result, "to_json", None)
    return to_json() if callable(to_json) else result.model_dump(mode="json")


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, secret = header.partition(" ")
    return secret.strip() if scheme.lower() == "bearer" and secret.strip() else None


class Api:
    """The endpoints over one facade (the store stays open while the server runs)."""

    def __init__(self, rutter: Rutter) -> None:
        self.rutter = rutter
        self.limiter = anyio.CapacityLimiter(WORKERS)

    async def run(self, call: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(call, limiter=self.limiter)

    def endpoint(self, route: Route) -> Endpoint:
        wire = route.wire()
        known = frozenset(wire.model_fields)

        async def handle(request: Request) -> Response:
            sent: set[str] = set()
            try:
                result = await self._handle(route, wire, known, request, sent)
            except RutterError as error:
                return _failure(error, sent=sent)
            except ClientDisconnect:  # nobody to answer: the log says so, once
                sys.stderr.write(
                    f"rutter http: {route.method} {PREFIX}{route.path}: the client disconnected "
                    "before its request body was complete\n"
                )
                sys.stderr.flush()
                return Response(status_code=400)
            except Exception:  # a bug: typed for the client, the trace in the log only
                traceback.print_exc(file=sys.stderr)
                return _failure(RutterError("internal", "unexpected failure"))
            return _json(_document(result), route.status)

        return handle

    async def _handle(
        self,
        route: Route,
        wire: type[BaseModel],
        known: frozenset[str],
        request: Request,
        sent: set[str],
    ) -> BaseModel:
        """The operation's result; `sent` collects the client's strings as they are read
        (so no error repeats them)."""
        secret = _bearer(request)
        scope = None if secret is None else await self.run(
            lambda: self.rutter.tokens.authenticate(secret)
        )  # fmt: skip
        if scope is None:
            raise unauthorized()
        if route.scope == "control" and scope != "control":
            raise forbidden()
        path = dict(request.path_params)
        if not all(well_formed_text(value) for value in path.values()):
            raise HttpError("invalid_path", "a path parameter is not well-formed text")
        sent |= sent_texts(path)
        if route.has_body:
            check_length(request.headers.get("content-length"))
            media = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                raise HttpError(
                    "unsupported_media_type", "the request body must be application/json"
                )
            raw: dict[str, Any] = parse_object(await read_body(request.stream()))
            sent |= sent_texts(raw)
        else:
            pairs = request.query_params.multi_items()
            if not all(well_formed_text(k) and well_formed_text(v) for k, v in pairs):
                raise HttpError("invalid_query", "the query string is not well-formed text")
            sent |= sent_texts(pairs)
            raw = query_values(wire, pairs)
        try:
            validated = wire.model_validate(raw)
            values = route.values(path, validated)
        except ValidationError as error:
            raise invalid_params(error, known) from None
        try:
            result: BaseModel = await self.run(lambda: route.call(self.rutter, values))
        except ValidationError as error:  # the params model's own checks (e.g. one of two)
            raise invalid_params(error, known) from None
        return result


async def _not_found(_request: Request, _exc: Exception) -> Response:
    return _failure(HttpError("route_not_found", "no such route under /api/v1"), None)


def _http_exception(_request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException) and exc.status_code == 405:
        allow = (exc.headers or {}).get("Allow") or (exc.headers or {}).get("allow")
        return _failure(
            HttpError("method_not_allowed", "this route does not take that method"),
            {"Allow": allow} if allow else None,
        )
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404:
        return _failure(HttpError("route_not_found", "no such route under /api/v1"))
    return _failure(HttpError("bad_request", "the request cannot be served"))


class HostCheck:
    """Answers 400 `host_not_allowed` to a request whose `Host` header does not name this
    server, before any route, bearer or body is looked at (DNS rebinding)."""

    def __init__(self, app: ASGIApp, rule: HostRule) -> None:
        self.app = app
        self.rule = rule

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            hosts = [value for key, value in scope["headers"] if key == b"host"]
            header = hosts[0].decode("latin-1") if len(hosts) == 1 else None
            if not self.rule.admits(header):
                await _failure(host_not_allowed())(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_app(rutter: Rutter, hosts: HostRule) -> Starlette:
    """The application serving `rutter`'s store (closed when the application stops) to the
    requests whose `Host` the rule admits."""
    api = Api(rutter)
    document = openapi_document()

    async def openapi(_request: Request) -> Response:
        return JSONResponse(document)

    routes = [StarletteRoute(f"{PREFIX}/openapi.json", openapi, methods=["GET"])]
    by_path: dict[str, dict[str, Endpoint]] = {}
    for route in ROUTES:
        by_path.setdefault(route.path, {})[route.method] = api.endpoint(route)
    for path, endpoints in by_path.items():
        routes.append(
            StarletteRoute(f"{PREFIX}{path}", _by_method(endpoints), methods=list(endpoints))
        )

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            rutter.store.close()

    return Starlette(
        routes=routes,
        middleware=[Middleware(HostCheck, rule=hosts)],
        exception_handlers={HTTPException: _http_exception, 404: _not_found},
        lifespan=lifespan,
    )


def _by_method(endpoints: dict[str, Endpoint]) -> Endpoint:
    async def dispatch(request: Request) -> Response:
        return await endpoints["GET" if request.method == "HEAD" else request.method](request)

    return dispatch
