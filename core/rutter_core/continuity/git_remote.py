# ruff: noqa: PTH118
# (str paths and os calls, as in continuity.git)
"""The URL of a work tree's `origin` remote, read from its git config without running git
(as `continuity.git` reads the identity, with the same location rules and size limits): what
a workspace's project identity is derived from (docs/reference/workspaces.md#projects).

Only the repository's own config is read (`config` in its common directory); includes,
`~/.gitconfig` and `insteadOf` rewrites are not: the identity belongs to the directory, not to
the person reading it. The URL may hold credentials: the caller normalises it at once
(`workspaces.project.normalize_remote`) and never stores or shows it as read.
"""

from __future__ import annotations

import os

from rutter_core.continuity.git import (
    _KEY,
    _SECTION,
    _SPACE,
    CONFIG_MAX_BYTES,
    _config_value,
    _line_end,
    _read_file,
    _Repository,
    _Unavailable,
    find_gitdir,
)


def read_origin_url(root: str, *, owner_uid: int | None = None) -> str | None:
    """`remote.origin.url` of the work tree holding `root` (the last one, as git takes it), or
    None: no work tree, no origin, or a config git would refuse. Never raises for what it finds
    on disk."""
    if owner_uid is None and hasattr(os, "geteuid"):
        owner_uid = os.geteuid()
    try:
        repository = _Repository(find_gitdir(root, owner_uid))
        data = _read_file(os.path.join(repository.commondir, "config"), CONFIG_MAX_BYTES)
        return None if data is None else _origin_url(data)
    except (_Unavailable, OSError, ValueError):
        return None


def _origin_url(data: bytes) -> str | None:
    text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace").replace("\r\n", "\n")
    found: str | None = None
    in_origin = False
    at = 0
    while at < len(text):
        if text[at] in _SPACE:
            at += 1
        elif text[at] in "#;":
            at = _line_end(text, at)
        elif header := _SECTION.match(text, at):
            name, subsection = header[1].lower(), header[2]
            quoted = subsection is not None and subsection.strip() == '"origin"'
            in_origin = (name == "remote" and quoted) or name == "remote.origin"
            at = header.end()
        elif key := _KEY.match(text, at):
            value, at = _config_value(text, key.end())
            if in_origin and key[1].lower() == "url" and value is not None:
                found = value
        else:
            return None
    return found
