"""The rule table (anchor -> rules) and the scan pivots built from it."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cache
from typing import Final

from rutter_core.discovery.redaction import upstream
from rutter_core.discovery.redaction.assignments import LOWER_ANCHORS
from rutter_core.discovery.redaction.credentials import CREDENTIAL_ANCHORS
from rutter_core.discovery.redaction.formats import (
    ALNUM,
    B64URL,
    URL_CREDENTIALS,
    WORD,
    Rule,
    jwt_valid,
    match_basic_auth,
    match_private_key,
    match_putty,
    mixed_classes,
    regex_rule,
)
from rutter_core.discovery.redaction.normalise import normalise
from rutter_core.discovery.redaction.providers import PROVIDERS

_Entry = tuple[str, str | None, tuple[Rule, ...]]
_GITLAB_PREFIXES: Final = ("pat", "dt", "ft", "soat", "rt", "cbt", "imt", "ptt", "agent", "oas")


def _table() -> tuple[_Entry, ...]:
    """anchor -> (regex the text after the anchor must match, or None; rules at the anchor)."""
    github = (
        regex_rule("github_token", upstream.pattern("github_token", "GitHubTokenDetector", 0),
                   glue=True),
    )  # fmt: skip
    github_pat = (regex_rule("github_token", r"github_pat_[A-Za-z0-9_]{22,255}", glue=True),)
    gitlab = (
        *(
            regex_rule("gitlab_token", pattern, lead=B64URL, trail=B64URL)
            for pattern in upstream.literal_patterns("gitlab_token", "GitLabTokenDetector")
        ),
        # Longer tokens than detect-secrets' 50 and routable `glpat-<payload>.<9>` tokens.
        regex_rule(
            "gitlab_token",
            r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[0-9A-Za-z_-]{20,300}"
            r"(?:\.[0-9a-z]{9})?",
            glue=True,
        ),
    )
    slack = upstream.literal_patterns("slack", "SlackDetector")
    slack_token = (regex_rule("slack_token", slack[0], glue=True),)
    slack_app = (
        regex_rule(
            "slack_token", r"xapp-\d+-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+", lead=ALNUM, trail=ALNUM
        ),
    )
    slack_webhook = (regex_rule("slack_token", slack[1], lead=ALNUM, trail=WORD),)
    stripe = (regex_rule("stripe_key", r"[sr]k_(?:live|test)_[0-9a-zA-Z]{24,247}", glue=True),)
    stripe_webhook = (regex_rule("stripe_key", r"whsec_[0-9a-zA-Z]{32,128}", glue=True),)
    sk_dash = (
        regex_rule("anthropic_api_key", r"sk-ant-[A-Za-z0-9_-]{32,}", rank=2, glue=True),
        regex_rule(
            "openai_api_key",
            upstream.pattern("openai", "OpenAIDetector", 0),
            lead=B64URL,
            trail=B64URL,
        ),
        regex_rule(
            "openai_api_key",
            r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
            glue=True,
            check=lambda key: mixed_classes(key.split("-", 2)[2]),
        ),
        regex_rule(
            "openai_api_key", r"sk-[A-Za-z0-9]{32,}", lead=B64URL, trail=B64URL, check=mixed_classes
        ),
    )
    google = (regex_rule("google_api_key", r"AIza[0-9A-Za-z_-]{35}", glue=True),)
    # Glued to a lowercase word is fine (`keyAKIA…`); inside an upper-case run it is not a key.
    aws_access = (
        regex_rule(
            "aws_access_key",
            upstream.pattern("aws", "AWSKeyDetector", 0),
            lead=string.ascii_uppercase + string.digits,
            trail=ALNUM,
        ),
    )
    npm = (regex_rule("npm_token", r"npm_[A-Za-z0-9]{36}", lead=WORD, trail=WORD),)
    pypi = tuple(
        regex_rule("pypi_token", pattern, glue=True)
        for pattern in upstream.literal_patterns("pypi_token", "PypiTokenDetector")
    )
    jwt = (
        # detect-secrets' own regex ends lazily (it reports header.payload only); we need the
        # whole token, then use its validity check.
        regex_rule(
            "jwt",
            r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
            lead=B64URL + ".",
            trail=B64URL,
            check=jwt_valid,
        ),
    )
    return (
        *((f"gh{c}_", None, github) for c in "pousr"),
        ("github_pat_", None, github_pat),
        *((f"gl{p}-", None, gitlab) for p in _GITLAB_PREFIXES),
        ("GR1348941", None, gitlab),
        *((f"xox{c}-", None, slack_token) for c in "abposr"),
        ("xapp-", None, slack_app),
        ("https://hooks.slack.com/", None, slack_webhook),
        *((f"{p}_{mode}_", None, stripe) for p in ("sk", "rk") for mode in ("live", "test")),
        ("whsec_", None, stripe_webhook),
        ("sk-", None, sk_dash),
        ("AIza", None, google),
        *((prefix, None, aws_access) for prefix in ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")),
        ("npm_", None, npm),
        ("pypi-AgE", None, pypi),
        ("eyJ", None, jwt),
        ("-----BEGIN ", None, (Rule("private_key", match_private_key, rank=3),)),
        ("---- BEGIN ", None, (Rule("private_key", match_private_key, rank=3),)),
        ("PuTTY-User-Key-File-", None, (Rule("private_key", match_putty, rank=3),)),
        # Every URL has `://`; only those with `user:password@` reach Python.
        ("://", URL_CREDENTIALS, (Rule("basic_auth_url", match_basic_auth, context=True),)),
        *CREDENTIAL_ANCHORS,
        *PROVIDERS(),
    )


# Scan pivots: a character every anchor contains (or starts with). sre scans fast only for
# patterns that begin with a literal, so there is one scan per pivot instead of one regex with
# many alternatives; lookarounds confirm the anchor before Python sees the position.
_PIVOT_CHARS: Final = "_-J:.@"


@dataclass(frozen=True, slots=True)
class _Pivot:
    scan: re.Pattern[str]
    anchors: tuple[tuple[str, int, re.Pattern[str] | None, tuple[Rule, ...]], ...]


@cache
def pivots() -> tuple[_Pivot, ...]:
    """The scans, built on first use (reading detect-secrets' patterns costs a few ms)."""
    grouped: dict[str, list[tuple[str, int, str | None, tuple[Rule, ...]]]] = {}
    for anchor, after, rules in _table():
        index = next((i for i, c in enumerate(anchor) if c in _PIVOT_CHARS), 0)
        grouped.setdefault(anchor[index], []).append((anchor, index, after, rules))
    pivots = []
    for char, entries in grouped.items():
        inner, first = [], []
        for anchor, index, after, _rules in entries:
            ahead = re.escape(anchor[index + 1 :]) + (after or "")
            branch = f"(?={ahead})" if ahead else ""
            if index:
                inner.append(f"(?<={re.escape(anchor[: index + 1])})" + branch)
            else:
                first.append(branch or "")
        branches = list(first)
        if inner:
            # Gate on the one character before the pivot: most `-` and `_` in ordinary text
            # fail this single class test and never reach the per-anchor lookbehinds. Anchors
            # with a space there (` -p`) stand apart: a space opens the gate at every ` - ` of
            # Markdown, and such a hit then tries their lookaheads, not every lookbehind.
            spaced = [branch for branch in inner if branch.startswith("(?<=\\ ")]
            inner = [branch for branch in inner if branch not in spaced]
            if spaced:
                branches.append(f"(?<=\\ {re.escape(char)})(?:" + "|".join(spaced) + ")")
            before = "".join(sorted({anchor[index - 1] for anchor, index, *_ in entries if index}))
            before = before.replace(" ", "")
            if inner:
                gate = f"(?<=[{re.escape(before)}]{re.escape(char)})"
                branches.append(gate + "(?:" + "|".join(inner) + ")")
        if len(entries) == 1 and not entries[0][1]:
            # One anchor that starts with its pivot (`curl`, `machine`, `EAAA`): the whole
            # anchor is the literal prefix sre searches for, faster than its first letter.
            anchor, _index, after, _rules = entries[0]
            scan = re.compile(re.escape(anchor) + (f"(?={after})" if after else ""))
        else:
            scan = re.compile(re.escape(char) + "(?:" + "|".join(branches) + ")")
        compiled = tuple(
            (anchor, index, re.compile(after) if after else None, rules)
            for anchor, index, after, rules in entries
        )
        pivots.append(_Pivot(scan, compiled))
    return tuple(pivots)


@cache
def _anchors() -> tuple[str, ...]:
    return tuple(anchor for anchor, _after, _rules in _table())


def _has_anchor(text: str) -> bool:
    """Whether any rule could fire: a text without an anchor is never changed."""
    copy = normalise(text)
    if copy is not None and _has_anchor(copy.text):
        return True
    if any(anchor in text for anchor in _anchors()):
        return True
    low = ascii_lower(text)
    return any(anchor in low for anchor in LOWER_ANCHORS)


def ascii_lower(text: str) -> str:
    """Lowercase ASCII letters only, so offsets stay aligned (`str.lower` can change length)."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")
