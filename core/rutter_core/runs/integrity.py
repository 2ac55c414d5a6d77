"""The integrity check of pinned revisions: a ledger row edited behind rutter's back is
refused (`snapshot_tampered`), never used.

Every read of a revision re-checks it against itself: the stored snapshot must parse, name the
row's fingerprint and hash to it (docs/reference/discovery.md), each source's content must match its
`content_sha256`, and the snapshot must be the run's (its workspace and target).
"""

from __future__ import annotations

import hashlib
import json

from pydantic import ValidationError

from rutter_core.discovery.snapshot import Snapshot, snapshot_fingerprint
from rutter_core.kernel.errors import StoreError
from rutter_core.runs.model import PinnedRevision, RunRecord
from rutter_core.runs.repo import StoredRevision


def tampered(run_id: str, revision: int, reason: str) -> StoreError:
    return StoreError(
        "snapshot_tampered",
        f"revision {revision} of run {run_id}'s pinned instructions fails its integrity check "
        f"({reason}): the store was changed outside rutter. rutter will not use this "
        "revision; restore the store from a backup",
        details={"run_id": run_id, "revision": revision, "reason": reason},
    )


def verified(stored: StoredRevision, run: RunRecord) -> PinnedRevision:
    """The revision in `stored`, after checking that it is consistent with itself and its run."""
    run_id, revision = run.run_id, stored.revision
    try:
        document = json.loads(stored.snapshot_json)
        snapshot = Snapshot.model_validate(document)
        # Hashed here too: JSON escapes can decode to lone surrogates, which no UTF-8
        # encoder (the digest's, the canonical form's) accepts.
        recomputed = snapshot_fingerprint(snapshot.to_json())
        digests = [hashlib.sha256(s.content.encode("utf-8")).hexdigest() for s in snapshot.sources]
    except (ValueError, ValidationError, RecursionError) as exc:
        # ValidationError, UnicodeEncodeError and rfc8785's CanonicalizationError are
        # ValueErrors; named for the reader. RecursionError: JSON nested beyond the decoder.
        raise tampered(run_id, revision, "the stored snapshot is not a valid snapshot") from exc
    stored_fingerprint = stored.fingerprint
    if snapshot.fingerprint != stored_fingerprint:
        raise tampered(run_id, revision, "the snapshot names another fingerprint than its row")
    if recomputed != stored_fingerprint:
        raise tampered(run_id, revision, "the snapshot does not hash to its fingerprint")
    for source, digest in zip(snapshot.sources, digests, strict=True):
        if digest != source.content_sha256:
            raise tampered(
                run_id, revision, f"the content of {source.path} does not match its sha256"
            )
    if snapshot.workspace_id != run.workspace_id or snapshot.target_path != run.target_path:
        raise tampered(run_id, revision, "the snapshot belongs to another workspace or target")
    return PinnedRevision(
        run_id=run_id,
        revision=revision,
        fingerprint=stored_fingerprint,
        confirmed_by=stored.confirmed_by,
        confirmed_by_person=stored.confirmed_by_person,
        confirmed_at=stored.confirmed_at,
        replaces_fingerprint=stored.replaces_fingerprint,
        snapshot=snapshot,
    )
