"""Settings: `initializationOptions`, then `workspace/configuration` (section "rutter"),
re-read on `workspace/didChangeConfiguration`; the store follows `databaseUrl`."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from rutter_core.kernel.errors import RutterError
from rutter_core.store import Store, open_store, resolve_database_url
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
    base = server.init_settings
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
            return server.settings
        return parse_settings(answer[0] if answer else None, base=base)
    data = plain(pushed)
    if isinstance(data, dict) and SECTION in data:
        return parse_settings(data[SECTION], base=base)
    return parse_settings(data, base=base) if isinstance(data, dict) else server.settings


def _open(url: str) -> Store:
    return open_store(url)


async def load(server: RutterServer, *, initial: bool = False, pushed: Any = None) -> bool:
    """Fetch and apply the settings; True when the store changed (folders need re-registering)."""
    settings = await fetch(server, pushed)
    for problem in settings.problems:
        server.notify_user(f"ignoring a setting: {problem}")
    server.settings = settings
    apply_log_level(settings)
    url = resolve_database_url(
        database_url=settings.database_url or server.cli_database_url, env=os.environ
    )
    if url == server.store_url and server.store is not None:
        return False
    try:
        store = await server.worker.run(_open, url)
    except RutterError as error:
        server.notify_user(f"cannot open the store: {error.message}", types.MessageType.Error)
        logger.error("cannot open the store: %s", error.message)
        if initial:
            server.store, server.store_url = None, None
        return False
    old = server.store
    server.store, server.store_url = store, url
    if old is not None:
        await server.worker.run(old.close)
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
    from rutter_lsp.features.folders import folders

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        await server.ready.wait()
        store_changed = await load(server, pushed=params.settings)
        if store_changed:
            await folders.reregister(server)
        logger.info(
            "settings applied: logLevel=%s, store=%s",
            server.settings.log_level,
            server.store.display_url if server.store else None,
        )
        server.refresher.request(index=True, all_diagnostics=True)
