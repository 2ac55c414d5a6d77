"""Base classes of the operation models: the single source of every JSON shape.

Each operation of the facade takes one `Params` model and returns one `Result` model. The CLI's
`--json`, the language server's custom requests, and later the HTTP API's OpenAPI document and
the MCP tools' schemas are all these models, so a field cannot mean one thing on one surface and
another elsewhere. Unknown fields are refused: a misspelt `retention` must not silently keep a
memory forever.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Params(BaseModel):
    """An operation's input. Strict about unknown fields; frozen once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Result(BaseModel):
    """An operation's answer. `to_json` is the document every surface prints or returns."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
