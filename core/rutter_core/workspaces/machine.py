"""The identity of the machine rutter runs on (docs/team.md#machines): what makes a workspace
registration one machine's location of a project.

A machine's ID is 32 lowercase hex characters: HMAC-SHA256, keyed with a secret that names the
machine, of rutter's application key, cut to 128 bits (what systemd recommends for
`/etc/machine-id`: never use or show it raw, derive an application-specific ID from it). The
secret is, in this order:

1. the `override` (`RUTTER_MACHINE_ID`, read by the caller): 1-128 characters of
   `A-Z a-z 0-9 . _ : -`; anything else is `invalid_machine_id`, which never repeats it;
2. the first of `system_files` (`/etc/machine-id`, then `/var/lib/dbus/machine-id`) that exists
   and is initialised (32 hex characters). A missing, empty or `uninitialized` file is skipped;
   one that exists but cannot be read, or holds anything else, is `machine_id_unusable`:
   falling through to the next source would give this machine another identity whenever the
   file is unreadable, so it fails closed;
3. `fallback_file`, a random 128-bit secret rutter wrote once (0600, created whole with a
   hard link so two processes starting at once agree), in a per-user location the caller
   chooses. It is refused (`machine_id_unusable`) when it is a symbolic link, not a regular
   file, unreadable, or not 32 hex characters: it is never silently replaced.

Nothing here reads the environment, and nothing is cached: the caller (the app facade) reads
`RUTTER_MACHINE_ID` and chooses the paths once, and keeps the answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from rutter_core.kernel.errors import Hint, RejectedError

APPLICATION_KEY: Final = b"rutter.workspaces.machine.v1"
"""The message each machine secret is keyed over: rutter's own IDs never equal another
application's derivation from the same secret."""
SYSTEM_FILES: Final = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))
MACHINE_ID_PATTERN: Final = re.compile(r"[0-9a-f]{32}")
_SECRET = re.compile(r"[0-9a-f]{32}")
_OVERRIDE = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_MAX_FILE_BYTES = 256


@dataclass(frozen=True, slots=True)
class MachineSources:
    """Where this machine's identity comes from (see the module docstring)."""

    override: str | None
    fallback_file: Path | None
    system_files: Sequence[Path] = SYSTEM_FILES


def is_machine_id(value: object) -> bool:
    return isinstance(value, str) and MACHINE_ID_PATTERN.fullmatch(value) is not None


def derive(secret: str) -> str:
    """The machine ID a secret gives (never the secret itself)."""
    digest = hmac.new(secret.encode("utf-8"), APPLICATION_KEY, hashlib.sha256).hexdigest()
    return digest[:32]


def machine_id(sources: MachineSources) -> str:
    """This machine's ID from `sources`, writing the fallback file when nothing else names
    the machine; `invalid_machine_id` or `machine_id_unusable` (fail-closed)."""
    if sources.override is not None:
        if _OVERRIDE.fullmatch(sources.override) is None:
            raise RejectedError(
                "invalid_machine_id",
                "RUTTER_MACHINE_ID is not 1-128 characters of letters, digits, '.', '_', ':' "
                "and '-'",
                hint=Hint("fix_machine_id"),
            )
        return derive(sources.override)
    for path in sources.system_files:
        secret = _system_secret(path)
        if secret is not None:
            return derive(secret)
    if sources.fallback_file is None:
        raise _unusable("no machine ID file exists and no per-user location is known", None)
    return derive(_fallback_secret(sources.fallback_file))


class MachineIdUnusable(RejectedError):
    """A source of the machine's identity exists but cannot be used: nothing falls through."""


def _unusable(reason: str, path: Path | None) -> MachineIdUnusable:
    return MachineIdUnusable(
        "machine_id_unusable",
        f"this machine's identity cannot be read: {reason}",
        path=None if path is None else str(path),
        hint=Hint("fix_machine_id"),
    )


def _system_secret(path: Path) -> str | None:
    """The machine ID in a system file (links followed: `/var/lib/dbus/machine-id` is often
    one to `/etc/machine-id`), None when the file is absent or not initialised."""
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_FILE_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _unusable(f"{path} is unreadable ({exc.strerror or 'error'})", path) from exc
    text = data.decode("ascii", errors="replace").strip()
    if text in ("", "uninitialized"):
        return None
    if len(data) > _MAX_FILE_BYTES or _SECRET.fullmatch(text) is None:
        raise _unusable(f"{path} does not hold a machine ID", path)
    return text


def _fallback_secret(path: Path) -> str:
    """The secret in the per-user file, created once when it does not exist."""
    secret = _read_fallback(path)
    if secret is not None:
        return secret
    _create_fallback(path)
    created = _read_fallback(path)
    if created is None:  # removed again between our write and our read
        raise _unusable(f"{path} disappeared as it was created", path)
    return created


def _read_fallback(path: Path) -> str | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise _unusable(f"{path} is a symbolic link", path) from exc
        raise _unusable(f"{path} is unreadable ({exc.strerror or 'error'})", path) from exc
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise _unusable(f"{path} is not a regular file", path)
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(_MAX_FILE_BYTES + 1)
    text = data.decode("ascii", errors="replace").strip()
    if _SECRET.fullmatch(text) is None:
        raise _unusable(f"{path} does not hold a machine ID", path)
    return text


def _create_fallback(path: Path) -> None:
    """Write a new secret whole: into a private temporary file, then linked to `path` (which
    fails if another process linked its own first: theirs is kept)."""
    import secrets  # only here: most machines never need it

    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        descriptor = os.open(temporary, flags, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(secrets.token_hex(16).encode("ascii") + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            # Another process that made it first wins: its secret is the machine's.
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
    except OSError as exc:
        raise _unusable(f"{path} cannot be written ({exc.strerror or 'error'})", path) from exc
