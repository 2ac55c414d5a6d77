"""Links inside the workspace (docs/reference/discovery.md): following a candidate source that is a
symbolic link (or a git `core.symlinks=false` stub file) to the regular file it ends at.

A link is followed one component at a time, the way the kernel would, but checking every step
with `lstat`: at most `MAX_LINK_HOPS` links in a chain, never a step above the workspace root,
never through a linked directory, and the chain must end at a regular file. Anything else is
refused with `symlink`, naming the link, where it points (workspace-relative, or "outside the
workspace"; never a path outside it) and what to do. The final file is then read by its own
canonical path with discovery's ordinary fail-closed read, and the chain is resolved again
afterwards: a link swapped while the file was read is `concurrent_modification`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Final, NoReturn

from rutter_core.discovery.fsread import FileIdentity, identity_of, is_link, lstat_or_none
from rutter_core.discovery.ignore import IGNORE_FILE
from rutter_core.kernel.errors import RutterError, discovery_error

MAX_LINK_HOPS: Final = 8
"""A chain of 8 links is followed; a 9th is refused."""

# A git stub holds the link's target path and nothing else: a file name here (the stub and
# its target share a directory). NAME_MAX bounds it, so larger files are never stubs.
MAX_STUB_BYTES: Final = 255


@dataclass(frozen=True, slots=True)
class LinkEnd:
    """Where a link (or a stub) ends: a regular file inside the workspace."""

    rel: str
    """The final file, workspace-relative."""
    path: str
    """The final file's canonical absolute path (no link on the way)."""
    st: os.stat_result
    """Its lstat."""
    stub: bool
    chain: tuple[tuple[str, FileIdentity, str], ...]
    """Every link followed: its path, identity and the text it holds (to re-check after the
    read)."""


def _remedy(rel: str) -> str:
    return f"Point it at a regular file inside the workspace, or exclude {rel} in {IGNORE_FILE}"


def _refuse(rel: str, why: str, points_to: str | None = None) -> NoReturn:
    where = f" (it points to {points_to})" if points_to else ""
    raise discovery_error(
        "symlink",
        f"{rel} is a link that discovery cannot follow: {why}{where}. {_remedy(rel)}",
        path=rel,
    )


def resolve_target_link(root: str, rel: str, path: str) -> LinkEnd:
    """`resolve_link` for a target that is itself a link. The ignore file excludes instruction
    files, not targets, so a refusal names the remedies that help here instead."""
    try:
        return resolve_link(root, rel, path)
    except RutterError as error:
        remedy = _remedy(rel)
        if error.code != "symlink" or not error.message.endswith(remedy):
            raise
        raise discovery_error(
            "symlink",
            f"{error.message.removesuffix(remedy)}Give the target by its real path, or point "
            "the link at a regular file inside the workspace",
            path=error.path,
        ) from None


def _rel_of(root: str, path: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")


def resolve_link(root: str, rel: str, path: str, *, stub: bool = False) -> LinkEnd:
    """Follow the link at `path` (workspace-relative `rel`) to the regular file it ends at.

    `path` is built from the resolved root through real directories. With `stub`, `path` is
    the file a git stub names (itself maybe a link): the stub counts as the first hop.
    """
    chain: list[tuple[str, FileIdentity, str]] = []
    seen: set[str] = set()
    current = path
    hops = 1 if stub else 0
    while True:
        st = lstat_or_none(current)
        here = _rel_of(root, current)
        if st is None:
            _refuse(rel, "it is dangling, nothing exists where it ends", here)
        if not is_link(st):
            if stat.S_ISDIR(st.st_mode):
                _refuse(rel, "it ends at a directory, not a file", here)
            if not stat.S_ISREG(st.st_mode):
                _refuse(rel, "it ends at something that is not a regular file", here)
            if _may_hold_secrets(here):
                _refuse(
                    rel,
                    "it ends at a file that may hold secrets (an environment file, a key, a "
                    "credential store or git's own files), which a link never delivers",
                    here,
                )
            return LinkEnd(here, current, st, stub, tuple(chain))
        if current in seen:
            _refuse(rel, "its chain of links forms a loop", here)
        seen.add(current)
        hops += 1
        if hops > MAX_LINK_HOPS:
            _refuse(rel, f"it takes more than {MAX_LINK_HOPS} links to reach a file")
        text = os.readlink(current)
        chain.append((current, identity_of(st), text))
        current = _step(root, rel, os.path.dirname(current), text)


# Where a link may not lead although it stays in the workspace: a repository can ship a link
# (`CLAUDE.md -> .env`) to a file that only exists on your machine and was never meant for an
# agent. Redaction would catch known secret formats, not everything such a file holds.
_SECRET_NAMES: Final = frozenset(
    {".envrc", ".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass",
     "credentials", "credentials.json", ".htpasswd"}
)  # fmt: skip
_KEY_NAMES: Final = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
_KEY_SUFFIXES: Final = (".pem", ".key", ".p12", ".pfx", ".ppk", ".jks", ".kdbx", ".keystore")


def _may_hold_secrets(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1].casefold()
    return (
        ".git" in parts[:-1]
        or name in _SECRET_NAMES
        or name == ".env"
        or name.startswith(".env.")
        or name.endswith(".env")
        or name.startswith(_KEY_NAMES)
        or name.endswith(_KEY_SUFFIXES)
    )


def _step(root: str, rel: str, start: str, text: str) -> str:
    """The path that link text `text`, read in directory `start`, names: resolved component by
    component, refusing a step out of the root or through a linked directory."""
    if text.endswith(("/", "/.")):
        # `real.md/` or `real.md/.` names a directory: the kernel refuses it when it ends at a
        # file (ENOTDIR), and dropping the slash below would follow it all the same.
        _refuse(rel, "its target path ends in '/' (or '/.'), which names a directory, not a file")
    if os.path.isabs(text):
        # An absolute link into the workspace: walked from the root like a relative one, its
        # `..` resolved step by step as the kernel would (never collapsed in the text).
        prefix = root.rstrip("/") + "/"
        if text != root and not text.startswith(prefix):
            _refuse(rel, "it points outside the workspace")
        text = text[len(prefix) :] if text != root else ""
        start = root
    parts = [part for part in text.split("/") if part not in ("", ".")]
    current = start
    for index, part in enumerate(parts):
        if part == "..":
            if current == root:
                _refuse(rel, "it points outside the workspace")
            current = os.path.dirname(current)
            continue
        current = os.path.join(current, part)
        if index == len(parts) - 1:
            break
        st = lstat_or_none(current)
        if st is None:
            _refuse(rel, "it is dangling, nothing exists where it ends", _rel_of(root, current))
        if is_link(st):
            _refuse(rel, "it passes through a linked directory", _rel_of(root, current))
        if not stat.S_ISDIR(st.st_mode):
            _refuse(rel, "it is dangling, nothing exists where it ends", _rel_of(root, current))
    if current == root:
        _refuse(rel, "it ends at a directory, not a file", ".")
    return current


def stub_target(dir_path: str, raw: bytes) -> str | None:
    """The file a git `core.symlinks=false` stub names, or None when `raw` is not one.

    A stub's whole content is the name of an existing instruction file (`.md`) in the same
    directory: no newline, no separator, no other text.
    """
    if not raw or len(raw) > MAX_STUB_BYTES:
        return None
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if (
        name in (".", "..")
        or not name.lower().endswith(".md")
        or any(ch in name for ch in "/\\\x00")
        or not name.isprintable()
        or name != name.strip()
    ):
        return None
    path = os.path.join(dir_path, name)
    st = lstat_or_none(path)
    if st is None or not (is_link(st) or stat.S_ISREG(st.st_mode)):
        return None
    return path


def verify_unchanged(rel: str, end: LinkEnd) -> None:
    """After the final file was read: every link of the chain still holds the same text (same
    identity) and the final file is the same file (`concurrent_modification` otherwise, naming
    the link). The directories on the way were real when resolved; the read itself refuses a
    landing anywhere but the canonical path (`fsread`)."""
    for link_path, identity, text in end.chain:
        st = lstat_or_none(link_path)
        try:
            again = os.readlink(link_path) if st is not None and is_link(st) else None
        except OSError:
            again = None
        if st is None or identity_of(st) != identity or again != text:
            _changed(rel)
    final = lstat_or_none(end.path)
    if final is None or identity_of(final) != identity_of(end.st):
        _changed(rel)


def _changed(rel: str) -> NoReturn:
    raise discovery_error(
        "concurrent_modification",
        f"{rel} is a link that changed while the file it points to was read; discovery was "
        "stopped so no mixed content is delivered; try again",
        path=rel,
    )
