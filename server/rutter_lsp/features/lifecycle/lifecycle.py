"""initialize / initialized / shutdown: the settings and the store, then every feature's hook in
the order of the feature list (the folders are served, then their files watched), then the
session's store watch, which the folders, runs, sessions and pins features subscribe to."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from rutter_lsp.features.lifecycle import config
from rutter_lsp.settings import parse_settings

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")


def register(server: RutterServer) -> None:
    session = server.session

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        # Runs before the capabilities are computed; nothing here touches the disk.
        if server.log_handler is not None:
            server.log_handler.bind(asyncio.get_running_loop())
        session.init_settings = parse_settings(params.initialization_options)
        session.settings = session.init_settings
        config.apply_log_level(session.settings)
        for feature in server.features:
            feature.initialize(params)
        logger.info(
            "initialize: %d workspace folder(s), position encoding %s, %s diagnostics",
            len(session.initial_folders),
            server.position_encoding,
            "pull" if server.pull_diagnostics else "push",
        )

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        try:
            await config.load(server, initial=True)
            for feature in server.features:
                await feature.initialized()
            await config.register_change_notifications(server)
        finally:
            session.ready.set()
        session.settle_heap()
        server.refresher.request(index=True, all_diagnostics=True)
        session.store_watch.start()  # runs, sessions and pin proposals follow it

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        logger.info("shutdown")
        server.refresher.close()
        session.store_watch.close()
        for feature in server.features:
            feature.shutdown()
        session.worker.shutdown()
        if session.store is not None:
            session.store.close()
            session.store = None
        session.shutdown_requested = True
