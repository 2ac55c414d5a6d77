"""JSON shapes of `project_instruction_snapshot.v1` (docs/reference/discovery.md)."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from rutter_core.discovery.fingerprint import fingerprint

PROTOCOL_VERSION: Final = "project_instruction_snapshot.v1"

SourceKind = Literal[
    "agents_override", "agents", "claude", "claude_dir", "prayu_instructions", "prayu_rule"
]
IgnoreReason = Literal["superseded", "blank_override", "ignore_file", "alias"]
TRUST_CLASS: Final = "project_workflow_untrusted"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Limits(_Frozen):
    max_files: int = 64
    max_file_bytes: int = 64 * 1024
    max_total_bytes: int = 256 * 1024
    max_depth: int = 32
    max_ignore_bytes: int = 16 * 1024
    max_ignore_patterns: int = 128


DEFAULT_LIMITS = Limits()


class Authority(_Frozen):
    """Instructions may guide; they can never grant. Every grant is pinned to False."""

    workflow_guidance: Literal[True] = True
    formatting_guidance: Literal[True] = True
    validation_guidance: Literal[True] = True
    tool_grant: Literal[False] = False
    network_grant: Literal[False] = False
    secret_access: Literal[False] = False
    debug_grant: Literal[False] = False
    plugin_grant: Literal[False] = False
    hook_execution: Literal[False] = False
    mcp_grant: Literal[False] = False
    approval_grant: Literal[False] = False
    credential_grant: Literal[False] = False
    process_grant: Literal[False] = False
    terminal_lease: Literal[False] = False
    execution_profile_grant: Literal[False] = False
    policy_override: Literal[False] = False


AUTHORITY_JSON: dict[str, bool] = Authority().model_dump()


class RedactionCount(_Frozen):
    kind: str
    count: int


CUT_MARKER: Final = "\n[... cut by rutter: {lost} more bytes not shown; the file holds them]"
"""Ends a body cut to a bound (`Snapshot.with_bodies_cut`); `{lost}`: the bytes not shown."""


class ContentCut(_Frozen):
    """A body shown in part or not at all (asked for without bodies, or bounded to a size):
    `kept_bytes` of its UTF-8 content shown, `lost_bytes` not. Absent when the whole body is
    there."""

    kept_bytes: int
    lost_bytes: int


class Source(_Frozen):
    ordinal: int
    path: str
    kind: SourceKind
    scope: str
    depth: int
    precedence: int
    bytes: int
    content: str
    content_sha256: str
    loaded_at: str
    trust: Literal["project_workflow_untrusted"] = TRUST_CLASS
    applicable_to: list[str]
    why_effective: str
    redacted: bool
    redactions: list[RedactionCount]
    authority: Authority = Authority()
    link_target: str | None = None
    """A link (docs/reference/discovery.md): the workspace-relative regular file it ends at, whose
    content this is. Absent for a regular file."""
    link_stub: Literal[True] | None = None
    """True when the link is a git `core.symlinks=false` stub file; absent otherwise."""
    content_cut: ContentCut | None = None
    """Present only when the answer was asked with its bodies left out or bounded: how much
    of `content` is shown (`content` is then empty, or cut with `CUT_MARKER`)."""

    def cut_to(self, max_bytes: int) -> Source:
        """This source with at most `max_bytes` of its content (at a character boundary), the
        cut marked in the text when anything is shown (0: no body at all) and in
        `content_cut`; itself when the whole body fits."""
        body = self.content.encode("utf-8")
        if len(body) <= max_bytes:
            return self
        kept = body[:max_bytes].decode("utf-8", errors="ignore")
        kept_bytes = len(kept.encode("utf-8"))
        lost = len(body) - kept_bytes
        shown = kept + CUT_MARKER.format(lost=lost) if max_bytes > 0 else ""
        cut = ContentCut(kept_bytes=kept_bytes, lost_bytes=lost)
        return self.model_copy(update={"content": shown, "content_cut": cut})


class IgnoredEntry(_Frozen):
    path: str
    reason: IgnoreReason
    superseded_by: str | None = None
    line: int | None = None
    pattern: str | None = None
    alias_of: str | None = None
    """Reason `alias`: the source this link ends at (docs/reference/discovery.md)."""
    link_stub: Literal[True] | None = None
    """Reason `alias`: the link is a git `core.symlinks=false` stub file."""


class Conflict(_Frozen):
    role: str
    lower_precedence_path: str
    higher_precedence_path: str
    resolution: str


class Snapshot(_Frozen):
    protocol_version: Literal["project_instruction_snapshot.v1"] = PROTOCOL_VERSION
    workspace_id: str
    target_path: str
    fingerprint: str
    loaded_at: str
    limits: Limits
    sources: list[Source]
    ignored: list[IgnoredEntry]
    conflicts: list[Conflict]

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def with_bodies_cut(self, max_bytes: int) -> Snapshot:
        """This snapshot with each source's content cut to `max_bytes` (`Source.cut_to`; 0:
        none of it). The fingerprint stays the full snapshot's: it never covered content."""
        return self.model_copy(
            update={"sources": [source.cut_to(max_bytes) for source in self.sources]}
        )

    def to_json_line(self) -> str:
        """`to_json()` as compact JSON text on one line (no spaces, non-ASCII as it is): what
        `json.dumps(to_json(), ensure_ascii=False, separators=(",", ":"))` gives, written by
        pydantic directly, about five times faster (a batch prints thousands of these)."""
        return self.model_dump_json(exclude_none=True)


# Fields that describe when/where a snapshot was taken rather than what it says.
SNAPSHOT_FINGERPRINT_EXCLUDES = frozenset({"fingerprint", "loaded_at", "workspace_id"})
SOURCE_FINGERPRINT_EXCLUDES = frozenset({"content", "content_cut", "loaded_at", "why_effective"})


def snapshot_fingerprint(snapshot_json: dict[str, Any]) -> str:
    """Fingerprint per docs/reference/discovery.md, from the snapshot's JSON form."""
    body = dict(snapshot_json)
    body["sources"] = [
        {key: value for key, value in source.items() if key not in SOURCE_FINGERPRINT_EXCLUDES}
        for source in snapshot_json.get("sources", [])
    ]
    # The snapshot's own shape (pydantic-typed: str, bool, small int, ASCII keys) is plain JSON.
    return fingerprint(body, exclude=SNAPSHOT_FINGERPRINT_EXCLUDES, plain=True)
