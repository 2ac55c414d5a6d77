"""Settings: `initializationOptions`, then `workspace/configuration` (section "rutter"),
re-read on `workspace/didChangeConfiguration`; the store follows `databaseUrl`."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from rutter_core.kernel.errors import RutterError
from rutter_core.store import Store, resolve_database_url
from rutter_lsp.settings import SECTION, Settings, parse_settings, plain

if TYPE_CHECKING:
    from rutter_lsp.server import RutterServer

logger = logging.getLogger("rutter_lsp")

CONFIGURATION_TIMEOUT_SECONDS = 5.0


def apply_log_level(settings: Settings) -> None:
    logging.getLogger("rutter_lsp").setLevel(settings.logging_level)


async def fetch(server: RutterServer, pushed: Any = None) -> Settings:
    """The client's current settings on top of `initializationOptions`.

    Asks with `workspace/configuration` where the client supports it; otherwise uses what a
    `didChangeConfiguration` pushed (`pushed`), if anything.
    """
    base = server.session.init_settings
    if server.supports("workspace.configuration"):
        try:
            answer = await asyncio.wait_for(
                server.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                ),
                CONFIGURATION_TIMEOUT_SECONDS,
            )
        except Exception as exc:  # a client that fails the request keeps the old settings
            logger.warning("workspace/configuration failed: %s", exc)
            return server.session.settings
        return parse_settings(answer[0] if answer else None, base=base)
    data = plain(pushed)
    if isinstance(data, dict) and SECTION in data:
        return parse_settings(data[SECTION], base=base)
    return parse_settings(data, base=base) if isinstance(data, dict) else server.session.settings


def _open(url: str) -> Store:
    """The store `url` names, opened as every surface opens it (`open_rutter`), with a
    long-lived server's pool (bounded, connections checked before use); the session builds its
    facade over it with its own file reader."""
    from rutter_core.app.facade import open_rutter

    return open_rutter(url, os.environ, pool="service").store


async def load(server: RutterServer, *, initial: bool = False, pushed: Any = None) -> bool:
    """Fetch and apply the settings; True when the store changed (folders need re-registering)."""
    session = server.session
    settings = await fetch(server, pushed)
    for problem in settings.problems:
        server.notify_user(f"ignoring a setting: {problem}")
    session.settings = settings
    apply_log_level(settings)
    url = resolve_database_url(
        database_url=settings.database_url or session.cli_database_url, env=os.environ
    )
    if url == session.store_url and session.store is not None:
        return False
    try:
        store = await session.worker.run(_open, url)
    except RutterError as error:
        server.notify_user(f"cannot open the store: {error.message}", types.MessageType.Error)
        logger.error("cannot open the store: %s", error.message)
        if initial:
            session.store, session.store_url = None, None
        return False
    old = session.store
    session.store, session.store_url = store, url
    if old is not None:
        await session.worker.run(old.close)
    logger.info("store: %s", store.display_url)
    return True


async def register_change_notifications(server: RutterServer) -> None:
    """Ask dynamic-registration clients to send `didChangeConfiguration` for our section."""
    if not server.supports("workspace.did_change_configuration.dynamic_registration"):
        return
    registration = types.Registration(
        id="rutter-configuration",
        method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
        register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION),
    )
    try:
        await server.client_register_capability_async(
            types.RegistrationParams(registrations=[registration])
        )
    except Exception as exc:
        logger.info("client did not accept the configuration registration: %s", exc)


def register(server: RutterServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        session = server.session
        await session.ready.wait()
        store_changed = await load(server, pushed=params.settings)
        if store_changed:  # the folders feature registers the served folders in it
            for feature in server.features:
                await feature.store_replaced()
        logger.info(
            "settings applied: logLevel=%s, store=%s",
            session.settings.log_level,
            session.store.display_url if session.store else None,
        )
        server.refresher.request(index=True, all_diagnostics=True)
