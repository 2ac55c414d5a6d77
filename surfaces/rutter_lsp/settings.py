"""The server's typed settings: `initializationOptions` and `workspace/configuration` ("rutter").

Both carry the same object, e.g. `{"databaseUrl": "sqlite:////path/rutter.db",
"logLevel": "debug"}`; `initializationOptions` may also nest it under `"rutter"`. Unknown keys
are ignored (clients send their whole settings tree); a value of the wrong type is reported and
the default kept, so a typo in an editor config never stops the server.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

SECTION: Final = "rutter"
LogLevel = Literal["error", "warning", "info", "debug"]
LOG_LEVELS: Final[dict[str, int]] = {
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str | None = None
    """SQLAlchemy URL of the store; None: `RUTTER_DATABASE_URL`, else `$RUTTER_HOME/rutter.db`."""
    log_level: LogLevel = "info"
    """What reaches stderr and `window/logMessage`."""
    problems: tuple[str, ...] = field(default=(), compare=False)
    """What was wrong with the given object (reported to the user, never fatal)."""

    @property
    def logging_level(self) -> int:
        return LOG_LEVELS[self.log_level]


def plain(value: Any) -> Any:
    """JSON-like data from what pygls hands over: untyped params arrive as namedtuples."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def parse_settings(value: Any, *, base: Settings | None = None) -> Settings:
    """Settings from a client's object, on top of `base` (defaults when None).

    Keys that are absent keep `base`'s value; `null` resets to the default.
    """
    base = base or Settings()
    data = plain(value)
    if data is None:
        return base
    if not isinstance(data, dict):
        return Settings(
            base.database_url,
            base.log_level,
            (f"settings must be an object, got {type(data).__name__}",),
        )
    if isinstance(data.get(SECTION), dict):
        data = data[SECTION]
    problems: list[str] = []
    database_url = base.database_url
    if "databaseUrl" in data:
        raw = data["databaseUrl"]
        if raw is None or raw == "":
            database_url = None
        elif isinstance(raw, str):
            database_url = raw
        else:
            problems.append(f"rutter.databaseUrl must be a string, got {type(raw).__name__}")
    log_level: LogLevel = base.log_level
    if "logLevel" in data:
        raw = data["logLevel"]
        if raw is None:
            log_level = "info"
        elif isinstance(raw, str) and raw.lower() in LOG_LEVELS:
            log_level = cast(LogLevel, raw.lower())
        else:
            problems.append(f"rutter.logLevel must be one of {', '.join(LOG_LEVELS)}, got {raw!r}")
    return Settings(database_url, log_level, tuple(problems))
