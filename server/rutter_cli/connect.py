"""`rutter connect AGENT`: writes (or with `--dry-run` prints) the agent's own MCP configuration
for `rutter mcp`, naming the store and the rutter executable by absolute path, so an agent that
starts its servers with a cleared environment (Codex) or another PATH still reaches this store.

The formats and the merge are `rutter_cli.agent_config` (pure); this module finds the file
(the project's root or the home directory), refuses links and what is not a regular file, and
replaces the file atomically: a temporary file in the same directory, renamed over it, with the
old file's permissions. Only `typer` is imported before the command runs.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast, get_args

import typer

from rutter_cli.common import JsonFlag, WorkspaceOption, emit

if TYPE_CHECKING:
    from rutter_cli.agent_config import Launch, Location, Merged, Scope
    from rutter_core.app.facade import Rutter


def connect_command(
    ctx: typer.Context,
    agent: Annotated[
        str,
        typer.Argument(metavar="AGENT", help="claude-code, codex, gemini, vscode or cursor."),
    ],
    scope: Annotated[
        str,
        typer.Option(
            "--scope",
            metavar="project|user",
            help="The project's configuration (default) or yours in every project.",
        ),
    ] = "project",
    workspace_id: WorkspaceOption = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the change; write nothing.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace a different `rutter` entry already there."),
    ] = False,
    no_hook: Annotated[
        bool,
        typer.Option(
            "--no-hook",
            help="Add no session-start hook (Claude Code, Gemini CLI): the MCP server only.",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """The command's help is `rutter_cli.main.COMMANDS["connect"]`."""
    from rutter_cli.agent_config import (
        FORMATS,
        Scope,
        hook_entry,
        hook_location,
        location,
        merge,
        merge_hook,
        server_entry,
    )
    from rutter_cli.common import cli_app
    from rutter_core.kernel.errors import UsageError
    from rutter_core.store import resolve_database_url, shareable_database_url

    if agent not in FORMATS:
        raise UsageError(
            "invalid_agent",
            f"rutter connects {', '.join(FORMATS)}",
            details={"allowed": list(FORMATS)},
        )
    if scope not in get_args(Scope):
        scopes = list(get_args(Scope))
        raise UsageError("invalid_scope", "--scope is project or user", details={"allowed": scopes})
    chosen = agent  # one of FORMATS: checked above
    where = location(chosen, cast("Scope", scope))
    if scope == "user" and workspace_id is not None:
        raise UsageError(
            "usage", "--workspace names a project, not a user configuration",
            hint=_hint("drop_workspace"),
        )  # fmt: skip
    cwd = str(Path.cwd())
    url = resolve_database_url(database_url=ctx.find_root().obj.database_url, env=os.environ)
    store_url = shareable_database_url(url, cwd=cwd)
    project: Project | None = None
    if where.base == "project":
        with cli_app(ctx, read_only=True) as rutter:
            project = _project(rutter, workspace_id, cwd)
    base = _base_directory(where, project)
    path = base.joinpath(*where.parts)
    launch = _launch(store_url, ("mcp",), cwd=str(project.root) if project else None)
    entry = server_entry(chosen, launch)
    existing = _read_config(base, where)
    merged = merge(chosen, existing, entry, force=force)
    hook_where = None if no_hook else hook_location(chosen, cast("Scope", scope))
    hook: dict[str, Any] | None = None
    hook_plan: _HookPlan | None = None
    if hook_where is not None:
        command = _launch(store_url, ("hook", "session-start", "--agent", chosen), cwd=None)
        hook = hook_entry(chosen, shlex.join((command.command, *command.args)))
        hook_base = _base_directory(hook_where, project)
        # Gemini CLI keeps both in one settings file: the hook is merged into the new text.
        same_file = hook_base.joinpath(*hook_where.parts) == path
        hook_existing = merged.text if same_file else _read_config(hook_base, hook_where)
        hook_merged = merge_hook(hook_existing, hook, force=force)  # both checked before writing
        hook_plan = _HookPlan(hook_base, hook_where, hook_existing, hook_merged, same_file)
    text = merged.text
    if hook_plan is not None and hook_plan.same_file and hook_plan.merged.changed:
        text = hook_plan.merged.text
    written = hook_written = False
    if text != (existing or "") and not dry_run:
        _write_atomically(base, where, text, existing, private=where.base != "project")
        written = True
        hook_written = hook_plan is not None and hook_plan.same_file and hook_plan.merged.changed
    separate = hook_plan is not None and not hook_plan.same_file and hook_plan.merged.changed
    if hook_plan is not None and separate and not dry_run:
        _write_atomically(
            hook_plan.base, hook_plan.where, hook_plan.merged.text, hook_plan.existing,
            private=hook_plan.where.base != "project",
        )  # fmt: skip
        hook_written = True
    document: dict[str, Any] = {
        "agent": agent,
        "scope": scope,
        "path": str(path),
        "server": "rutter",
        "entry": entry,
        "changed": merged.changed,
        "replaced": merged.replaced,
        "written": written,
        "dry_run": dry_run,
        "store": store_url,
        "workspace_id": project.workspace_id if project else None,
        "hook": None
        if hook_plan is None
        else {
            "event": "SessionStart",
            "path": str(hook_plan.base.joinpath(*hook_plan.where.parts)),
            "entry": hook,
            "changed": hook_plan.merged.changed,
            "replaced": hook_plan.merged.replaced,
            "written": hook_written,
        },
    }
    emit(
        document,
        as_json=as_json,
        for_people=lambda _console: _print_for_people(document, existing, text, project, hook_plan),
    )


class _HookPlan:
    """The session-start hook's settings file, its text, and the text with rutter's hook."""

    def __init__(
        self, base: Path, where: Location, existing: str | None, merged: Merged, same_file: bool
    ) -> None:
        self.base = base
        self.where = where
        self.existing = existing
        self.merged = merged
        self.same_file = same_file


# -- the project ------------------------------------------------------------------------------


class Project:
    """The project a project-scope configuration belongs to: a registered workspace's root, or
    a git repository's (workspace_id None: not registered in this store)."""

    def __init__(self, root: Path, workspace_id: str | None) -> None:
        self.root = root
        self.workspace_id = workspace_id


def _project(rutter: Rutter, workspace_id: str | None, cwd: str) -> Project:
    """`--workspace`'s root; else the deepest registered workspace around `cwd`; else the git
    repository around it (`workspace_required`, naming the store, when there is neither)."""
    from rutter_core.app.workspaces import InferWorkspaceParams, ShowWorkspaceParams
    from rutter_core.kernel.errors import UsageError

    if workspace_id is not None:
        # Its root is the agent's directory here: never another machine's location.
        found = rutter.workspaces.local(ShowWorkspaceParams(workspace_id=workspace_id))
        return Project(Path(found.root), found.workspace_id)
    try:
        found = rutter.workspaces.infer(InferWorkspaceParams(directory=cwd))
    except UsageError as error:
        if error.code != "workspace_required":
            raise
        repository = _git_root(Path(os.path.realpath(cwd)))
        if repository is None:
            raise
        return Project(repository, None)
    return Project(Path(found.root), found.workspace_id)


def _git_root(directory: Path) -> Path | None:
    """The nearest directory at or above `directory` holding `.git` (a directory, or the file
    of a worktree or submodule)."""
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def _base_directory(where: Location, project: Project | None) -> Path:
    if where.base == "project":
        assert project is not None
        return project.root
    if where.base == "codex_home":
        codex_home = os.environ.get("CODEX_HOME")
        return Path(codex_home).absolute() if codex_home else Path.home() / ".codex"
    return Path.home()


# -- the command the agent runs ---------------------------------------------------------------


def _launch(store_url: str, command: tuple[str, ...], *, cwd: str | None) -> Launch:
    """`rutter --database-url URL COMMAND...` (`mcp`, or the session-start hook) by absolute
    paths: the `rutter` script installed beside this interpreter, else this interpreter with
    `-m rutter`. The store is in the arguments, not the environment, since some agents start
    servers with almost none (Codex)."""
    from rutter_cli.agent_config import Launch

    rest = ("--database-url", store_url, *command)
    interpreter = Path(sys.executable).absolute()  # not resolved: a venv's python is a link
    script = interpreter.parent / ("rutter.exe" if os.name == "nt" else "rutter")
    if script.is_file() and os.access(script, os.X_OK):
        return Launch(str(script), rest, {}, cwd)
    return Launch(str(interpreter), ("-m", "rutter", *rest), {}, cwd)


# -- reading and writing the file ---------------------------------------------------------------


def _refuse_link(path: Path) -> None:
    from rutter_core.kernel.errors import RejectedError

    if path.is_symlink():
        raise RejectedError(
            "config_symlink",
            f"{path} is a symbolic link: rutter writes the agent's configuration only into a "
            "regular file it can replace in place",
            path=str(path),
            hint=_hint("fix_agent_config"),
        )


def _read_config(base: Path, where: Location) -> str | None:
    """The file's text, or None when it does not exist. Every directory from `base` down and
    the file itself must not be a link; the file must be a regular UTF-8 file."""
    from rutter_core.kernel.errors import RejectedError

    path = base
    for part in where.parts:
        path = path / part
        _refuse_link(path)
    if not os.path.lexists(path):
        return None
    if not path.is_file():
        raise RejectedError(
            "config_invalid", f"{path} is not a regular file", path=str(path),
            hint=_hint("fix_agent_config"),
        )  # fmt: skip
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RejectedError(
            "config_invalid", f"{path} is not UTF-8 text", path=str(path),
            hint=_hint("fix_agent_config"),
        ) from exc  # fmt: skip


def _write_atomically(
    base: Path, where: Location, text: str, before: str | None, *, private: bool
) -> None:
    """Write `text` to a temporary file beside the target and rename it over the target: a
    reader sees the old file or the new one, never half of one. The old file's permissions are
    kept; a new file in the home directory is private (0600)."""
    import stat
    import tempfile

    from rutter_core.kernel.errors import ConflictError

    path = base.joinpath(*where.parts)
    path.parent.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
    _read_config(base, where)  # the directories just made, and the file, are still no links
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else (0o600 if private else None)
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temporary = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        temporary.chmod(mode if mode is not None else 0o666 & ~_umask())
        if _read_config(base, where) != before:
            raise ConflictError(
                "config_changed",
                f"{path} changed while rutter was editing it",
                path=str(path),
                hint=_hint("connect_again"),
            )
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _hint(fix: str) -> Any:
    from rutter_core.kernel.errors import Hint

    return Hint(fix)


# -- for people -------------------------------------------------------------------------------


def _print_for_people(
    document: dict[str, Any],
    before: str | None,
    after: str,
    project: Project | None,
    hook_plan: _HookPlan | None,
) -> None:
    path = document["path"]
    hook = document["hook"]
    out = sys.stdout
    if not document["changed"]:
        out.write(f"{path} already has this rutter entry: nothing to change.\n")
    elif not document["dry_run"]:
        verb = "Replaced the rutter entry in" if document["replaced"] else "Added rutter to"
        out.write(f"{verb} {path}.\n")
    if hook is not None:
        where = hook["path"]
        if not hook["changed"]:
            out.write(f"{where} already has rutter's session-start hook: nothing to change.\n")
        elif not document["dry_run"]:
            verb = (
                "Replaced rutter's session-start hook in"
                if hook["replaced"]
                else ("Added rutter's session-start hook to")
            )
            out.write(f"{verb} {where}.\n")
    if document["dry_run"]:
        if after != (before or ""):
            _print_diff(path, before, after)
        if hook_plan is not None and not hook_plan.same_file and hook_plan.merged.changed:
            _print_diff(hook["path"], hook_plan.existing, hook_plan.merged.text)
    out.write(f"Store: {document['store']}\n")
    if project is not None and project.workspace_id is None:
        out.write(
            f"Note: {project.root} is not a registered workspace in this store; register it "
            f"with `rutter workspace register ID {project.root}`.\n"
        )


def _print_diff(path: str, before: str | None, after: str) -> None:
    import difflib

    out = sys.stdout
    out.write(f"Would write {path} (nothing written, --dry-run):\n")
    diff = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=path if before is not None else "/dev/null",
        tofile=path,
    )
    out.writelines(line if line.endswith("\n") else f"{line}\n" for line in diff)
