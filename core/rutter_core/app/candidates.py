"""Operations on experience candidates: one params model per operation, and
`CandidateOperations` (`Rutter(store).candidates`).

The params are what a client may send (the language server and the HTTP API decode requests
into them, the CLI builds them from its options); results are the documents of
`rutter_core.candidates.model`. Who acts (`actor`) is the surface's own fact, never a param. No
agent surface (MCP) calls these: only a person reviews candidates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, StrictBool, StrictInt, StrictStr

from rutter_core.app.models import NullMeansAbsent
from rutter_core.candidates import service
from rutter_core.candidates.model import CandidateList, ConfirmedCandidate, MemoryCandidate
from rutter_core.kernel.actors import OperatorActor

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter


class CandidateParams(NullMeansAbsent):
    """Base of the candidate params: a JSON `null` means the field was not given."""


class ListCandidatesParams(CandidateParams):
    workspace_id: StrictStr = Field(
        description="the workspace whose project's candidates to list (from the threads of any "
        "registration of it)"
    )


class GetCandidateParams(CandidateParams):
    id: StrictStr = Field(description="the candidate's ID (cand_...)")
    workspace_id: StrictStr | None = Field(
        None, description="when given, the candidate must belong to this workspace's project"
    )


class ConfirmCandidateParams(CandidateParams):
    id: StrictStr = Field(description="the candidate's ID (cand_...)")
    workspace_id: StrictStr | None = Field(
        None, description="when given, the candidate must belong to this workspace's project"
    )
    version: StrictInt = Field(description="the candidate's version as read")
    fingerprint: StrictStr = Field(description="the candidate's fingerprint as read")
    source_version: StrictInt = Field(description="the source note's version as read")
    confirm: StrictBool = Field(
        False, description="must be true: the person confirms saving it as project memory"
    )
    redact_sensitive: StrictBool = Field(
        False, description="save text with secrets replaced by [REDACTED:<kind>]"
    )


class IgnoreCandidateParams(CandidateParams):
    id: StrictStr = Field(description="the candidate's ID (cand_...)")
    workspace_id: StrictStr | None = Field(
        None, description="when given, the candidate must belong to this workspace's project"
    )
    version: StrictInt = Field(description="the candidate's version as read")


class CandidateOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def list(self, params: ListCandidatesParams) -> CandidateList:
        return service.list_candidates(self._rutter.store, params.workspace_id)

    def get(self, params: GetCandidateParams) -> MemoryCandidate:
        return service.get_candidate(
            self._rutter.store, params.id, workspace_id=params.workspace_id
        )

    def confirm(
        self, params: ConfirmCandidateParams, *, actor: OperatorActor
    ) -> ConfirmedCandidate:
        return service.confirm_candidate(
            self._rutter.store,
            params.id,
            version=params.version,
            fingerprint=params.fingerprint,
            source_version=params.source_version,
            confirm=params.confirm,
            redact_sensitive=params.redact_sensitive,
            workspace_id=params.workspace_id,
            actor=actor,
        )

    def ignore(self, params: IgnoreCandidateParams, *, actor: OperatorActor) -> MemoryCandidate:
        return service.ignore_candidate(
            self._rutter.store,
            params.id,
            version=params.version,
            workspace_id=params.workspace_id,
            actor=actor,
        )


__all__ = [
    "CandidateList",
    "CandidateOperations",
    "CandidateParams",
    "ConfirmCandidateParams",
    "ConfirmedCandidate",
    "GetCandidateParams",
    "IgnoreCandidateParams",
    "ListCandidatesParams",
    "MemoryCandidate",
]
