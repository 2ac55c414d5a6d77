"""Passwords where a login is written down: a URL without its scheme, `curl -u`, `.netrc`, an
`Authorization: Basic` header, a docker config's `"auth"`, a `Bearer` header. Only the secret
part is replaced; user names and hosts stay."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Final

from rutter_core.discovery.redaction.formats import Rule, mixed_classes
from rutter_core.discovery.redaction.literals import is_literal, looks_typed

_Span = tuple[int, int]

# `user:password@host` with no `scheme://`: looked for backwards from the `@`. The user starts
# the word (after a space, quote, `=`, `(`, `,`); a host needs a letter TLD, `localhost` or a
# dotted quad, so `npm:lodash@4.17.21` and `node:20@sha256:…` are no logins.
SCHEMELESS_HOST: Final = (
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}(?![A-Za-z0-9-])"
    r"|localhost(?![A-Za-z0-9.-])|[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?![0-9.])"
)
# Matched on the reversed text before the `@` (a match at one position, not a search back).
_LOGIN_REVERSED: Final = re.compile(
    r"(?P<pw>[^\s:/?#\[\]@\"'`<>]{1,128}):(?P<user>[A-Za-z0-9._%+~-]{1,64})(?=[\s\"'`(<=,;|]|\Z)"
)
_NOT_LOGINS: Final = frozenset({"mailto", "sip", "sips", "xmpp", "tel", "im", "git", "ssh"})


def match_schemeless_login(text: str, pos: int) -> _Span | None:
    if not pos or text[pos - 1] in " \t\r\n:" or text.rfind(":", max(0, pos - 194), pos) < 0:
        return None
    window = text[max(0, pos - 200) : pos][::-1]
    found = _LOGIN_REVERSED.match(window)
    if found is None or found.group("user")[::-1].lower() in _NOT_LOGINS:
        return None
    password = found.group("pw")[::-1]
    # A generated or chosen password has a digit, a symbol or mixed case; `team:platform@…`
    # and `notify:john.doe@example.com` are addresses, not logins.
    if not (looks_typed(password) and is_literal(password, quoted=True)):
        return None
    return pos - found.end("pw"), pos


# `curl … -u user:password` / `--user user:password` / `--user=…`: found at the option, with
# `curl` before it on the same (possibly backslash-continued) line, at most 1 KiB back.
_CURL_USER: Final = re.compile(
    r"(?:-u|--user)(?:[ \t]+|=)(?P<q>[\"']?)[^\s:\"']*:(?P<pw>[^\s\"']+)(?P=q)"
)
_CURL_REACH: Final = 1024
_COMMAND_START: Final = " \t\n;|&(`$\"'"


def _curl_before(text: str, pos: int) -> bool:
    start = text.rfind("curl", max(0, pos - _CURL_REACH), pos)
    if start < 0 or (start and text[start - 1] not in _COMMAND_START):
        return False
    return _same_command_line(text, start, pos)


def _same_command_line(text: str, start: int, pos: int) -> bool:
    """No line break between `start` and `pos` but backslash-continued ones."""
    newline = text.find("\n", start, pos)
    while newline >= 0:
        if not text.endswith(("\\", "\\\r"), start, newline):
            return False  # a new command line
        newline = text.find("\n", newline + 1, pos)
    return True


def match_curl_user(text: str, pos: int) -> _Span | None:
    if pos and text[pos - 1] not in " \t":
        return None
    found = _CURL_USER.match(text, pos)
    if found is None or not is_literal(found.group("pw"), quoted=True):
        return None
    return found.span("pw") if _curl_before(text, pos) else None


# `.netrc`: `machine HOST login USER [account A] password SECRET` (also on several lines).
_NETRC: Final = re.compile(
    r"machine[ \t]+\S+\s+login[ \t]+\S+(?:\s+account[ \t]+\S+)?\s+password[ \t]+(?P<pw>\S+)"
)


# The MySQL and MariaDB clients take the password glued to `-p` (`-pS3cret`, `-p'S3cret'`;
# `-p` alone prompts, and `-p word` names a database), or as `--password=` (an assignment).
_MYSQL: Final = re.compile(r"(?:mysql|mariadb)[a-z_-]{0,16}(?![A-Za-z0-9_.-])")
_MYSQL_P: Final = re.compile(
    r"-p(?:(?P<q>[\"'])(?P<qv>[^\s\"']{1,256})(?P=q)|(?P<v>[^\s\"']{1,256}))"
)


def _mysql_before(text: str, pos: int) -> bool:
    """A MySQL or MariaDB client starts the command line `pos` is on (1 KiB back at most)."""
    reach = max(0, pos - _CURL_REACH)
    for name in ("mysql", "mariadb"):
        at = text.rfind(name, reach, pos)
        while at >= 0:
            if (
                (not at or text[at - 1] in _COMMAND_START or text[at - 1] == "/")
                and _MYSQL.match(text, at) is not None
                and _same_command_line(text, at, pos)
            ):
                return True
            at = text.rfind(name, reach, at)
    return False


def match_mysql_password(text: str, pos: int) -> _Span | None:
    """At the space before `-p` (the anchor is ` -p`: a `-p` inside a word never reaches
    Python, and `--upgrade-package` is common in prose)."""
    found = _MYSQL_P.match(text, pos + 1)
    if found is None:
        return None
    group = "qv" if found.group("qv") is not None else "v"
    if not is_literal(found.group(group), quoted=True) or not _mysql_before(text, pos):
        return None
    return found.span(group)


# `.npmrc`: `_auth=<base64 user:password>` (also per registry, `//host/:_auth=`).
_NPM_AUTH: Final = re.compile(
    r"_auth[ \t]*=[ \t]*(?P<q>[\"']?)(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?P=q)"
)


def match_npm_auth(text: str, pos: int) -> _Span | None:
    if pos and text[pos - 1] not in " \t\n:\"'":
        return None
    found = _NPM_AUTH.match(text, pos)
    if found is None or not is_literal(found.group("v"), quoted=True):
        return None
    end = found.end("v")
    if end < len(text) and text[end] not in " \t\r\n\"'#;,":
        return None
    return found.span("v")


# Azure shared access signatures: the `sig=` of a SAS URL or connection string (an HMAC,
# base64 and usually percent-encoded) and the `SharedAccessSignature sr=…&sig=…` of Service
# Bus and Event Hubs. The signature is the credential; the other parameters are not.
_SAS_SIG: Final = re.compile(
    r"sig=(?P<v>(?:[A-Za-z0-9+/]|%[0-9A-Fa-f]{2}){20,256}(?:=|%3[Dd]){0,2})"
)


def match_sas_signature(text: str, pos: int) -> _Span | None:
    if not pos or text[pos - 1] not in "?&; \t":
        return None
    found = _SAS_SIG.match(text, pos)
    if found is None:
        return None
    end = found.end("v")
    if end < len(text) and text[end] not in "&#;\"' \t\r\n)<>`":
        return None
    value = found.group("v")
    if not mixed_classes(value.replace("%2B", "").replace("%2F", "").replace("%3D", "")):
        return None
    return found.span("v")


def match_netrc(text: str, pos: int) -> _Span | None:
    found = _NETRC.match(text, pos)
    if found is None or not is_literal(found.group("pw"), quoted=True):
        return None
    return found.span("pw")


def _decodes_to_login(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        login = decoded.decode("ascii")
    except (binascii.Error, ValueError):
        return False
    _user, sep, password = login.partition(":")
    return bool(sep and password and login.isprintable()) and is_literal(password, quoted=True)


_BASIC: Final = re.compile(r"Basic[ \t]+(?P<v>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")


def match_basic_header(text: str, pos: int) -> _Span | None:
    found = _BASIC.match(text, pos)
    if found is None or not _decodes_to_login(found.group("v")):
        return None
    return found.span("v")


_DOCKER_AUTH: Final = re.compile(r"\"auth\"[ \t]*:[ \t]*\"(?P<v>[A-Za-z0-9+/]{6,}={0,2})\"")


def match_docker_auth(text: str, pos: int) -> _Span | None:
    found = _DOCKER_AUTH.match(text, pos)
    if found is None or not _decodes_to_login(found.group("v")):
        return None
    return found.span("v")


# RFC 6750 b64token; a random-looking value only (`Bearer YOUR_TOKEN` and `Bearer $T` stay).
_BEARER: Final = re.compile(r"Bearer[ \t]+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])")


def match_bearer(text: str, pos: int) -> _Span | None:
    found = _BEARER.match(text, pos)
    if found is None or not mixed_classes(found.group("v")):
        return None
    return found.span("v")


CREDENTIAL_ANCHORS: Final[tuple[tuple[str, str | None, tuple[Rule, ...]], ...]] = (
    (
        "@",
        f"(?:{SCHEMELESS_HOST})",
        (Rule("basic_auth_url", match_schemeless_login, context=True),),
    ),
    ("-u", r"(?:[ \t]+|=)", (Rule("login_password", match_curl_user, context=True),)),
    ("--user", r"(?:[ \t]+|=)", (Rule("login_password", match_curl_user, context=True),)),
    ("machine", r"[ \t]", (Rule("login_password", match_netrc, context=True),)),
    (" -p", r"[^\s]", (Rule("login_password", match_mysql_password, context=True),)),
    ("_auth", r"[ \t]*=", (Rule("npm_token", match_npm_auth, context=True),)),
    ("sig=", r"(?:[A-Za-z0-9+/]|%[0-9A-Fa-f]{2}){20}", (Rule("azure_sas", match_sas_signature),)),
    ("Basic", r"[ \t]+[A-Za-z0-9+/]{6}", (Rule("basic_auth", match_basic_header, context=True),)),
    ('"auth"', r"[ \t]*:", (Rule("basic_auth", match_docker_auth, context=True),)),
    ("Bearer", r"[ \t]+[A-Za-z0-9._~+/-]{16}", (Rule("bearer_token", match_bearer, context=True),)),
)
