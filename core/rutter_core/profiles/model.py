"""What an agent profile says, as data (`data/<agent>.toml`), and its loading.

A profile describes how one coding agent picks the instruction files it reads for a file it
works on: the project root it starts from (`stop_markers`), the files it looks for at each
directory from that root down to the file's directory (`files`), rule directories whose
files carry glob front matter (`rules`), `@path` imports (`imports`), and the size limits with
how they cut (`limits`). Every rule names its `source` (a public URL or a repository path) and
the profile the date it was read (`read_on`). Profiles are views over the tree: they never
change discovery, its fingerprints or a run.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Annotated, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

AgentName = Literal["codex", "claude", "gemini", "copilot", "cursor"]
AGENTS: Final[tuple[AgentName, ...]] = get_args(AgentName)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FileRule(_Strict):
    """Instruction files looked for by name."""

    type: Literal["files"]
    names: tuple[str, ...] = Field(min_length=1)
    """Paths relative to the directory looked in (`.claude/CLAUDE.md` is a path)."""
    pick: Literal["first", "each"] = "each"
    """`first`: the first of `names` that exists and is not blank; `each`: every one."""
    where: Literal["each_level", "project_root", "nearest"] = "each_level"
    """`each_level`: every directory from the project root to the target's; `project_root`:
    only there; `nearest`: the deepest directory on that path holding one."""
    unless_loaded: tuple[str, ...] = ()
    """A fallback: looked for only when none of the files of these rules' names was loaded."""
    skip_blank: bool = True
    """A blank (whitespace only) file is passed over, as if absent."""
    why: str
    source: str


class RulesDir(_Strict):
    """A directory of rule files whose front matter says when each applies."""

    type: Literal["rules"]
    dir: str
    """Relative to each level directory (`.claude/rules`)."""
    suffixes: tuple[str, ...] = Field(min_length=1)
    recursive: bool = True
    where: Literal["each_level", "project_root"] = "each_level"
    globs_key: str | None = None
    """The front matter key holding the globs (`paths`, `applyTo`, `globs`)."""
    globs_relative_to: Literal["project_root", "level"] = "project_root"
    always_key: str | None = None
    """A boolean front matter key that loads the rule for every file (`alwaysApply`)."""
    without_globs: Literal["always", "never"] = "always"
    """A rule with no globs (and no `always_key` true): loaded always, or never
    automatically (Cursor: the agent decides from its `description`)."""
    exclude_key: str | None = None
    """A front matter key naming agents that must not read the rule (`excludeAgent`)."""
    excluded_values: tuple[str, ...] = ()
    """The values of `exclude_key` that exclude this profile's agent."""
    star_matches_all: bool = False
    """`*` alone (and `**`) match every file (Copilot's `applyTo`)."""
    why: str
    source: str


class Imports(_Strict):
    """`@path` imports inside instruction files."""

    syntax: Literal["at_path"] = "at_path"
    """`@path` after whitespace or at a line's start; relative to the importing file, `~/` and
    absolute paths allowed (outside the workspace: not followed here)."""
    max_hops: int = Field(ge=1, le=32)
    """Imports followed from a loaded file: hop 1 is imported by it, hop `max_hops` the last
    one read."""
    skip_code: bool = True
    """`@path` inside code spans and fenced code blocks is text, not an import."""
    order: Literal["before", "after"]
    """Where an imported file is placed: before or after the file importing it."""
    source: str


class Limits(_Strict):
    """Size limits and how they cut."""

    per_file_bytes: int | None = Field(default=None, ge=1)
    per_file_action: Literal["skip", "cut"] = "skip"
    """Past `per_file_bytes`: the file is not read at all, or cut at that byte."""
    budget_bytes: int | None = Field(default=None, ge=1)
    """One budget shared by the files in load order; the file reaching it is cut there and
    later files are not read."""
    cut_end: Literal["tail"] = "tail"
    """Which end of a cut file is lost (the bytes past the cut)."""
    source: str | None = None

    @model_validator(mode="after")
    def _sourced(self) -> Limits:
        if (self.per_file_bytes or self.budget_bytes) and not self.source:
            raise ValueError("a limit needs its source")
        return self


class Profile(_Strict):
    agent: AgentName
    name: str
    profile_version: int = Field(ge=1)
    read_on: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    """The date the sources below were read."""
    walk: Literal["root_to_target"] = "root_to_target"
    """The order of directories in the load order: from the project root down to the
    target's directory (every agent here concatenates root first, nearest last)."""
    stop_markers: tuple[str, ...] = (".git",)
    """The project root is the nearest directory (target's upward, within the workspace)
    holding one of these; else the workspace root (docs/reference/profiles.md)."""
    stop_source: str
    sources: tuple[Annotated[FileRule | RulesDir, Field(discriminator="type")], ...]
    """What is looked for, in the agent's order at each directory (fallbacks last)."""
    imports: Imports | None = None
    limits: Limits = Limits()
    not_read: tuple[str, ...] = ()
    """File names other agents read that this one never reads by itself (reported on the file
    when one of this agent's own files is in the same directory and does not import it)."""
    not_read_source: str | None = None
    config: tuple[str, ...] = ()
    """The agent's own settings that `profiles.config` applies (files and keys), if any."""
    config_source: str | None = None
    """Where those settings and their precedence are documented (read on `read_on`)."""
    notes: tuple[str, ...] = ()
    """What the profile leaves out on purpose (user-level files, on-demand loading, ...)."""


@cache
def load_profile(agent: AgentName) -> Profile:
    """The packaged profile of `agent` (validated; a broken data file fails loudly)."""
    data = resources.files("rutter_core.profiles").joinpath("data")
    text = data.joinpath(f"{agent}.toml").read_text("utf-8")
    profile = Profile.model_validate(tomllib.loads(text))
    if profile.agent != agent:
        raise ValueError(f"data/{agent}.toml describes {profile.agent}")
    return profile


def all_profiles() -> tuple[Profile, ...]:
    return tuple(load_profile(agent) for agent in AGENTS)
