"""`rutter http --workers N`: N server processes on one store, behind one listening socket.

The parent binds the socket and opens the store once (so a store that cannot be used, or a
schema that must be migrated, is dealt with before anything listens), closes it, and hands the
socket to N worker processes (uvicorn's supervisor: each worker is a fresh interpreter that
opens the store with its own bounded pool and accepts connections from the shared socket; the
kernel spreads them). The supervisor replaces a worker that dies while serving and stops all of
them on SIGTERM or SIGINT, waiting for each to finish its requests; a worker that cannot start
(its store unusable) stops the whole service with exit status 1.

What one process guarantees holds across them: every write takes the store's write lock, so a
version has exactly one winner whichever worker serves the request.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from typing import Any

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from rutter_core.kernel.errors import RutterError
from rutter_http.hosts import HostRule


@dataclass(frozen=True, slots=True)
class WorkerPlan:
    """What each worker needs to serve: the store (its URL as the parent resolved it, so every
    worker opens the same database) and the Host rule."""

    database_url: str
    hosts: HostRule


class WorkerConfig(uvicorn.Config):
    """uvicorn's settings plus the plan; sent to each worker, which builds the application
    (and opens the store) itself: an open store cannot cross a process boundary."""

    def __init__(self, plan: WorkerPlan, **settings: Any) -> None:
        super().__init__(app="rutter_http.app:build_app", **settings)
        self.plan = plan

    def load_app(self) -> Any:
        from rutter_core.app.facade import open_rutter
        from rutter_http.app import build_app

        try:
            # The parent's environment (inherited), so a worker is the same machine as the
            # parent (`RUTTER_MACHINE_ID`) and finds the same registrations.
            rutter = open_rutter(self.plan.database_url, os.environ, pool="service")
        except RutterError as error:
            # The parent opened this store a moment ago: said once, typed, then the service
            # stops (a worker that cannot start would fail the same way on every restart).
            sys.stderr.write(f"rutter http: a worker cannot open the store: {error.code}\n")
            sys.stderr.flush()
            sys.exit(STARTUP_FAILURE)
        return build_app(rutter, self.plan.hosts)


def run_workers(
    plan: WorkerPlan, sock: socket.socket, *, workers: int, settings: dict[str, Any]
) -> int:
    """Serve with `workers` processes on `sock` until SIGTERM or SIGINT; the exit code (1 when
    a worker could not start). Returns once every worker has exited."""
    config = WorkerConfig(plan, workers=workers, **settings)
    supervisor = Multiprocess(config, sockets=[sock])
    supervisor.run()
    failed = any(each.exitcode == STARTUP_FAILURE for each in supervisor.processes)
    return 1 if failed else 0
