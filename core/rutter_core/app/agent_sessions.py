"""An agent's session as it starts (docs/agents.md, "The context at session start"): the run
that works for it and what that run's agent is given now. `rutter hook session-start` calls it
from the agent's own session-start hook (Claude Code, Gemini CLI).

The agent's session ID is the key, the same one a transcript import uses: the thread that holds
the session (`transcript_imports`, source `import:<agent>`) is found or started, so the same
session ID always answers the same thread, and importing the session's transcript later appends
its messages to that thread. The thread's newest run is reused; a thread without one gets a new
run continuing it, its instructions pinned from the workspace root (`runs.create`). The thread is
bound in its own write transaction before the run is created: a run that cannot be created (its
instructions fail closed) leaves the binding, and the next session start creates the run.

Which workspace: the deepest registered workspace around the directory the agent runs in
(`workspace_required` when there is none and the session is new). A session seen before keeps
its thread, which is its project's: when the agent now runs in another registration of that
project (another path or machine), the run works there; elsewhere the thread's own workspace
(or, when that registration was removed and kept for the project's records, the project's first
live location) answers. The run reused is the thread's newest run made through that
registration (another one's discovery reads another location's files); without one a new run
continues the thread there. Then the run's context is assembled (and stored in its audit)
within the budget.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, Literal, get_args

from pydantic import Field, StrictStr

from rutter_core.app.assembly import AssembleParams, Budget
from rutter_core.app.models import NullMeansAbsent, Result, allowed
from rutter_core.app.runs import CreateRunParams
from rutter_core.assembly.model import Assembly
from rutter_core.continuity.model import IMPORT_PREFIX
from rutter_core.continuity.service import require_external_id, runs_of_thread
from rutter_core.continuity.transcripts import service
from rutter_core.kernel.actors import OperatorActor
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import UsageError
from rutter_core.runs.reading import run_place
from rutter_core.workspaces.service import files_here, infer_workspace, project_workspace_ids

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_core.continuity.transcripts.service import KnownThread
    from rutter_core.store import Store

HookAgent = Literal["claude-code", "gemini"]
"""The agents whose session-start hook rutter answers."""
HOOK_AGENTS: Final[tuple[HookAgent, ...]] = get_args(HookAgent)

DEFAULT_SESSION_BUDGET: Final = 2048
"""The default budget of a session-start context in tokens: about 8,000 characters of English,
under the 10,000 characters Claude Code puts into the context as they are (a longer text is
written to a file, and the model is given its path and a preview)."""


class SessionStartParams(NullMeansAbsent):
    agent: Annotated[StrictStr, allowed(HookAgent)] = Field(
        description="whose session: claude-code or gemini"
    )
    session_id: StrictStr = Field(description="the agent's own session ID")
    directory: StrictStr = Field(description="the directory the agent runs in (absolute)")
    budget: Budget | None = Field(
        None, description=f"the budget in tokens (default {DEFAULT_SESSION_BUDGET})"
    )


class SessionStart(Result):
    """The run working for an agent's session, and what its agent is given now."""

    agent: HookAgent
    session_id: str
    workspace_id: str
    thread_id: str
    thread_created: bool
    run_id: str
    run_created: bool
    assembly: Assembly


class AgentSessionOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def start(
        self, params: SessionStartParams, *, actor: OperatorActor, cwd: Path | None = None
    ) -> SessionStart:
        """The session's thread and run (found, else made) and its assembled context
        (`invalid_agent`, `invalid_external_id`, `invalid_path`, `workspace_required`, and the
        run's and the assembly's own refusals)."""
        if params.agent not in HOOK_AGENTS:
            raise UsageError(
                "invalid_agent",
                f"the session-start hook answers {', '.join(HOOK_AGENTS)}",
                details={"allowed": list(HOOK_AGENTS)},
            )
        session_id = require_external_id(params.session_id)
        assert session_id is not None
        directory = Path(params.directory)
        if "\x00" in params.directory or not directory.is_absolute():
            raise UsageError(
                "invalid_path",
                "the agent's directory is not an absolute path",
                details={"field": "directory"},
            )
        source = f"{IMPORT_PREFIX}{params.agent}"
        store = self._rutter.store
        with store.read() as conn:
            known = service.known_thread(conn, source, session_id)
        workspace_id = _workspace_of(store, known, directory, self._rutter.machine_id)
        with store.write() as conn:
            thread_id, thread_created = service.bind_thread(
                conn, source=source, session_id=session_id, chosen_thread=None,
                workspace_id=workspace_id, actor=actor, now=now_rfc3339(),
            )  # fmt: skip
        with store.read() as conn:  # by key alone, in one read
            here = next(
                (
                    run
                    for run in runs_of_thread(conn, thread_id)
                    if run_place(conn, run)[0] == workspace_id
                ),
                None,
            )
        run_created = here is None
        if here is not None:
            run_id = here
        else:
            created = self._rutter.runs.create(
                CreateRunParams(
                    goal=f"The {params.agent} session {session_id}",
                    workspace_id=workspace_id,
                    thread_id=thread_id,
                ),
                actor=actor,
                cwd=cwd,
            )
            run_id = created.run_id
        budget = params.budget if params.budget is not None else DEFAULT_SESSION_BUDGET
        assembly = self._rutter.assembly.assemble(
            AssembleParams(run_id=run_id, budget=budget), actor=actor
        )
        return SessionStart(
            agent=params.agent,  # checked above
            session_id=session_id,
            workspace_id=workspace_id,
            thread_id=thread_id,
            thread_created=thread_created,
            run_id=run_id,
            run_created=run_created,
            assembly=assembly,
        )


def _workspace_of(store: Store, known: KnownThread | None, directory: Path, machine: str) -> str:
    """The registration the session's run works through: the one around `directory`, unless
    the session's thread (seen before) is of another project, or `directory` is in none; then
    the thread's own workspace's location."""
    try:
        here: str | None = infer_workspace(store, directory, machine=machine).workspace_id
    except UsageError as exc:
        if known is None or exc.code != "workspace_required":
            raise
        here = None
    if known is None:
        assert here is not None  # infer_workspace answered
        return here
    with store.read() as conn:
        if here is not None and here in project_workspace_ids(conn, known.workspace_id):
            return here
        # Its run reads files here: this machine's registration of the thread's project.
        return files_here(conn, known.workspace_id, machine, named=False).workspace_id


__all__ = [
    "DEFAULT_SESSION_BUDGET",
    "HOOK_AGENTS",
    "AgentSessionOperations",
    "HookAgent",
    "SessionStart",
    "SessionStartParams",
]
