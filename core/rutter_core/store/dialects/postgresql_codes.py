"""PostgreSQL's error codes as the dialect reads them: one `sqlstate` for the dialect and its
`postgresql_people` and `postgresql_purge` modules, and the codes that mean a wait ran out."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError

BUSY: tuple[str, ...] = ("55P03", "57014")
"""lock_not_available (lock_timeout) and query_canceled (statement_timeout): `store_busy`."""


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a psycopg error, raised by the driver or wrapped by SQLAlchemy."""
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    code = getattr(orig, "sqlstate", None)
    return code if isinstance(code, str) else None
