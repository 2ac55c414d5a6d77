"""A thread's messages (docs/reference/continuity.md): the operations.

Messages are append-only: added, listed, never changed or removed (the store's guard refuses an
UPDATE, a DELETE and a second row with a taken key, from any client). Each has a role, its text
redacted per docs/reference/redaction.md and bounded at 64 KiB, and its provenance: the `source` the
surface names itself (never a client) and, for imported transcripts, the message's external ID.
An external ID is unique per thread and source: adding the same message again adds nothing and
answers with the stored one; a different message under a taken external ID is a conflict.
"""

from __future__ import annotations

from sqlalchemy.engine import Connection

from rutter_core.continuity import repo
from rutter_core.continuity.model import (
    DEFAULT_LIST_LIMIT,
    MAX_MESSAGE_BYTES,
    AddedMessage,
    Message,
    MessageList,
)
from rutter_core.continuity.policy import (
    clean_text,
    require_external_id,
    require_limit,
    require_position,
    require_role,
    require_source,
    require_thread_id,
)
from rutter_core.continuity.threads import require_thread
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import ConflictError
from rutter_core.kernel.ids import new_id
from rutter_core.store import Store


def add_message(
    store: Store,
    thread_id: str,
    *,
    role: str,
    text: str,
    source: str,
    external_id: str | None = None,
) -> AddedMessage:
    """Append a message to the thread's end, redacted; with an `external_id` already stored
    for this thread and source, the stored message (`created` False) when it has the same role
    and text, else `conflict`."""
    thread_id = require_thread_id(thread_id)
    checked_role = require_role(role)
    checked_source = require_source(source)
    checked_external = require_external_id(external_id)
    clean = clean_text("text", text, max_bytes=MAX_MESSAGE_BYTES)
    now = now_rfc3339()
    with store.write() as conn:
        require_thread(conn, thread_id, writable=True)
        if checked_external is not None:
            stored = repo.find_external_message(conn, thread_id, checked_source, checked_external)
            if stored is not None:
                if (stored.role, stored.text) != (checked_role, clean.text):
                    raise ConflictError(
                        "conflict",
                        f"thread {thread_id} already has message {stored.message_id} under this "
                        "external ID and source, with another role or text; nothing was added",
                        details={"thread_id": thread_id, "message_id": stored.message_id},
                    )
                return AddedMessage(**stored.model_dump(), created=False)
        message = repo.insert_message(
            conn,
            message_id=new_id("msg"),
            thread_id=thread_id,
            seq=repo.next_seq(conn, thread_id),
            role=checked_role,
            text=clean.text,
            redacted=clean.redacted,
            source=checked_source,
            external_id=checked_external,
            now=now,
        )
    return AddedMessage(**message.model_dump(), created=True)


def list_messages(
    store: Store,
    thread_id: str,
    *,
    limit: int = DEFAULT_LIST_LIMIT,
    before_seq: int | None = None,
) -> MessageList:
    """The thread's most recent `limit` messages (before position `before_seq`, to page back),
    oldest first."""
    thread_id = require_thread_id(thread_id)
    limit = require_limit(limit)
    before_seq = require_position(before_seq)
    with store.read() as conn:
        require_thread(conn, thread_id, writable=False)
        found = repo.select_messages(conn, thread_id, limit=limit + 1, before_seq=before_seq)
    return MessageList(
        thread_id=thread_id, messages=tuple(found[-limit:]), has_more=len(found) > limit
    )


def recent_messages(conn: Connection, thread_id: str, limit: int) -> tuple[list[Message], int]:
    """The thread's last `limit` messages, oldest first, and how many it has, in the caller's
    transaction."""
    return repo.select_messages(conn, thread_id, limit=limit), repo.count_messages(conn, thread_id)
