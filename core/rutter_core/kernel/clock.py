"""RFC 3339 UTC timestamps with `Z`."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def rfc3339(moment: datetime) -> str:
    """Second precision keeps JSON stable and readable; `Z` per
    docs/reference/identifiers-and-fingerprints.md."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_rfc3339() -> str:
    return rfc3339(utc_now())
