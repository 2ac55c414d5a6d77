"""Workspace registry (contract section 4).

A workspace is an operator-chosen ID bound to one resolved directory. Every discovery is
confined to a registered root, so roots are stored as realpaths and compared component-wise.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import ConflictError, NotFoundError, RejectedError, UsageError
from rutter_core.kernel.ids import is_valid_workspace_id
from rutter_core.store import Store
from rutter_core.store.schema import memories as memories_table
from rutter_core.store.schema import runs as runs_table
from rutter_core.store.schema import workspaces as workspaces_table


@dataclass(frozen=True, slots=True)
class Workspace:
    workspace_id: str
    root: str
    created_at: str

    def to_json(self) -> dict[str, str]:
        return {"workspace_id": self.workspace_id, "root": self.root, "created_at": self.created_at}


def _from_row(row: Any) -> Workspace:
    return Workspace(str(row.workspace_id), str(row.root), str(row.created_at))


def _validate_id(workspace_id: str) -> None:
    if not is_valid_workspace_id(workspace_id):
        raise RejectedError(
            "invalid_workspace_id",
            f"invalid workspace ID {workspace_id!r}: use 1-64 characters of a-z, 0-9, '.', "
            "'_' and '-', starting with a letter or digit",
            details={"workspace_id": workspace_id},
        )


def resolve_root(root: str | Path, *, cwd: Path) -> str:
    """The realpath of an existing directory; relative ROOTs are taken relative to `cwd`.

    A missing directory is `not_found` (exit 5); something that exists but is not a
    directory, or a path that cannot be resolved, is `invalid_root` (exit 3).
    """
    text = os.fspath(root)
    if not text or "\0" in text:
        raise RejectedError("invalid_root", f"invalid workspace root {text!r}", path=text)
    candidate = Path(text).expanduser()
    if not candidate.is_absolute():
        candidate = cwd / candidate
    try:
        resolved = os.path.realpath(candidate, strict=True)
    except FileNotFoundError as exc:
        raise NotFoundError(
            "not_found",
            f"workspace root {candidate} does not exist; create it or pass an existing directory",
            path=str(candidate),
        ) from exc
    except OSError as exc:  # symlink loop, permission denied on a parent, ...
        raise RejectedError(
            "invalid_root",
            f"cannot resolve workspace root {candidate}: {exc.strerror or exc}",
            path=str(candidate),
        ) from exc
    if not Path(resolved).is_dir():
        raise RejectedError(
            "invalid_root",
            f"workspace root {candidate} is not a directory; pass the project directory",
            path=str(candidate),
        )
    return resolved


def _by_id(conn: Connection, workspace_id: str) -> Workspace | None:
    row = conn.execute(
        select(workspaces_table).where(workspaces_table.c.workspace_id == workspace_id)
    ).first()
    return None if row is None else _from_row(row)


def _by_root(conn: Connection, root: str) -> Workspace | None:
    row = conn.execute(select(workspaces_table).where(workspaces_table.c.root == root)).first()
    return None if row is None else _from_row(row)


def find_workspace(conn: Connection, workspace_id: str) -> Workspace | None:
    """The registration of `workspace_id` inside the caller's transaction, or None."""
    return _by_id(conn, workspace_id)


def require_workspace(conn: Connection, workspace_id: str) -> Workspace:
    """The registration of `workspace_id` inside the caller's transaction (`not_registered`
    when there is none): other areas check their workspace through this, not its table."""
    found = _by_id(conn, workspace_id)
    if found is None:
        raise _not_registered(workspace_id)
    return found


def _not_registered(workspace_id: str) -> NotFoundError:
    return NotFoundError(
        "not_registered",
        f"no workspace {workspace_id!r} is registered; register it with "
        f"`rutter workspace register {workspace_id} ROOT` (see `rutter workspace list`)",
        details={"workspace_id": workspace_id},
    )


def register_workspace(
    store: Store, workspace_id: str, root: str | Path, *, cwd: Path
) -> tuple[Workspace, bool]:
    """Register `workspace_id` at `root`; returns the workspace and whether it is new.

    Idempotent for the same ID and root. An ID is bound to one root and a root to one ID.
    """
    _validate_id(workspace_id)
    resolved = resolve_root(root, cwd=cwd)
    # The SQLite write lock makes check-then-insert atomic; the retry covers databases
    # without it (PostgreSQL), where a concurrent insert surfaces as a unique violation.
    for attempt in range(2):
        try:
            with store.write() as conn:
                existing = _by_id(conn, workspace_id)
                if existing is not None:
                    if existing.root == resolved:
                        return existing, False
                    raise ConflictError(
                        "conflict",
                        f"workspace {workspace_id!r} is already registered with root "
                        f"{existing.root}; remove it first (`rutter workspace remove "
                        f"{workspace_id}`) or choose another ID",
                        path=resolved,
                        details={"workspace_id": workspace_id, "existing_root": existing.root},
                    )
                holder = _by_root(conn, resolved)
                if holder is not None:
                    raise ConflictError(
                        "conflict",
                        f"root {resolved} is already registered as workspace "
                        f"{holder.workspace_id!r}; use that ID or remove it first",
                        path=resolved,
                        details={"workspace_id": holder.workspace_id, "root": resolved},
                    )
                created = Workspace(workspace_id, resolved, now_rfc3339())
                conn.execute(insert(workspaces_table).values(**created.to_json()))
                return created, True
        except IntegrityError:
            if attempt:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def list_workspaces(store: Store) -> list[Workspace]:
    with store.read() as conn:
        rows = conn.execute(select(workspaces_table).order_by(workspaces_table.c.workspace_id))
        return [_from_row(row) for row in rows]


def get_workspace(store: Store, workspace_id: str) -> Workspace:
    with store.read() as conn:
        found = _by_id(conn, workspace_id)
    if found is None:
        raise _not_registered(workspace_id)
    return found


def find_workspace_by_root(store: Store, root: str | Path, *, cwd: Path) -> Workspace | None:
    """The registration of exactly this directory, if any (the language server reuses it)."""
    resolved = resolve_root(root, cwd=cwd)
    with store.read() as conn:
        return _by_root(conn, resolved)


def _refuse_while_memories(conn: Connection, workspace_id: str) -> None:
    """Project memories belong to their workspace (the foreign key refuses orphans too):
    removing it must not drop them by a side door, so say how many there are and what to do."""
    count = conn.execute(
        select(func.count())
        .select_from(memories_table)
        .where(memories_table.c.workspace_id == workspace_id)
    ).scalar_one()
    if count:
        noun = "memory" if count == 1 else "memories"
        raise ConflictError(
            "conflict",
            f"workspace {workspace_id!r} still has {count} project {noun}; export them "
            f"(`rutter context memory export --scope project --workspace {workspace_id} "
            "--all`) and delete each (`rutter context memory delete ID --version N`) before "
            "removing the workspace",
            details={"workspace_id": workspace_id, "project_memories": count},
        )


def _refuse_while_runs(conn: Connection, workspace_id: str) -> None:
    """Runs keep their pinned instructions and history for good (append-only), so a
    workspace with runs stays registered; say how many there are."""
    count = conn.execute(
        select(func.count())
        .select_from(runs_table)
        .where(runs_table.c.workspace_id == workspace_id)
    ).scalar_one()
    if count:
        noun = "run" if count == 1 else "runs"
        raise ConflictError(
            "conflict",
            f"workspace {workspace_id!r} has {count} {noun} (`rutter run list --workspace "
            f"{workspace_id} --all`); runs and their pinned instructions are kept for good, so "
            "a workspace with runs cannot be removed",
            details={"workspace_id": workspace_id, "runs": count},
        )


def remove_workspace(store: Store, workspace_id: str) -> Workspace:
    """Unregister; fails with `conflict` while other records (runs, …) still refer to it."""
    try:
        with store.write() as conn:
            found = _by_id(conn, workspace_id)
            if found is None:
                raise _not_registered(workspace_id)
            _refuse_while_memories(conn, workspace_id)
            _refuse_while_runs(conn, workspace_id)
            conn.execute(
                delete(workspaces_table).where(workspaces_table.c.workspace_id == workspace_id)
            )
    except IntegrityError as exc:
        raise ConflictError(
            "conflict",
            f"workspace {workspace_id!r} is still referenced by other records (runs, "
            "memories, ...); remove those first",
            details={"workspace_id": workspace_id},
        ) from exc
    return found


def _contains(root: str, path: str) -> bool:
    # Component-wise and case-folded where the platform is: /a/bc is not inside /a/b.
    return PurePath(os.path.normcase(path)).is_relative_to(os.path.normcase(root))


def infer_workspace(store: Store, cwd: Path) -> Workspace:
    """The deepest registered workspace whose root contains realpath(`cwd`)."""
    here = os.path.realpath(cwd)
    matches = [ws for ws in list_workspaces(store) if _contains(ws.root, here)]
    if not matches:
        raise UsageError(
            "workspace_required",
            f"no registered workspace contains {here}; pass --workspace ID or run "
            "`rutter workspace register ID ROOT`",
            path=here,
        )
    return max(matches, key=lambda ws: len(PurePath(ws.root).parts))


# -- the language server's folder registration (contract section 4) -----------------------------

_MAX_ID_LENGTH = 64
_MAX_SUFFIX_ATTEMPTS = 1000
_INVALID_ID_RUN = re.compile(r"[^a-z0-9._-]+")
_FALLBACK_ID = "workspace"


def workspace_id_from_name(name: str) -> str:
    """A valid workspace ID derived from a folder name: `My Project` → `my-project`.

    Accents are folded to ASCII, everything is lowercased, each run of other characters
    becomes one `-`, leading characters that cannot start an ID are dropped and the result
    is trimmed to 64 characters; a name with nothing usable gives `workspace`.
    """
    folded = unicodedata.normalize("NFKD", name)
    ascii_name = "".join(c for c in folded if not unicodedata.combining(c)).lower()
    candidate = _INVALID_ID_RUN.sub("-", ascii_name)
    candidate = candidate.lstrip("._-")[:_MAX_ID_LENGTH].rstrip("-")
    return candidate if is_valid_workspace_id(candidate) else _FALLBACK_ID


def _with_suffix(base: str, number: int) -> str:
    if number == 1:
        return base
    suffix = f"-{number}"
    return base[: _MAX_ID_LENGTH - len(suffix)] + suffix


def ensure_workspace(store: Store, root: str | Path, *, preferred_id: str, cwd: Path) -> Workspace:
    """The registration of `root`, creating it when there is none.

    An existing registration of the same (resolved) root is reused whatever its ID. Otherwise
    the ID is `workspace_id_from_name(preferred_id)`, made unique with a numeric suffix
    (`demo`, `demo-2`, `demo-3`, ...) when another root already holds it. Safe against a
    concurrent registration of the same root by another process.
    """
    resolved = resolve_root(root, cwd=cwd)
    existing = find_workspace_by_root(store, resolved, cwd=cwd)
    if existing is not None:
        return existing
    base = workspace_id_from_name(preferred_id)
    for number in range(1, _MAX_SUFFIX_ATTEMPTS + 1):
        candidate = _with_suffix(base, number)
        try:
            workspace, _created = register_workspace(store, candidate, resolved, cwd=cwd)
        except ConflictError as exc:
            if exc.details.get("root") == resolved:  # registered meanwhile under another ID
                holder = find_workspace_by_root(store, resolved, cwd=cwd)
                if holder is not None:
                    return holder
            continue  # the ID belongs to another root: try the next suffix
        return workspace
    raise ConflictError(
        "conflict",
        f"could not find a free workspace ID for {resolved} (tried {base} to "
        f"{_with_suffix(base, _MAX_SUFFIX_ATTEMPTS)}); register it with "
        "`rutter workspace register ID ROOT`",
        path=resolved,
        details={"preferred_id": base},
    )
