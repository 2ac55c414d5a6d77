"""A workspace's project identity (docs/reference/workspaces.md#projects): what makes two
registrations (two paths, two machines, two clones) one project.

An identity is a string in one of three forms, and its `source` says where it came from:

- `remote`: the repository's `origin` remote, normalised (`normalize_remote`): the host,
  lowercased, then the path, without the transport (scp-like `git@host:path`, `ssh://`,
  `https://`, `git://`), the port, the credentials, a query or fragment, and a trailing `.git`
  or slash. `git@github.com:Acme/widget.git` and `https://user:token@GitHub.com/Acme/widget`
  are both `github.com/Acme/widget` (the path keeps its case: hosts differ on whether it
  matters). A remote that is a local path (`/srv/git/x.git`, `file://…`) names a place on one
  machine, not a project, and gives no identity.
- `named`: given by the person (`--project NAME`); a NAME in a remote's form is normalised the
  same way, so `--project git@github.com:acme/widget.git` joins the remote's project.
- `local`: neither: `local:<workspace ID>`, unique to that registration, so nothing merges by
  accident. A NAME may not take this form.

Credentials never reach the store: normalisation drops them, and a NAME still holding an `@`
before its first `/` (what a credential looks like) is refused rather than stored.
"""

from __future__ import annotations

import re
from typing import Final, Literal
from urllib.parse import urlsplit

from rutter_core.kernel.errors import RejectedError

ProjectSource = Literal["remote", "named", "local"]

MAX_PROJECT_LENGTH: Final = 200
LOCAL_PREFIX: Final = "local:"
_URL: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# scp-like: [user@]host:path, where host holds no slash (git's own rule for telling it from a
# local path) and is not a single letter (a Windows drive, `C:\\x`).
_SCP: Final = re.compile(r"^(?:[^@/]*@)?(\[[^\]/]+\]|[^:/]{2,}):(.*)$")
_NETWORK_SCHEMES: Final = frozenset(
    {"ssh", "git", "http", "https", "git+ssh", "ssh+git", "ftp", "ftps"}
)
_PRINTABLE: Final = re.compile(r"^[\x21-\x7e]+$")


def local_project(workspace_id: str) -> str:
    """The local identity of a registration without a remote or a name."""
    return f"{LOCAL_PREFIX}{workspace_id}"


def normalize_remote(url: str) -> str | None:
    """The project identity a remote URL names (`host/path`), or None when it names none (a
    local path, `file://`, an unknown scheme, no host or no path). Never keeps credentials."""
    text = url.strip()
    if not text or any(ch.isspace() or ord(ch) < 0x20 for ch in text):
        return None
    scheme = _URL.match(text)
    if scheme is not None:
        if scheme[1].lower() not in _NETWORK_SCHEMES:
            return None
        try:
            parts = urlsplit(text)
            host = parts.hostname  # lowercased, without credentials and port
        except ValueError:  # a malformed port or bracket
            return None
        path = parts.path
    else:
        scp = _SCP.match(text)
        if scp is None:
            return None  # a local path
        host, path = scp[1].strip("[]").lower(), scp[2]
    if not host:
        return None
    return _joined(host.rstrip("."), path)


def _joined(host: str, path: str) -> str | None:
    segments = [segment for segment in path.split("/") if segment and segment != "."]
    if segments and segments[-1].endswith(".git"):
        segments[-1] = segments[-1][: -len(".git")]
        if not segments[-1]:
            segments.pop()
    if not segments or ".." in segments:
        return None
    identity = "/".join([host, *segments])
    return identity if len(identity) <= MAX_PROJECT_LENGTH else None


def named_project(name: str) -> str:
    """The identity a person gives (`--project NAME`): a remote's form is normalised like the
    remote; anything else must be 1-200 printable ASCII characters without spaces, and may
    neither take the local form nor look like it carries a credential (`invalid_project`)."""
    text = name.strip()
    if _URL.match(text) or ("@" in text.split(":", 1)[0] and _SCP.match(text)):
        normalised = normalize_remote(text)
        if normalised is not None:
            return normalised
        raise _invalid("it is a URL that names no project (no host or no path)")
    if not text or len(text) > MAX_PROJECT_LENGTH or not _PRINTABLE.match(text):
        raise _invalid(f"use 1-{MAX_PROJECT_LENGTH} printable ASCII characters without spaces")
    if text.startswith(LOCAL_PREFIX):
        raise _invalid(f"{LOCAL_PREFIX!r} starts only the local identity rutter gives")
    if "@" in text.split("/", 1)[0]:
        raise _invalid("an '@' before the first '/' looks like a credential; leave it out")
    return text


def _invalid(why: str) -> RejectedError:
    # The name is never echoed: it may hold a credential.
    return RejectedError("invalid_project", f"invalid project name: {why}")
