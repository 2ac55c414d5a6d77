"""The redaction kinds, their markers, and what a scan reports."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

REDACTION_KINDS: Final[frozenset[str]] = frozenset(
    {
        "private_key",
        "aws_access_key",
        "aws_secret_key",
        "github_token",
        "gitlab_token",
        "slack_token",
        "stripe_key",
        "openai_api_key",
        "anthropic_api_key",
        "google_api_key",
        "npm_token",
        "pypi_token",
        "jwt",
        "basic_auth_url",
        "secret_assignment",
        # issue 18: more services and login formats
        "google_oauth",
        "sendgrid_key",
        "twilio_key",
        "huggingface_token",
        "mailgun_key",
        "mailchimp_key",
        "shopify_token",
        "digitalocean_token",
        "telegram_bot_token",
        "discord_token",
        "square_token",
        "databricks_token",
        "atlassian_token",
        "api_token",
        "basic_auth",
        "bearer_token",
        "login_password",
        # issue 34: Azure shared access signatures
        "azure_sas",
    }
)

MARKERS: Final[dict[str, str]] = {kind: f"[REDACTED:{kind}]" for kind in REDACTION_KINDS}
MARKER_PREFIX: Final = "[REDACTED:"


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One finding; `text[start:end]` is exactly what gets replaced."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class RedactionResult:
    text: str
    findings: tuple[SecretFinding, ...]  # sorted, non-overlapping, offsets into the original

    @property
    def redacted(self) -> bool:
        return bool(self.findings)

    def counts(self) -> list[tuple[str, int]]:
        """[(kind, count)] sorted by kind: what may be reported, never the secret."""
        return sorted(Counter(finding.kind for finding in self.findings).items())


def marker(kind: str) -> str:
    try:
        return MARKERS[kind]
    except KeyError:
        raise ValueError(f"unknown redaction kind {kind!r}") from None
