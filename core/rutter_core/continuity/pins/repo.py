"""The only module touching the `pins` and `pin_proposals` tables. Every function takes the
caller's connection: the checks and the write of an operation are one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection, Row

from rutter_core.continuity.pins.model import Choice, Pin, Proposal
from rutter_core.store import person_of
from rutter_core.store.schema import pin_proposals, pins, threads


def _person(value: object) -> str | None:
    """A stored `*_person` column (null: written before people were recorded)."""
    return None if value is None else str(value)


def _pin(row: Row[Any]) -> Pin:
    return Pin(
        pin_id=str(row.pin_id),
        thread_id=str(row.thread_id),
        text=str(row.text),
        redacted=bool(row.redacted),
        proposal_id=None if row.proposal_id is None else str(row.proposal_id),
        version=int(row.version),
        created_by=str(row.created_by),
        created_by_person=_person(row.created_by_person),
        updated_by=str(row.updated_by),
        updated_by_person=_person(row.updated_by_person),
        created_at=str(row.created_at),
        updated_at=str(row.updated_at),
    )


def _proposal(row: Row[Any]) -> Proposal:
    return Proposal(
        proposal_id=str(row.proposal_id),
        thread_id=str(row.thread_id),
        workspace_id=str(row.workspace_id),
        run_id=None if row.run_id is None else str(row.run_id),
        text=str(row.text),
        redacted=bool(row.redacted),
        proposed_by=str(row.proposed_by),
        proposed_by_person=_person(row.proposed_by_person),
        status=row.status,
        choice=row.choice,
        reply=None if row.reply is None else str(row.reply),
        reply_redacted=bool(row.reply_redacted),
        pin_id=None if row.pin_id is None else str(row.pin_id),
        answered_by=None if row.answered_by is None else str(row.answered_by),
        answered_by_person=_person(row.answered_by_person),
        created_at=str(row.created_at),
        answered_at=None if row.answered_at is None else str(row.answered_at),
    )


def insert_pin(
    conn: Connection,
    *,
    pin_id: str,
    thread_id: str,
    text: str,
    redacted: bool,
    proposal_id: str | None,
    actor: str,
    now: str,
) -> Pin:
    conn.execute(
        insert(pins).values(
            pin_id=pin_id,
            thread_id=thread_id,
            text=text,
            redacted=int(redacted),
            proposal_id=proposal_id,
            version=1,
            created_by=actor,
            created_by_person=person_of(conn),
            updated_by=actor,
            updated_by_person=person_of(conn),
            created_at=now,
            updated_at=now,
        )
    )
    found = find_pin(conn, pin_id)
    assert found is not None, pin_id
    return found


def find_pin(conn: Connection, pin_id: str) -> Pin | None:
    row = conn.execute(select(pins).where(pins.c.pin_id == pin_id)).first()
    return None if row is None else _pin(row)


def select_pins(conn: Connection, thread_id: str) -> list[Pin]:
    rows = conn.execute(
        select(pins).where(pins.c.thread_id == thread_id).order_by(pins.c.created_at, pins.c.pin_id)
    )
    return [_pin(row) for row in rows]


def pin_totals(
    conn: Connection, thread_id: str, *, excluding: str | None = None
) -> tuple[int, int]:
    """(how many pins, how many characters) the thread holds, leaving out `excluding`."""
    query = select(func.count(), func.coalesce(func.sum(func.length(pins.c.text)), 0)).where(
        pins.c.thread_id == thread_id
    )
    if excluding is not None:
        query = query.where(pins.c.pin_id != excluding)
    row = conn.execute(query).one()
    return int(row[0]), int(row[1])


def update_pin(
    conn: Connection, read: Pin, *, text: str, redacted: bool, actor: str, now: str
) -> Pin | None:
    """Version + 1 with the new text; None when the pin is no longer at the version read."""
    done = conn.execute(
        update(pins)
        .where(pins.c.pin_id == read.pin_id, pins.c.version == read.version)
        .values(
            text=text,
            redacted=int(redacted),
            version=read.version + 1,
            updated_by=actor,
            updated_by_person=person_of(conn),
            updated_at=now,
        )
    )
    return None if done.rowcount != 1 else find_pin(conn, read.pin_id)


def delete_pin(conn: Connection, read: Pin) -> bool:
    done = conn.execute(
        delete(pins).where(pins.c.pin_id == read.pin_id, pins.c.version == read.version)
    )
    return done.rowcount == 1


def insert_proposal(
    conn: Connection,
    *,
    proposal_id: str,
    thread_id: str,
    workspace_id: str,
    run_id: str | None,
    text: str,
    redacted: bool,
    actor: str,
    now: str,
) -> Proposal:
    conn.execute(
        insert(pin_proposals).values(
            proposal_id=proposal_id,
            thread_id=thread_id,
            workspace_id=workspace_id,
            run_id=run_id,
            text=text,
            redacted=int(redacted),
            proposed_by=actor,
            proposed_by_person=person_of(conn),
            status="pending",
            choice=None,
            reply=None,
            reply_redacted=0,
            pin_id=None,
            answered_by=None,
            created_at=now,
            answered_at=None,
        )
    )
    found = find_proposal(conn, proposal_id)
    assert found is not None, proposal_id
    return found


def find_proposal(conn: Connection, proposal_id: str) -> Proposal | None:
    row = conn.execute(
        select(pin_proposals).where(pin_proposals.c.proposal_id == proposal_id)
    ).first()
    return None if row is None else _proposal(row)


def select_proposals(
    conn: Connection,
    *,
    workspace_ids: Sequence[str] | None,
    thread_id: str | None,
    include_answered: bool,
    limit: int,
    proposed_by: str | None = None,
    only_answered: bool = False,
) -> list[Proposal]:
    query = select(pin_proposals)
    if not include_answered:
        query = query.where(pin_proposals.c.status == "pending")
    elif only_answered:
        query = query.where(pin_proposals.c.status == "answered")
    if proposed_by is not None:
        query = query.where(pin_proposals.c.proposed_by == proposed_by)
    if workspace_ids is not None:
        query = query.where(pin_proposals.c.workspace_id.in_(list(workspace_ids)))
    if thread_id is not None:
        query = query.where(pin_proposals.c.thread_id == thread_id)
    rows = conn.execute(
        query.order_by(pin_proposals.c.created_at, pin_proposals.c.proposal_id).limit(limit)
    )
    return [_proposal(row) for row in rows]


def answer_proposal(
    conn: Connection,
    proposal_id: str,
    *,
    choice: Choice,
    reply: str | None,
    reply_redacted: bool,
    pin_id: str | None,
    actor: str,
    now: str,
) -> bool:
    """Record the answer of a pending proposal; False when it is no longer pending."""
    done = conn.execute(
        update(pin_proposals)
        .where(pin_proposals.c.proposal_id == proposal_id, pin_proposals.c.status == "pending")
        .values(
            status="answered",
            choice=choice,
            reply=reply,
            reply_redacted=int(reply_redacted),
            pin_id=pin_id,
            answered_by=actor,
            answered_by_person=person_of(conn),
            answered_at=now,
        )
    )
    return done.rowcount == 1


def delete_workspace_pins(conn: Connection, workspace_id: str) -> tuple[int, int]:
    """Delete the pins of the workspace's threads, then its proposals (a pin names the
    proposal it came from); how many of each. For `workspace remove --cascade`."""
    of_workspace = select(threads.c.thread_id).where(threads.c.workspace_id == workspace_id)
    removed_pins = conn.execute(delete(pins).where(pins.c.thread_id.in_(of_workspace))).rowcount
    removed_proposals = conn.execute(
        delete(pin_proposals).where(
            (pin_proposals.c.workspace_id == workspace_id)
            | pin_proposals.c.thread_id.in_(of_workspace)
        )
    ).rowcount
    return int(removed_pins), int(removed_proposals)
