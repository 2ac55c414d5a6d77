"""The per-file refusals of discovery (docs/reference/discovery.md), and reading the files they
guard.

What a candidate source, the ignore file and a directory on the walk must be. The walk applies
these in its own order; `check_source` applies one source's in the same order, for a caller
that looks at a single file (the editor, when discovery stopped at another file first). One
definition, so a file the editor calls fine is one discovery delivers.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from os import stat_result

from rutter_core.discovery.fsread import FileReader, is_link
from rutter_core.discovery.ignore import IGNORE_FILE, IgnoreRules
from rutter_core.discovery.links import (
    MAX_STUB_BYTES,
    LinkEnd,
    resolve_link,
    stub_target,
    verify_unchanged,
)
from rutter_core.discovery.snapshot import Limits, SourceKind
from rutter_core.discovery.sourcetext import SourceText, decode_source
from rutter_core.kernel.errors import RutterError, discovery_error


def file_type(st: stat_result) -> str:
    """What a non-regular file is, for messages."""
    mode = st.st_mode
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISLNK, "symbolic link"),
    ):
        if test(mode):
            return name
    return "special file"


def require_regular(rel: str, st: stat_result) -> None:
    """A candidate source must be a regular file, never a link (`st` is its lstat)."""
    if is_link(st):
        raise discovery_error(
            "symlink",
            f"{rel} is a symbolic link where discovery follows none; make it a regular file "
            f"or exclude {rel} in {IGNORE_FILE}",
            path=rel,
        )
    if not stat.S_ISREG(st.st_mode):
        raise discovery_error(
            "not_regular_file",
            f"{rel} is a {file_type(st)}, not a regular file; remove it or replace it with "
            "a regular Markdown file",
            path=rel,
        )


def require_real_dir(rel: str, st: stat_result) -> bool:
    """True for a real directory; False when the path is something else (not a link)."""
    if is_link(st):
        raise discovery_error(
            "symlink",
            f"{rel} is a symbolic link to a directory; discovery never follows a linked "
            "directory (make it a real directory, or link the files inside it instead)",
            path=rel,
        )
    return stat.S_ISDIR(st.st_mode)


def read_source(
    reader: FileReader, rel: str, path: str, st: stat_result, limits: Limits
) -> SourceText:
    """The decoded, redacted text of the source at `path` (`too_large` on raw bytes, NUL and
    UTF-8 refusals, `concurrent_modification`), cached by `reader` while its identity holds."""
    try:
        return reader.read_decoded(
            path,
            st,
            max_bytes=limits.max_file_bytes,
            rel=rel,
            decoder="source",
            decode=lambda raw: decode_source(raw, rel=rel),
        )
    except RutterError as error:
        if error.code != "too_large":
            raise
        raise discovery_error(
            "too_large",
            f"{error.message}, or exclude {rel} in {IGNORE_FILE} to leave it out of what "
            "rutter delivers",
            path=error.path,
            details=error.details,
        ) from None


def require_deliverable(rel: str, text: SourceText, limits: Limits) -> None:
    """A source that is delivered must say something and fit the bound once redacted."""
    if text.blank:
        raise discovery_error(
            "empty_source",
            f"{rel} is empty or whitespace only; write its instructions or delete it "
            "(only a blank AGENTS.override.md is skipped)",
            path=rel,
        )
    if text.content_bytes > limits.max_file_bytes:
        raise discovery_error(
            "too_large",
            f"{rel} is {text.content_bytes} bytes after secret redaction, over the limit "
            f"of {limits.max_file_bytes} bytes; shorten it, or exclude {rel} in {IGNORE_FILE} "
            "to leave it out of what rutter delivers",
            path=rel,
            details={"bytes": text.content_bytes, "limit": limits.max_file_bytes},
        )


@dataclass(frozen=True, slots=True)
class Checked:
    """A candidate source that passed its own checks: its text, and where a link led."""

    text: SourceText
    link_target: str | None = None
    """For a link (or a git stub): the final file, workspace-relative
    (docs/reference/discovery.md)."""
    link_stub: bool = False
    link_hops: tuple[str, ...] = ()
    """For a link: the other links its chain passes through on the way to `link_target`,
    workspace-relative, in order."""


def require_candidate(root: str | None, rel: str, path: str, st: stat_result) -> None:
    """A candidate that is not read (superseded): a regular file, or a link 5.6 accepts."""
    if is_link(st) and root is not None:
        resolve_link(root, rel, path)
    else:
        require_regular(rel, st)


def check_candidate(
    reader: FileReader,
    rel: str,
    path: str,
    st: stat_result,
    *,
    kind: SourceKind,
    limits: Limits,
    root: str | None,
) -> Checked | None:
    """Every refusal that concerns this one (not ignored) source, as discovery applies them,
    following a link inside the workspace at `root` (docs/reference/discovery.md; no links without
    `root`).

    Returns its text, or None for a blank `AGENTS.override.md` (skipped, not refused). What
    depends on the other sources (counts, the total size, aliases) is the walk's to check.
    """
    end: LinkEnd | None = None
    if is_link(st) and root is not None:
        end = resolve_link(root, rel, path)
        text = _read_linked(reader, root, rel, end, limits)
    else:
        require_regular(rel, st)
        text = read_source(reader, rel, path, st, limits)
        if root is not None and text.raw_bytes <= MAX_STUB_BYTES and not text.redaction.redacted:
            named = stub_target(os.path.dirname(path), text.content.encode("utf-8"))
            if named is not None and named != path:
                end = resolve_link(root, rel, named, stub=True)
                text = _read_linked(reader, root, rel, end, limits)
    if kind == "agents_override" and text.blank:
        return None
    require_deliverable(end.rel if end is not None else rel, text, limits)
    if end is None:
        return Checked(text)
    assert root is not None  # links are followed only inside a root
    chain = (os.path.relpath(path, root).replace(os.sep, "/") for path, _, _ in end.chain)
    hops = tuple(hop for hop in chain if hop != rel)
    return Checked(text, end.rel, end.stub, hops)


def check_source(
    reader: FileReader,
    rel: str,
    path: str,
    st: stat_result,
    *,
    kind: SourceKind,
    limits: Limits,
    root: str | None = None,
) -> SourceText | None:
    """`check_candidate`'s text alone (the editor checking one file)."""
    checked = check_candidate(reader, rel, path, st, kind=kind, limits=limits, root=root)
    return None if checked is None else checked.text


def _read_linked(
    reader: FileReader, root: str, rel: str, end: LinkEnd, limits: Limits
) -> SourceText:
    """The final file of a link, read by its canonical path; the chain re-checked after."""
    try:
        text = read_source(reader, end.rel, end.path, end.st, limits)
    except RutterError as error:
        if error.code in ("symlink", "concurrent_modification"):
            verify_unchanged(rel, end)  # the link moved: say so, naming the link
            if error.code == "symlink":  # the final file itself became a link mid-read
                raise discovery_error(
                    "concurrent_modification",
                    f"{end.rel}, which {rel} links to, was replaced while it was read; "
                    "discovery was stopped so no mixed content is delivered; try again",
                    path=rel,
                ) from error
        raise
    verify_unchanged(rel, end)
    return text


def load_ignore_rules(
    reader: FileReader, path: str, st: stat_result, limits: Limits
) -> IgnoreRules:
    """The parsed ignore file at `path` (`st` its lstat), cached while its identity holds;
    a link, a special file, or one over its bounds or invalid is refused."""
    if is_link(st):
        raise discovery_error(
            "symlink",
            f"{IGNORE_FILE} is a symbolic link; make it a regular file",
            path=IGNORE_FILE,
        )
    if not stat.S_ISREG(st.st_mode):
        raise discovery_error(
            "not_regular_file",
            f"{IGNORE_FILE} is a {file_type(st)}, not a regular file",
            path=IGNORE_FILE,
        )
    if st.st_size > limits.max_ignore_bytes:
        raise discovery_error(
            "invalid_ignore",
            f"{IGNORE_FILE} is {st.st_size} bytes, over the limit of "
            f"{limits.max_ignore_bytes} bytes; shorten it",
            path=IGNORE_FILE,
            details={"bytes": st.st_size, "limit": limits.max_ignore_bytes},
        )
    return reader.read_decoded(
        path,
        st,
        max_bytes=limits.max_ignore_bytes,
        rel=IGNORE_FILE,
        decoder="ignore",
        decode=lambda raw: IgnoreRules.parse(
            raw, max_bytes=limits.max_ignore_bytes, max_patterns=limits.max_ignore_patterns
        ),
    )
