"""The per-file refusals of discovery (contract 5.3), and reading the files they guard.

What a candidate source, the ignore file and a directory on the walk must be. The walk applies
these in its own order; `check_source` applies one source's in the same order, for a caller
that looks at a single file (the editor, when discovery stopped at another file first). One
definition, so a file the editor calls fine is one discovery delivers.
"""

from __future__ import annotations

import stat
from os import stat_result

from rutter_core.discovery.fsread import FileReader, is_link
from rutter_core.discovery.ignore import IGNORE_FILE, IgnoreRules
from rutter_core.discovery.snapshot import Limits, SourceKind
from rutter_core.discovery.sourcetext import SourceText, decode_source
from rutter_core.kernel.errors import discovery_error


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
            f"{rel} is a symbolic link; instruction files must be regular files inside the "
            "workspace (replace the link with the file itself)",
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
            f"{rel} is a symbolic link; discovery never follows links (replace it with "
            "a real directory)",
            path=rel,
        )
    return stat.S_ISDIR(st.st_mode)


def read_source(
    reader: FileReader, rel: str, path: str, st: stat_result, limits: Limits
) -> SourceText:
    """The decoded, redacted text of the source at `path` (`too_large` on raw bytes, NUL and
    UTF-8 refusals, `concurrent_modification`), cached by `reader` while its identity holds."""
    return reader.read_decoded(
        path,
        st,
        max_bytes=limits.max_file_bytes,
        rel=rel,
        decoder="source",
        decode=lambda raw: decode_source(raw, rel=rel),
    )


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
            f"of {limits.max_file_bytes} bytes; shorten it",
            path=rel,
            details={"bytes": text.content_bytes, "limit": limits.max_file_bytes},
        )


def check_source(
    reader: FileReader,
    rel: str,
    path: str,
    st: stat_result,
    *,
    kind: SourceKind,
    limits: Limits,
) -> SourceText | None:
    """Every refusal that concerns this one (not ignored) source, as discovery applies them.

    Returns its text, or None for a blank `AGENTS.override.md` (skipped, not refused). What
    depends on the other sources (counts, the total size) is the walk's to check.
    """
    require_regular(rel, st)
    text = read_source(reader, rel, path, st, limits)
    if kind == "agents_override" and text.blank:
        return None
    require_deliverable(rel, text, limits)
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
