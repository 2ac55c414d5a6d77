"""The server's typed settings: `initializationOptions` and `workspace/configuration` ("rutter").

Both carry the same object, e.g. `{"databaseUrl": "sqlite:////path/rutter.db",
"logLevel": "debug", "agentDiagnostics": ["codex", "claude"]}`; `initializationOptions` may also
nest it under `"rutter"`. Its shape is `ClientSettings` (pydantic). Unlike request params,
unknown keys are ignored: clients send their whole settings tree. A value of the wrong type is
reported and that one key ignored, so a typo in an editor config never stops the server.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from rutter_core.app.profiles import AgentName

SECTION: Final = "rutter"
ALL_AGENTS: Final[tuple[AgentName, ...]] = get_args(AgentName)
LogLevel = Literal["error", "warning", "info", "debug"]
LOG_LEVELS: Final[dict[str, int]] = {
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}


@dataclass(frozen=True, slots=True)
class Settings:
    """The settings in force: the fields of `ClientSettings`, and what was wrong with them."""

    database_url: str | None = None
    """SQLAlchemy URL of the store; None: `RUTTER_DATABASE_URL`, else `$RUTTER_HOME/rutter.db`."""
    log_level: LogLevel = "info"
    """What reaches stderr and `window/logMessage`."""
    agent_diagnostics: tuple[AgentName, ...] = ALL_AGENTS
    """The agents whose profiles diagnose instruction files (cuts, files never read, imports,
    globs matching nothing); `false` (or `[]`) turns them off, `true` is every agent."""
    problems: tuple[str, ...] = field(default=(), compare=False)
    """What was wrong with the given object (reported to the user, never fatal)."""

    @property
    def logging_level(self) -> int:
        return LOG_LEVELS[self.log_level]


def _empty_is_unset(value: Any) -> Any:
    return None if value == "" else value


def _agents(value: Any) -> Any:
    if value is None or value is True:
        return ALL_AGENTS
    if value is False:
        return ()
    if isinstance(value, list):
        return tuple(dict.fromkeys(value))
    return value


def _level(value: Any) -> Any:
    if value is None:
        return "info"
    return value.lower() if isinstance(value, str) else value


class ClientSettings(BaseModel):
    """The "rutter" settings object as a client sends it. A key that is absent keeps the value
    in force; `null` (and an empty `databaseUrl`) resets it to the default."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    database_url: Annotated[str | None, BeforeValidator(_empty_is_unset)] = Field(
        default=None, validation_alias="databaseUrl", strict=True
    )
    log_level: Annotated[LogLevel, BeforeValidator(_level)] = Field(
        default="info", validation_alias="logLevel"
    )
    agent_diagnostics: Annotated[tuple[AgentName, ...], BeforeValidator(_agents)] = Field(
        default=ALL_AGENTS, validation_alias="agentDiagnostics"
    )


_EXPECTED: Final = {
    "databaseUrl": "a string",
    "logLevel": f"one of {', '.join(LOG_LEVELS)}",
    "agentDiagnostics": f"true, false or a list of {', '.join(ALL_AGENTS)}",
}


def _problem(key: str, value: Any) -> str:
    # The value's type, never the value: a database URL may hold a password.
    shown = _JSON_TYPES.get(type(value), "another value")
    return f"{SECTION}.{key} must be {_EXPECTED.get(key, 'valid')}, got {shown}"


_JSON_TYPES: Final = {
    str: "another string", bool: "a boolean", int: "a number", float: "a number",
    list: "a list", dict: "an object", type(None): "null",
}  # fmt: skip


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
    """Settings from a client's object, on top of `base` (defaults when None)."""
    base = base or Settings()
    data = plain(value)
    if data is None:
        return base
    if not isinstance(data, dict):
        return replace(base, problems=(f"settings must be an object, got {type(data).__name__}",))
    if isinstance(data.get(SECTION), dict):
        data = data[SECTION]
    try:
        given = ClientSettings.model_validate(data)
        problems: tuple[str, ...] = ()
    except ValidationError as error:
        wrong = list(dict.fromkeys(str(item["loc"][0]) for item in error.errors()))
        problems = tuple(_problem(key, data[key]) for key in wrong)
        given = ClientSettings.model_validate({k: v for k, v in data.items() if k not in wrong})
    present = {name: getattr(given, name) for name in given.model_fields_set}
    return replace(base, **present, problems=problems)
