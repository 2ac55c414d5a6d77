"""`Rutter`: the one facade every surface calls (CLI, language server, and later MCP and HTTP).

Each area's operations live in their own module (`app.workspaces`, `app.instructions`,
`app.profiles`, `app.runs`, `app.memory`, `app.candidates`, `app.continuity`, `app.branches`,
`app.pins`, `app.history`, `app.assembly`, `app.tokens`) and are reached as attributes, imported
on first use: a CLI call is a whole process, and it should pay only for the area it touches.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rutter_core.app.admin import AdminOperations
    from rutter_core.app.agent_sessions import AgentSessionOperations
    from rutter_core.app.assembly import AssemblyOperations
    from rutter_core.app.branches import BranchOperations
    from rutter_core.app.candidates import CandidateOperations
    from rutter_core.app.compaction import CompactionOperations
    from rutter_core.app.continuity import ContinuityOperations
    from rutter_core.app.history import HistoryOperations
    from rutter_core.app.instructions import InstructionOperations
    from rutter_core.app.memory import MemoryOperations
    from rutter_core.app.pins import PinOperations
    from rutter_core.app.profiles import ProfileOperations
    from rutter_core.app.receipts import ReceiptOperations
    from rutter_core.app.runs import RunOperations
    from rutter_core.app.tokens import TokenOperations
    from rutter_core.app.transcripts import TranscriptOperations
    from rutter_core.app.workspaces import WorkspaceOperations
    from rutter_core.discovery.fsread import FileReader
    from rutter_core.store import PoolKind, Store
    from rutter_core.workspaces.machine import MachineSources


class Rutter:
    """Operations over one store. `reader` is the discovery file reader: one per process (its
    identity caches make repeated discovery cheap), shared by every operation that reads disk."""

    def __init__(
        self,
        store: Store,
        reader: FileReader | None = None,
        machine: MachineSources | None = None,
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self._reader = reader
        self._machine = machine
        self._env = env
        self._identified_by: Rutter | None = None
        """The facade whose `machine_id` this one shares (`acting_as`)."""

    def acting_as(self, person: str | None) -> Rutter:
        """The same operations, every transaction acting for `person` (`Store.acting_as`):
        what an HTTP request made with that person's bearer calls. None: this facade."""
        if person is None:
            return self
        acting = Rutter(self.store.acting_as(person), self.reader, self._machine, env=self._env)
        # One machine ID per process, found once: not again for every request's facade.
        acting._identified_by = self._identified_by or self
        return acting

    @cached_property
    def machine_id(self) -> str:
        """This machine's identity (docs/team.md#machines), found on first use (only lookups of a
        registration by its directory need it) and kept: from the sources given, else from
        `RUTTER_MACHINE_ID` in `env` (default: this process's) and the user's home
        (`machine_sources`)."""
        if self._identified_by is not None:
            return self._identified_by.machine_id
        from rutter_core.workspaces.machine import machine_id

        env = os.environ if self._env is None else self._env
        return machine_id(self._machine or machine_sources(env))

    @cached_property
    def reader(self) -> FileReader:
        if self._reader is None:
            from rutter_core.discovery.fsread import FileReader

            self._reader = FileReader()
        return self._reader

    @cached_property
    def workspaces(self) -> WorkspaceOperations:
        from rutter_core.app.workspaces import WorkspaceOperations

        return WorkspaceOperations(self)

    @cached_property
    def instructions(self) -> InstructionOperations:
        from rutter_core.app.instructions import InstructionOperations

        return InstructionOperations(self)

    @cached_property
    def profiles(self) -> ProfileOperations:
        from rutter_core.app.profiles import ProfileOperations

        return ProfileOperations(self)

    @cached_property
    def runs(self) -> RunOperations:
        from rutter_core.app.runs import RunOperations

        return RunOperations(self)

    @cached_property
    def memory(self) -> MemoryOperations:
        from rutter_core.app.memory import MemoryOperations

        return MemoryOperations(self)

    @cached_property
    def candidates(self) -> CandidateOperations:
        from rutter_core.app.candidates import CandidateOperations

        return CandidateOperations(self)

    @cached_property
    def continuity(self) -> ContinuityOperations:
        from rutter_core.app.continuity import ContinuityOperations

        return ContinuityOperations(self)

    @cached_property
    def branches(self) -> BranchOperations:
        from rutter_core.app.branches import BranchOperations

        return BranchOperations(self)

    @cached_property
    def history(self) -> HistoryOperations:
        from rutter_core.app.history import HistoryOperations

        return HistoryOperations(self)

    @cached_property
    def pins(self) -> PinOperations:
        from rutter_core.app.pins import PinOperations

        return PinOperations(self)

    @cached_property
    def transcripts(self) -> TranscriptOperations:
        from rutter_core.app.transcripts import TranscriptOperations

        return TranscriptOperations(self)

    @cached_property
    def agent_sessions(self) -> AgentSessionOperations:
        from rutter_core.app.agent_sessions import AgentSessionOperations

        return AgentSessionOperations(self)

    @cached_property
    def compaction(self) -> CompactionOperations:
        from rutter_core.app.compaction import CompactionOperations

        return CompactionOperations(self)

    @cached_property
    def receipts(self) -> ReceiptOperations:
        from rutter_core.app.receipts import ReceiptOperations

        return ReceiptOperations(self)

    @cached_property
    def assembly(self) -> AssemblyOperations:
        from rutter_core.app.assembly import AssemblyOperations

        return AssemblyOperations(self)

    @cached_property
    def admin(self) -> AdminOperations:
        from rutter_core.app.admin import AdminOperations

        return AdminOperations(self)

    @cached_property
    def tokens(self) -> TokenOperations:
        from rutter_core.app.tokens import TokenOperations

        return TokenOperations(self)


def open_rutter(
    database_url: str | None,
    env: Mapping[str, str],
    *,
    create: bool = True,
    migrate: bool = True,
    reader: FileReader | None = None,
    pool: PoolKind = "call",
) -> Rutter:
    """The facade over the store `database_url` (else the environment's) names, opened and
    migrated: how every surface opens its store. `create`: a store that does not exist yet is
    created (else it answers as an empty one: a command that only reads); `migrate`: its
    schema is brought up to date (else left as it is: `rutter store check`); `reader`: the
    process's discovery file reader (the language server's), else one made on first use;
    `pool`: how long the process keeps the store (`PoolKind`): `call` for one command (the CLI),
    `service` for a long-lived server (the language server, MCP, HTTP and each of its workers: a
    bounded pool of connections checked before use)."""
    from rutter_core.store import open_store, resolve_database_url

    url = resolve_database_url(database_url=database_url, env=env)
    store = open_store(url, create=create, migrate=migrate, pool=pool)
    # The machine's sources are found on first use (`machine_id`): not every command needs them.
    return Rutter(store, reader, env=env)


def machine_sources(env: Mapping[str, str]) -> MachineSources:
    """Where this machine's identity comes from: `RUTTER_MACHINE_ID` in `env` when set, else the
    system's machine ID, else a file in the user's home as the user database names it
    (`~/.config/rutter/machine-id`). Neither `HOME`, `XDG_CONFIG_HOME` nor `RUTTER_HOME` is
    read: an agent that starts rutter with a cleared environment gets the same identity."""
    from rutter_core.workspaces.machine import MachineSources

    return MachineSources(override=env.get("RUTTER_MACHINE_ID"), fallback_file=_user_file())


def _user_file() -> Path | None:
    try:
        import pwd

        home = pwd.getpwuid(os.getuid()).pw_dir
    except ImportError:  # no user database (Windows): the profile directory
        home = str(Path.home())
    except KeyError:  # a uid the user database does not know: no per-user place
        return None
    return Path(home) / ".config" / "rutter" / "machine-id" if home else None
