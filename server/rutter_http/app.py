"""The FastAPI application: one path operation per entry of `routes.ROUTES`, its answer the
app's result model (`response_model`), its failures the error document, its OpenAPI FastAPI's
(`openapi`). Each operation runs its dependencies in order:

1. the bearer (`Api.reader` / `Api.controller`, through FastAPI's `HTTPBearer`): 401 none or
   unknown or revoked, 403 a read bearer on a mutation; it gives the facade acting for the
   bearer's person (`Rutter.acting_as`: on PostgreSQL every transaction of the request takes
   that person's role, so row-level security holds the request to that person's rows);
2. the request's values (`Api.values`): the path parameters, then the JSON body (413 over
   1 MiB, counted before it is all read; 415 not JSON; 400 not strict JSON) or the query
   string (400 a parameter given twice), then the fields (422 unknown or mistyped, from the
   derived wire model);

then the app call, on that facade, in a worker thread. FastAPI's own body and query parsing is
not used: it reads the body before any dependency runs (so before the bearer) and its
validation errors repeat the input. Every failure is a `RutterError`, mapped once
(`errors.status_of`) by the exception handlers below; nothing a client sent is echoed (`sent`
holds its strings). Before any of it, on every path, unknown ones included, the `Host` header
must name this server (`HostCheck`, a middleware: 400). A client that goes away before its body
is complete is one line in the log.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, Final

import anyio
from fastapi import Depends, FastAPI, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import Match

from rutter_core.app.facade import Rutter
from rutter_core.app.models import invalid_params
from rutter_core.app.tokens import Bearer
from rutter_core.kernel.echo import sent_texts, without_echo
from rutter_core.kernel.errors import RutterError, UsageError
from rutter_http.errors import (
    HttpError,
    forbidden,
    host_not_allowed,
    status_of,
    unauthorized,
)
from rutter_http.hosts import HostRule
from rutter_http.openapi import BEARER, openapi_document, route_options
from rutter_http.routes import PREFIX, ROUTES, Route
from rutter_http.strict import check_length, parse_object, read_body, well_formed_text
from rutter_http.wire import query_values

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

WORKERS: Final = 8
"""Operations running at once (each in a thread: the store and discovery block)."""

Credentials = Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)]


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


class ClientGone(Exception):
    """The client disconnected before its body was complete (logged; nobody to answer)."""


class Api:
    """The dependencies and endpoints over one facade (the store stays open while the server
    runs)."""

    def __init__(self, rutter: Rutter) -> None:
        self.rutter = rutter
        self.limiter = anyio.CapacityLimiter(WORKERS)

    async def run(self, call: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(call, limiter=self.limiter)

    async def _bearer(self, credentials: HTTPAuthorizationCredentials | None) -> Bearer:
        secret = None if credentials is None else credentials.credentials
        bearer: Bearer | None = None if secret is None else await self.run(
            lambda: self.rutter.tokens.authenticate(secret)
        )  # fmt: skip
        if bearer is None:
            raise unauthorized()
        return bearer

    def _acting(self, bearer: Bearer) -> Rutter:
        # The request acts for the bearer's person: on PostgreSQL each of its transactions
        # takes that person's role, so row-level security holds it to that person's rows.
        return self.rutter.acting_as(bearer.owner)

    async def reader(self, credentials: Credentials) -> Rutter:
        """A read or a control bearer (401 otherwise): the facade acting for its person."""
        return self._acting(await self._bearer(credentials))

    async def controller(self, credentials: Credentials) -> Rutter:
        """A control bearer (401 none, 403 a read one): the facade acting for its person."""
        bearer = await self._bearer(credentials)
        if bearer.scope != "control":
            raise forbidden()
        return self._acting(bearer)

    def values(self, route: Route) -> Callable[[Request], Awaitable[dict[str, Any]]]:
        """The dependency giving `route`'s params values, read and validated strictly."""
        wire = route.wire()
        known = frozenset(wire.model_fields)

        async def values(request: Request) -> dict[str, Any]:
            sent: set[str] = set()
            request.state.sent = sent  # what no error may repeat, as it is read
            path = dict(request.path_params)
            if not all(well_formed_text(value) for value in path.values()):
                raise HttpError("invalid_path", "a path parameter is not well-formed text")
            sent |= sent_texts(path)
            raw = await (_body(route, request) if route.has_body else _query(wire, request))
            sent |= sent_texts(raw)
            try:
                return route.values(path, wire.model_validate(raw))
            except ValidationError as error:
                raise invalid_params(error, known) from None

        return values

    def endpoint(self, route: Route) -> Callable[..., Awaitable[BaseModel]]:
        known = frozenset(route.wire().model_fields)
        bearer = self.reader if route.scope == "read" else self.controller
        read = self.values(route)

        # Defaults, not `Annotated`: `bearer` and `read` are local, and annotations are strings
        # here. The bearer is resolved first (the parameters' order), so nothing of the request
        # is read for a client without one; the operation runs acting for its person.
        async def endpoint(
            rutter: Rutter = Depends(bearer),  # noqa: B008
            values: dict[str, Any] = Depends(read),  # noqa: B008
        ) -> BaseModel:
            try:
                result: BaseModel = await self.run(lambda: route.call(rutter, values))
            except ValidationError as error:  # the params model's own checks (one of two)
                raise invalid_params(error, known) from None
            except RutterError:
                raise
            except Exception:  # a bug: typed for the client, the trace in the log only
                traceback.print_exc(file=sys.stderr)
                raise RutterError("internal", "unexpected failure") from None
            return result

        return endpoint

    def route(self, route: Route) -> APIRoute:
        options = route_options(route)
        if route.method == "GET":  # HEAD is answered as GET (without the body)
            options["methods"] = ["GET", "HEAD"]
        return APIRoute(
            f"{PREFIX}{route.path}",
            self.endpoint(route),
            include_in_schema=False,  # the document is `openapi.openapi_document`
            **options,
        )


async def _body(route: Route, request: Request) -> dict[str, Any]:
    check_length(request.headers.get("content-length"))
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise HttpError("unsupported_media_type", "the request body must be application/json")
    try:
        return parse_object(await read_body(request.stream()))
    except ClientDisconnect:  # nobody to answer: the log says so, once
        sys.stderr.write(
            f"rutter http: {route.method} {PREFIX}{route.path}: the client disconnected "
            "before its request body was complete\n"
        )
        sys.stderr.flush()
        raise ClientGone from None


async def _query(wire: type[BaseModel], request: Request) -> dict[str, Any]:
    pairs = request.query_params.multi_items()
    if not all(well_formed_text(k) and well_formed_text(v) for k, v in pairs):
        raise HttpError("invalid_query", "the query string is not well-formed text")
    request.state.sent |= sent_texts(pairs)
    return query_values(wire, pairs)


# -- exception handlers: every failure is the error document -----------------------------------


async def _rutter_error(request: Request, exc: Exception) -> Response:
    error = exc if isinstance(exc, RutterError) else RutterError("internal", "unexpected failure")
    return _failure(error, sent=getattr(request.state, "sent", None))


async def _client_gone(_request: Request, _exc: Exception) -> Response:
    return Response(status_code=400)


async def _not_validated(request: Request, _exc: Exception) -> Response:
    """FastAPI's own validation (no operation declares a parameter it would parse): its
    errors hold the input, so only the code is said."""
    return _failure(
        UsageError("invalid_params", "the request's fields do not match the operation's schema")
    )


async def _unexpected(_request: Request, _exc: Exception) -> Response:
    return _failure(RutterError("internal", "unexpected failure"))


async def _http_exception(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 405:
        return _failure(
            HttpError("method_not_allowed", "this route does not take that method"),
            {"Allow": _allowed(request)},
        )
    if status == 404:
        return _failure(HttpError("route_not_found", "no such route under /api/v1"))
    return _failure(HttpError("bad_request", "the request cannot be served"))


def _allowed(request: Request) -> str:
    """The methods of the path the request names: the first route whose path matches (as the
    router tries them) and the others of that path (one route per method)."""
    routes = [each for each in request.app.router.routes if isinstance(each, APIRoute)]
    probe = {**request.scope, "method": "GET"}
    first = next((each for each in routes if each.matches(probe)[0] is not Match.NONE), None)
    if first is None:
        return ""
    methods = {m for each in routes if each.path == first.path for m in each.methods or ()}
    return ", ".join(sorted(methods))


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


def build_app(rutter: Rutter, hosts: HostRule) -> FastAPI:
    """The application serving `rutter`'s store (closed when the application stops) to the
    requests whose `Host` the rule admits."""
    api = Api(rutter)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            rutter.store.close()

    app = FastAPI(
        routes=[api.route(route) for route in ROUTES],
        openapi_url=f"{PREFIX}/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        exception_handlers={
            RutterError: _rutter_error,
            ClientGone: _client_gone,
            RequestValidationError: _not_validated,
            HTTPException: _http_exception,
            Exception: _unexpected,
        },
    )
    # Generated on the first request for it (cached): it takes FastAPI a few tenths of a second.
    app.openapi = openapi_document  # type: ignore[method-assign]
    app.add_middleware(HostCheck, rule=hosts)
    return app
