"""How long a memory is kept: a duration from now or an RFC 3339 time, at most ten calendar
years after the memory was created (docs/reference/memory.md). A memory past its retention is
`expired`: kept until deleted, but never listed or delivered without asking for inactive ones.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Final

from rutter_core.kernel.clock import rfc3339
from rutter_core.kernel.errors import RejectedError
from rutter_core.memory.policy import shown

MAX_RETENTION_YEARS: Final = 10
RETENTION_NONE: Final = "none"
"""`retention` value that removes a memory's retention on edit."""

_TIME_FORMAT: Final = "%Y-%m-%dT%H:%M:%SZ"

# ASCII digits only (re.ASCII): `\d` would also take Arabic-Indic or fullwidth digits, which
# `int` then reads as numbers.
_DURATION = re.compile(r"(?:\d{1,9}[wdhms])+", re.ASCII)
_DURATION_PART = re.compile(r"(\d{1,9})([wdhms])", re.ASCII)
_UNIT_SECONDS: Final = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_RFC3339 = re.compile(
    r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:[Zz]|[+-]\d\d:\d\d)", re.ASCII
)


def parse_stored_time(text: str) -> datetime:
    """A timestamp as the store keeps it (RFC 3339 UTC, second precision, `Z`)."""
    return datetime.strptime(text, _TIME_FORMAT).replace(tzinfo=UTC)


def _add_years(moment: datetime, years: int) -> datetime:
    try:
        return moment.replace(year=moment.year + years)
    except ValueError:  # 29 February: the bound falls on 28 February
        return moment.replace(year=moment.year + years, day=28)


def parse_retention(text: str, *, created_at: datetime, now: datetime) -> datetime:
    """The moment `text` names: a duration from `now` (`720h`, `30d`, `1h30m`; units w d h m s)
    or an RFC 3339 time. It must be after `created_at` and at most ten years after it."""
    raw = text.strip()
    if _DURATION.fullmatch(raw):
        seconds = sum(
            int(amount) * _UNIT_SECONDS[unit] for amount, unit in _DURATION_PART.findall(raw)
        )
        try:
            until = now + timedelta(seconds=seconds)
        except OverflowError:
            raise _retention_out_of_bounds(text, created_at) from None
    elif _RFC3339.fullmatch(raw):
        try:
            until = datetime.fromisoformat(raw.upper().replace("Z", "+00:00"))
        except ValueError as exc:
            raise RejectedError(
                "invalid_retention",
                f"retention {text!r} is not a valid time ({exc}); use e.g. 2027-06-30T00:00:00Z",
                details={"retention": text},
            ) from exc
    else:
        echoed = shown(text)  # free text: it may be a secret pasted into the wrong option
        raise RejectedError(
            "invalid_retention",
            f"retention {echoed!r} is neither a duration (e.g. 720h, 30d, 1h30m) nor an RFC 3339 "
            "time (e.g. 2027-06-30T00:00:00Z)",
            details={"retention": echoed},
        )
    try:
        until = until.astimezone(UTC).replace(microsecond=0)  # stored at second precision
    except OverflowError:  # e.g. 9999-12-31T23:59:59-01:00: past datetime's range in UTC
        raise _retention_out_of_bounds(text, created_at) from None
    if until <= created_at or until > _add_years(created_at, MAX_RETENTION_YEARS):
        raise _retention_out_of_bounds(text, created_at, until)
    return until


def _retention_out_of_bounds(
    text: str, created_at: datetime, until: datetime | None = None
) -> RejectedError:
    latest = _add_years(created_at, MAX_RETENTION_YEARS)
    ends = f"ends {rfc3339(until)}" if until is not None else "is too long"
    return RejectedError(
        "retention_out_of_bounds",
        f"retention {text!r} {ends}; it must end after the memory's creation "
        f"({rfc3339(created_at)}) and at most {MAX_RETENTION_YEARS} years after it "
        f"({rfc3339(latest)})",
        details={"retention": text, "created_at": rfc3339(created_at), "latest": rfc3339(latest)},
    )


def edited_retention(text: str, *, created_at: str, now: datetime) -> str | None:
    """The `retention_until` an edit stores: None for `RETENTION_NONE` (kept until deleted),
    else the moment `text` names, bounded by the stored creation time `created_at`."""
    if text.strip().casefold() == RETENTION_NONE:
        return None
    return rfc3339(parse_retention(text, created_at=parse_stored_time(created_at), now=now))
