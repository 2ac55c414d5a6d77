"""`rutter http --bind HOST:PORT`: where the server may listen, and running it (uvicorn).

Loopback by default. A bind to any other address is refused unless the server gets TLS
settings (a certificate and its key, so bearers never cross a network in clear) or the
operator says explicitly that plain HTTP off loopback is wanted (`--allow-non-loopback`, for a
TLS-terminating proxy in front); the error says why and what to pass.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from rutter_core.kernel.errors import Hint, RejectedError, RutterError, UsageError
from rutter_http.hosts import HostRule

DEFAULT_BIND: Final = "127.0.0.1:8787"

MAX_WORKERS: Final = 64
"""The most server processes `--workers` may ask for (each holds its own store connections)."""


@dataclass(frozen=True, slots=True)
class Bind:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_bind(text: str) -> Bind:
    """`HOST:PORT` (`[::1]:PORT` for IPv6); port 0 picks a free one."""
    host, sep, port_text = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise UsageError(
            "invalid_bind", "the bind address is HOST:PORT, e.g. 127.0.0.1:8787",
            hint=Hint("give_bind"),
        )  # fmt: skip
    return Bind(host, int(port_text))


def check_bind(
    bind: Bind, *, tls_cert: str | None, tls_key: str | None, allow_non_loopback: bool
) -> None:
    """Refuse what would expose bearers in clear off this machine."""
    if (tls_cert is None) != (tls_key is None):
        raise UsageError(
            "tls_incomplete", "TLS needs both a certificate and its private key",
            hint=Hint("give_tls_pair"),
        )  # fmt: skip
    for each in (tls_cert, tls_key):
        if each is not None and not Path(each).is_file():
            raise RejectedError(
                "tls_file_missing", "a TLS certificate or key file does not exist",
                hint=Hint("give_tls_pair"),
            )  # fmt: skip
    if bind.loopback or tls_cert is not None or allow_non_loopback:
        return
    raise RejectedError(
        "non_loopback_bind",
        "refusing to listen off loopback without TLS: bearer tokens and memory would cross "
        "the network in clear",
        details={"host": bind.host},
        hint=Hint("bind_loopback_or_tls"),
    )


def serve(
    bind_text: str,
    *,
    database_url: str | None,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    allow_non_loopback: bool = False,
    allow_hosts: Sequence[str] = (),
    workers: int = 1,
) -> int:
    """Serve until interrupted; the exit code. The store is opened (and migrated) first, so
    a store that cannot be used fails here, typed, before anything listens. `allow_hosts`:
    the names a `Host` header may carry besides the bound address (`hosts`). `workers`: how
    many server processes share the socket and the store (`rutter_http.workers`)."""
    bind = parse_bind(bind_text)
    check_bind(bind, tls_cert=tls_cert, tls_key=tls_key, allow_non_loopback=allow_non_loopback)
    check_workers(workers)
    hosts = HostRule.of(bind.host, allow_hosts)

    import uvicorn

    from rutter_core.app.facade import open_rutter
    from rutter_http.app import build_app

    rutter = open_rutter(database_url, os.environ, pool="service")
    try:
        if workers > 1 and not rutter.store.shared:
            raise RejectedError(
                "store_not_shareable",
                "several workers need a store every process reaches; this one lives in one "
                "process's memory",
                hint=Hint("choose_store"),
            )
        sock = listen(bind)
    except RutterError:
        rutter.store.close()
        raise
    settings: dict[str, Any] = {
        "ssl_certfile": tls_cert,
        "ssl_keyfile": tls_key,
        "log_level": "warning",
        "access_log": False,
        "server_header": False,
        "proxy_headers": False,
        "lifespan": "on",
        "timeout_graceful_shutdown": 5,
    }
    scheme = "https" if tls_cert is not None else "http"
    host = f"[{bind.host}]" if ":" in bind.host else bind.host
    port = sock.getsockname()[1]
    processes = "" if workers == 1 else f" with {workers} workers"
    if workers > 1:
        from rutter_http.workers import WorkerPlan, run_workers

        url = rutter.store.engine.url.render_as_string(hide_password=False)
        rutter.store.close()  # each worker opens its own; the parent holds no connection
        sys.stderr.write(f"rutter http: serving {scheme}://{host}:{port}/api/v1{processes}\n")
        sys.stderr.flush()
        with sock:
            return run_workers(WorkerPlan(url, hosts), sock, workers=workers, settings=settings)
    server = uvicorn.Server(uvicorn.Config(build_app(rutter, hosts), **settings))
    sys.stderr.write(f"rutter http: serving {scheme}://{host}:{port}/api/v1\n")
    sys.stderr.flush()
    with sock:
        server.run(sockets=[sock])
    return 0


def check_workers(workers: int) -> None:
    """Refuse a number of server processes that is not between 1 and `MAX_WORKERS`."""
    if 1 <= workers <= MAX_WORKERS:
        return
    raise UsageError(
        "invalid_workers",
        f"--workers is a number of server processes from 1 to {MAX_WORKERS}",
        details={"max": MAX_WORKERS},
        hint=Hint("give_workers"),
    )


def listen(bind: Bind) -> socket.socket:
    """The bound socket (port 0: a free one), or a typed error saying it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            bind.host, bind.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as error:
        raise _cannot_listen(error) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)  # connections wait in the backlog until the server accepts them
    except OSError as error:
        sock.close()
        raise _cannot_listen(error) from None
    return sock


def _cannot_listen(error: OSError) -> RejectedError:
    reason = errno.errorcode.get(error.errno or 0, "unknown") if error.errno else "unresolved"
    return RejectedError(
        "bind_failed",
        "cannot listen on that address: it is in use, or not an address of this machine",
        details={"reason": reason},
        hint=Hint("choose_free_port"),
    )
