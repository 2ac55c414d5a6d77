"""The rule table (anchor -> rules) and the scan pivots built from it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.slack import SlackDetector

from rutter_core.discovery.redaction.assignments import LOWER_ANCHORS
from rutter_core.discovery.redaction.formats import (
    ALNUM,
    B64URL,
    URL_CREDENTIALS,
    WORD,
    Rule,
    ds_pattern,
    jwt_valid,
    match_basic_auth,
    match_private_key,
    match_putty,
    mixed_classes,
    regex_rule,
)

_GITHUB: Final = (
    regex_rule("github_token", ds_pattern(GitHubTokenDetector, 0), lead=WORD, trail=WORD),
)
_GITHUB_PAT: Final = (
    regex_rule("github_token", r"github_pat_[A-Za-z0-9_]{22,255}", lead=WORD, trail=WORD),
)
_GITLAB: Final = (
    *(
        regex_rule("gitlab_token", pattern, lead=B64URL, trail=B64URL)
        for pattern in GitLabTokenDetector.denylist
    ),
    # Longer tokens than detect-secrets' 50 and routable `glpat-<payload>.<9>` tokens.
    regex_rule(
        "gitlab_token",
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[0-9A-Za-z_-]{20,300}(?:\.[0-9a-z]{9})?",
        lead=B64URL,
        trail=B64URL,
    ),
)
_SLACK_TOKEN: Final = (
    regex_rule("slack_token", ds_pattern(SlackDetector, 0), lead=ALNUM, trail=ALNUM),
)
_SLACK_APP: Final = (
    regex_rule("slack_token", r"xapp-\d+-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+", lead=ALNUM, trail=ALNUM),
)
_SLACK_WEBHOOK: Final = (
    regex_rule("slack_token", ds_pattern(SlackDetector, 1), lead=ALNUM, trail=WORD),
)
_STRIPE: Final = (
    regex_rule("stripe_key", r"[sr]k_(?:live|test)_[0-9a-zA-Z]{24,247}", lead=WORD, trail=ALNUM),
)
_STRIPE_WEBHOOK: Final = (
    regex_rule("stripe_key", r"whsec_[0-9a-zA-Z]{32,128}", lead=WORD, trail=ALNUM),
)
_SK_DASH: Final = (
    regex_rule("anthropic_api_key", r"sk-ant-[A-Za-z0-9_-]{32,}", lead=B64URL, rank=2),
    regex_rule("openai_api_key", ds_pattern(OpenAIDetector, 0), lead=B64URL, trail=B64URL),
    regex_rule(
        "openai_api_key",
        r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
        lead=B64URL,
        check=lambda key: mixed_classes(key.split("-", 2)[2]),
    ),
    regex_rule(
        "openai_api_key", r"sk-[A-Za-z0-9]{32,}", lead=B64URL, trail=B64URL, check=mixed_classes
    ),
)
_GOOGLE: Final = (
    regex_rule("google_api_key", r"AIza[0-9A-Za-z_-]{35}", lead=B64URL, trail=B64URL),
)
_AWS_ACCESS: Final = (
    regex_rule("aws_access_key", ds_pattern(AWSKeyDetector, 0), lead=ALNUM, trail=ALNUM),
)
_NPM: Final = (regex_rule("npm_token", r"npm_[A-Za-z0-9]{36}", lead=WORD, trail=WORD),)
_PYPI: Final = tuple(
    regex_rule("pypi_token", pattern, lead=B64URL, trail=B64URL)
    for pattern in PypiTokenDetector.denylist
)
_JWT: Final = (
    # detect-secrets' own regex ends lazily (it reports header.payload only); we need the whole
    # token, then use its validity check.
    regex_rule(
        "jwt",
        r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
        lead=B64URL + ".",
        trail=B64URL,
        check=jwt_valid,
    ),
)
_PRIVATE_KEY: Final = (Rule("private_key", match_private_key, rank=3),)
_PUTTY_KEY: Final = (Rule("private_key", match_putty, rank=3),)
_BASIC_AUTH_RULE: Final = (Rule("basic_auth_url", match_basic_auth, context=True),)

# anchor -> (regex the text after the anchor must match, or None; rules tried at the anchor)
_ANCHORED: Final[tuple[tuple[str, str | None, tuple[Rule, ...]], ...]] = (
    *((f"gh{c}_", None, _GITHUB) for c in "pousr"),
    ("github_pat_", None, _GITHUB_PAT),
    *(
        (f"gl{p}-", None, _GITLAB)
        for p in ("pat", "dt", "ft", "soat", "rt", "cbt", "imt", "ptt", "agent", "oas")
    ),
    ("GR1348941", None, _GITLAB),
    *((f"xox{c}-", None, _SLACK_TOKEN) for c in "abposr"),
    ("xapp-", None, _SLACK_APP),
    ("https://hooks.slack.com/", None, _SLACK_WEBHOOK),
    *((f"{p}_{mode}_", None, _STRIPE) for p in ("sk", "rk") for mode in ("live", "test")),
    ("whsec_", None, _STRIPE_WEBHOOK),
    ("sk-", None, _SK_DASH),
    ("AIza", None, _GOOGLE),
    *((prefix, None, _AWS_ACCESS) for prefix in ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")),
    ("npm_", None, _NPM),
    ("pypi-AgE", None, _PYPI),
    ("eyJ", None, _JWT),
    ("-----BEGIN ", None, _PRIVATE_KEY),
    ("---- BEGIN ", None, _PRIVATE_KEY),
    ("PuTTY-User-Key-File-", None, _PUTTY_KEY),
    # Every URL has `://`; only those with `user:password@` reach Python.
    ("://", URL_CREDENTIALS, _BASIC_AUTH_RULE),
)

# Scan pivots: a character every anchor contains (or starts with). sre scans fast only for
# patterns that begin with a literal, so there is one scan per pivot instead of one regex with
# many alternatives; lookarounds confirm the anchor before Python sees the position.
_PIVOT_CHARS: Final = "_-J:"


@dataclass(frozen=True, slots=True)
class _Pivot:
    scan: re.Pattern[str]
    anchors: tuple[tuple[str, int, re.Pattern[str] | None, tuple[Rule, ...]], ...]


def _build_pivots() -> tuple[_Pivot, ...]:
    grouped: dict[str, list[tuple[str, int, str | None, tuple[Rule, ...]]]] = {}
    for anchor, after, rules in _ANCHORED:
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
            # fail this single class test and never reach the per-anchor lookbehinds.
            before = "".join(sorted({anchor[index - 1] for anchor, index, *_ in entries if index}))
            gate = f"(?<=[{re.escape(before)}]{re.escape(char)})"
            branches.append(gate + "(?:" + "|".join(inner) + ")")
        scan = re.compile(re.escape(char) + "(?:" + "|".join(branches) + ")")
        compiled = tuple(
            (anchor, index, re.compile(after) if after else None, rules)
            for anchor, index, after, rules in entries
        )
        pivots.append(_Pivot(scan, compiled))
    return tuple(pivots)


PIVOTS: Final = _build_pivots()
_ANCHORS: Final = tuple(anchor for anchor, _after, _rules in _ANCHORED)


def _has_anchor(text: str) -> bool:
    """Whether any rule could fire: a text without an anchor is never changed."""
    if any(anchor in text for anchor in _ANCHORS):
        return True
    low = ascii_lower(text)
    return any(anchor in low for anchor in LOWER_ANCHORS)


def ascii_lower(text: str) -> str:
    """Lowercase ASCII letters only, so offsets stay aligned (`str.lower` can change length)."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")
