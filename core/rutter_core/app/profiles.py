"""Agent profiles (docs/reference/profiles.md): the files one coding agent would load for a target,
in its order, each with why and where the agent would cut it (`ProfileParams` → `ProfileView`,
or `ProfileViews` for `all`).

A view reads the tree through discovery's safe readers and writes nothing: the default
discovery's snapshot, its fingerprint and every run are the same with or without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rutter_core.app.instructions import (
    EffectiveInstructionsBatchParams,
    EffectiveInstructionsParams,
    Snapshot,
    naming_workspace,
)
from rutter_core.app.models import Result
from rutter_core.discovery.targets import normalize_target, typed_target
from rutter_core.kernel.errors import RutterError
from rutter_core.profiles.config import (
    CONFIG_FILES,
    AgentHomes,
    configured_names,
    home_config_files,
)
from rutter_core.profiles.diagnose import is_agent_file, notes_for_file
from rutter_core.profiles.engine import Evaluation, Memo, Note, evaluate
from rutter_core.profiles.listing import ProjectFiles
from rutter_core.profiles.model import AGENTS, AgentName, load_profile
from rutter_core.workspaces.service import Workspace, get_files_here, infer_workspace

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter

__all__ = [
    "AGENTS",
    "AgentChoice",
    "AgentHomes",
    "AgentName",
    "Evaluation",
    "MaybeProfileParams",
    "Memo",
    "Note",
    "ProfileBatchParams",
    "ProfileOperations",
    "ProfileParams",
    "ProfileSource",
    "ProfileTruncation",
    "ProfileView",
    "ProfileViews",
    "is_agent_file",
    "is_agent_input",
]

AgentChoice = Literal["codex", "claude", "gemini", "copilot", "cursor", "all"]


class ProfileParams(EffectiveInstructionsParams):
    """`EffectiveInstructionsParams` and the agent whose view is asked for."""

    agent: AgentChoice


class ProfileBatchParams(EffectiveInstructionsBatchParams):
    """`EffectiveInstructionsBatchParams` and the agent whose view is asked for each target."""

    agent: AgentChoice


class MaybeProfileParams(EffectiveInstructionsParams):
    """`EffectiveInstructionsParams` with an optional agent: without one, the default answer
    (the `project_instruction_snapshot.v1` snapshot), unchanged."""

    agent: AgentChoice | None = None


class ProfileTruncation(Result):
    byte: int
    """The agent keeps bytes 0 to `byte` - 1 of the file and loses the rest."""
    line: int
    """The 1-based line holding the first byte lost."""
    lost_bytes: int


class ProfileSource(Result):
    path: str
    """Workspace-relative."""
    why: str
    truncation: ProfileTruncation | None


class ProfileView(Result):
    agent: AgentName
    sources: list[ProfileSource]


class ProfileViews(Result):
    profiles: list[ProfileView]


def is_agent_input(rel: str, names: tuple[str, ...] = ()) -> bool:
    """Whether a change of the file at workspace-relative `rel` can change what some agent
    loads: a file an agent reads by name or rules directory, one of `names` (configured), or
    an agent's project settings file."""
    if is_agent_file(rel):
        return True
    base = rel.rsplit("/", 1)[-1]
    return base in names or any(rel == f or rel.endswith(f"/{f}") for f in CONFIG_FILES)


def view_of(evaluation: Evaluation) -> ProfileView:
    sources = []
    for item in evaluation.loaded:
        cut = item.truncation
        sources.append(
            ProfileSource(
                path=item.file.rel,
                why=item.why,
                truncation=None
                if cut is None
                else ProfileTruncation(byte=cut.byte, line=cut.line, lost_bytes=cut.lost_bytes),
            )
        )
    return ProfileView(agent=evaluation.profile.agent, sources=sources)


def homes_of(environ: Mapping[str, str]) -> AgentHomes:
    """Where the agents' user configuration is, from an environment (`HOME`, `CODEX_HOME`)."""
    return AgentHomes(
        home=environ.get("HOME") or None, codex_home=environ.get("CODEX_HOME") or None
    )


class ProfileOperations:
    def __init__(self, rutter: Rutter, homes: AgentHomes | None = None) -> None:
        self._rutter = rutter
        self._files = ProjectFiles()
        self.homes = homes_of(os.environ) if homes is None else homes
        """The agents' homes, read from this process's environment once (the edge), unless
        given: the views read the agents' user configuration there."""

    def configured_names(self, root: str) -> tuple[str, ...]:
        """The instruction file names the agents' settings add for the workspace at `root`."""
        return configured_names(self.homes, root, self._rutter.reader)

    def home_config_files(self) -> tuple[str, ...]:
        """The agents' user settings files (absolute paths) that the views read."""
        return home_config_files(self.homes)

    def view(self, params: ProfileParams) -> ProfileView | ProfileViews:
        """What `params.agent` would load for `params.target` (each agent's, for `all`).
        Fails closed with discovery's typed errors on a file an agent would read."""
        if params.workspace_id is None:
            assert params.directory is not None  # the model requires one of them
            workspace = infer_workspace(
                self._rutter.store, Path(params.directory), machine=self._rutter.machine_id
            )
        else:
            workspace = get_files_here(
                self._rutter.store, params.workspace_id, self._rutter.machine_id
            )
        target = typed_target(params.target, workspace.root, params.directory)
        return self.view_in(workspace, target, params.agent)

    def view_each(
        self, params: ProfileBatchParams
    ) -> Iterator[tuple[str, ProfileView | ProfileViews | RutterError]]:
        """The view of each target in order, or its typed error (one target failing does not
        stop the others). The workspace is resolved once, before the first answer: when it
        cannot be, that error is raised and nothing is answered."""
        if params.workspace_id is None:
            assert params.directory is not None  # the model requires one of them
            workspace = infer_workspace(
                self._rutter.store, Path(params.directory), machine=self._rutter.machine_id
            )
        else:
            workspace = get_files_here(
                self._rutter.store, params.workspace_id, self._rutter.machine_id
            )
        return self._each(workspace, params.targets, params.directory, params.agent)

    def _each(
        self, workspace: Workspace, targets: list[str], directory: str | None, agent: AgentChoice
    ) -> Iterator[tuple[str, ProfileView | ProfileViews | RutterError]]:
        for target in targets:
            try:
                yield (
                    target,
                    self.view_in(workspace, typed_target(target, workspace.root, directory), agent),
                )
            except RutterError as error:
                yield target, error

    def view_in(
        self, workspace: Workspace, target: str, agent: AgentChoice
    ) -> ProfileView | ProfileViews:
        """`view` for a workspace already resolved and a workspace-relative target (the
        language server's, which keeps its workspaces)."""
        if agent == "all":
            return ProfileViews(
                profiles=[view_of(self.evaluate(workspace, target, name)) for name in AGENTS]
            )
        return view_of(self.evaluate(workspace, target, agent))

    def effective_or_view(
        self, params: MaybeProfileParams
    ) -> Snapshot | ProfileView | ProfileViews:
        """The default snapshot without `agent`; that agent's view with it."""
        fields = params.model_dump(exclude={"agent"})
        if params.agent is None:
            return self._rutter.instructions.effective(EffectiveInstructionsParams(**fields))
        return self.view(ProfileParams(**fields, agent=params.agent))

    def evaluate(self, workspace: Workspace, target: str, agent: AgentName) -> Evaluation:
        """The whole evaluation (with the notes the editor turns into diagnostics)."""
        try:
            return evaluate(
                load_profile(agent), workspace.root, normalize_target(target),
                self._rutter.reader, homes=self.homes,
            )  # fmt: skip
        except RutterError as error:
            raise naming_workspace(error, workspace.workspace_id) from None

    def diagnose(
        self,
        root: str,
        rel: str,
        agents: tuple[AgentName, ...] = AGENTS,
        memo: Memo | None = None,
    ) -> list[tuple[AgentName, Note]]:
        """What each of `agents` would do with the instruction file at `rel` (in the workspace
        at `root`) that the person should know: cuts, files never read, imports passed over,
        globs matching nothing. `memo`: lookups shared by the files of one moment (one
        refresh round)."""
        return notes_for_file(
            root, normalize_target(rel), agents, self._rutter.reader, self._files, memo,
            self.homes,
        )  # fmt: skip
