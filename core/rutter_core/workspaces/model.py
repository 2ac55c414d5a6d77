"""What a workspace registration is (docs/reference/workspaces.md), and the rules its ID follows."""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from rutter_core.kernel.errors import RejectedError
from rutter_core.kernel.ids import is_valid_workspace_id
from rutter_core.workspaces.project import ProjectSource

MAX_ID_LENGTH = 64
_INVALID_ID_RUN = re.compile(r"[^a-z0-9._-]+")
_FALLBACK_ID = "workspace"


MachineMark = Literal["this_machine", "other_machine", "unclaimed"]
"""Whose location a registration is, seen from the machine asking (docs/team.md#machines)."""


def machine_mark(machine_id: str | None, machine: str) -> MachineMark:
    """The mark of a registration of `machine_id` seen from `machine`."""
    if machine_id is None:
        return "unclaimed"
    return "this_machine" if machine_id == machine else "other_machine"


class Workspace(BaseModel):
    """An operator-chosen ID bound to one resolved directory: one location of a project. Its
    dump is the JSON of `rutter workspace show --json`: `{workspace_id, root, created_at,
    project_id, project_source, machine_id}`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workspace_id: str
    root: str
    """The realpath of the directory: every discovery is confined to it."""
    created_at: str
    project_id: str
    """The project this registration is a location of: the normalised `origin` remote
    (`github.com/acme/widget`), a name given with `--project`, or `local:<workspace ID>`.
    Registrations naming one project share its runs, sessions, pins, checkpoints, candidates
    and project memories."""
    project_source: ProjectSource
    """Where the project identity came from: `remote`, `named` or `local`."""
    machine_id: str | None = None
    """The machine whose location this is (32 hex characters, a keyed hash: docs/team.md,
    machines); null for a registration made before machines were known and not yet taken by
    the first machine that looks its root up."""

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def validate_workspace_id(workspace_id: str) -> None:
    if not is_valid_workspace_id(workspace_id):
        raise RejectedError(
            "invalid_workspace_id",
            f"invalid workspace ID {workspace_id!r}: use 1-64 characters of a-z, 0-9, '.', "
            "'_' and '-', starting with a letter or digit",
            details={"workspace_id": workspace_id},
        )


def workspace_id_from_name(name: str) -> str:
    """A valid workspace ID derived from a folder name: `My Project` → `my-project`.

    Accents are folded to ASCII, everything is lowercased, each run of other characters
    becomes one `-`, leading characters that cannot start an ID are dropped and the result
    is trimmed to 64 characters; a name with nothing usable gives `workspace`.
    """
    folded = unicodedata.normalize("NFKD", name)
    ascii_name = "".join(c for c in folded if not unicodedata.combining(c)).lower()
    candidate = _INVALID_ID_RUN.sub("-", ascii_name)
    candidate = candidate.lstrip("._-")[:MAX_ID_LENGTH].rstrip("-")
    return candidate if is_valid_workspace_id(candidate) else _FALLBACK_ID


def numbered_id(base: str, number: int) -> str:
    """`base` for the first, then `base-2`, `base-3`, ..., trimmed to stay a valid ID."""
    if number == 1:
        return base
    suffix = f"-{number}"
    return base[: MAX_ID_LENGTH - len(suffix)] + suffix
