"""Service tokens with a distinctive prefix, beyond the minimum list of
docs/reference/redaction.md.

Each entry is (anchor, regex the text after the anchor must match or None, rules tried at the
anchor), as in `anchors`. A rule's regex starts at the anchor; `glue` lets the token stand
glued to a word before it or to another token after it (`Bearerghp_…`, `ghp_…ghp_…`), which
only prefixes too distinctive to occur in prose may do.
SendGrid, Twilio and Square come from detect-secrets' own plugins (`upstream`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from rutter_core.discovery.redaction import upstream
from rutter_core.discovery.redaction.formats import (
    ALNUM,
    B64URL,
    WORD,
    Rule,
    mixed_classes,
    regex_rule,
)

_HEX: Final = "0-9a-fA-F"
_GLUE_PREFIX: Final = 5
_TELEGRAM_HEAD: Final = re.compile(r"\d{8,10}\Z")
_TELEGRAM_BODY: Final = re.compile(r":[0-9A-Za-z_-]{35}")
_DISCORD_HEAD: Final = re.compile(r"[MNO][A-Za-z0-9_-]{23,25}\Z")
_DISCORD_TAIL: Final = re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}")
_MAILCHIMP_HEAD: Final = re.compile(r"[0-9a-f]{32}\Z")
_MAILCHIMP_TAIL: Final = re.compile(r"-us[0-9]{1,2}")


def _random_body(prefix_length: int) -> Callable[[str], bool]:
    return lambda token: mixed_classes(token[prefix_length:])


def _look_back(
    head: re.Pattern[str], body: re.Pattern[str], reach: int, lead: str, trail: str
) -> Callable[[str, int], tuple[int, int] | None]:
    """A rule for tokens whose anchor sits in the middle (`123456789:AA…`, `…-us21`)."""

    def match(text: str, pos: int) -> tuple[int, int] | None:
        found = body.match(text, pos)
        if found is None or (found.end() < len(text) and text[found.end()] in trail):
            return None
        window = text[max(0, pos - reach) : pos]
        start = head.search(window)
        if start is None:
            return None
        begin = pos - len(window) + start.start()
        if begin and text[begin - 1] in lead and not text.endswith("/bot", 0, begin):
            return None  # (Telegram's API puts the token right after `/bot`)
        return begin, found.end()

    return match


def _rules() -> tuple[tuple[str, str | None, tuple[Rule, ...]], ...]:
    sendgrid = upstream.pattern("sendgrid", "SendGridDetector", 0)
    twilio = upstream.literal_patterns("twilio", "TwilioKeyDetector")
    square = upstream.pattern("square_oauth", "SquareOAuthDetector", 0)
    table: list[tuple[str, str | None, tuple[Rule, ...]]] = [
        ("ya29.", None, (regex_rule("google_oauth", r"ya29\.[0-9A-Za-z_-]{20,}", glue=True),)),
        ("GOCSPX-", None, (regex_rule("google_oauth", r"GOCSPX-[0-9A-Za-z_-]{28}", glue=True),)),
        ("1//0", None, (regex_rule("google_oauth", r"1//0[0-9A-Za-z_-]{40,}", lead=ALNUM),)),
        ("SG.", None, (regex_rule("sendgrid_key", sendgrid, glue=True),)),
        *(
            (
                twilio_pattern.pattern[:2],
                None,
                (regex_rule("twilio_key", twilio_pattern, lead=ALNUM, trail=ALNUM),),
            )
            for twilio_pattern in twilio
        ),
        (
            "hf_",
            None,
            (
                regex_rule(
                    "huggingface_token",
                    r"hf_[A-Za-z0-9]{34,40}",
                    lead=WORD,
                    trail=ALNUM,
                    check=lambda token: mixed_classes(token[3:] + "0"),
                ),
            ),
        ),
        (
            "api_org_",
            None,
            (regex_rule("huggingface_token", r"api_org_[A-Za-z]{34}", lead=WORD, trail=ALNUM),),
        ),
        ("key-", None, (regex_rule("mailgun_key", r"key-[0-9a-f]{32}", lead=B64URL, trail=ALNUM),)),
        (
            "-us",
            r"[0-9]{1,2}(?![A-Za-z0-9])",
            (
                Rule(
                    "mailchimp_key", _look_back(_MAILCHIMP_HEAD, _MAILCHIMP_TAIL, 32, ALNUM, ALNUM)
                ),
            ),
        ),
        *(
            (p, None, (regex_rule("shopify_token", rf"{p}[{_HEX}]{{32}}", glue=True),))
            for p in ("shpat_", "shpca_", "shppa_", "shpss_")
        ),
        *(
            (p, None, (regex_rule("digitalocean_token", rf"{p}[0-9a-f]{{64}}", glue=True),))
            for p in ("dop_v1_", "doo_v1_", "dor_v1_")
        ),
        (
            ":",
            r"[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])",
            (
                Rule(
                    "telegram_bot_token",
                    _look_back(_TELEGRAM_HEAD, _TELEGRAM_BODY, 10, WORD, B64URL),
                ),
            ),
        ),
        (
            ".",
            r"[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}(?![A-Za-z0-9_-])",
            (Rule("discord_token", _look_back(_DISCORD_HEAD, _DISCORD_TAIL, 26, B64URL, B64URL)),),
        ),
        *(
            (
                host,
                None,
                (
                    regex_rule(
                        "discord_token",
                        re.escape(host) + r"[0-9]{15,20}/[A-Za-z0-9_-]{60,100}",
                        trail=B64URL,
                    ),
                ),
            )
            for host in ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/")
        ),
        ("sq0csp-", None, (regex_rule("square_token", square, glue=True),)),
        ("sq0atp-", None, (regex_rule("square_token", r"sq0atp-[0-9A-Za-z_-]{22}", glue=True),)),
        (
            "EAAA",
            None,
            (
                regex_rule(
                    "square_token",
                    r"EAAA[0-9A-Za-z_-]{60}",
                    lead=ALNUM,
                    trail=B64URL,
                    check=_random_body(4),
                ),
            ),
        ),
        (
            "dapi",
            None,
            (regex_rule("databricks_token", r"dapi[0-9a-f]{32}(?:-[0-9])?", glue=True),),
        ),
        (
            "ATATT3",
            None,
            (regex_rule("atlassian_token", r"ATATT3[A-Za-z0-9_=-]{150,300}", glue=True),),
        ),
        (
            "ATCTT3",
            None,
            (regex_rule("atlassian_token", r"ATCTT3[A-Za-z0-9_=-]{150,300}", glue=True),),
        ),
        (
            "ATBB",
            None,
            (
                regex_rule(
                    "atlassian_token",
                    r"ATBB[A-Za-z0-9]{32}",
                    lead=ALNUM,
                    trail=ALNUM,
                    check=_random_body(4),
                ),
            ),
        ),
    ]
    # More services whose tokens carry a registered prefix; all `api_token`.
    for prefix, body in _API_TOKENS:
        # A prefix of five characters or more is distinctive enough to be found glued to a
        # word; a shorter one (`r8_`, `oy2`, `xai-`) must stand on its own.
        if len(prefix) >= _GLUE_PREFIX:
            rule = regex_rule("api_token", re.escape(prefix) + body, glue=True)
        else:
            rule = regex_rule("api_token", re.escape(prefix) + body, lead=ALNUM, trail=ALNUM)
        table.append((prefix, None, (rule,)))
    return tuple(table)


# prefix -> body regex (documented in docs/file-conventions.md)
_API_TOKENS: Final = (
    ("lin_api_", r"[A-Za-z0-9]{40}"),  # Linear
    ("PMAK-", r"[0-9a-f]{24}-[0-9a-f]{34}"),  # Postman
    ("dp.pt.", r"[A-Za-z0-9]{43}"),  # Doppler
    ("pul-", r"[0-9a-f]{40}"),  # Pulumi
    ("glsa_", r"[A-Za-z0-9]{32}_[0-9a-f]{8}"),  # Grafana service account
    ("glc_", r"[A-Za-z0-9+/]{32,400}={0,2}"),  # Grafana Cloud
    ("NRAK-", r"[A-Z0-9]{27}"),  # New Relic
    ("hvs.", r"[A-Za-z0-9_-]{24,}"),  # HashiCorp Vault
    ("hvb.", r"[A-Za-z0-9_-]{100,}"),  # HashiCorp Vault batch
    ("AGE-SECRET-KEY-1", r"[0-9A-Z]{58}"),  # age
    ("ntn_", r"[0-9]{11}[A-Za-z0-9]{35}"),  # Notion
    ("gsk_", r"[A-Za-z0-9]{52}"),  # Groq
    ("r8_", r"[A-Za-z0-9]{37}"),  # Replicate
    ("pplx-", r"[A-Za-z0-9]{48}"),  # Perplexity
    ("xai-", r"[A-Za-z0-9]{80}"),  # xAI
    ("figd_", r"[A-Za-z0-9_-]{40}"),  # Figma
    ("sbp_", r"[0-9a-f]{40}"),  # Supabase
    ("dckr_pat_", r"[A-Za-z0-9_-]{27}"),  # Docker Hub
    ("nfp_", r"[A-Za-z0-9]{36}"),  # Netlify
    ("pscale_tkn_", r"[A-Za-z0-9_.-]{43}"),  # PlanetScale
    ("pscale_pw_", r"[A-Za-z0-9_.-]{43}"),  # PlanetScale
    ("pcsk_", r"[A-Za-z0-9_]{60,90}"),  # Pinecone
    ("tskey-", r"[a-z]+-[A-Za-z0-9]{10,}-[A-Za-z0-9]{20,}"),  # Tailscale
    ("bkua_", r"[a-f0-9]{40}"),  # Buildkite
    ("CCIPAT_", r"[A-Za-z0-9]{22}_[a-f0-9]{40}"),  # CircleCI
    ("sgp_", r"[a-f0-9]{16}_[a-f0-9]{40}"),  # Sourcegraph
    ("CFPAT-", r"[A-Za-z0-9_-]{43}"),  # Contentful
    ("rubygems_", r"[a-f0-9]{48}"),  # RubyGems
    ("pnu_", r"[A-Za-z0-9]{36}"),  # Prefect
    ("rdme_", r"[a-z0-9]{70}"),  # ReadMe
    ("sntrys_", r"eyJ[A-Za-z0-9_=+/-]{60,}"),  # Sentry org token
    ("sntryu_", r"[a-f0-9]{64}"),  # Sentry user token
    ("dt0c01.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}"),  # Dynatrace
    ("AKCp", r"[A-Za-z0-9]{69}"),  # JFrog
    ("shippo_live_", r"[a-f0-9]{40}"),  # Shippo
    ("tfp_", r"[A-Za-z0-9]{59}"),  # Typeform
    ("oy2", r"[a-z0-9]{43}"),  # NuGet
    ("FlyV1 fm2_", r"[A-Za-z0-9+/=,_-]{40,}"),  # Fly.io
    ("sk-or-v1-", r"[a-f0-9]{64}"),  # OpenRouter
)

PROVIDERS: Final = _rules
