"""What the store tests share (this module holds no tests): a process that opens a store once a
signal file appears (`OPENER`, so that several opens overlap), and a table's shape as
`store.schema` declares it (`declared`), to compare with what a migrated store built."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Index, Integer, String, Table
from sqlalchemy.sql.elements import UnaryExpression

# Imports happen before the start signal so that the opens themselves overlap.
OPENER = """
import sys, time
from pathlib import Path
from rutter_core.store import open_store
Path(sys.argv[3]).touch()
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.0005)
with open_store(sys.argv[1]) as store, store.read() as conn:
    conn.exec_driver_sql("SELECT count(*) FROM workspaces").scalar()
"""


def column_type(column: Column[Any]) -> str:
    return "INTEGER" if isinstance(column.type, Integer) else "TEXT"


def index_columns(index: Index) -> list[tuple[str, bool]]:
    """(column, descending) for each indexed expression."""
    columns = []
    for expression in index.expressions:
        if isinstance(expression, UnaryExpression):
            columns.append((str(expression.element.name), True))
        else:
            assert isinstance(expression, Column | str)
            columns.append((expression if isinstance(expression, str) else expression.name, False))
    return columns


def declared(table: Table) -> dict[str, Any]:
    assert all(isinstance(c.type, Integer | String) for c in table.columns)
    return {
        "columns": [(c.name, column_type(c), c.nullable) for c in table.columns],
        "primary_key": [c.name for c in table.primary_key.columns],
        "foreign_keys": sorted(
            (fk.parent.name, fk.column.table.name, fk.column.name) for fk in table.foreign_keys
        ),
        "unique": sorted([c.name] for c in table.columns if c.unique),
        "indexes": sorted(
            (i.name, index_columns(i), bool(i.unique), i.info.get("where"))
            for i in table.indexes
            if i.name is not None
        ),
        "append_only": bool(table.info.get("append_only")),
    }
